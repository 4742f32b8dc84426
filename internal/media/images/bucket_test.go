package images

import (
	"bytes"
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-media/strata/internal/storage/origin"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// These tests run against a real S3 server (versitygw, s3test): they
// skip without it, and fail when STRATA_REQUIRE_S3 is set.

func testBucket(t testing.TB, srv *s3test.Server) *origin.Bucket {
	t.Helper()
	b, err := origin.NewBucket(origin.S3Options{Bucket: s3test.Bucket, Prefix: "media", Endpoint: srv.Endpoint,
		Region: "us-east-1", PathStyle: true, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey,
		RequestTimeout: 5 * time.Second, Retries: -1, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testThreshold is the size threshold of these tests: the variants of an
// 800 x 600 photo fall on both sides of it.
const testThreshold = 24 << 10

// objectKeys lists the image store's objects.
func objectKeys(t *testing.T, b *origin.Bucket) []string {
	t.Helper()
	objs, err := b.List(context.Background(), bucketFolder)
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	sort.Strings(ks)
	return ks
}

// variantKeys lists the image store's objects holding variants (not the
// manifests and current objects).
func variantKeys(t *testing.T, b *origin.Bucket) []string {
	t.Helper()
	var ks []string
	for _, k := range objectKeys(t, b) {
		if !strings.HasSuffix(k, "/"+manifestName) && !strings.HasSuffix(k, "/current") {
			ks = append(ks, k)
		}
	}
	return ks
}

// largeBlobs lists the variants of m with their own bytes of threshold
// bytes or more: those that must be objects.
func largeBlobs(m Meta, threshold int64) []string {
	var out []string
	for _, v := range m.Variants {
		if v.Blob == "" && v.Bytes >= threshold {
			out = append(out, v.Name)
		}
	}
	sort.Strings(out)
	return out
}

// With a bucket, the large variants are objects and the LSM holds a
// pointer to each; the small ones stay in the LSM. Every variant reads
// back byte-identical, after a restart too; a replacement's objects are
// new and the old ones deleted; a deletion deletes them.
func TestBucketLargeVariants(t *testing.T) {
	srv := s3test.Start(t)
	b := testBucket(t, srv)
	flash, capacity := t.TempDir(), t.TempDir()
	open := func() *Store {
		return openTestStore(t, func(o *Options) {
			o.FlashDir, o.CapacityDir, o.Bucket, o.SizeThreshold = flash, capacity, b, testThreshold
		})
	}
	st := open()
	m, _, err := st.Ingest("cat", encodeTestJPEG(t, testPhoto(800, 600, 1), 90))
	if err != nil {
		t.Fatal(err)
	}
	large := largeBlobs(m, st.opts.SizeThreshold)
	keys := variantKeys(t, b)
	if len(large) == 0 || len(large) == len(m.blobs()) || len(keys) != len(large) || countKeys(t, st, "img/cat/o/") != len(large) {
		t.Fatalf("large variants %v, objects %v, pointers %d", large, keys, countKeys(t, st, "img/cat/o/"))
	}
	for i, name := range large {
		if !strings.HasPrefix(keys[i], bucketFolder+"cat/") || !strings.HasSuffix(keys[i], "/"+name) {
			t.Fatalf("object %s for variant %s", keys[i], name)
		}
	}
	read := func(st *Store, m Meta) map[string][]byte {
		got := map[string][]byte{}
		for _, v := range m.Variants {
			_, gv, data, err := st.Get("cat", v.Name)
			if err != nil || gv.ETag != etagOf(data) {
				t.Fatalf("%s: %v", v.Name, err)
			}
			got[v.Name] = data
		}
		return got
	}
	before := read(st, m)
	st.Close()

	st = open()
	for name, data := range read(st, m) {
		if !bytes.Equal(data, before[name]) {
			t.Fatalf("%s differs after a restart", name)
		}
	}
	m2, replaced, err := st.Ingest("cat", encodeTestJPEG(t, testPhoto(800, 600, 2), 90))
	if err != nil || !replaced {
		t.Fatal(err)
	}
	keys2 := variantKeys(t, b)
	if len(keys2) != len(largeBlobs(m2, st.opts.SizeThreshold)) || strings.Join(keys2, " ") == strings.Join(keys, " ") {
		t.Fatalf("after the replacement: objects %v, before %v", keys2, keys)
	}
	if _, err := st.Blob("cat", m.Generation, large[0]); !errors.Is(err, ErrChanged) {
		t.Fatalf("old generation: %v", err)
	}
	read(st, m2)
	if ok, err := st.Delete("cat"); !ok || err != nil {
		t.Fatal(err)
	}
	if keys := objectKeys(t, b); len(keys) != 0 || countKeys(t, st, "img/cat/") != 0 {
		t.Fatalf("after delete: objects %v", keys)
	}
}

// The objects are written before the pointers: at the commit they are
// all in the bucket. An upload that fails there (a crash) leaves no
// pointer and no image; an object altered in the bucket is never served.
func TestBucketObjectsBeforePointers(t *testing.T) {
	srv := s3test.Start(t)
	b := testBucket(t, srv)
	st := openTestStore(t, func(o *Options) { o.Bucket, o.SizeThreshold = b, testThreshold })
	crash := errors.New("crash before the commit")
	var atCommit []string
	st.beforeCommit = func() error {
		atCommit = objectKeys(t, b)
		return crash
	}
	body := encodeTestJPEG(t, testPhoto(800, 600, 3), 90)
	if _, _, err := st.Ingest("dog", body); !errors.Is(err, crash) {
		t.Fatalf("ingest: %v", err)
	}
	if len(atCommit) == 0 {
		t.Fatal("no object in the bucket when the pointers were committed")
	}
	if _, err := st.Meta("dog"); !errors.Is(err, ErrNotFound) || countKeys(t, st, "img/dog/") != 0 {
		t.Fatalf("a failed upload left keys: %v", err)
	}
	if keys := objectKeys(t, b); len(keys) != 0 {
		t.Fatalf("a failed upload left objects: %v", keys)
	}

	st.beforeCommit = nil
	m, _, err := st.Ingest("dog", body)
	if err != nil {
		t.Fatal(err)
	}
	keys := variantKeys(t, b)
	if _, err := b.PutBytes(context.Background(), keys[0], []byte("not the variant")); err != nil {
		t.Fatal(err)
	}
	name := keys[0][strings.LastIndex(keys[0], "/")+1:]
	if _, err := st.Blob("dog", m.Generation, name); !errors.Is(err, ErrMissingObject) || statusOf(err) != 502 {
		t.Fatalf("altered object: %v", err)
	}
	if err := b.Remove(context.Background(), keys[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Blob("dog", m.Generation, name); !errors.Is(err, ErrMissingObject) {
		t.Fatalf("missing object: %v", err)
	}
}

// The sweep deletes this store's objects that no pointer names (here: an
// upload that "crashed" after writing its objects, before its commit),
// once past the grace period, and keeps every named object, the objects
// of another store sharing the bucket, and its own young ones. The owner
// id survives a restart, so the reopened store still knows its folders.
func TestBucketSweepRemovesOnlyOwnOrphans(t *testing.T) {
	srv := s3test.Start(t)
	b := testBucket(t, srv)
	ctx := context.Background()
	flash, capacity := t.TempDir(), t.TempDir()
	open := func() *Store {
		return openTestStore(t, func(o *Options) {
			o.FlashDir, o.CapacityDir, o.Bucket, o.SizeThreshold = flash, capacity, b, testThreshold
		})
	}
	st := open()
	other := openTestStore(t, func(o *Options) { o.Bucket, o.SizeThreshold = b, testThreshold })
	if st.owner == other.owner || st.owner == "" {
		t.Fatalf("owners %q and %q", st.owner, other.owner)
	}
	body := encodeTestJPEG(t, testPhoto(800, 600, 5), 90)
	m, _, err := st.Ingest("cat", body)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Ingest("dog", body); err != nil {
		t.Fatal(err)
	}
	named := objectKeys(t, b)
	// A crash between the objects and the commit: the objects stay.
	p, err := st.pipeline.Prepare(body)
	if err != nil {
		t.Fatal(err)
	}
	orphans, err := st.upload(ctx, "cat", p, (&Meta{Variants: p.Variants}).blobs())
	if err != nil || len(orphans) == 0 {
		t.Fatalf("upload: %d objects, %v", len(orphans), err)
	}
	// An object without an owner (an older layout) is never touched.
	legacy := bucketFolder + "cat/00112233aabbccdd/w200"
	if _, err := b.PutBytes(ctx, legacy, []byte("legacy")); err != nil {
		t.Fatal(err)
	}

	st.Close()
	st = open()
	sw, err := st.SweepBucket(ctx, time.Hour)
	if err != nil || sw.Removed != 0 || sw.Young != len(orphans) {
		t.Fatalf("sweep within the grace period: %+v, %v", sw, err)
	}
	sw, err = st.SweepBucket(ctx, 0)
	if err != nil || sw.Removed != len(orphans) || sw.Objects != len(named)+len(orphans)+1 {
		t.Fatalf("sweep: %+v, %v (named %d, orphans %d)", sw, err, len(named), len(orphans))
	}
	want := append(append([]string(nil), named...), legacy)
	sort.Strings(want)
	if got := objectKeys(t, b); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("after the sweep:\n%v\nwant\n%v", got, want)
	}
	for _, name := range largeBlobs(m, testThreshold) {
		if _, err := st.Blob("cat", m.Generation, name); err != nil {
			t.Fatalf("%s after the sweep: %v", name, err)
		}
	}
	if sw, err := other.SweepBucket(ctx, 0); err != nil || sw.Removed != 0 {
		t.Fatalf("the other store's sweep: %+v, %v", sw, err)
	}
	if got := len(objectKeys(t, b)); got != len(want) {
		t.Fatalf("the other store's sweep removed objects: %d left of %d", got, len(want))
	}
}
