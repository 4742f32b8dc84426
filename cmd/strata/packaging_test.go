package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/node/app"
)

// repoFile is a file of the repository, from this package's directory.
func repoFile(name string) string { return filepath.Join("..", "..", name) }

// unitKeys reads a systemd unit's Key=Value lines, by section.
func unitKeys(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, section := map[string]map[string][]string{}, ""
	for sc := bufio.NewScanner(f); sc.Scan(); {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || l[0] == '#' || l[0] == ';':
		case l[0] == '[':
			section = strings.Trim(l, "[]")
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(l, "=")
			if !ok || section == "" {
				t.Fatalf("%s: bad line %q", path, l)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

// checkServeArgs checks that args (after the binary's name) are a strata
// serve command line that parses, with the example config standing in
// for the installed one.
func checkServeArgs(t *testing.T, args []string) app.Config {
	t.Helper()
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("command %q is not strata serve", args)
	}
	args = slices.Clone(args[1:])
	for i := range args {
		if i > 0 && args[i-1] == "--config" {
			args[i] = examplePath
		}
	}
	cfg, err := loadServeConfig(args, io.Discard)
	if err != nil {
		t.Fatalf("strata serve %q: %v", args, err)
	}
	return cfg
}

// TestSystemdUnit: the unit runs strata serve with flags it takes, keeps
// the hardening options and lets the data directory be written; systemd's
// own checker finds nothing to say, and rates its exposure "OK".
func TestSystemdUnit(t *testing.T) {
	path := repoFile("packaging/strata.service")
	u := unitKeys(t, path)
	s := u["Service"]
	exec := strings.Fields(s["ExecStart"][0])
	cfg := checkServeArgs(t, exec[1:])
	for k, want := range map[string]string{"NoNewPrivileges": "yes", "ProtectSystem": "strict", "DynamicUser": "yes",
		"ProtectHome": "yes", "PrivateTmp": "yes", "RestrictSUIDSGID": "yes", "CapabilityBoundingSet": ""} {
		if got := s[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s=%v, want %q", k, got, want)
		}
	}
	if !slices.Contains(strings.Fields(strings.Join(s["ReadWritePaths"], " ")), cfg.Data) {
		t.Errorf("ReadWritePaths %v does not hold the data directory %s", s["ReadWritePaths"], cfg.Data)
	}
	if len(s["LimitNOFILE"]) != 1 {
		t.Error("no LimitNOFILE")
	}
	// The stop timeout covers the drain and the wait for handlers.
	stop, err := time.ParseDuration(s["TimeoutStopSec"][0])
	o := (&app.Options{}).EnsureDefaults()
	if err != nil || stop < o.Drain+o.Wait {
		t.Errorf("TimeoutStopSec %v (%v) shorter than the drain %v and wait %v", s["TimeoutStopSec"], err, o.Drain, o.Wait)
	}
	t.Run("systemd-analyze", func(t *testing.T) { systemdAnalyze(t, path) })
}

// systemdAnalyze runs systemd-analyze verify and security on a copy of the
// unit whose ExecStart is an executable of this machine (verify checks it
// exists).
func systemdAnalyze(t *testing.T, path string) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "strata.service")
	if err := os.WriteFile(unit, []byte(strings.ReplaceAll(string(b), "/usr/local/bin/strata", self)), 0o644); err != nil {
		t.Fatal(err)
	}
	// verify exits 0 on unknown keys, with a warning: any output fails.
	out, err := exec.Command(tool, "verify", "--man=no", unit).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// Exposure on systemd's 0-100 scale: 20 is its "OK" 2.0.
	out, err = exec.Command(tool, "security", "--offline=yes", "--threshold=20", "--no-pager", unit).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze security: %v\n%s", err, out)
	}
	if i := strings.Index(string(out), "Overall exposure level"); i >= 0 {
		t.Logf("%s", strings.TrimSpace(string(out[i:])))
	}
}

// dockerInstructions reads a Dockerfile's instructions, continuation
// lines joined, comments dropped.
func dockerInstructions(t *testing.T, path string) [][2]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	var cur strings.Builder
	for l := range strings.SplitSeq(string(b), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || l == "" && cur.Len() == 0 {
			continue
		}
		if c, ok := strings.CutSuffix(l, "\\"); ok {
			cur.WriteString(c + " ")
			continue
		}
		cur.WriteString(l)
		op, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, [2]string{strings.ToUpper(op), strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

// TestDockerfile checks the Dockerfile without docker: known
// instructions, a build stage on Go 1.26, a runtime stage that runs as a
// user other than root the binary built in the first, files copied from
// the repository that exist, and an entrypoint strata serve accepts.
func TestDockerfile(t *testing.T) {
	known := map[string]bool{"FROM": true, "RUN": true, "COPY": true, "WORKDIR": true, "ARG": true, "ENV": true, "USER": true,
		"VOLUME": true, "EXPOSE": true, "ENTRYPOINT": true, "CMD": true, "LABEL": true, "HEALTHCHECK": true}
	var froms []string
	var user string
	var entry []string
	copiedBuild := false
	for _, in := range dockerInstructions(t, repoFile("packaging/Dockerfile")) {
		op, args := in[0], in[1]
		if !known[op] {
			t.Errorf("unknown instruction %s %s", op, args)
		}
		f := strings.Fields(args)
		switch op {
		case "FROM":
			froms, user = append(froms, args), ""
		case "USER":
			user = args
		case "COPY":
			if strings.HasPrefix(args, "--from=build") {
				copiedBuild = len(froms) > 1
				continue
			}
			for _, src := range f[:len(f)-1] {
				if _, err := os.Stat(repoFile(src)); err != nil && !strings.HasPrefix(src, "--") && src != "." {
					t.Errorf("COPY %s: %v", src, err)
				}
			}
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(args), &entry); err != nil {
				t.Errorf("ENTRYPOINT is not the exec form: %v", err)
			}
		}
	}
	if len(froms) < 2 || !strings.HasPrefix(froms[0], "golang:1.26") || !strings.HasSuffix(froms[0], " AS build") {
		t.Fatalf("stages %q: want a golang:1.26 build stage first, then a runtime stage", froms)
	}
	if strings.HasPrefix(froms[len(froms)-1], "golang") || !copiedBuild {
		t.Errorf("the runtime stage %q should be a small image with the binary copied from the build stage", froms[len(froms)-1])
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("the runtime stage runs as %q, want an unprivileged user", user)
	}
	if len(entry) < 2 {
		t.Fatalf("ENTRYPOINT %q", entry)
	}
	checkServeArgs(t, entry[1:])
}
