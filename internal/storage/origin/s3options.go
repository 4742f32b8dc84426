package origin

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/strata-media/strata/internal/ident"
)

// ErrBadS3URL reports an s3:// URL that ParseS3URL refuses.
var ErrBadS3URL = errors.New("origin: bad s3 URL")

// minPartSize is the smallest part of a multipart upload S3 accepts
// (except the last), bytes.
const minPartSize = 5 << 20

// A Secret is a credential. It prints, logs and marshals as "[redacted]"
// (or "" when empty), so that options holding one can be logged whole;
// string(s) is the only way to its value.
type Secret string

const redacted = "[redacted]"

func (s Secret) mask() string {
	if s == "" {
		return ""
	}
	return redacted
}

// String returns "[redacted]", or "" if s is empty.
func (s Secret) String() string { return s.mask() }

// GoString is String, for %#v.
func (s Secret) GoString() string { return strconv.Quote(s.mask()) }

// LogValue is String, for log/slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.mask()) }

// MarshalText is String, for encoders (JSON, TOML).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.mask()), nil }

// S3Options configure NewS3 and NewS3Writer. Only Bucket is required.
// Credentials come from AccessKey and SecretKey when set, else from the
// environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN), else from the shared credentials file
// (CredentialsFile, AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials, and
// ~/.aws/config; profile Profile, AWS_PROFILE or "default"); with none,
// requests are anonymous.
type S3Options struct {
	// Bucket is the bucket's name.
	Bucket string
	// Prefix is prepended to every key, without leading or trailing
	// slash: title v's metadata is "<Prefix>/v/strata.json". Empty
	// means the bucket's root.
	Prefix string
	// Endpoint is the store's URL, "https://host[:port]" or
	// "http://host:port" (no path). Default: $AWS_ENDPOINT_URL_S3, else
	// $AWS_ENDPOINT_URL, else https://s3.amazonaws.com.
	Endpoint string
	// Region is the bucket's region. Default $AWS_REGION, else
	// $AWS_DEFAULT_REGION, else asked of the store.
	Region string
	// PathStyle addresses the bucket as http://host/bucket/key rather
	// than http://bucket.host/key: most self-hosted stores need it.
	PathStyle bool

	// AccessKey, SecretKey and SessionToken are explicit credentials;
	// they override the environment and the credentials file.
	AccessKey    Secret
	SecretKey    Secret
	SessionToken Secret
	// CredentialsFile is the shared credentials file to read instead of
	// the AWS defaults.
	CredentialsFile string
	// Profile is the profile of the credentials file. Default
	// $AWS_PROFILE, else "default".
	Profile string

	// RequestTimeout bounds one attempt of one request, reading its whole
	// answer included (one GET, one page of a listing, one part of an
	// upload). Default 30 s.
	RequestTimeout time.Duration
	// Retries is how many times a read is tried again after a server
	// error (5xx), a timeout or a connection error; other failures are
	// not retried. Default 3; negative means none.
	Retries int
	// RetryBase is the wait before the first retry; each retry waits
	// twice as long as the one before (up to RetryMax), less a random
	// jitter of up to half. Default 100 ms.
	RetryBase time.Duration
	// RetryMax caps the wait between retries. Default 2 s.
	RetryMax time.Duration

	// CatalogTTL is how long Catalog and Title trust what they last
	// found before checking the titles' strata.json again. Default 30 s;
	// negative checks on every call.
	CatalogTTL time.Duration
	// CatalogConcurrency is how many titles a catalog check examines at
	// once. Default 8.
	CatalogConcurrency int
	// DefaultSegmentDuration is the play-out time of one media segment of
	// a title whose strata.json does not give segment_duration_s.
	// Default 10 s (FlashStream Table 4).
	DefaultSegmentDuration time.Duration
	// MaxObjectSize bounds the size in bytes of an object that Get reads
	// whole into memory; GetRange reads larger ones in parts. Default
	// 1 GiB.
	MaxObjectSize int64

	// PartSize is the part size of multipart uploads, bytes: a file of
	// more than PartSize bytes is uploaded in parts. Default 16 MiB,
	// at least 5 MiB (S3's minimum).
	PartSize int64
	// UploadConcurrency is how many files (and parts of one file) an
	// upload sends at once. Default 4.
	UploadConcurrency int

	// Transport carries the requests; nil means minio-go's default
	// transport.
	Transport http.RoundTripper
	// Logger receives warnings (retries, titles left out of the
	// catalog); nil means slog.Default().
	Logger *slog.Logger

	// retryHook, if set, is called before each retry's wait, with the
	// number of the attempt that failed (1 for the first) and its error.
	retryHook func(attempt int, err error)
}

// EnsureDefaults fills in zero fields with their defaults, the endpoint
// and region from the environment.
func (o *S3Options) EnsureDefaults() {
	o.Prefix = strings.Trim(o.Prefix, "/")
	if o.Endpoint == "" {
		o.Endpoint = firstEnv("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
	}
	if o.Endpoint == "" {
		o.Endpoint = "https://s3.amazonaws.com"
	}
	if o.Region == "" {
		o.Region = firstEnv("AWS_REGION", "AWS_DEFAULT_REGION")
	}
	setDefault(&o.RequestTimeout, 30*time.Second)
	if o.Retries == 0 {
		o.Retries = 3
	}
	setDefault(&o.RetryBase, 100*time.Millisecond)
	setDefault(&o.RetryMax, 2*time.Second)
	if o.CatalogTTL == 0 {
		o.CatalogTTL = 30 * time.Second
	}
	setDefault(&o.CatalogConcurrency, 8)
	setDefault(&o.DefaultSegmentDuration, 10*time.Second)
	setDefault(&o.MaxObjectSize, 1<<30)
	setDefault(&o.PartSize, 16<<20)
	o.PartSize = max(o.PartSize, minPartSize)
	setDefault(&o.UploadConcurrency, 4)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

func setDefault[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// URL returns "s3://bucket/prefix".
func (o S3Options) URL() string {
	u := "s3://" + o.Bucket
	if p := strings.Trim(o.Prefix, "/"); p != "" {
		u += "/" + p
	}
	return u
}

// String describes the options for people: the location, endpoint and
// region, and where credentials come from, never their values.
func (o S3Options) String() string {
	return fmt.Sprintf("%s (endpoint %s, region %s, path-style %t, credentials %s)",
		o.URL(), orNone(o.Endpoint), orNone(o.Region), o.PathStyle, o.credentialSource())
}

// GoString is String, for %#v, which would otherwise print every field.
func (o S3Options) GoString() string { return "origin.S3Options{" + o.String() + "}" }

// LogValue logs the options as String's fields.
func (o S3Options) LogValue() slog.Value {
	return slog.GroupValue(slog.String("url", o.URL()), slog.String("endpoint", o.Endpoint),
		slog.String("region", o.Region), slog.Bool("path_style", o.PathStyle),
		slog.String("credentials", o.credentialSource()))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// credentialSource says where credentials come from.
func (o S3Options) credentialSource() string {
	if o.AccessKey != "" {
		return "explicit"
	}
	return "from the environment or credentials file"
}

// credentialsFound reports whether requests are signed: explicit
// credentials, or a key found in the environment or the credentials
// file. False: they go anonymous, as to a public bucket.
func (o S3Options) credentialsFound() bool {
	if o.AccessKey != "" {
		return true
	}
	v, err := o.credentials().Get()
	return err == nil && v.AccessKeyID != ""
}

// credentialsLookup says where credentials are looked up, for the error
// of a store that refuses anonymous requests: the variables, the files
// and the profile, as they are set now (never a value).
func (o S3Options) credentialsLookup() string {
	home, _ := os.UserHomeDir()
	file, fileFrom := o.CredentialsFile, "the configured credentials file"
	if file == "" {
		file, fileFrom = os.Getenv("AWS_SHARED_CREDENTIALS_FILE"), "AWS_SHARED_CREDENTIALS_FILE"
		if file == "" {
			file, fileFrom = filepath.Join(home, ".aws", "credentials"), "the default; AWS_SHARED_CREDENTIALS_FILE names another"
		}
	}
	profile, profileFrom := o.Profile, "configured"
	if profile == "" {
		profile, profileFrom = os.Getenv("AWS_PROFILE"), "AWS_PROFILE"
		if profile == "" {
			profile, profileFrom = "default", "AWS_PROFILE names another"
		}
	}
	where := fmt.Sprintf("the environment (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, with AWS_SESSION_TOKEN for temporary ones), "+
		"then the credentials file %s (%s), profile %q (%s)", file, fileFrom, profile, profileFrom)
	if o.CredentialsFile == "" {
		config := os.Getenv("AWS_CONFIG_FILE")
		if config == "" {
			config = filepath.Join(home, ".aws", "config")
		}
		where += ", and the config file " + config
	}
	return where
}

// explainRefusal adds to err, a refusal (401, 403) of a request sent
// without credentials, that none were found and where they are looked
// up: the store's "Access Denied" alone does not say the request was
// anonymous. Any other error is returned as it is.
func (o S3Options) explainRefusal(err error) error {
	var resp minio.ErrorResponse
	if err == nil || !errors.As(err, &resp) ||
		resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized || o.credentialsFound() {
		return err
	}
	return fmt.Errorf("%w (no S3 credentials were found, so the request was anonymous; they are looked up in %s)",
		err, o.credentialsLookup())
}

// credentials returns the credentials chain of the options.
func (o S3Options) credentials() *credentials.Credentials {
	if o.AccessKey != "" {
		return credentials.NewStaticV4(string(o.AccessKey), string(o.SecretKey), string(o.SessionToken))
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.FileAWSCredentials{Filename: o.CredentialsFile, Profile: o.Profile},
	})
}

// endpoint splits Endpoint into minio-go's host[:port] and TLS flag.
func (o S3Options) endpoint() (host string, secure bool, err error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false, fmt.Errorf("origin: S3 endpoint %q: want http://host[:port] or https://host[:port]", o.Endpoint)
	}
	if u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return "", false, fmt.Errorf("origin: S3 endpoint %s: want no user, path or query", u.Redacted())
	}
	return u.Host, u.Scheme == "https", nil
}

// check validates what the options name.
func (o S3Options) check() error {
	if err := checkBucket(o.Bucket); err != nil {
		return fmt.Errorf("origin: %w", err)
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return fmt.Errorf("origin: %w", err)
	}
	if (o.AccessKey == "") != (o.SecretKey == "") {
		return errors.New("origin: S3 credentials: an access key needs a secret key and the other way round")
	}
	_, _, err := o.endpoint()
	return err
}

// ParseS3URL parses "s3://BUCKET[/PREFIX][?endpoint=URL&region=R&path_style=true]"
// into options naming that bucket and prefix (and, from the query, the
// endpoint, region and addressing); the other fields are zero. A URL
// carrying credentials is refused: they belong in the environment or the
// credentials file, where they are not printed with the URL.
func ParseS3URL(raw string) (S3Options, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return S3Options{}, fmt.Errorf("%w: %q: %v", ErrBadS3URL, redactURL(raw), err)
	}
	if u.Scheme != "s3" {
		return S3Options{}, fmt.Errorf("%w: %q: want s3://BUCKET/PREFIX", ErrBadS3URL, u.Redacted())
	}
	if u.User != nil {
		return S3Options{}, fmt.Errorf("%w: %q: credentials do not belong in the URL; "+
			"set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or use a credentials file", ErrBadS3URL, u.Redacted())
	}
	if u.Fragment != "" || u.Opaque != "" {
		return S3Options{}, fmt.Errorf("%w: %q: want s3://BUCKET/PREFIX", ErrBadS3URL, raw)
	}
	o := S3Options{Bucket: u.Host, Prefix: strings.TrimPrefix(u.Path, "/")}
	if err := checkBucket(o.Bucket); err != nil {
		return S3Options{}, fmt.Errorf("%w: %q: %v", ErrBadS3URL, raw, err)
	}
	if err := checkPrefix(o.Prefix); err != nil {
		return S3Options{}, fmt.Errorf("%w: %q: %v", ErrBadS3URL, raw, err)
	}
	o.Prefix = strings.TrimSuffix(o.Prefix, "/")
	if err := o.setQuery(u.Query()); err != nil {
		return S3Options{}, fmt.Errorf("%w: %q: %v", ErrBadS3URL, raw, err)
	}
	return o, nil
}

// setQuery applies the URL's query parameters.
func (o *S3Options) setQuery(q url.Values) error {
	for k, vs := range q {
		if len(vs) != 1 {
			return fmt.Errorf("parameter %s given %d times", k, len(vs))
		}
		var err error
		switch v := vs[0]; k {
		case "endpoint":
			o.Endpoint = v
			_, _, err = o.endpoint()
		case "region":
			o.Region = v
		case "path_style":
			o.PathStyle, err = strconv.ParseBool(v)
		default:
			return fmt.Errorf("unknown parameter %q (want endpoint, region or path_style)", k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// redactURL hides a password in a URL that did not parse.
func redactURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		return scheme + "://" + redacted + rest[at:]
	}
	return raw
}

// checkBucket applies S3's bucket naming rules.
func checkBucket(b string) error {
	if b == "" {
		return errors.New("no bucket name")
	}
	if err := s3utils.CheckValidBucketNameStrict(b); err != nil {
		return fmt.Errorf("bucket %q: %v", b, err)
	}
	return nil
}

// checkPrefix accepts a key prefix whose components are valid names
// (ident.ValidName) separated by single slashes, so that no prefix can
// hold "..", "." or an empty component; one trailing slash is allowed.
func checkPrefix(p string) error {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return nil
	}
	for c := range strings.SplitSeq(p, "/") {
		if err := ident.ValidName(c); err != nil {
			return fmt.Errorf("prefix %q: %v", p, err)
		}
	}
	return nil
}
