package server

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/celldgo/celld/metrics"
	"github.com/celldgo/celld/worker"
)

// newRequestID is 16 hex digits: enough to tell a node's requests apart
// in its log, cheap enough for every request.
func newRequestID() string { return fmt.Sprintf("%016x", rand.Uint64()) }

// validRequestID accepts what newRequestID makes: a peer's header is
// signed, but a log attribute should never carry more than an id.
func validRequestID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// publicWrap is what every Worker request on the public listener passes
// through: it is counted for /state (requests, 5xx), it gets an id (the request_id of its console lines and of its
// access log line), it is counted in celld_requests_total (kind fetch, or
// websocket once upgraded) with its time to the response head, and, when
// the access log is on (CELLD_ACCESS_LOG, always in celld dev), logged
// once answered.
func (s *node) publicWrap(h http.Handler) http.Handler {
	m, access := s.metrics, s.opts.AccessLog
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := newRequestID()
		r = r.WithContext(worker.WithRequestID(r.Context(), id))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		head := sw.head
		if head.IsZero() {
			head = time.Now() // answered with nothing written: a 200 with no body
		}
		kind := metrics.KindFetch
		if sw.status == http.StatusSwitchingProtocols {
			kind = metrics.KindWebSocket
		}
		m.Request(kind, metrics.StatusClass(sw.status), head.Sub(start))
		s.requests.count(sw.status)
		if access {
			s.log.Info("request", "source", "access", "method", r.Method, "path", r.URL.RequestURI(), "status", sw.status,
				"duration_ms", float64(time.Since(start).Microseconds())/1000, "bytes", sw.bytes, "request_id", id)
		}
	})
}

// internalWrap counts the internal listener's requests: peer routes
// (kind peer) and the operator API (kind operator). /metrics itself is
// not counted.
func (s *node) internalWrap(h http.Handler) http.Handler {
	m := s.metrics
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		head := sw.head
		if head.IsZero() {
			head = time.Now()
		}
		kind := metrics.KindPeer
		if r.URL.Path == "/state" || r.URL.Path == "/shutdown" || strings.HasPrefix(r.URL.Path, "/state/") {
			kind = metrics.KindOperator
		}
		m.Request(kind, metrics.StatusClass(sw.status), head.Sub(start))
	})
}

// statusWriter notes a response's status, body bytes and the moment its
// head was written.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
	bytes  int64
	head   time.Time
}

// An informational head (103 Early Hints) is not the response's status.
func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote && code >= 200 {
		w.status, w.wrote, w.head = code, true, time.Now()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.wrote, w.head = true, time.Now()
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush keeps streamed responses streaming through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over (a WebSocket upgrade), counted as 101.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if !w.wrote {
		w.head = time.Now()
	}
	w.status, w.wrote = http.StatusSwitchingProtocols, true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
