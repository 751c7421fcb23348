package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/celldgo/celld/metrics"
)

// BenchmarkPublicWrap is the cost publicWrap adds to a public request
// (id, metrics, /state counters; the access log off and on, to a
// discarding JSON handler), around a handler that writes a short body.
// cpu-ns/op is the figure to compare: the process's CPU time per request.
func BenchmarkPublicWrap(b *testing.B) {
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) })
	req := httptest.NewRequest("GET", "/hello?x=1", nil)
	for _, c := range []struct {
		name   string
		access bool
		wrap   bool
	}{{"bare", false, false}, {"wrapped", false, true}, {"wrapped+access_log", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			n := &node{opts: Options{AccessLog: c.access}, log: slog.New(slog.NewJSONHandler(discard{}, nil)), metrics: metrics.New(nil)}
			h := http.Handler(inner)
			if c.wrap {
				h = n.publicWrap(inner)
			}
			w := &nopWriter{h: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			defer reportCPU(b)() // ns/op is noisy while other processes compete for the CPUs
			for range b.N {
				h.ServeHTTP(w, req)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}
