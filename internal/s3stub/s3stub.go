// Package s3stub is a small S3-compatible HTTP server for tests. It speaks
// enough of the protocol for minio-go (objects, ranged GET, ListObjectsV2,
// aws-chunked uploads) and can be told to misbehave the ways broken stores
// do: accept If-Match/If-None-Match and ignore them, ignore Range, or answer
// with a chosen error. It does not check signatures.
package s3stub

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a running stub. Its zero options make a correct store.
type Server struct {
	URL string

	mu   sync.Mutex
	objs map[string]object // "bucket/key"
	opts Options
	srv  *httptest.Server
}

// Options choose how the stub misbehaves.
type Options struct {
	IgnoreConditions bool // accept If-Match / If-None-Match and ignore them
	IgnoreRange      bool // answer a ranged GET with the whole object
	// Fail, if set, may answer a request with an error status and S3 code
	// instead of serving it (status 0: serve normally).
	Fail func(r *http.Request) (status int, code string)
}

type object struct {
	data     []byte
	etag     string
	modified time.Time
}

// Start runs a stub on 127.0.0.1; Close stops it.
func Start(o Options) *Server {
	s := &Server{objs: map[string]object{}, opts: o}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.opts.Fail != nil {
		if status, code := s.opts.Fail(r); status != 0 {
			io.Copy(io.Discard, r.Body)
			writeErr(w, status, code)
			return
		}
	}
	path := strings.TrimPrefix(r.URL.Path, "/")
	bucket, key, _ := strings.Cut(path, "/")
	switch {
	case bucket == "":
		writeErr(w, 400, "InvalidBucketName")
	case key == "" && r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2":
		s.list(w, r, bucket)
	case key == "" && (r.Method == http.MethodPut || r.Method == http.MethodHead):
		w.WriteHeader(200)
	case key == "":
		writeErr(w, 400, "NotImplemented")
	case r.Method == http.MethodPut:
		s.put(w, r, bucket+"/"+key)
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		s.get(w, r, bucket+"/"+key)
	case r.Method == http.MethodDelete:
		s.mu.Lock()
		delete(s.objs, bucket+"/"+key)
		s.mu.Unlock()
		w.WriteHeader(204)
	default:
		writeErr(w, 405, "MethodNotAllowed")
	}
}

func (s *Server) put(w http.ResponseWriter, r *http.Request, k string) {
	body, err := readBody(r)
	if err != nil {
		writeErr(w, 400, "IncompleteBody")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, exists := s.objs[k]
	if !s.opts.IgnoreConditions {
		if inm := r.Header.Get("If-None-Match"); inm == "*" && exists {
			writeErr(w, 412, "PreconditionFailed")
			return
		}
		if im := r.Header.Get("If-Match"); im != "" {
			if !exists || strings.Trim(im, `"`) != cur.etag {
				writeErr(w, 412, "PreconditionFailed")
				return
			}
		}
	}
	sum := md5.Sum(body)
	o := object{data: body, etag: hex.EncodeToString(sum[:]), modified: time.Now().UTC()}
	s.objs[k] = o
	w.Header().Set("ETag", `"`+o.etag+`"`)
	w.WriteHeader(200)
}

func (s *Server) get(w http.ResponseWriter, r *http.Request, k string) {
	s.mu.Lock()
	o, ok := s.objs[k]
	s.mu.Unlock()
	if !ok {
		writeErr(w, 404, "NoSuchKey")
		return
	}
	h := w.Header()
	h.Set("ETag", `"`+o.etag+`"`)
	h.Set("Last-Modified", o.modified.Format(http.TimeFormat))
	h.Set("Content-Type", "application/octet-stream")
	data, status := o.data, 200
	if rg := r.Header.Get("Range"); rg != "" && !s.opts.IgnoreRange {
		lo, hi, ok := parseRange(rg, int64(len(o.data)))
		if !ok {
			writeErr(w, 416, "InvalidRange")
			return
		}
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", lo, hi-1, len(o.data)))
		data, status = o.data[lo:hi], 206
	}
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		w.Write(data)
	}
}

func parseRange(h string, n int64) (lo, hi int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if !found {
		return 0, 0, false
	}
	a, b, _ := strings.Cut(spec, "-")
	switch {
	case a == "":
		k, err := strconv.ParseInt(b, 10, 64)
		if err != nil || k <= 0 || n == 0 {
			return 0, 0, false
		}
		return max(0, n-k), n, true
	default:
		start, err := strconv.ParseInt(a, 10, 64)
		if err != nil || start >= n {
			return 0, 0, false
		}
		end := n - 1
		if b != "" {
			if end, err = strconv.ParseInt(b, 10, 64); err != nil || end < start {
				return 0, 0, false
			}
			end = min(end, n-1)
		}
		return start, end + 1, true
	}
}

type listResult struct {
	XMLName     xml.Name `xml:"ListBucketResult"`
	Name        string
	Prefix      string
	KeyCount    int
	MaxKeys     int
	IsTruncated bool
	Contents    []listEntry
}

type listEntry struct {
	Key          string
	LastModified string
	ETag         string
	Size         int64
}

func (s *Server) list(w http.ResponseWriter, r *http.Request, bucket string) {
	q := r.URL.Query()
	prefix, after := q.Get("prefix"), q.Get("start-after")
	max := 1000
	if m, err := strconv.Atoi(q.Get("max-keys")); err == nil && m > 0 && m < max {
		max = m
	}
	s.mu.Lock()
	var keys []string
	for k := range s.objs {
		b, key, _ := strings.Cut(k, "/")
		if b == bucket && strings.HasPrefix(key, prefix) && key > after {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	res := listResult{Name: bucket, Prefix: prefix, MaxKeys: max}
	if len(keys) > max {
		keys, res.IsTruncated = keys[:max], true
	}
	for _, key := range keys {
		o := s.objs[bucket+"/"+key]
		res.Contents = append(res.Contents, listEntry{Key: key, LastModified: o.modified.Format(time.RFC3339), ETag: `"` + o.etag + `"`, Size: int64(len(o.data))})
	}
	s.mu.Unlock()
	res.KeyCount = len(res.Contents)
	w.Header().Set("Content-Type", "application/xml")
	xml.NewEncoder(w).Encode(res)
}

func writeErr(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s (s3stub)</Message></Error>`, code, code)
}

// readBody returns the payload, decoding aws-chunked uploads (streaming
// signatures and trailers) as minio-go sends them over plain HTTP.
func readBody(r *http.Request) ([]byte, error) {
	sha := r.Header.Get("X-Amz-Content-Sha256")
	if !strings.HasPrefix(sha, "STREAMING-") {
		return io.ReadAll(r.Body)
	}
	br := bufio.NewReader(r.Body)
	var out bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("read chunk header: %w", err)
		}
		sizeHex, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		n, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("parse chunk size %q: %w", line, err)
		}
		if n == 0 {
			io.Copy(io.Discard, br) // trailers
			return out.Bytes(), nil
		}
		if _, err := io.CopyN(&out, br, n); err != nil {
			return nil, fmt.Errorf("read chunk: %w", err)
		}
		if _, err := br.Discard(2); err != nil {
			return nil, err
		}
	}
}
