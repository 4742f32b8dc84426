package ramfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Files of one object's own are created where the arena's Options.Tmpfs
// says: in a tmpfs whose files the kernel backs with large folios
// (huge=within_size: pages of 8 KiB to 2 MiB, as large as fit within the
// file's size), or as memory files (memfd_create(2)), whose pages are 4
// KiB wherever the system's shmem THP setting is "never", its default.
// A send's kernel work is per folio: from a within_size tmpfs a 100 KiB
// object's sendfile(2) took 9.4 µs of system time against 18-20 µs from
// a memory file, a 1 MiB object's 116 µs against 160-200 µs (nginx's
// cache file on ext4, in large folios too: 14 µs and 143 µs), the memory
// the same (the object's size rounded to 4 KiB). Decision 0042.
const (
	// TmpfsAuto: a tmpfs of the process's own, mounted nowhere (fsopen(2),
	// fsmount(2): no other process sees it; it goes with the process),
	// where the process may mount one (CAP_SYS_ADMIN); memory files
	// elsewhere.
	TmpfsAuto = "auto"
	// TmpfsOff: memory files.
	TmpfsOff = "off"
)

// MaxFolio bounds the folios of a tmpfs file. A socket a send has handed
// a file's bytes to holds the whole folio they lie in until the client
// has them, after the object is released too: with folios as large as
// the file (a 1 MiB object one folio), 400 stalled clients each owed the
// last 16 KiB of a released 1 MiB object held 400 MiB outside any count,
// against a few MiB with 4 KiB pages. With folios of at most 64 KiB, a
// stalled client holds at most that beyond the bytes it is owed, and a
// send keeps nearly all the gain (1 MiB: 16 folios, not 256; 94 against
// 101 µs of system time with one folio, 173 µs with 4 KiB pages).
const MaxFolio = 64 << 10

// tmpfsMagic is statfs(2)'s f_type of a tmpfs.
const tmpfsMagic = 0x01021994

// openTmpfs returns a descriptor of the directory the arena creates its
// files in and a description of it, for spec (Options.Tmpfs: TmpfsAuto,
// TmpfsOff or a directory), or -1 for memory files. size bounds a tmpfs
// of the process's own. An error only for a directory that will not do.
func openTmpfs(spec string, size int64) (int, string, error) {
	switch spec {
	case TmpfsOff:
		return -1, "memfd", nil
	case "", TmpfsAuto:
		fd, err := privateTmpfs(size)
		if err != nil {
			return -1, "memfd (no tmpfs of its own: " + err.Error() + ")", nil
		}
		if err := probe(fd); err != nil {
			unix.Close(fd) //nolint:errcheck
			return -1, "memfd (" + err.Error() + ")", nil
		}
		return fd, "tmpfs of its own, huge=within_size", nil
	}
	fd, err := openDir(spec)
	if err != nil {
		return -1, "", err
	}
	desc := "tmpfs " + spec
	if h := hugeOption(fd); h == "" || h == "never" {
		desc += " (mounted without huge=within_size: 4 KiB pages)"
	}
	return fd, desc, nil
}

// CheckTmpfs reports why spec (Options.Tmpfs) will not do, if it is a
// directory that will not: not there, not a tmpfs, or refusing the files
// the arena makes. Nil for TmpfsAuto and TmpfsOff.
func CheckTmpfs(spec string) error {
	if spec == "" || spec == TmpfsAuto || spec == TmpfsOff {
		return nil
	}
	fd, err := openDir(spec)
	if err == nil {
		unix.Close(fd) //nolint:errcheck
	}
	return err
}

// openDir opens the operator's directory for the arena's files, checked.
func openDir(spec string) (int, error) {
	fd, err := unix.Open(spec, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("ramfile: RAM's tmpfs directory: %w", &os.PathError{Op: "open", Path: spec, Err: err})
	}
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil || st.Type != tmpfsMagic {
		unix.Close(fd) //nolint:errcheck
		return -1, fmt.Errorf("ramfile: RAM's tmpfs directory %s is not on a tmpfs (its files would go to disk)", spec)
	}
	if err := probe(fd); err != nil {
		unix.Close(fd) //nolint:errcheck
		return -1, fmt.Errorf("ramfile: RAM's tmpfs directory %s: %w", spec, err)
	}
	return fd, nil
}

// hugeOption is the huge= option of the tmpfs dir is on ("" if none or
// not found), from /proc/self/mountinfo: the mount whose device is dir's.
func hugeOption(dir int) string {
	var st unix.Stat_t
	if unix.Fstat(dir, &st) != nil {
		return ""
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[2] != dev {
			continue
		}
		for i, x := range f {
			if x != "-" || i+3 >= len(f) {
				continue
			}
			for _, o := range strings.Split(f[i+3], ",") {
				if h, ok := strings.CutPrefix(o, "huge="); ok {
					return h
				}
			}
		}
		return ""
	}
	return ""
}

// privateTmpfs mounts a tmpfs of size bytes (whole pages) with large
// folios nowhere and returns its root's descriptor.
func privateTmpfs(size int64) (int, error) {
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsopen: %w", err)
	}
	defer unix.Close(fs) //nolint:errcheck
	size = (size + pageSize - 1) / pageSize * pageSize
	for _, kv := range [][2]string{{"huge", "within_size"}, {"size", strconv.FormatInt(size, 10)}, {"mode", "0700"}} {
		if err := unix.FsconfigSetString(fs, kv[0], kv[1]); err != nil {
			return -1, fmt.Errorf("tmpfs %s=%s: %w", kv[0], kv[1], err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return -1, fmt.Errorf("tmpfs: %w", err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOEXEC|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return -1, fmt.Errorf("fsmount: %w", err)
	}
	return mnt, nil
}

// probe makes, writes and reads back a file in dir as the arena would.
func probe(dir int) error {
	fd, err := tmpfsFile(dir, []byte("strata"))
	if err != nil {
		return err
	}
	defer unix.Close(fd) //nolint:errcheck
	b := make([]byte, 7)
	if n, err := unix.Pread(fd, b, 0); err != nil || string(b[:n]) != "strata" {
		return errors.New("a file read back other bytes")
	}
	if _, err := unix.Pwrite(fd, b, 0); err == nil {
		return errors.New("a file reopened read only took a write")
	}
	return nil
}

// tmpfsFile returns a read-only descriptor of a new file in dir holding
// data, named nowhere (O_TMPFILE): the file goes with its last
// descriptor or mapping. The descriptor it was written through is closed:
// no descriptor that can change it is left (a memory file is sealed
// instead; a tmpfs file cannot be).
func tmpfsFile(dir int, data []byte) (int, error) {
	w, err := unix.Openat(dir, ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return -1, fmt.Errorf("O_TMPFILE: %w", err)
	}
	defer unix.Close(w) //nolint:errcheck
	// Written MaxFolio bytes at a time, the file growing with each write:
	// huge=within_size gives each write folios within the file's size
	// then, so no folio is larger than MaxFolio.
	for off := 0; off < len(data); off += MaxFolio {
		if err := pwriteAll(w, data[off:min(off+MaxFolio, len(data))], int64(off)); err != nil {
			return -1, err
		}
	}
	// No path may reopen it for writing (/proc/PID/fd/N, as its user or
	// root can): read only for its owner, and immutable where the
	// process may say so (CAP_LINUX_IMMUTABLE, which root has; a tmpfs
	// file cannot be sealed). The kernel still frees it with its last
	// descriptor.
	if err := unix.Fchmod(w, 0o400); err != nil {
		return -1, err
	}
	unix.IoctlSetPointerInt(w, unix.FS_IOC_SETFLAGS, fsImmutableFL) //nolint:errcheck // best effort: EPERM without the capability
	r, err := unix.Open("/proc/self/fd/"+strconv.Itoa(w), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("reopening read only: %w", err)
	}
	return r, nil
}

// pwriteAll writes data at at in fd.
func pwriteAll(fd int, data []byte, at int64) error {
	for off := 0; off < len(data); {
		k, err := unix.Pwrite(fd, data[off:], at+int64(off))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case k <= 0:
			return errors.New("short write")
		}
		off += k
	}
	return nil
}

// fsImmutableFL is FS_IMMUTABLE_FL (linux/fs.h), which x/sys/unix does
// not name.
const fsImmutableFL = 0x10
