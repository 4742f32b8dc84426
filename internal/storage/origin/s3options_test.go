package origin

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestParseS3URL(t *testing.T) {
	for _, c := range []struct {
		url  string
		want S3Options
	}{
		{"s3://media", S3Options{Bucket: "media"}},
		{"s3://media/", S3Options{Bucket: "media"}},
		{"s3://media/vod", S3Options{Bucket: "media", Prefix: "vod"}},
		{"s3://media.example-1/vod/2024/", S3Options{Bucket: "media.example-1", Prefix: "vod/2024"}},
		{"s3://media/vod?endpoint=http://127.0.0.1:7070&region=eu-west-1&path_style=true",
			S3Options{Bucket: "media", Prefix: "vod", Endpoint: "http://127.0.0.1:7070", Region: "eu-west-1", PathStyle: true}},
	} {
		got, err := ParseS3URL(c.url)
		if err != nil || got.String() != c.want.String() {
			t.Errorf("ParseS3URL(%q) = %v, %v; want %v", c.url, got, err, c.want)
		}
	}
	for _, c := range []struct{ url, why string }{
		{"", "want s3://"},
		{"media/vod", "want s3://"},
		{"https://media/vod", "want s3://"},
		{"s3:media", "want s3://"},
		{"s3://", "no bucket"},
		{"s3:///vod", "no bucket"},
		{"s3://Media/vod", "bucket"},
		{"s3://me/vod", "bucket"},
		{"s3://media_1/vod", "bucket"},
		{"s3://media:9000/vod", "bucket"},
		{"s3://media//vod", "prefix"},
		{"s3://media/vod/../x", "prefix"},
		{"s3://media/./vod", "prefix"},
		{"s3://media/v d", "prefix"},
		{"s3://media/vod#x", "want s3://"},
		{"s3://media/vod?endpoint=ftp://host", "endpoint"},
		{"s3://media/vod?endpoint=http://host/path", "endpoint"},
		{"s3://media/vod?path_style=maybe", "invalid syntax"},
		{"s3://media/vod?region=a&region=b", "given 2 times"},
		{"s3://media/vod?acl=public", "unknown parameter"},
		{"s3://AKIAKEY:s3cr3t@media/vod", "credentials do not belong"},
	} {
		_, err := ParseS3URL(c.url)
		if !errors.Is(err, ErrBadS3URL) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseS3URL(%q) = %v, want ErrBadS3URL saying %q", c.url, err, c.why)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("ParseS3URL(%q): error shows the secret: %v", c.url, err)
		}
	}
}

func FuzzParseS3URL(f *testing.F) {
	for _, s := range []string{"s3://media/vod", "s3://a:b@media", "s3://media/../x", "s3://media/vod?endpoint=http://h:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseS3URL(s)
		if err != nil {
			return
		}
		if checkBucket(o.Bucket) != nil || checkPrefix(o.Prefix) != nil || strings.HasSuffix(o.Prefix, "/") {
			t.Fatalf("%q parsed to %v", s, o)
		}
		if again, err := ParseS3URL(o.URL()); err != nil || again.URL() != o.URL() {
			t.Fatalf("%q: %s does not round-trip: %v", s, o.URL(), err)
		}
	})
}

const (
	testAccess = "AKIASTRATATESTKEY"
	testSecret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
	testToken  = "FwoGZXIvYXdzEXAMPLETOKEN"
)

// TestS3OptionsRedacted prints and logs options holding credentials
// every way there is: no form shows them.
func TestS3OptionsRedacted(t *testing.T) {
	o := S3Options{Bucket: "media", AccessKey: testAccess, SecretKey: testSecret, SessionToken: testToken}
	var logs logBuffer
	log := logs.logger()
	log.Info("options", "opts", o, "ptr", &o, "secret", o.SecretKey)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("options", "opts", o, "secret", o.SecretKey)
	js, err := json.Marshal(struct{ S Secret }{o.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	out := fmt.Sprintf("%v %+v %#v %s %v %#v %+v %s", o, o, o, &o, o.SecretKey, o.SecretKey, o.AccessKey, js) + logs.String()
	for _, secret := range []string{testAccess, testSecret, testToken} {
		if strings.Contains(out, secret) {
			t.Fatalf("credential %q shown in:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, redacted) || !strings.Contains(out, "s3://media") {
		t.Fatalf("want the location and %s in:\n%s", redacted, out)
	}
}
