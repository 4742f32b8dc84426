package banner

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestURL(t *testing.T) {
	for line, want := range map[string]string{
		"  listening  http://127.0.0.1:8080\n": "http://127.0.0.1:8080",
		"listening  https://[::1]:1":           "https://[::1]:1",
		"  flash  /tmp/x":                      "",
		"listening http://x":                   "", // one space: not the label
		`{"time":"t","level":"INFO","msg":"strata serve started","data":"d","url":"http://127.0.0.1:7"}`: "http://127.0.0.1:7",
		`{"msg":"another line","url":"http://x"}`:                                                        "",
		`{"msg":"strata serve started"}`:                                                                 "",
	} {
		got, ok := URL(line)
		if got != want || ok != (want != "") {
			t.Errorf("URL(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

// Start reads the URL from a real process's output, reports one that
// exits without it, and kills one that prints nothing in time.
func TestStart(t *testing.T) {
	sh := func(script string) *exec.Cmd { return exec.Command("/bin/sh", "-c", script) }
	u, exited, err := Start(sh("echo strata; echo '  listening  http://127.0.0.1:9'; echo more; exit 0"), 10*time.Second)
	if err != nil || u != "http://127.0.0.1:9" {
		t.Fatalf("Start = %q, %v", u, err)
	}
	<-exited
	if _, _, err := Start(sh("echo nothing"), 10*time.Second); err == nil || !strings.Contains(err.Error(), "exited before listening") {
		t.Errorf("exit without a URL: %v", err)
	}
	// Start returns only once the killed process is reaped.
	if _, _, err := Start(sh("exec sleep 600"), 100*time.Millisecond); err == nil || !strings.Contains(err.Error(), "no URL within") {
		t.Errorf("silent process: %v", err)
	}
}
