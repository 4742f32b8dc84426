// Package s3test runs a real S3 server for tests: versitygw (pinned in
// scripts/versitygw.sh) over a temporary directory, on a port of
// 127.0.0.1. Without versitygw, and when it cannot be installed, a test
// that asks for a server is skipped, unless the environment sets
// STRATA_REQUIRE_S3 (make test does), where it fails.
package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Credentials of the servers' root account.
const (
	AccessKey = "strata-test-access"
	SecretKey = "strata-test-secret-4f9c2a"
)

// Bucket is the bucket Start creates.
const Bucket = "strata-test"

// readyAttempts bounds the connection attempts of a starting server, and
// readyPause paces them: 1500 × 20 ms, half a minute on a loaded machine.
const (
	readyAttempts = 1500
	readyPause    = 20 * time.Millisecond
)

// A Server is a running versitygw.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:PORT.
	Endpoint string

	bin, dir, addr string
	proc           *process
}

// process is one run of versitygw.
type process struct {
	cmd    *exec.Cmd
	out    bytes.Buffer // stdout and stderr, shown when a test fails
	exited chan struct{}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Require skips t without versitygw, or fails it when S3 is required,
// and returns the binary's path.
func Require(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() { binPath, binErr = install() })
	if binErr == nil {
		return binPath
	}
	if os.Getenv("STRATA_REQUIRE_S3") != "" {
		t.Fatalf("s3test: STRATA_REQUIRE_S3 is set but versitygw is unavailable: %v", binErr)
	}
	t.Skipf("s3test: versitygw unavailable (set STRATA_REQUIRE_S3=1 to fail instead): %v", binErr)
	return ""
}

// install returns versitygw's path: $STRATA_VERSITYGW, or what
// scripts/versitygw.sh installs.
func install() (string, error) {
	if p := os.Getenv("STRATA_VERSITYGW"); p != "" {
		return exec.LookPath(p)
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "scripts", "versitygw.sh"))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/versitygw.sh: %v\n%s", err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out)), nil
}

// repoRoot finds the directory of go.mod above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Start runs a server over a new temporary directory, creates Bucket in
// it, and stops it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{bin: Require(t), dir: t.TempDir()}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() && s.proc != nil {
			t.Logf("versitygw output:\n%s", s.proc.out.String())
		}
	})
	var err error
	for range 3 { // another process may take the port between probe and start
		if s.addr, err = freeAddr(); err == nil {
			if err = s.start(); err == nil {
				break
			}
		}
	}
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	s.Endpoint = "http://" + s.addr
	if err := s.Client(t).MakeBucket(context.Background(), Bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatalf("s3test: make bucket: %v", err)
	}
	return s
}

// freeAddr returns an address of 127.0.0.1 with a port free right now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// start runs versitygw and waits until it answers.
func (s *Server) start() error {
	p := &process{exited: make(chan struct{})}
	p.cmd = exec.Command(s.bin, "--port", s.addr, "--quiet", "posix", s.dir)
	p.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+AccessKey, "ROOT_SECRET_KEY="+SecretKey)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start versitygw: %w", err)
	}
	s.proc = p
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return s.waitReady()
}

// waitReady polls the server with HTTP requests until it answers, it
// exits, or readyAttempts fail.
func (s *Server) waitReady() error {
	client := &http.Client{Timeout: time.Second}
	for range readyAttempts {
		select {
		case <-s.proc.exited:
			return fmt.Errorf("versitygw exited: %v\n%s", s.proc.cmd.ProcessState, s.proc.out.String())
		default:
		}
		resp, err := client.Get("http://" + s.addr + "/")
		if err == nil {
			resp.Body.Close()
			return nil // any answer, 403 included: it serves S3
		}
		time.Sleep(readyPause)
	}
	s.Stop()
	return fmt.Errorf("versitygw on %s did not answer after %d attempts", s.addr, readyAttempts)
}

// Stop kills the server and waits for it to exit. The directory stays,
// for Restart.
func (s *Server) Stop() {
	if s.proc == nil {
		return
	}
	_ = s.proc.cmd.Process.Kill()
	<-s.proc.exited
}

// Restart starts the server again on the same address and directory,
// after Stop.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		t.Fatalf("s3test: restart: %v", err)
	}
}

// Client returns a minio-go client of the server, as its root account.
func (s *Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	c, err := minio.New(s.addr, &minio.Options{
		Creds:        credentials.NewStaticV4(AccessKey, SecretKey, ""),
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatalf("s3test: client: %v", err)
	}
	return c
}
