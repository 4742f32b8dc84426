package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/strata-media/strata/internal/core/tier"
	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/node/engine"
	"github.com/strata-media/strata/internal/storage/s3test"
)

// These tests run two stores (two data directories, two owner ids: two
// nodes) over one bucket of a real S3 server (versitygw), with a clock
// of their own for the revalidation decisions: "within the TTL" is a
// step of that clock, never a sleep.

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const shareTTL = 5 * time.Second

// twoNodes opens two stores over one bucket, each with its own client.
func twoNodes(t testing.TB) (a, b *Store, clock *testClock) {
	srv := s3test.Start(t)
	clock = &testClock{t: time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)}
	open := func() *Store {
		bk := testBucket(t, srv)
		return openTestStore(t, func(o *Options) {
			o.Bucket, o.SizeThreshold, o.BucketTTL, o.clock = bk, testThreshold, shareTTL, clock.Now
		})
	}
	a, b = open(), open()
	if a.owner == b.owner {
		t.Fatal("two stores with one owner id")
	}
	return a, b, clock
}

// readAll reads every variant of id from st: the metadata and the
// bytes of each, checked against the variant's ETag, so that a mix of
// two uploads (metadata of one, bytes of another) is an error. ErrChanged
// (the image replaced during the read) is retried, as the HTTP layer
// does.
func readAll(t *testing.T, st *Store, id string) (Meta, map[string][]byte, error) {
	for try := 0; ; try++ {
		m, err := st.Meta(id)
		if err != nil {
			return m, nil, err
		}
		got := map[string][]byte{}
		for _, v := range m.Variants {
			var data []byte
			data, err = st.Blob(id, m.Generation, v.BlobName())
			if err != nil {
				break
			}
			if etagOf(data) != v.ETag || int64(len(data)) != v.Bytes {
				return m, nil, fmt.Errorf("%s/%s: the bytes are not the ones the metadata names (a mix)", id, v.Name)
			}
			got[v.Name] = data
		}
		if errors.Is(err, ErrChanged) && try < maxReadTries {
			continue
		}
		return m, got, err
	}
}

// etags lists the ETags of m's variants: the identity of one upload.
func etags(m Meta) string {
	var s []string
	for _, v := range m.Variants {
		s = append(s, v.Name+"="+v.ETag)
	}
	return strings.Join(s, " ")
}

// serve serves st over HTTP with a RAM tier engine, as a node does.
func serve(t *testing.T, st *Store) *httptest.Server {
	t.Helper()
	eng, err := engine.New(engine.Options{Tier: tier.Options{RAMBytes: 32 << 20}, Logger: quietLogger()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	api := httpapi.New(httpapi.Options{AdminToken: testToken, Logger: quietLogger()})
	if err := api.Mount(NewHandler(st, eng, HandlerOptions{})); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(api.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// An image uploaded through A is served by B, every variant byte for
// byte and over HTTP (variants and IIIF); a re-upload through A is seen
// by B within the TTL and never mixed with the old one; a delete through
// A is a 404 on B within the TTL.
func TestShareUploadReplaceDelete(t *testing.T) {
	a, b, clock := twoNodes(t)
	m1, _, err := a.Ingest("cat", encodeTestJPEG(t, testPhoto(800, 600, 1), 90))
	if err != nil {
		t.Fatal(err)
	}
	if len(largeBlobs(m1, testThreshold)) == 0 || len(largeBlobs(m1, testThreshold)) == len(m1.blobs()) {
		t.Fatalf("want large and small variants: %v", etags(m1))
	}
	_, onA, err := readAll(t, a, "cat")
	if err != nil {
		t.Fatal(err)
	}
	mb, onB, err := readAll(t, b, "cat")
	if err != nil || etags(mb) != etags(m1) || len(onB) != len(m1.Variants) {
		t.Fatalf("B: %v, %v", etags(mb), err)
	}
	for name, data := range onA {
		if !bytes.Equal(data, onB[name]) {
			t.Fatalf("%s differs on B", name)
		}
	}
	ts := serve(t, b)
	for _, v := range m1.Variants {
		resp, body := do(t, "GET", ts.URL+"/images/cat/"+v.Name, nil)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, onA[v.Name]) || resp.Header.Get("ETag") != v.ETag {
			t.Fatalf("GET %s on B: %d, %d bytes", v.Name, resp.StatusCode, len(body))
		}
	}
	for _, path := range []string{"/iiif/3/cat/info.json", "/iiif/3/cat/full/200,/0/default.jpg", "/iiif/3/cat/10,10,300,200/max/90/default.png"} {
		if resp, body := do(t, "GET", ts.URL+path, nil); resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Fatalf("GET %s on B: %d %s", path, resp.StatusCode, body)
		}
	}

	// Re-upload through A: within the TTL B serves the old image whole
	// (or, for a large variant whose object A deleted, notices and
	// serves the new one whole); past it, the new one.
	m2, replaced, err := a.Ingest("cat", encodeTestJPEG(t, testPhoto(800, 600, 2), 90))
	if err != nil || !replaced || etags(m2) == etags(m1) {
		t.Fatalf("re-upload: %v %v", replaced, err)
	}
	if m, err := b.Meta("cat"); err != nil || etags(m) != etags(m1) {
		t.Fatalf("B within the TTL: %v", err)
	}
	if m, _, err := readAll(t, b, "cat"); err != nil || (etags(m) != etags(m1) && etags(m) != etags(m2)) {
		t.Fatalf("B within the TTL, every variant: %v", err)
	}
	clock.Advance(shareTTL)
	if m, _, err := readAll(t, b, "cat"); err != nil || etags(m) != etags(m2) {
		t.Fatalf("B past the TTL: %v", err)
	}
	resp, body := do(t, "GET", ts.URL+"/images/cat/original", nil)
	if resp.StatusCode != http.StatusOK || etagOf(body) != mustVariant(t, m2, "original").ETag {
		t.Fatalf("GET original on B after the re-upload: %d", resp.StatusCode)
	}

	// Delete through A.
	if ok, err := a.Delete("cat"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if _, err := a.Meta("cat"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("A after the delete: %v", err)
	}
	clock.Advance(shareTTL)
	if _, err := b.Meta("cat"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("B past the TTL after the delete: %v", err)
	}
	if resp, _ := do(t, "GET", ts.URL+"/images/cat/original", nil); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET on B after the delete: %d", resp.StatusCode)
	}
	if keys := objectKeys(t, a.opts.Bucket); len(keys) != 0 {
		t.Fatalf("objects left after the delete: %v", keys)
	}
	// Uploaded again through B: a new generation on A, above the one it
	// dropped (tier keys are by generation).
	m3, _, err := b.Ingest("cat", encodeTestJPEG(t, testPhoto(800, 600, 3), 90))
	if err != nil {
		t.Fatal(err)
	}
	if m, _, err := readAll(t, a, "cat"); err != nil || etags(m) != etags(m3) || m.Generation <= m2.Generation {
		t.Fatalf("A after B's upload: generation %d (had %d), %v", m.Generation, m2.Generation, err)
	}
}

func mustVariant(t *testing.T, m Meta, name string) Variant {
	t.Helper()
	v, ok := m.Variant(name)
	if !ok {
		t.Fatalf("no variant %s", name)
	}
	return v
}

// Concurrent uploads of one id through A and B end, past the TTL, with
// one whole image on both, and the losers' objects are swept by their
// owners.
func TestShareConcurrentUploads(t *testing.T) {
	a, b, clock := twoNodes(t)
	bodies := [][]byte{encodeTestJPEG(t, testPhoto(800, 600, 4), 90), encodeTestJPEG(t, testPhoto(800, 600, 5), 90)}
	for round := range 3 {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, st := range []*Store{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, errs[i] = st.Ingest("cat", bodies[(i+round)%2])
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		clock.Advance(shareTTL)
		ma, _, err := readAll(t, a, "cat")
		if err != nil {
			t.Fatal(err)
		}
		mb, _, err := readAll(t, b, "cat")
		if err != nil || etags(ma) != etags(mb) {
			t.Fatalf("round %d: A and B differ: %v", round, err)
		}
	}
	ctx := context.Background()
	for _, st := range []*Store{a, b} {
		if _, err := st.SweepBucket(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	folders := map[string]bool{}
	for _, k := range objectKeys(t, a.opts.Bucket) {
		if !strings.HasSuffix(k, "/current") {
			folders[folderOf(k)] = true
		}
	}
	cur, _, ok, err := a.readCurrent(ctx, "cat")
	if err != nil || !ok || len(folders) != 1 || !folders[cur.Folder] {
		t.Fatalf("after the sweeps: folders %v, current %v (%v)", folders, cur.Folder, err)
	}
	if _, _, err := readAll(t, b, "cat"); err != nil {
		t.Fatal(err)
	}
}

// An upload that crashes before its commit (the PUT of current) is
// visible on no node, and its folder is an orphan its owner's sweep
// deletes after the grace period; an abandoned one (objects and
// manifest written, no current, the process gone) likewise.
func TestShareCrashMidUpload(t *testing.T) {
	a, b, clock := twoNodes(t)
	ctx := context.Background()
	body := encodeTestJPEG(t, testPhoto(800, 600, 6), 90)
	crash := errors.New("crash before the commit")
	a.beforeCommit = func() error { return crash }
	if _, _, err := a.Ingest("cat", body); !errors.Is(err, crash) {
		t.Fatalf("ingest: %v", err)
	}
	a.beforeCommit = nil
	// Abandoned: what a SIGKILL between the manifest and the commit
	// leaves.
	p, err := a.pipeline.Prepare(body)
	if err != nil {
		t.Fatal(err)
	}
	folder, _ := a.uploadFolder("dog")
	names := (&Meta{Variants: p.Variants}).blobs()
	ptrs, err := a.uploadTo(ctx, "dog", folder, p, names)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.opts.Bucket.PutBytes(ctx, folder+manifestName, []byte(`{"meta":{}}`)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(shareTTL)
	for _, st := range []*Store{a, b} {
		for _, id := range []string{"cat", "dog"} {
			if _, err := st.Meta(id); !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s after a crash: %v", id, err)
			}
		}
	}
	if sw, err := b.SweepBucket(ctx, 0); err != nil || sw.Removed != 0 {
		t.Fatalf("B's sweep: %+v %v", sw, err)
	}
	if sw, err := a.SweepBucket(ctx, time.Hour); err != nil || sw.Removed != 0 || sw.Young != len(ptrs)+1 {
		t.Fatalf("A's sweep within the grace period: %+v %v", sw, err)
	}
	if sw, err := a.SweepBucket(ctx, 0); err != nil || sw.Removed != len(ptrs)+1 {
		t.Fatalf("A's sweep: %+v %v", sw, err)
	}
	if keys := objectKeys(t, a.opts.Bucket); len(keys) != 0 {
		t.Fatalf("left: %v", keys)
	}
}

// A node's sweep keeps its own folder that the bucket's current names
// even when its own LSM no longer does (here: its local copy dropped, as
// after a failed local commit), and never touches the other node's
// folders; B keeps serving the image.
func TestShareSweepKeepsCurrentFolders(t *testing.T) {
	a, b, _ := twoNodes(t)
	ctx := context.Background()
	body := encodeTestJPEG(t, testPhoto(800, 600, 7), 90)
	if _, _, err := a.Ingest("cat", body); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Ingest("dog", body); err != nil {
		t.Fatal(err)
	}
	before := objectKeys(t, a.opts.Bucket)
	if err := a.drop("cat"); err != nil || countKeys(t, a, "img/cat/") != 0 {
		t.Fatalf("drop: %v", err)
	}
	a.setChecked("cat", time.Time{})
	for _, st := range []*Store{a, b} {
		if sw, err := st.SweepBucket(ctx, 0); err != nil || sw.Removed != 0 {
			t.Fatalf("sweep: %+v %v", sw, err)
		}
	}
	if after := objectKeys(t, a.opts.Bucket); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("the sweeps removed objects:\n%v\n%v", before, after)
	}
	for _, st := range []*Store{a, b} {
		for _, id := range []string{"cat", "dog"} {
			if _, _, err := readAll(t, st, id); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
		}
	}
}

// An image written before the bucket was shared (pointers in the LSM,
// no source record, no current object) stays readable on its node, and
// is published: lazily by a read there, or by the pass at open; then
// the other node serves it too, and the sweep keeps it.
func TestShareMigratesOlderImages(t *testing.T) {
	a, b, clock := twoNodes(t)
	ctx := context.Background()
	body := encodeTestJPEG(t, testPhoto(800, 600, 8), 90)
	for _, id := range []string{"cat", "dog"} {
		if _, _, err := a.Ingest(id, body); err != nil {
			t.Fatal(err)
		}
		unpublish(t, a, id)
	}
	clock.Advance(shareTTL)
	if _, err := b.Meta("cat"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("B before the migration: %v", err)
	}
	if sw, err := a.SweepBucket(ctx, 0); err != nil || sw.Removed != 0 {
		t.Fatalf("sweep before the migration: %+v %v", sw, err)
	}
	// Lazily: a read on A.
	if _, _, err := readAll(t, a, "cat"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(shareTTL)
	if _, _, err := readAll(t, b, "cat"); err != nil {
		t.Fatalf("B after the lazy migration: %v", err)
	}
	// At open: the background pass.
	a.wg.Add(1)
	a.migrateAll()
	if _, _, err := readAll(t, b, "dog"); err != nil {
		t.Fatalf("B after the migration pass: %v", err)
	}
	if sw, err := a.SweepBucket(ctx, 0); err != nil || sw.Removed != 0 {
		t.Fatalf("sweep after the migration: %+v %v", sw, err)
	}
	for _, st := range []*Store{a, b} {
		for _, id := range []string{"cat", "dog"} {
			if _, _, err := readAll(t, st, id); err != nil {
				t.Fatalf("%s: %v", id, err)
			}
		}
	}
	// A migration racing an upload of the same id through B (B commits
	// between A's HEAD finding no current and A's PUT): B's upload wins
	// on both nodes, and A's older copy is an orphan of A's sweep.
	ma, _, err := a.Ingest("owl", body)
	if err != nil {
		t.Fatal(err)
	}
	unpublish(t, a, "owl")
	mb, _, err := b.Ingest("owl", encodeTestJPEG(t, testPhoto(800, 600, 9), 90))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.migrate(ctx, "owl"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(shareTTL)
	for _, st := range []*Store{a, b} {
		if m, _, err := readAll(t, st, "owl"); err != nil || etags(m) != etags(mb) {
			t.Fatalf("owl after the racing migration: %v", err)
		}
	}
	if sw, err := a.SweepBucket(ctx, 0); err != nil || sw.Removed != len(largeBlobs(ma, testThreshold))+1 { // its objects and the manifest the migration wrote
		t.Fatalf("sweep after the racing migration: %+v %v", sw, err)
	}
	if _, _, err := readAll(t, b, "owl"); err != nil {
		t.Fatal(err)
	}
}

// unpublish makes id on st what the store wrote before the bucket was
// shared: its objects and pointers, no manifest, no current, no source.
func unpublish(t *testing.T, st *Store, id string) {
	t.Helper()
	ctx := context.Background()
	cur, _, ok, err := st.readCurrent(ctx, id)
	if err != nil || !ok {
		t.Fatal(err)
	}
	for _, k := range []string{currentKey(id), cur.Folder + manifestName} {
		if err := st.opts.Bucket.Remove(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.db.Update(func(txn *badger.Txn) error { return txn.Delete(srcKey(id)) }); err != nil {
		t.Fatal(err)
	}
	st.setChecked(id, time.Time{})
}

// BenchmarkShareRead is the cost of a read of an image's metadata on
// the node that did not upload it: trusted (within the TTL, no request),
// revalidated (one HEAD of current, same ETag), and installed (the HEAD,
// the GETs of current and manifest, one Badger transaction).
func BenchmarkShareRead(b *testing.B) {
	a, nb, _ := twoNodes(b)
	if _, _, err := a.Ingest("cat", encodeTestJPEG(b, testPhoto(800, 600, 1), 90)); err != nil {
		b.Fatal(err)
	}
	if _, err := nb.Meta("cat"); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		before func()
	}{
		{"trusted", func() {}},
		{"revalidated", func() { nb.setChecked("cat", time.Time{}) }},
		{"installed", func() {
			if err := nb.drop("cat"); err != nil {
				b.Fatal(err)
			}
			nb.setChecked("cat", time.Time{})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				c.before()
				b.StartTimer()
				if _, err := nb.Meta("cat"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Readers on B during re-uploads through A (and the clock stepping past
// the TTL between them) always get one upload whole: the metadata of
// one of the uploads and every variant's bytes matching it.
func TestShareReadersDuringReuploads(t *testing.T) {
	a, b, clock := twoNodes(t)
	const uploads = 4
	known := map[string]bool{}
	m, _, err := a.Ingest("cat", encodeTestJPEG(t, testPhoto(800, 600, 20), 90))
	if err != nil {
		t.Fatal(err)
	}
	known[etags(m)] = true
	var mu sync.Mutex // guards known
	done := make(chan struct{})
	var wg sync.WaitGroup
	reads := make([]int, 3)
	for r := range reads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				m, _, err := readAll(t, b, "cat")
				if err != nil {
					t.Errorf("reader: %v", err)
					return
				}
				mu.Lock()
				ok := known[etags(m)]
				mu.Unlock()
				if !ok {
					t.Errorf("reader: metadata of no upload")
					return
				}
				reads[r]++
			}
		}()
	}
	for i := 1; i < uploads; i++ {
		body := encodeTestJPEG(t, testPhoto(800, 600, uint64(20+i)), 90)
		p, err := a.pipeline.Prepare(body)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		known[etags(Meta{Variants: p.Variants})] = true
		mu.Unlock()
		if _, _, err := a.Put("cat", p); err != nil {
			t.Fatal(err)
		}
		clock.Advance(shareTTL)
	}
	close(done)
	wg.Wait()
	t.Logf("reads per reader: %v", reads)
}
