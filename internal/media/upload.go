package media

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/strata-media/strata/internal/httpapi"
	"github.com/strata-media/strata/internal/ident"
	"github.com/strata-media/strata/internal/storage/space"
)

// DefaultMaxUpload bounds an upload's body, bytes: 4 GiB.
const DefaultMaxUpload = 4 << 30

// Module is the HTTP module of uploads: POST /videos/{video} behind the
// admin token, bodies up to maxBytes (0: DefaultMaxUpload).
func (g *Ingester) Module(maxBytes int64) httpapi.Module {
	return httpapi.ModuleFunc(func(m *httpapi.Mounter) {
		m.HandleAdmin("POST /videos/{video}", g.UploadHandler(maxBytes))
	})
}

// UploadHandler serves POST /videos/{video}: the body is one MP4 file
// (any content type but multipart; ?rendition=NAME names it), or
// multipart/form-data with one file part per rendition, the part's form
// name being the rendition name ("file" derives it from the bitrate).
// ?segment_duration=SECONDS overrides the segment duration. The upload is
// spooled to the title's staging directory, packaged, and moved into
// place: 201 for a new title, 200 for a replaced one, with the Result as
// JSON. Errors are RFC 9457 problems: 400 for malformed, truncated or
// interrupted input, 413 above maxBytes, 415 for unsupported codecs, 409
// while the title is being ingested; nothing is stored. Wrap it with the
// server's token check.
func (g *Ingester) UploadHandler(maxBytes int64) http.Handler {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxUpload
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpapi.CheckLength(w, r, maxBytes) {
			return
		}
		res, err := g.upload(w, r, maxBytes)
		if err != nil {
			code, detail := uploadStatus(err), g.publicDetail(err)
			if code >= 500 {
				g.opts.Logger.Warn("media: upload failed", "video", httpapi.ClipID(r.PathValue("video")), "err", err)
			}
			if code == http.StatusInsufficientStorage {
				httpapi.CloseAfter(w)
			}
			httpapi.Error(w, code, detail)
			return
		}
		code := http.StatusCreated
		if res.Replaced {
			code = http.StatusOK
		}
		writeJSON(w, code, res)
	})
}

// publicDetail is the detail of an upload error: a 5xx's says what failed
// in general terms (the log has the rest), a 4xx's is the error with the
// staging directory's path cut out of it (source errors name the file
// they read, which is in the capacity directory).
func (g *Ingester) publicDetail(err error) string {
	switch code := uploadStatus(err); {
	case code == http.StatusInsufficientStorage:
		return "media: not enough free space for the upload and its packaged title; nothing was stored"
	case code >= 500:
		return "media: the upload could not be packaged; see the server log"
	}
	return stagingPath.ReplaceAllString(err.Error(), "")
}

// stagingPath matches the directories of a path in a staging directory,
// leaving the file's name: "/data/videos/.ingest-1a2b/upload/" and the
// like.
var stagingPath = regexp.MustCompile(`[^\s:"']*` + regexp.QuoteMeta(stagingPrefix) + `[^\s:"']*/`)

func (g *Ingester) upload(w http.ResponseWriter, r *http.Request, maxBytes int64) (*Result, error) {
	segDur, err := segmentDurationParam(r)
	if err != nil {
		return nil, err
	}
	if r.ContentLength > 0 {
		if err := space.Check(g.opts.FreeSpace, g.root, 2*r.ContentLength); err != nil {
			return nil, err
		}
	}
	s, err := g.Begin(r.PathValue("video"))
	if err != nil {
		return nil, err
	}
	defer s.Abort()
	if segDur > 0 {
		s.Options.SegmentDuration = segDur
	}
	inputs, err := spool(r, httpapi.Body(w, r, maxBytes), s.UploadDir())
	if err != nil {
		return nil, err
	}
	return s.Commit(r.Context(), inputs)
}

func segmentDurationParam(r *http.Request) (time.Duration, error) {
	v := r.URL.Query().Get("segment_duration")
	if v == "" {
		return 0, nil
	}
	d, err := strconv.ParseFloat(v, 64)
	if err != nil || d < 0.1 || d > 600 {
		return 0, fmt.Errorf("%w: segment_duration %q: want seconds in [0.1, 600]", ErrInvalidInput, httpapi.ClipID(v))
	}
	return time.Duration(d * float64(time.Second)), nil
}

// errUpload marks a failure to receive the body: interrupted, too large,
// malformed multipart.
var errUpload = errors.New("media: upload")

// spool writes the body's file(s) into dir and returns them as inputs.
func spool(r *http.Request, body io.Reader, dir string) ([]Input, error) {
	ct, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "multipart/form-data" {
		name := r.URL.Query().Get("rendition")
		in, err := spoolOne(body, dir, 1, name)
		if err != nil {
			return nil, err
		}
		return []Input{in}, nil
	}
	if params["boundary"] == "" {
		return nil, fmt.Errorf("%w: multipart body without boundary", errUpload)
	}
	return spoolParts(multipart.NewReader(body, params["boundary"]), dir)
}

// maxParts bounds the renditions of one upload.
const maxParts = 16

func spoolParts(mr *multipart.Reader, dir string) ([]Input, error) {
	var inputs []Input
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errUpload, err)
		}
		if part.FileName() == "" {
			return nil, fmt.Errorf("%w: multipart field %q is not a file", ErrInvalidInput, httpapi.ClipID(part.FormName()))
		}
		if len(inputs) == maxParts {
			return nil, fmt.Errorf("%w: more than %d files", ErrInvalidInput, maxParts)
		}
		name := part.FormName()
		if name == "file" {
			name = ""
		}
		in, err := spoolOne(part, dir, len(inputs)+1, name)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, in)
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("%w: no file in the multipart body", ErrInvalidInput)
	}
	return inputs, nil
}

// spoolOne copies one file to dir/<n>.mp4.
func spoolOne(r io.Reader, dir string, n int, name string) (Input, error) {
	if name != "" {
		if err := checkRenditionName(name); err != nil {
			return Input{}, err
		}
	}
	path := filepath.Join(dir, strconv.Itoa(n)+".mp4")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Input{}, fmt.Errorf("media: %w", err)
	}
	body := &readErr{r: r}
	size, err := io.Copy(f, body)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	switch {
	case err != nil && err == body.err:
		return Input{}, fmt.Errorf("%w: receiving the body: %w", errUpload, err)
	case err != nil: // the disk's: names the staging path, 5xx
		return Input{}, fmt.Errorf("media: storing the upload: %w", err)
	}
	if size == 0 {
		return Input{}, fmt.Errorf("%w: empty upload", ErrInvalidInput)
	}
	return Input{Name: name, Path: path}, nil
}

// readErr remembers the error of its reader, to tell the client's errors
// (interrupted, too large) from the disk's in an io.Copy.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// uploadStatus maps an ingest error to an HTTP status (caddy style: the
// status is attached at the edge).
func uploadStatus(err error) int {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case space.IsNoSpace(err):
		return http.StatusInsufficientStorage
	case errors.Is(err, ErrUnsupported):
		return http.StatusUnsupportedMediaType
	case errors.Is(err, ErrBusy):
		return http.StatusConflict
	case errors.Is(err, ErrInvalidInput), errors.Is(err, errUpload), errors.Is(err, ident.ErrInvalid):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// writeJSON writes v as indented JSON, never cached.
func writeJSON(w http.ResponseWriter, code int, v any) {
	httpapi.Write(w, code, "no-store", v) //nolint:errcheck // the status is sent
}
