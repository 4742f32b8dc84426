package versions

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func get(t *testing.T, o *Origin, method, path, rng string) Answer {
	t.Helper()
	req, _ := http.NewRequest(method, o.URL()+path, nil)
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return Answer{Path: path, Method: method, Status: resp.StatusCode, Header: resp.Header, ContentLength: resp.ContentLength, Body: b}
}

// The origin's answers pass the check, whole, ranges and HEAD, before and
// after a new version; a body spliced from two versions, cut, or under
// the other version's ETag does not.
func TestOriginAnswersCheck(t *testing.T) {
	o := New(Options{Objects: 5, Seed: 3})
	if err := o.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer o.Stop()
	p := o.Paths()[4] // 1.5 MiB
	v1 := get(t, o, "GET", p, "")
	if v, err := o.Check(v1); err != nil || v != 1 {
		t.Fatalf("version 1: %d %v", v, err)
	}
	if !strings.HasPrefix(string(v1.Body), fmt.Sprintf("strata-versions %s version 1 size %d\n", p, len(v1.Body))) {
		t.Fatalf("first line %q", v1.Body[:60])
	}
	before := time.Now()
	if v := o.Publish(p); v != 2 {
		t.Fatalf("published %d", v)
	}
	v2 := get(t, o, "GET", p, "")
	if v, err := o.Check(v2); err != nil || v != 2 {
		t.Fatalf("version 2: %d %v", v, err)
	}
	for _, a := range []Answer{get(t, o, "GET", p, "bytes=1000-300000"), get(t, o, "GET", p, "bytes=-10"), get(t, o, "HEAD", p, "")} {
		if v, err := o.Check(a); err != nil || v != 2 {
			t.Fatalf("%s %s: %d %v", a.Method, a.Header.Get("Content-Range"), v, err)
		}
	}
	if !o.CurrentAfter(p, 1, before.Add(-time.Second)) || o.CurrentAfter(p, 1, time.Now()) || !o.CurrentAfter(p, 2, time.Now()) {
		t.Fatal("CurrentAfter")
	}

	n := min(len(v1.Body), len(v2.Body))
	spliced := v2
	spliced.Body = append(append([]byte{}, v2.Body[:n/2]...), v1.Body[n/2:n]...)
	spliced.Body = append(spliced.Body, v2.Body[n:]...)
	cut := v2
	cut.Body, cut.ContentLength = v2.Body[:len(v2.Body)-1], -1
	relabelled := v1
	relabelled.Header = v2.Header
	for name, a := range map[string]Answer{"two versions": spliced, "cut": cut, "other ETag": relabelled} {
		if _, err := o.Check(a); err == nil {
			t.Errorf("%s: passed", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	// A stopped origin refuses; started again, it serves on its address.
	o.Stop()
	if _, err := http.Get(o.URL() + p); err == nil {
		t.Fatal("a stopped origin answered")
	}
	if err := o.Start(""); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Check(get(t, o, "GET", p, "")); err != nil {
		t.Fatal(err)
	}
}
