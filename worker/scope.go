package worker

import "errors"

// An event scope follows one request through the script's asynchronous
// code, so that what its Durable Object calls meet can be told apart from
// what other requests in the same isolate meet. goja's async context
// tracker hands the scope that was current when a promise reaction was
// attached (an await, a then) back to the loop when the reaction runs.

// eventScope is what the isolate knows of one request while its code
// runs. Loop-confined.
type eventScope struct {
	unavailable error // the first ErrUnavailable refusal of a call it made
}

// scopeTracker is goja's AsyncContextTracker for an isolate.
type scopeTracker struct{ iso *isolate }

func (t scopeTracker) Grab() any {
	if s := t.iso.scope; s != nil {
		return s
	}
	return nil
}

func (t scopeTracker) Resumed(v any) {
	s, _ := v.(*eventScope)
	t.iso.scope = s
}

func (t scopeTracker) Exited() { t.iso.scope = nil }

// enter makes s the current scope for the synchronous code that runs
// until the returned function is called.
func (iso *isolate) enter(s *eventScope) (leave func()) {
	prev := iso.scope
	iso.scope = s
	return func() { iso.scope = prev }
}

// noteRefusal records err in scope s (the scope of the code that made the
// call) if it is a refusal worth retrying.
func (s *eventScope) noteRefusal(err error) {
	if s != nil && s.unavailable == nil && errors.Is(err, ErrUnavailable) {
		s.unavailable = err
	}
}
