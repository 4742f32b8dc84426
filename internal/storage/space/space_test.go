package space

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

func TestFreeAndCheck(t *testing.T) {
	dir := t.TempDir()
	n, err := Free(dir)
	if err != nil || n <= 0 {
		t.Fatalf("Free(%s) = %d, %v", dir, n, err)
	}
	if err := Check(nil, dir, 1); err != nil {
		t.Errorf("Check of 1 byte: %v", err)
	}
	if err := Check(nil, dir, n+1<<40); !errors.Is(err, ErrNoSpace) {
		t.Errorf("Check of a TiB more than free: %v", err)
	}
	failing := func(string) (int64, error) { return 0, os.ErrPermission }
	if err := Check(failing, dir, 1<<60); err != nil {
		t.Errorf("Check that cannot ask: %v, want nil (the write will tell)", err)
	}
	if !IsNoSpace(fmt.Errorf("write: %w", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC})) || IsNoSpace(os.ErrClosed) {
		t.Error("IsNoSpace")
	}
}
