package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/node/engine"
)

// ramFilesServer is frontServerOn with RAM's objects in memory files
// (engine.Options.RAMFiles), its sends watched.
func ramFilesServer(t *testing.T) (addr string, get func(o ident.Object) *http.Response, want func(o ident.Object) []byte, objs []ident.Object, eng *engine.Engine, sends *fileSends) {
	sends = &fileSends{}
	addr, syn, eng := frontServerOn(t, true, false, func(o *engine.Options) { o.RAMFiles = true }, sends)
	if _, ok := eng.RAMFiles(); !ok {
		t.Fatal("no memory files for RAM")
	}
	want = func(o ident.Object) []byte { b, _ := syn.Expected(o); return b }
	objs = objectsOf(t, syn)
	sort.Slice(objs, func(i, j int) bool { return len(want(objs[i])) > len(want(objs[j])) })
	get = func(o ident.Object) *http.Response {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/videos/" + o.Path())
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	return addr, get, want, objs, eng, sends
}

// A RAM hit whose bytes lie in a memory file goes out from the file
// (sendfile, no copy): the object's bytes, as the miss before it. The
// hits after the first within a second go out with the header the Front
// laid out for it (decision 0040): the same fields, less Date.
func TestRAMHitSentFromMemoryFile(t *testing.T) {
	_, get, want, objs, eng, sends := ramFilesServer(t)
	o := objs[len(objs)/2] // hundreds of KiB: within RAM's 16 MiB, above the files' minimum
	var first http.Header
	for i, tierWant := range []string{"origin", "ram", "ram", "ram", "ram"} {
		resp := get(o)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !bytes.Equal(body, want(o)) || resp.Header.Get("X-Strata-Tier") != tierWant {
			t.Fatalf("request %d of %s: %d from %q, %d bytes (want %d from %s), equal %v", i, o, resp.StatusCode,
				resp.Header.Get("X-Strata-Tier"), len(body), len(want(o)), tierWant, bytes.Equal(body, want(o)))
		}
		resp.Header.Del("Date")
		if i == 1 {
			first = resp.Header
		} else if i > 1 && !reflect.DeepEqual(resp.Header, first) {
			t.Fatalf("RAM hit %d's fields %v, the first's %v", i, resp.Header, first)
		}
	}
	if sends.parts() == 0 {
		t.Fatal("the RAM hits were not sent from a file")
	}
	sends.mu.Lock()
	laid := sends.laid
	sends.mu.Unlock()
	if laid == 0 {
		t.Fatal("no RAM hit went out with a laid header")
	}
	if st, _ := eng.RAMFiles(); st.Made == 0 || st.Files == 0 {
		t.Fatalf("memory files: %+v", st)
	}
}

// A RAM hit sent to a client that stops reading, while its object leaves
// RAM (invalidated, others inserted, the collector run): the client still
// gets the object's bytes whole, and once the answer is out the object's
// range of a memory file is released.
func TestRAMHitSlowClientOutlivesEviction(t *testing.T) {
	addr, get, want, objs, eng, sends := ramFilesServer(t)
	o := objs[0]              // the largest: MiBs, more than the socket buffers take
	if len(want(o)) < 6<<20 { // more than the socket buffers take
		t.Fatalf("the largest object is %d bytes", len(want(o)))
	}
	for range 2 {
		resp := get(o)
		io.Copy(io.Discard, resp.Body) //nolint:errcheck
		resp.Body.Close()
	}
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) }) //nolint:errcheck
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := sends.parts()
	fmt.Fprintf(c, "GET /videos/%s HTTP/1.1\r\nHost: x\r\n\r\n", o.Path())
	for stop := time.Now().Add(time.Minute); sends.parts() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(stop) {
			t.Fatal("the answer to a client that reads nothing was not sent from a file in a minute")
		}
	}
	if err := eng.Invalidate(o.Video + "/"); err != nil {
		t.Fatal(err)
	}
	for _, other := range objs[1:12] { // others take RAM, and its files
		resp := get(other)
		io.Copy(io.Discard, resp.Body) //nolint:errcheck
		resp.Body.Close()
	}
	runtime.GC()
	runtime.GC()
	// The stalled send holds the object, out of RAM as it is: its range
	// of a memory file is not released (the cursor has moved on past it,
	// so its regions would be freed, and the rest of the send would read
	// holes: the body compared below).
	held, _ := eng.RAMFiles()
	if held.FileBytes < int64(len(want(o))) {
		t.Fatalf("memory files hold %d bytes during the send of a %d byte object: %+v", held.FileBytes, len(want(o)), held)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(body, want(o)) || resp.Header.Get("X-Strata-Tier") != "ram" {
		t.Fatalf("after the stall: %v, %d bytes of %d from %q, equal %v", err, len(body), len(want(o)),
			resp.Header.Get("X-Strata-Tier"), bytes.Equal(body, want(o)))
	}
	c.Close()
	// Once the answer is out, the object's range is released: nothing
	// else comes or goes meanwhile.
	for stop := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, _ := eng.RAMFiles()
		if st.FileBytes <= held.FileBytes-int64(len(want(o))) {
			break
		}
		if time.Now().After(stop) {
			t.Fatalf("the object's range of a memory file is held after the answer: %+v, during the send %+v", st, held)
		}
		runtime.GC()
	}
}
