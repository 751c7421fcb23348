package server

import (
	"bufio"
	"html"
	"net"
	"net/http"
	"time"
)

// devWrap adds celld dev's request log to h; a fleet node gets h as is.
func (s *node) devWrap(h http.Handler) http.Handler {
	if s.opts.Dev == nil || s.opts.Dev.RequestLog == nil {
		return h
	}
	logf := s.opts.Dev.RequestLog
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		logf(r.Method, r.URL.RequestURI(), sw.status, time.Since(start))
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush keeps streamed responses streaming through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over (a WebSocket upgrade), logged as 101.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.status, w.wrote = http.StatusSwitchingProtocols, true
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeDevErrorPage answers a browser whose request made the Worker throw.
func writeDevErrorPage(w http.ResponseWriter, r *http.Request, exception string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write([]byte(`<!doctype html><html><head><meta charset="utf-8"><title>Worker threw an exception</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:3em auto;max-width:50em;padding:0 1em}code{background:#f3f3f3;padding:.1em .3em}</style></head>
<body><h1>500: the Worker threw an exception</h1>
<p>While handling <code>` + html.EscapeString(r.Method+" "+r.URL.RequestURI()) + `</code>.</p>
<pre style="background:#fff4f4;border-left:4px solid #d33;padding:1em;overflow:auto">` + html.EscapeString(exception) + `</pre>
<p>The exception is printed in the <code>celld dev</code> terminal too.</p>
<p>This page is shown only by <code>celld dev</code> and only to browsers; a deployed fleet answers <code>Internal Server Error</code>, as Cloudflare does.</p>
</body></html>
`))
}
