// Prototype: the ceiling of zero-copy RAM hits (run.sh). Mode heap writes
// each 100 KiB body from the Go heap (as strata does); mode file opens the
// same file per request and lets net/http sendfile it (as nginx does);
// mode fd keeps one open file per object (as a memfd-backed pool with
// pre-opened descriptors would), seeks it to 0 and sendfiles it, one
// request at a time per object.
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

type openFile struct {
	sync.Mutex
	f *os.File
}

func main() {
	mode, dir, addr := os.Args[1], os.Args[2], os.Args[3]
	bodies := map[string][]byte{}
	files := map[string]*openFile{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		bodies[e.Name()] = b
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			panic(err)
		}
		files[e.Name()] = &openFile{f: f}
	}
	http.HandleFunc("GET /videos/bench/100k/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		b, ok := bodies[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "video/iso.segment")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		if mode == "heap" {
			w.Write(b)
			return
		}
		if mode == "fd" {
			o := files[name]
			o.Lock()
			defer o.Unlock()
			if _, err := o.f.Seek(0, io.SeekStart); err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			io.Copy(w, o.f)
			return
		}
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer f.Close()
		io.Copy(w, f)
	})
	fmt.Println(http.ListenAndServe(addr, nil))
}
