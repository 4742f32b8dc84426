package front

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// fdBody is a FileBody over a descriptor, for sendfile alone.
type fdBody struct{ fd int }

func (b fdBody) Len() int64                                     { return 0 }
func (b fdBody) Parts() int                                     { return 0 }
func (b fdBody) Part(int) (off, n int64, mem []byte, err error) { return 0, 0, nil, nil }
func (b fdBody) WithFD(fn func(fd int) error) error             { return fn(b.fd) }
func (b fdBody) Yield() bool                                    { return false }
func (b fdBody) Rest(int64) ([]byte, error)                     { return nil, nil }

// TestSliceLen: a slice is at most SendSlice and ends aligned, unless it
// is the last of its part.
func TestSliceLen(t *testing.T) {
	for _, c := range []struct{ off, n, want int64 }{
		{0, 3 << 20, SendSlice},
		{1234, 3 << 20, SendSlice - 1234},
		{4096 + 1, 100, 100}, // the part's last
		{5000, SendSlice + 1, SendSlice - 5000%4096},
	} {
		if got := sliceLen(c.off, c.n); got != c.want || got < c.n && (c.off+got)%fileAlign != 0 {
			t.Errorf("sliceLen(%d, %d) = %d, want %d", c.off, c.n, got, c.want)
		}
	}
}

// TestSendfileFromUnalignedOffset: a send from an O_DIRECT file resumed
// where a slow client's socket stopped taking bytes starts at an offset
// off the file's alignment, which the file refuses to be read from
// (EINVAL); sendfile reads from the aligned offset below and drops the
// lead, so the client gets exactly the range. Before, the send failed
// and the connection was closed mid-body.
func TestSendfileFromUnalignedOffset(t *testing.T) {
	data, fd := directFile(t, 2<<20+8192)
	for _, c := range []struct{ off, n int64 }{
		{0, 64 << 10},               // aligned
		{8192 + 1234, 40960 - 1234}, // a resumed send: unaligned start, aligned end
		{4096 - 1, 1},               // one byte before a boundary
		{100, 200<<10 - 100},        // more than a 64 KiB pipe
		// A resumed send's next slice, of a part longer than a slice:
		// its end aligned too (a slice of SendSlice from there failed).
		{8192 + 1234, sliceLen(8192+1234, 2<<20-1234)},
	} {
		got := sendOver(t, fdBody{fd}, c.off, c.n)
		if want := data[c.off : c.off+c.n]; !bytes.Equal(got, want) {
			t.Errorf("off %d n %d: %d bytes, equal %v", c.off, c.n, len(got), bytes.Equal(got, want))
		}
	}
}

// directFile writes n random bytes to a file and opens it with O_DIRECT,
// as the flash file is (closed at the test's end); the test is skipped
// where the file system has no O_DIRECT.
func directFile(t *testing.T, n int) ([]byte, int) {
	t.Helper()
	data := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	path := filepath.Join(t.TempDir(), "flash")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no O_DIRECT here: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return data, fd
}

// sendOver sends [off, off+n) of b with sendfile over a loopback
// connection and returns what the peer read.
func sendOver(t *testing.T, b FileBody, off, n int64) []byte {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		p, _ := io.ReadAll(c)
		got <- p
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	sent, err := sendfile(rc, b, off, n, false)
	c.Close()
	if err != nil || sent != n {
		t.Errorf("off %d n %d: sent %d: %v", off, n, sent, err)
	}
	return <-got
}

// TestSendfileWithoutPipe: with no pipe to be had (out of descriptors),
// an aligned range goes by sendfile(2) as it is, and a resumed send from
// an unaligned offset, which sendfile(2) cannot read from an O_DIRECT
// file, says so (errYield: SendFile sends the rest from memory) instead
// of failing the connection with EINVAL.
func TestSendfileWithoutPipe(t *testing.T) {
	data, fd := directFile(t, 256<<10)
	defer func(f func([]int, int) error) { pipe2 = f }(pipe2)
	pipe2 = func([]int, int) error { return unix.EMFILE }
	for drained := false; !drained; { // the pool's pipes first
		select {
		case p := <-pipes.free:
			p.close()
		default:
			drained = true
		}
	}
	if got := sendOver(t, fdBody{fd}, 8192, 64<<10); !bytes.Equal(got, data[8192:8192+64<<10]) {
		t.Fatalf("aligned range without a pipe: %d bytes, equal %v", len(got), bytes.Equal(got, data[8192:8192+64<<10]))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			io.Copy(io.Discard, c) //nolint:errcheck
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if sent, err := sendfile(rc, fdBody{fd}, 8192+1234, 4096-1234, false); err != errYield || sent != 0 {
		t.Fatalf("unaligned resume without a pipe: sent %d, %v; want errYield", sent, err)
	}
}
