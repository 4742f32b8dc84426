package device

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteStreams(t *testing.T) {
	root := t.TempDir()
	q := filepath.Join(root, "block", "nvme0n1", "queue")
	os.MkdirAll(q, 0o755)
	os.WriteFile(filepath.Join(q, "max_write_streams"), []byte("8\n"), 0o644)
	if n, msg := WriteStreams(root, "nvme0n1"); n != 8 || !strings.Contains(msg, "8 write streams") {
		t.Fatalf("%d %q", n, msg)
	}
	if n, msg := WriteStreams(root, "sda"); n != 0 || !strings.Contains(msg, "not present") {
		t.Fatalf("%d %q", n, msg)
	}
	os.WriteFile(filepath.Join(q, "max_write_streams"), []byte("0\n"), 0o644)
	if n, msg := WriteStreams(root, "nvme0n1"); n != 0 || !strings.Contains(msg, "offers none") {
		t.Fatalf("%d %q", n, msg)
	}
}
