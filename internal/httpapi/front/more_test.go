package front

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// partsBody is a FileBody as a verified flash hit of one record is: its
// unaligned head and tail in memory, its aligned middle a range of the
// file.
type partsBody struct {
	fd         int
	head, tail []byte
	off, n     int64
}

func (b partsBody) Len() int64 { return int64(len(b.head)) + b.n + int64(len(b.tail)) }
func (b partsBody) Parts() int { return 3 }
func (b partsBody) Part(i int) (int64, int64, []byte, error) {
	switch i {
	case 0:
		return 0, 0, b.head, nil
	case 1:
		return b.off, b.n, nil, nil
	}
	return 0, 0, b.tail, nil
}
func (b partsBody) WithFD(fn func(int) error) error { return fn(b.fd) }
func (b partsBody) Yield() bool                     { return false }
func (b partsBody) Rest(off int64) ([]byte, error) {
	mid := make([]byte, b.n)
	if _, err := unix.Pread(b.fd, mid, b.off); err != nil {
		return nil, err
	}
	all := append(append(append([]byte{}, b.head...), mid...), b.tail...)
	return all[off:], nil
}

// fastParts answers every GET with its body, sent from the file.
type fastParts struct{ b partsBody }

func (f fastParts) ServeFast(w http.ResponseWriter, r *http.Request, _ CORS) (string, int, *http.Request) {
	fw, ok := w.(FileWriter)
	if !ok || !fw.CanSendFile() {
		return "", 0, r
	}
	w.Header().Set("Content-Length", strconv.FormatInt(f.b.Len(), 10))
	fw.SendFile(f.b) //nolint:errcheck
	return "GET /m/", http.StatusOK, nil
}

// TestSendFileCoalesces: a FileBody's header, memory parts and file
// ranges go out as one stream of full segments (every send but the last
// says more follows), not a packet for the header and one for each
// memory part. The client counts the data segments it received: an
// answer of about 10 KB is one on loopback (MSS about 64 KiB); the
// header, head, middle and tail sent each as its own packet were four.
func TestSendFileCoalesces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "blocks")
	data := make([]byte, 3<<16)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := partsBody{fd: int(f.Fd()), head: bytes.Repeat([]byte("h"), 1000), off: 1 << 16, n: 8 << 10, tail: bytes.Repeat([]byte("t"), 700)}
	want, _ := b.Rest(0)
	front, _, _, stop := serveBoth(t, []Route{{Prefix: "/m/", Handler: fastParts{b}}}, Options{})
	defer stop()

	for round := range 3 {
		c, err := net.Dial("tcp", front)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second)) //nolint:errcheck
		if _, err := io.WriteString(c, req("/m/x")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("round %d: body of %d bytes (%v), want the parts' %d", round, len(got), err, len(want))
		}
		rc, err := c.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var info *unix.TCPInfo
		rc.Control(func(fd uintptr) { //nolint:errcheck
			info, err = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		})
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if info.Data_segs_in > 2 {
			t.Errorf("round %d: the answer (%d bytes of body) came in %d data segments, want at most 2", round, len(got), info.Data_segs_in)
		}
	}
}
