package images

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The crash test runs a child process (this test binary, re-executed with
// crashChildEnv set) that uploads images into a store and prints an "ack"
// line with the SHA-256 of every variant after each Put returns, and kills
// it with SIGKILL at a random moment. After reopening the store, every
// acknowledged image must be there with every variant byte-identical, and
// any other image (the one in flight) complete and self-consistent.
const crashChildEnv = "STRATA_IMAGES_CRASH_CHILD"

func TestCrashChild(t *testing.T) {
	dirs := os.Getenv(crashChildEnv)
	if dirs == "" {
		t.Skip("the child half of TestSIGKILLKeepsAcknowledgedImages")
	}
	flash, capacity, _ := strings.Cut(dirs, ":")
	st, err := Open(Options{FlashDir: flash, CapacityDir: capacity, Logger: quietLogger(), MemTableSize: 8 << 20, GCInterval: -1})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	base := testPhoto(1400, 1000, 11)
	for i := 0; ; i++ {
		childUpload(t, st, base, i)
	}
}

// childUpload stores image i, a variation of base, and acknowledges it.
func childUpload(t *testing.T, st *Store, base *image.RGBA, i int) {
	img := *base
	img.Pix = append([]uint8(nil), base.Pix...)
	for y := range 200 {
		for x := range 200 {
			img.SetRGBA(i*37%1200+x, i*53%800+y, color.RGBA{uint8(i * 40), uint8(i * 90), uint8(i), 255})
		}
	}
	id := fmt.Sprintf("img%03d", i)
	p, err := st.Pipeline().Prepare(encodeTestJPEG(t, &img, 90))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if _, _, err := st.Put(id, p); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("ack", id, variantHashes(p.Variants, p.Blob))
}

// variantHashes is "name=sha256,..." of every variant.
func variantHashes(vs []Variant, blob func(string) []byte) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		sum := sha256.Sum256(blob(v.Name))
		parts[i] = v.Name + "=" + hex.EncodeToString(sum[:])
	}
	return strings.Join(parts, ",")
}

func TestSIGKILLKeepsAcknowledgedImages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	flash, capacity := t.TempDir(), t.TempDir()
	for round := range 3 {
		acked := runAndKill(t, flash, capacity, time.Duration(500+rng.IntN(2500))*time.Millisecond)
		t.Logf("round %d: %d images acknowledged before SIGKILL", round, len(acked))
		checkAfterCrash(t, flash, capacity, acked)
	}
}

// runAndKill runs the child until it has acknowledged one image and then
// for d more, kills it, and returns the acknowledged ids' hashes.
func runAndKill(t *testing.T, flash, capacity string, d time.Duration) map[string]string {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.timeout=2m") // ends by itself if orphaned
	cmd.Env = append(os.Environ(), crashChildEnv+"="+flash+":"+capacity)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acks := make(chan [2]string)
	go readAcks(out, acks)
	acked := map[string]string{}
	var kill <-chan time.Time
	for {
		select {
		case a, ok := <-acks:
			if !ok {
				cmd.Wait()
				t.Fatalf("child exited before the kill: %v", acked)
			}
			acked[a[0]] = a[1]
			if kill == nil {
				kill = time.After(d)
			}
		case <-kill:
			cmd.Process.Kill() // SIGKILL
			cmd.Wait()
			for a := range acks { // acks printed before the kill landed
				acked[a[0]] = a[1]
			}
			return acked
		}
	}
}

func readAcks(out interface{ Read([]byte) (int, error) }, acks chan<- [2]string) {
	defer close(acks)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "ack" {
			acks <- [2]string{f[1], f[2]}
		}
	}
}

// checkAfterCrash reopens the store and checks every image in it.
func checkAfterCrash(t *testing.T, flash, capacity string, acked map[string]string) {
	st, err := Open(Options{FlashDir: flash, CapacityDir: capacity, Logger: quietLogger(), MemTableSize: 8 << 20, GCInterval: -1})
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer st.Close()
	for id, want := range acked {
		if got := storedHashes(t, st, id); got != want {
			t.Fatalf("%s after SIGKILL:\n got %s\nwant %s", id, got, want)
		}
	}
	for i := range 1000 { // the image in flight: absent, or whole
		id := fmt.Sprintf("img%03d", i)
		if _, ok := acked[id]; !ok {
			if _, err := st.Meta(id); err == nil {
				storedHashes(t, st, id)
			}
		}
	}
}

// storedHashes reads every variant of id, checks it against its ETag, and
// returns the hashes as the child prints them.
func storedHashes(t *testing.T, st *Store, id string) string {
	m, err := st.Meta(id)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	blobs := map[string][]byte{}
	for _, v := range m.Variants {
		_, _, data, err := st.Get(id, v.Name)
		if err != nil || etagOf(data) != v.ETag {
			t.Fatalf("%s/%s: %v, or bytes that do not match the ETag", id, v.Name, err)
		}
		blobs[v.Name] = data
	}
	return variantHashes(m.Variants, func(n string) []byte { return blobs[n] })
}
