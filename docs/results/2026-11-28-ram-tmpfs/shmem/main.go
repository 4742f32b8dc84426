//go:build ignore

// Shared memory taken by tmpfs files of large folios, as the arena makes
// them (a tmpfs mounted nowhere with huge=within_size, O_TMPFILE files
// written 64 KiB at a time, reopened read only): N files of SIZE bytes,
// the rise of Shmem in /proc/meminfo against the size rounded to 4 KiB
// pages. As root, from the repository's root:
//
//	go run docs/results/2026-11-28-ram-tmpfs/shmem/main.go SIZE N
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

func shmem() int64 {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Shmem:") {
			f := strings.Fields(l)
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	return 0
}

func main() {
	size, _ := strconv.Atoi(os.Args[1])
	n, _ := strconv.Atoi(os.Args[2])
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		panic(err)
	}
	if err := unix.FsconfigSetString(fs, "huge", "within_size"); err != nil {
		panic(err)
	}
	if err := unix.FsconfigSetString(fs, "size", "4g"); err != nil {
		panic(err)
	}
	if err := unix.FsconfigSetString(fs, "mode", "0700"); err != nil {
		panic(err)
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		panic(err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOEXEC|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		panic(err)
	}
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	s0 := shmem()
	var fds []int
	for i := 0; i < n; i++ {
		fd, err := unix.Openat(mnt, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0600)
		if err != nil {
			panic(err)
		}
		for o := 0; o < size; o += 64 << 10 { // as the arena writes (ramfile.MaxFolio)
			if _, err := unix.Pwrite(fd, data[o:min(o+64<<10, size)], int64(o)); err != nil {
				panic(err)
			}
		}
		ro, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			panic(err)
		}
		unix.Close(fd)
		fds = append(fds, ro)
	}
	s1 := shmem()
	fmt.Printf("size=%d n=%d shmem delta=%d per file=%d (pages %d)\n", size, n, s1-s0, (s1-s0)/int64(n), (size+4095)/4096*4096)
	for _, f := range fds {
		unix.Close(f)
	}
	fmt.Println("after close delta", shmem()-s0)
}
