package ramfile

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func object(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func TestPutKeepsTheBytesSealed(t *testing.T) {
	a, err := New(Options{Live: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	data := object(100<<10+7, 1)
	f, ok := a.Put(data)
	if !ok {
		t.Fatalf("Put refused %d bytes: %+v", len(data), a.Stats())
	}
	if !bytes.Equal(f.Bytes(), data) || f.Len() != int64(len(data)) {
		t.Fatal("the file's bytes are not the object's")
	}
	// The file cannot be changed, grown or shrunk: its bytes are the
	// object's for as long as anyone holds a page of it.
	if _, err := unix.Pwrite(f.res.fd, []byte("x"), 0); err == nil {
		t.Fatal("a write to a sealed file succeeded")
	}
	if err := unix.Ftruncate(f.res.fd, 1); err == nil {
		t.Fatal("a sealed file was shrunk")
	}
	if _, ok := a.Put(make([]byte, MinObject-1)); ok {
		t.Fatal("an object below the minimum went into a file")
	}
	b := f.Range(100, 1000)
	rest, err := b.Rest(10)
	if err != nil || !bytes.Equal(rest, data[110:1100]) {
		t.Fatalf("Rest(10) of the range at 100: %v", err)
	}
	if off, n, mem, err := b.Part(0); off != 100 || n != 1000 || mem != nil || err != nil || b.Parts() != 1 {
		t.Fatalf("Part(0) = %d, %d, %v, %v", off, n, mem != nil, err)
	}
	s := a.Stats()
	if s.Files != 1 || s.Bytes != 104<<10 || s.Made != 2 { // New's check made one
		t.Fatalf("stats %+v: want 1 file of 104 KiB (pages)", s)
	}
	runtime.KeepAlive(f)
}

// TestUnusedFilesAreClosed: a file nothing holds is closed once the
// collector has run, and its bytes return to the limit, which refuses
// objects while it is reached.
func TestUnusedFilesAreClosed(t *testing.T) {
	a, err := New(Options{Live: 256 << 10, Limit: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	f1, ok1 := a.Put(object(128<<10, 1))
	f2, ok2 := a.Put(object(128<<10, 2))
	if !ok1 || !ok2 {
		t.Fatal("two objects within the limit refused")
	}
	if _, ok := a.Put(object(64<<10, 3)); ok {
		t.Fatal("an object past the limit went into a file")
	}
	if s := a.Stats(); s.Refused != 1 || s.Collections == 0 {
		t.Fatalf("stats %+v: want 1 refused, a collection asked for", s)
	}
	keep := f2.Bytes()
	f1 = nil
	_ = f1
	closed := func() bool {
		for range 50 {
			runtime.GC()
			if a.Stats().Closed >= 2 { // New's check closed one
				return true
			}
			time.Sleep(10 * time.Millisecond)
		}
		return false
	}
	if !closed() {
		t.Fatalf("the unused file was not closed: %+v", a.Stats())
	}
	if s := a.Stats(); s.Files != 1 || s.Bytes != 128<<10 {
		t.Fatalf("stats %+v: want the held file only", s)
	}
	if _, ok := a.Put(object(64<<10, 4)); !ok {
		t.Fatal("room freed by the closed file was refused")
	}
	if !bytes.Equal(keep, object(128<<10, 2)) {
		t.Fatal("the held file's bytes changed")
	}
	runtime.KeepAlive(f2)
}

// TestSentBytesOutliveTheFile: bytes a send handed to a socket are the
// object's whatever becomes of its file after (closed, its memory given
// to other objects) until the client reads them: the promise that a
// client never receives another object's bytes.
func TestSentBytesOutliveTheFile(t *testing.T) {
	a, err := New(Options{Live: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	defer server.Close()
	const n = 256 << 10
	want := object(n, 7)
	f, ok := a.Put(want)
	if !ok {
		t.Fatal("Put refused")
	}
	rc, err := server.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// Send what the socket takes now (the client reads nothing yet).
	var sent int64
	if err := f.Range(0, n).WithFD(func(fd int) error {
		return rc.Write(func(out uintptr) bool {
			off := int64(0)
			k, e := unix.Sendfile(int(out), fd, &off, n)
			if e != nil && e != unix.EAGAIN {
				t.Errorf("sendfile: %v", e)
			}
			sent = int64(max(k, 0))
			return true
		})
	}); err != nil {
		t.Fatal(err)
	}
	if sent == 0 {
		t.Fatal("nothing sent")
	}
	f.Close()
	for i := range 64 { // fresh files, likely on the pages just freed
		if _, ok := a.Put(bytes.Repeat([]byte{byte(i)}, n)); !ok {
			t.Fatal("Put refused")
		}
	}
	got := make([]byte, sent)
	if _, err := io.ReadFull(client, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want[:sent]) {
		t.Fatalf("the %d bytes sent before the file closed are not the object's", sent)
	}
}

// TestMaxFiles: the files open are bounded by number too (each is a
// descriptor): past it an object stays in the heap.
func TestMaxFiles(t *testing.T) {
	a, err := New(Options{Live: 64 << 20, MaxFiles: 2})
	if err != nil {
		t.Fatal(err)
	}
	f1, ok1 := a.Put(object(40<<10, 1))
	f2, ok2 := a.Put(object(40<<10, 2))
	if !ok1 || !ok2 {
		t.Fatal("two files within the bound refused")
	}
	if _, ok := a.Put(object(40<<10, 3)); ok {
		t.Fatal("a third file past MaxFiles 2")
	}
	if s := a.Stats(); s.Files != 2 || s.Refused != 1 || s.MaxFiles != 2 {
		t.Fatalf("stats %+v", s)
	}
	f1.Close()
	if _, ok := a.Put(object(40<<10, 4)); !ok {
		t.Fatal("refused after a file closed")
	}
	runtime.KeepAlive(f2)
}

// The default bound is half the process's descriptors.
func TestMaxFilesDefault(t *testing.T) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Skip(err)
	}
	a, err := New(Options{Live: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Stats().MaxFiles; got != int64(rl.Cur)/2 {
		t.Fatalf("max files %d, want half of %d", got, rl.Cur)
	}
}
