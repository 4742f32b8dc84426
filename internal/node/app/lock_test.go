package app

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Two nodes on one data directory: the second fails naming the first's
// pid and opens nothing; once the first closes, the directory opens.
func TestDataDirectoryLock(t *testing.T) {
	cfg := testConfig(t)
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var log closedLog
	second, err := Open(context.Background(), cfg, Options{Logger: log.logger()})
	if err == nil {
		second.Close()
		n.Close()
		t.Fatal("a second node opened a locked data directory")
	}
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second Open: %v, want ErrLocked naming pid %d", err, os.Getpid())
	}
	if got := log.closed(t); len(got) != 0 {
		t.Errorf("the refused node opened and closed %q", got)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n, err = Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	n.Close()
}

// A real second process holds the lock: Open names its pid; when it
// exits, the kernel releases the lock.
func TestDataDirectoryLockOtherProcess(t *testing.T) {
	if dir := os.Getenv("STRATA_TEST_HOLD_LOCK"); dir != "" {
		unlock, err := lockData(dir)
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		bufio.NewReader(os.Stdin).ReadString('\n') // hold until the parent closes stdin
		unlock()                                   // keeps the lock file reachable until here
		os.Exit(0)
	}
	cfg := testConfig(t)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestDataDirectoryLockOtherProcess$")
	cmd.Env = append(os.Environ(), "STRATA_TEST_HOLD_LOCK="+cfg.Data)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("the helper process did not take the lock: %q %v", line, err)
	}
	_, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("Open beside process %d: %v", cmd.Process.Pid, err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	n, err := Open(context.Background(), cfg, Options{Logger: quiet})
	if err != nil {
		t.Fatalf("after the holder exited: %v", err)
	}
	n.Close()
}
