package assets

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"time"
)

// Handler serves routing decisions from a Cache.
type Handler struct {
	Cache *Cache
}

// Write answers d for a request with method, header h and raw query, on
// w. A body that cannot be read from the bucket is a 502: it never falls
// through to the Worker.
func (s *Handler) Write(ctx context.Context, w http.ResponseWriter, r *http.Request, rt *Router, d Decision) {
	hdr := w.Header()
	switch d.Kind {
	case Redirect:
		loc := d.Location
		if r.URL.RawQuery != "" && d.Status == http.StatusTemporaryRedirect {
			loc += "?" + r.URL.RawQuery
		}
		hdr.Set("Location", loc)
		w.WriteHeader(d.Status)
		return
	case NotFound:
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if d.Status == http.StatusMethodNotAllowed {
		w.WriteHeader(http.StatusMethodNotAllowed) // no Allow header, as workerd's asset server
		return
	}
	f, done, err := s.Cache.Reader(ctx, d.Entry.Digest)
	if err != nil {
		http.Error(w, "asset unavailable", http.StatusBadGateway)
		return
	}
	defer done()
	if d.Entry.ContentType != "" {
		hdr.Set("Content-Type", d.Entry.ContentType)
	} else {
		hdr["Content-Type"] = nil // no sniffing
	}
	hdr.Set("ETag", ETag(d.Entry.Digest))
	hdr.Set("Cache-Control", "public, max-age=0, must-revalidate")
	applyHeaders(rt.headers, r.URL.Path, hdr)
	if d.Status != http.StatusOK {
		// The 404 page: no ranges or revalidation, the status is the point.
		hdr.Del("ETag")
		hdr.Set("Content-Length", itoa(d.Entry.Size))
		w.WriteHeader(d.Status)
		if r.Method != http.MethodHead {
			copyFile(w, f)
		}
		return
	}
	http.ServeContent(w, r, "", time.Time{}, f)
}

// Fetch answers a request made through the env.ASSETS binding: the same
// rules and headers as a request to the node, with not_found_handling
// always applied (there is no Worker to fall back on).
func (s *Handler) Fetch(ctx context.Context, rt *Router, r *http.Request) *http.Response {
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	d := rt.Fetch(r.Method, r.URL.Path)
	s.Write(ctx, rec, r, rt, d)
	return &http.Response{StatusCode: rec.status, Header: rec.header, Body: io.NopCloser(&rec.body),
		ContentLength: int64(rec.body.Len())}
}

// recorder is the http.ResponseWriter of a binding fetch.
type recorder struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = code, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// ETag is an asset's strong entity tag: the first 32 hex digits of its
// SHA-256, quoted, the shape Cloudflare's asset server sends.
func ETag(digest string) string {
	if len(digest) > 32 {
		digest = digest[:32]
	}
	return `"` + digest + `"`
}
