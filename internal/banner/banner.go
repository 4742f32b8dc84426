// Package banner is the listening line of strata serve's start banner (or
// its JSON log line, with --log-format json):
// the server prints it, and everything that starts a server and needs its
// URL (strata-lab soak and torture, the tests, the scripts) reads it here.
package banner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Listening labels the banner line that carries the node's URL.
const Listening = "listening  "

// JSONMessage is the msg of the banner's JSON log line (strata serve
// --log-format json), whose "url" is the node's URL.
const JSONMessage = "strata serve started"

// URL returns the URL of a banner line, if it is the listening line or
// the JSON banner's line.
func URL(line string) (string, bool) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		var rec struct{ Msg, URL string }
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != JSONMessage || rec.URL == "" {
			return "", false
		}
		return rec.URL, true
	}
	u, ok := strings.CutPrefix(line, Listening)
	if !ok {
		return "", false
	}
	return u, true
}

// Start starts cmd, whose Stdout must be unset, and returns once it has
// printed its listening line, with the URL and a channel closed when the
// process has exited (Start has called cmd.Wait by then: callers wait on
// the channel, never on cmd). It fails if the process exits first or
// prints no URL within timeout; then the process is killed and reaped.
func Start(cmd *exec.Cmd, timeout time.Duration) (string, <-chan struct{}, error) {
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan struct{})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		found := false
		for sc.Scan() {
			if u, ok := URL(sc.Text()); ok && !found {
				found = true
				urls <- u
			}
		}
		io.Copy(io.Discard, out) // a line too long for the scanner
		cmd.Wait()
		close(exited)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case u := <-urls:
		return u, exited, nil
	case <-exited:
		return "", nil, fmt.Errorf("%s exited before listening: %v", cmd.Path, cmd.ProcessState)
	case <-t.C:
		cmd.Process.Kill()
		<-exited
		return "", nil, errors.New(cmd.Path + " printed no URL within " + timeout.String())
	}
}
