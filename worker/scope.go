package worker

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/dop251/goja"
)

// An event scope follows one request through the script's asynchronous
// code, so that what its Durable Object calls meet can be told apart from
// what other requests in the same isolate meet. goja's async context
// tracker hands the scope that was current when a promise reaction was
// attached (an await, a then) back to the loop when the reaction runs.

// eventScope is what the isolate knows of one request while its code
// runs. Loop-confined.
type eventScope struct {
	unavailable error  // the first ErrUnavailable refusal of a call it made
	requestID   string // the host's id of the request (WithRequestID), logged with console output

	// calls ends the request's calls in flight (Durable Object calls,
	// fetch()); each runs under its own context, released when it settles
	// or, for an answer that streams, when its body is closed — from any
	// goroutine, hence the lock.
	mu       sync.Mutex
	calls    map[*context.CancelCauseFunc]struct{}
	waits    int  // ctx.waitUntil promises it registered, still pending
	answered bool // its response is complete
	gone     bool // its client went away before the response
}

type requestIDKey struct{}

// WithRequestID gives ctx a request id: the console output of the event
// a Fetch or Call with this context runs, and of the calls it makes in
// turn (Durable Object stubs), is logged with it as "request_id".
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id of ctx ("" if none).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// errClientGone ends the Durable Object calls of a request whose client
// went away before its response.
var errClientGone = errors.New("the client disconnected before the response")

// callContext is the context of a call made by code in scope s (nil:
// code outside any request), derived from base. settle releases it once
// the call settled (or its streamed answer was closed); it may be called
// from any goroutine, more than once. Call callContext on the loop.
func (s *eventScope) callContext(base context.Context) (ctx context.Context, settle func()) {
	if s == nil {
		return base, func() {}
	}
	if s.requestID != "" {
		base = WithRequestID(base, s.requestID)
	}
	ctx, cancel := context.WithCancelCause(base)
	if s.gone {
		cancel(errClientGone)
		return ctx, func() {}
	}
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[*context.CancelCauseFunc]struct{}{}
	}
	s.calls[&cancel] = struct{}{}
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		delete(s.calls, &cancel)
		s.mu.Unlock()
		cancel(nil)
	}
}

// clientGone ends the calls of a request whose client went away before
// its response — unless the request handed work to ctx.waitUntil, which
// goes on without the client, as on Workers. Call it on the loop.
func (s *eventScope) clientGone() {
	if s == nil || s.answered || s.waits > 0 {
		return
	}
	s.gone = true
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.calls {
		(*c)(errClientGone)
	}
}

// settleOnClose releases a call's context when its streamed answer is
// closed.
type settleOnClose struct {
	io.ReadCloser
	settle func()
}

func (r *settleOnClose) Close() error {
	err := r.ReadCloser.Close()
	r.settle()
	return err
}

// scopeTracker is goja's AsyncContextTracker for an isolate.
type scopeTracker struct{ iso *isolate }

// Grab runs for every promise reaction and await, so the context it
// hands out is shared: while the scope and AsyncLocalStorage frame stay
// the same (a request's whole chain of awaits), each reaction gets the
// same immutable *asyncCtx instead of a new allocation.
func (t scopeTracker) Grab() any {
	s, a := t.iso.scope, t.iso.als
	if s == nil && a == nil {
		return nil
	}
	if c := t.iso.grabbed; c != nil && c.scope == s && sameFrame(c.als, a) {
		return c
	}
	c := &asyncCtx{scope: s, als: a}
	t.iso.grabbed = c
	return c
}

// sameFrame reports whether two AsyncLocalStorage frames (JS objects, or
// nil) are the same one.
func sameFrame(a, b goja.Value) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ao, ok1 := a.(*goja.Object)
	bo, ok2 := b.(*goja.Object)
	return ok1 && ok2 && ao == bo
}

func (t scopeTracker) Resumed(v any) {
	if c, _ := v.(*asyncCtx); c != nil {
		t.iso.scope, t.iso.als = c.scope, c.als
		return
	}
	t.iso.scope, t.iso.als = nil, nil
}

func (t scopeTracker) Exited() { t.iso.scope, t.iso.als = nil, nil }

// enter makes s the current scope for the synchronous code that runs
// until the returned function is called. An event starts outside any
// AsyncLocalStorage run.
func (iso *isolate) enter(s *eventScope) (leave func()) {
	prev, prevALS := iso.scope, iso.als
	iso.scope, iso.als = s, nil
	return func() {
		iso.scope, iso.als = prev, prevALS
		iso.grabbed = nil // not to keep a finished event's scope alive
	}
}

// noteRefusal records err in scope s (the scope of the code that made the
// call) if it is a refusal worth retrying: the host refused the cell
// (ErrUnavailable: full, restore failing, the store unavailable) or the
// cell was closed under the call (ErrObjectClosed: moving, its owner gone
// and not yet taken over, a drain).
func (s *eventScope) noteRefusal(err error) {
	if s != nil && s.unavailable == nil && (errors.Is(err, ErrUnavailable) || errors.Is(err, ErrObjectClosed)) {
		s.unavailable = err
	}
}
