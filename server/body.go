package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/celldgo/celld/fleet"
)

// Request bodies are never read whole unless small. A public request's
// body reaches the Worker as a stream (request.body); a peer request's
// body is read only after its signed headers are verified, hashed as it
// is read. Every body byte a node accepts, on either listener, is counted
// against one node-wide budget until its request ends, so concurrent
// large uploads cannot take the process past it.
const (
	// DefaultMaxRequestBody is the per-request cap (CELLD_MAX_BODY_MB):
	// Cloudflare's default limit on a request body, 100 MB.
	DefaultMaxRequestBody = 100 << 20
	// DefaultBodyMemory is the node-wide budget of request-body bytes in
	// flight (CELLD_BODY_MEMORY_MB).
	DefaultBodyMemory = 512 << 20
	// smallBody: a public body of a known length at most this is read
	// whole (cheaper for the script than a stream).
	smallBody = 64 << 10
	// bodyWait bounds how long a request waits for room in the budget
	// before it is refused (503, Retry-After).
	bodyWait = 10 * time.Second
)

// maxBody bounds what a node reads whole from a peer's answer (the
// answer side of the peer protocol; requests use the node's cap).
const maxBody = DefaultMaxRequestBody

// errBodyTooLarge is a body past the per-request cap.
var errBodyTooLarge = errors.New("request body too large")

// errBodyBudget is a body refused because the node's body budget stayed
// full for bodyWait.
var errBodyBudget = errors.New("node is at its request-body memory budget (CELLD_BODY_MEMORY_MB)")

// errBodyGone is a read of a request body after its request ended.
var errBodyGone = errors.New("request body read after its request ended")

// BodyTooLargeError is a body past the cap.
type BodyTooLargeError struct{ Limit int64 }

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("request body larger than %d bytes (CELLD_MAX_BODY_MB)", e.Limit)
}
func (e *BodyTooLargeError) Unwrap() error { return errBodyTooLarge }

// bodyBudget is the node-wide count of request-body bytes in flight.
type bodyBudget struct {
	mu   sync.Mutex
	free int64
	max  int64
	wake chan struct{} // closed (and replaced) when bytes are given back
	wait time.Duration // bodyWait; tests shorten it
}

func newBodyBudget(max int64) *bodyBudget {
	return &bodyBudget{free: max, max: max, wake: make(chan struct{}), wait: bodyWait}
}

// take reserves n bytes, waiting up to bodyWait (or until ctx ends) for
// room (b.wait). A body larger than the whole budget never fits: n is checked
// against the cap first, which is at most the budget.
func (b *bodyBudget) take(ctx context.Context, n int64) error {
	if n <= 0 {
		return nil
	}
	var timer <-chan time.Time
	for {
		b.mu.Lock()
		if n <= b.free {
			b.free -= n
			b.mu.Unlock()
			return nil
		}
		if n > b.max {
			b.mu.Unlock()
			return errBodyBudget
		}
		wake := b.wake
		b.mu.Unlock()
		if timer == nil {
			t := time.NewTimer(b.wait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-wake:
		case <-timer:
			return errBodyBudget
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

func (b *bodyBudget) give(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	close(b.wake)
	b.wake = make(chan struct{})
	b.mu.Unlock()
}

// inUse is the bytes reserved now (for /state and tests).
func (b *bodyBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.max - b.free
}

// limitedBody reads a request's body within the cap, reserving budget
// for what it reads (all of a declared Content-Length up front). Its
// reservation is given back by release, when the request ends; a read
// after that fails (a script reading the body of a request already
// answered gets an error, not the connection's next request).
type limitedBody struct {
	ctx    context.Context
	r      io.Reader
	budget *bodyBudget
	limit  int64
	size   int64 // the declared Content-Length, or -1

	mu       sync.Mutex
	read     int64
	reserved int64
	ended    bool
	overflow bool
	stalled  bool      // a read timed out (bodyIdle)
	hash     hash.Hash // when not nil, every byte read is hashed
	rc       *http.ResponseController
}

// newLimitedBody wraps r's body. A Content-Length past limit is refused
// at once (*BodyTooLargeError) without reading; one within it is
// reserved whole before anything is read.
// Each read must make progress within bodyIdle.
func newLimitedBody(w http.ResponseWriter, r *http.Request, budget *bodyBudget, limit int64) (*limitedBody, error) {
	lb := &limitedBody{ctx: r.Context(), r: r.Body, budget: budget, limit: limit, size: r.ContentLength, rc: http.NewResponseController(w)}
	if r.ContentLength > limit {
		return nil, &BodyTooLargeError{Limit: limit}
	}
	if r.ContentLength > 0 {
		if err := budget.take(r.Context(), r.ContentLength); err != nil {
			return nil, err
		}
		lb.reserved = r.ContentLength
	}
	return lb, nil
}

func (lb *limitedBody) Read(p []byte) (int, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.ended {
		return 0, errBodyGone
	}
	if lb.overflow {
		return 0, &BodyTooLargeError{Limit: lb.limit}
	}
	if room := lb.limit + 1 - lb.read; int64(len(p)) > room {
		p = p[:room] // one byte past the cap tells an overflow from the end
	}
	if need := lb.read + int64(len(p)) - lb.reserved; need > 0 {
		// A body of unknown length reserves as it goes.
		if err := lb.budget.take(lb.ctx, need); err != nil {
			return 0, err
		}
		lb.reserved += need
	}
	lb.rc.SetReadDeadline(time.Now().Add(bodyIdle)) // a stalled sender is cut
	n, err := lb.r.Read(p)
	if err != nil {
		// Done (or failed): no deadline left to cancel the request
		// later (the server's read past the body's end would time out).
		lb.rc.SetReadDeadline(time.Time{})
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			lb.stalled = true
		}
	}
	lb.read += int64(n)
	if lb.hash != nil {
		lb.hash.Write(p[:n])
	}
	if lb.read > lb.limit {
		lb.overflow = true
		return 0, &BodyTooLargeError{Limit: lb.limit}
	}
	return n, err
}

// Size is the body's declared length, or -1 (worker.BodySize): an R2 put
// of request.body then knows it up front. net/http fails a body that ends
// before its Content-Length.
func (lb *limitedBody) Size() int64 { return lb.size }

// Close is the script's (or the runtime's) end of interest; the body's
// bytes stay reserved until release.
func (lb *limitedBody) Close() error { return nil }

// overflowed reports whether the body passed the cap.
func (lb *limitedBody) overflowed() bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.overflow
}

// timedOut reports whether the sender stalled past bodyIdle.
func (lb *limitedBody) timedOut() bool {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.stalled
}

// release ends the body (later reads fail) and gives its reservation
// back. It waits for a read in progress.
func (lb *limitedBody) release() {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.ended {
		return
	}
	lb.ended = true
	lb.budget.give(lb.reserved)
	lb.reserved = 0
}

// readAll reads the whole body into memory (at most the cap).
func (lb *limitedBody) readAll() ([]byte, error) {
	n := lb.reserved
	if n <= 0 || n > lb.limit {
		n = 512
	}
	buf := make([]byte, 0, n+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := lb.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// bodyRefused answers a body refused before or while it was read.
func bodyRefused(w http.ResponseWriter, err error) {
	w.Header().Set("Connection", "close") // the rest of the body is not read
	var tl *BodyTooLargeError
	if errors.As(err, &tl) {
		http.Error(w, "413 Payload Too Large: "+tl.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	if errors.Is(err, errBodyBudget) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "celld: "+err.Error()+"; retry", http.StatusServiceUnavailable)
		return
	}
	http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
}

// readPeerBody reads a peer request's body once its signed headers are
// verified: at most the cap, counted against the budget, hashed as it is
// read and checked against the signed hash at the end. The caller
// releases the returned body's reservation when the request ends.
func readPeerBody(w http.ResponseWriter, r *http.Request, budget *bodyBudget, limit int64) ([]byte, *limitedBody, error) {
	lb, err := newLimitedBody(w, r, budget, limit)
	if err != nil {
		return nil, nil, err
	}
	lb.hash = sha256.New()
	data, err := lb.readAll()
	if err != nil {
		lb.release()
		return nil, nil, err
	}
	if err := fleet.CheckBodySum(r, lb.hash.Sum(nil)); err != nil {
		lb.release()
		return nil, nil, err
	}
	return data, lb, nil
}
