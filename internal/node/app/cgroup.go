package app

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupUnlimited is the smallest value read as "no limit": cgroup v1
// writes its page counter's maximum, 9223372036854771712 on 4 KiB pages,
// into memory.limit_in_bytes of a group without a limit.
const cgroupUnlimited = 1 << 62

// CgroupMemoryLimit is the memory limit of the calling process's cgroup,
// bytes, with the file it was read from, read under root ("/"; a fixture
// directory in tests): the smallest limit set on the process's group or
// any group above it (a limit on a parent binds its children too). cgroup
// v2's memory.max (of the "0::" line of /proc/self/cgroup, under
// /sys/fs/cgroup) is tried first, then v1's memory.limit_in_bytes (of the
// "memory" line, under /sys/fs/cgroup/memory). 0 and no file: no limit
// ("max" in v2, v1's maximum, or no memory controller). A group whose
// directory is not under the mount (a container's own cgroup namespace,
// whose mount is its group) is looked for at its ancestors' paths.
func CgroupMemoryLimit(root string) (limit int64, file string, err error) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, "", err
	}
	v2, v1, ok2, ok1 := parseProcCgroup(b)
	if ok2 {
		limit, file, err = smallestLimit(root, "sys/fs/cgroup", v2, "memory.max")
		if err != nil || limit > 0 {
			return limit, file, err
		}
	}
	if ok1 {
		return smallestLimit(root, "sys/fs/cgroup/memory", v1, "memory.limit_in_bytes")
	}
	return 0, "", nil
}

// parseProcCgroup finds the process's cgroup v2 path (the "0::" line)
// and its v1 memory controller's path in /proc/self/cgroup.
func parseProcCgroup(b []byte) (v2, v1 string, ok2, ok1 bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		id, rest, _ := strings.Cut(sc.Text(), ":")
		controllers, p, found := strings.Cut(rest, ":")
		if !found {
			continue
		}
		switch {
		case id == "0" && controllers == "":
			v2, ok2 = p, true
		case hasController(controllers, "memory"):
			v1, ok1 = p, true
		}
	}
	return v2, v1, ok2, ok1
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// smallestLimit reads name in the group dir (a path of /proc/self/cgroup)
// under root/mount and in every group above it, and returns the smallest
// limit found with its file ("/"-rooted); 0 when none is set.
func smallestLimit(root, mount, dir, name string) (limit int64, file string, err error) {
	for p := path.Clean("/" + dir); ; p = path.Dir(p) {
		f := path.Join("/", mount, p, name)
		b, err := os.ReadFile(filepath.Join(root, f))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return 0, "", err
		default:
			v, err := parseCgroupLimit(b)
			if err != nil {
				return 0, "", fmt.Errorf("%s: %w", f, err)
			}
			if v > 0 && (limit == 0 || v < limit) {
				limit, file = v, f
			}
		}
		if p == "/" {
			return limit, file, nil
		}
	}
}

// parseCgroupLimit parses memory.max or memory.limit_in_bytes: bytes, or
// "max" (v2) or a number of cgroupUnlimited and more (v1) for no limit,
// which is 0.
func parseCgroupLimit(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("memory limit %q: not a number of bytes or max", s)
	}
	if v >= cgroupUnlimited {
		return 0, nil
	}
	return int64(v), nil
}
