//go:build ignore

// Memory held by stalled sends of released objects' last bytes, by how
// the objects' files were made (decision 0042's review): N connections
// whose client reads nothing, each sent the last 16 KiB of a 1 MiB file
// that is then closed; the drop in MemAvailable. From the repository's
// root, as root (a tmpfs of its own):
//
//	go run docs/results/2026-11-28-ram-tmpfs/pin/main.go memfd|tmpfs|tmpfs64 400
//
// tmpfs: the file sized first, then written whole (folios up to its
// size); tmpfs64: written 64 KiB at a time (ramfile.MaxFolio).
package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func memAvail() int64 {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "MemAvailable:") {
			f := strings.Fields(l)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v << 10
		}
	}
	return 0
}

func main() {
	mode := os.Args[1]
	n, _ := strconv.Atoi(os.Args[2])
	size := 1 << 20
	var dir int
	if mode != "memfd" {
		fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
		if err != nil {
			panic(err)
		}
		unix.FsconfigSetString(fs, "huge", "within_size")
		unix.FsconfigCreate(fs)
		dir, err = unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, 0)
		if err != nil {
			panic(err)
		}
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i)
	}
	before := memAvail()
	var keep []any
	for i := 0; i < n; i++ {
		var fd int
		var err error
		if mode != "memfd" {
			fd, err = unix.Openat(dir, ".", unix.O_TMPFILE|unix.O_RDWR, 0o600)
		} else {
			fd, err = unix.MemfdCreate("x", 0)
		}
		if err != nil {
			panic(err)
		}
		if mode == "tmpfs64" {
			for o := 0; o < size; o += 64 << 10 {
				unix.Pwrite(fd, data[o:o+64<<10], int64(o))
			}
		} else {
			unix.Ftruncate(fd, int64(size))
			unix.Pwrite(fd, data, 0)
		}
		d := net.Dialer{Control: nil}
		c, _ := d.Dial("tcp", ln.Addr().String())
		s, _ := ln.Accept()
		// the client reads nothing; a small receive buffer
		cf, _ := c.(*net.TCPConn).File()
		unix.SetsockoptInt(int(cf.Fd()), unix.SOL_SOCKET, unix.SO_RCVBUF, 4096)
		sf, _ := s.(*net.TCPConn).File()
		sfd := int(sf.Fd())
		unix.SetsockoptInt(sfd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
		// the object's last 16 KiB: what is still in flight after the last send returns
		off := int64(size - 16<<10)
		unix.SetNonblock(sfd, true)
		if os.Getenv("NOSEND") == "" {
			unix.Sendfile(sfd, fd, &off, 16<<10)
		}
		unix.Close(fd) // the object released: its file closed
		keep = append(keep, c, s, cf, sf)
	}
	time.Sleep(500 * time.Millisecond)
	after := memAvail()
	fmt.Printf("%s: %d stalled tails of released 1 MiB objects: MemAvailable down %.1f MiB\n", mode, n, float64(before-after)/(1<<20))
	_ = keep
}
