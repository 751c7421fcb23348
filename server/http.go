package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/celldgo/celld/worker"
)

// toWorkerRequest converts an incoming request. The URL is absolute, as
// a Worker sees it. A body of a known small length is read whole; any
// other is handed to the script as a stream (request.body) read from the
// connection as the script reads it, within the node's cap and budget.
// The caller releases the returned body when the request ends.
func (s *node) toWorkerRequest(w http.ResponseWriter, r *http.Request) (*worker.Request, *limitedBody, error) {
	// The header map is handed over as it is: nothing reads r.Header once
	// the handler has the request, and the runtime does not change it.
	req := &worker.Request{Method: r.Method, URL: "http://" + r.Host + r.URL.RequestURI(), Header: r.Header}
	if r.Body == nil || r.Body == http.NoBody || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return req, nil, nil
	}
	p := s.objects.peer
	lb, err := newLimitedBody(w, r, p.bodies, p.maxBody)
	if err != nil {
		return nil, nil, err
	}
	if r.ContentLength >= 0 && r.ContentLength <= smallBody {
		b, err := lb.readAll()
		if err != nil {
			lb.release()
			return nil, nil, err
		}
		req.Body = b
		return req, lb, nil
	}
	req.Stream = lb
	return req, lb, nil
}

// writeWorkerResponse writes a Worker's answer. A streamed body is
// written chunk by chunk, each flushed as soon as the script produced it;
// ctx ending (the client went away) cancels the stream in the script
// (streamBody).
func writeWorkerResponse(ctx context.Context, w http.ResponseWriter, resp *worker.Response) {
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = vs // the response is this request's alone
	}
	// Internal to stub calls between a Worker and its objects.
	if _, ok := h[worker.ExceptionHeader]; ok {
		delete(h, worker.ExceptionHeader)
	}
	if _, ok := resp.Header["Content-Type"]; !ok {
		h["Content-Type"] = nil // no sniffing: workerd sends none either
	}
	if resp.Stream == nil {
		w.WriteHeader(resp.Status)
		w.Write(resp.Body)
		return
	}
	if n := worker.BodySize(resp.Stream); n >= 0 && bodyAllowed(resp.Status) {
		// A Go body of known length (an R2 object's): sent with its
		// length, as workerd does, not chunked.
		if _, ok := h["Content-Length"]; !ok {
			if _, ok := h["Transfer-Encoding"]; !ok {
				h["Content-Length"] = []string{strconv.FormatInt(n, 10)}
			}
		}
	}
	w.WriteHeader(resp.Status)
	streamBody(ctx, w, resp.Stream)
}

// bodyAllowed reports whether a response of status may carry a body.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// serveWorker hands a request to the live deployment's default export.
func (s *node) serveWorker(w http.ResponseWriter, r *http.Request) {
	if !s.fleet.Serving() {
		w.Header().Set("Connection", "close")
		http.Error(w, "node is not serving (lease lost)", http.StatusServiceUnavailable)
		return
	}
	if s.objects.drain.active.Load() {
		drainRefuse(w)
		return
	}
	ap := s.apps.current()
	if ap == nil {
		http.Error(w, "no Worker deployed: run celld deploy", http.StatusServiceUnavailable)
		return
	}
	if s.serveAssets(w, r, ap) {
		return
	}
	req, body, err := s.toWorkerRequest(w, r)
	if err != nil {
		bodyRefused(w, err)
		return
	}
	if body != nil {
		defer body.release()
	}
	resp, err := ap.rt.Fetch(r.Context(), req)
	if body != nil && body.overflowed() {
		// The script read past the cap (its read failed): the request is
		// refused whatever the script made of that.
		if err == nil && resp.Stream != nil {
			resp.Stream.Close()
		}
		bodyRefused(w, &BodyTooLargeError{Limit: body.limit})
		return
	}
	if body != nil && body.timedOut() {
		// The client stopped sending its body (which cancelled the
		// request): not the script's failure.
		if err == nil && resp.Stream != nil {
			resp.Stream.Close()
		}
		w.Header().Set("Connection", "close")
		http.Error(w, "request body stalled: nothing received for "+bodyIdle.String(), http.StatusRequestTimeout)
		return
	}
	if (err != nil || resp.Uncaught) && s.objects.drain.active.Load() {
		// Most likely the Worker needed a cell this draining node may not
		// acquire: the client retries on another node.
		s.log.Info("worker fetch failed while draining; answered 503", "url", req.URL, "err", err)
		drainRefuse(w)
		return
	}
	if err != nil {
		s.log.Error("worker fetch failed", "url", req.URL, "err", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	if resp.Uncaught && resp.Unavailable != nil {
		// The handler threw after a cell it called could not be served
		// (this node refused to activate it, its restore failed, it was
		// moving or its owner gone and not yet taken over): a refusal, not
		// a script error. The cell's unavailability is logged where it is
		// found, once per change (unavailable.go).
		s.log.Debug("worker threw after a cell it called was unavailable; answered 503", "url", req.URL, "err", resp.Unavailable)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "celld: "+resp.Unavailable.Error()+"; retry", http.StatusServiceUnavailable)
		return
	}
	if resp.WebSocket != nil {
		s.serveWebSocket(w, r, resp)
		return
	}
	if resp.Uncaught && s.opts.Dev != nil && s.opts.Dev.HTMLErrors && strings.Contains(r.Header.Get("Accept"), "text/html") {
		writeDevErrorPage(w, r, resp.Exception)
		return
	}
	writeWorkerResponse(r.Context(), w, resp)
}

func drainRefuse(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	w.Header().Set("Retry-After", "0")
	http.Error(w, "node is draining; retry on another node", http.StatusServiceUnavailable)
}
