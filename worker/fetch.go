package worker

import (
	"errors"
	"net/http"
	"net/textproto"
	"reflect"
	"sort"
	"strings"

	"github.com/dop251/goja"
)

// The glue between a Go Request/Response and the script's fetch handler,
// on the isolate's loop.

// pendingFetch is a request (or a Durable Object event) whose answer is
// still being made.
type pendingFetch struct {
	answer   func(*Response)
	hung     func() // fails the event when nothing can settle it; nil: answer a 500
	answered bool
}

type fetchResult struct {
	resp *Response
	err  error
}

// fetchGlue looks up the prelude functions requests go through (loading
// the fetch API on the isolate's first request).
func (iso *isolate) fetchGlue() error {
	if iso.dispatch != nil {
		return nil
	}
	var fns [2]goja.Callable
	for i, name := range []string{"dispatch", "respond"} {
		f, ok := goja.AssertFunction(iso.internal.Get(name))
		if !ok {
			return errors.New("prelude: internal." + name + " missing")
		}
		fns[i] = f
	}
	iso.dispatch, iso.respond = fns[0], fns[1]
	iso.box = iso.vm.NewArray()
	return nil
}

// unwatch removes pf from the requests in flight.
func (iso *isolate) unwatch(pf *pendingFetch) {
	for i, w := range iso.waiting {
		if w == pf {
			iso.waiting = append(iso.waiting[:i], iso.waiting[i+1:]...)
			return
		}
	}
}

// startFetch runs on the loop: it hands the request to the script and
// arranges for the answer to reach ch as soon as the response is complete,
// independent of any waitUntil work.
func (iso *isolate) startFetch(req *Request, href string, ch chan<- fetchResult, scope *eventScope, ep *entrypoint) goja.Value {
	pf := &pendingFetch{}
	iso.waiting = append(iso.waiting, pf)
	defer iso.enter(scope)()
	answer := func(resp *Response) {
		if pf.answered {
			return
		}
		pf.answered = true
		scope.answered = true
		iso.unwatch(pf)
		if resp.Uncaught {
			resp.Unavailable = scope.unavailable
		}
		if req.Method == http.MethodHead {
			resp.Body = nil
			discardStream(resp)
		}
		ch <- fetchResult{resp: resp}
	}
	pf.answer = answer
	if err := iso.fetchGlue(); err != nil {
		iso.reportException("build request", err)
		answer(internalError())
		return nil
	}
	handler, props := iso.handler, goja.Undefined()
	if ep != nil {
		var err error
		if handler, props, err = iso.entrypointTarget(ep); err != nil {
			iso.reportException("service binding", err)
			answer(internalError())
			return nil
		}
	}
	jsReq, err := iso.newJSRequest(req, href)
	if err != nil {
		iso.reportException("build request", err)
		answer(internalError())
		return nil
	}
	res, err := iso.dispatch(goja.Undefined(), handler, iso.env, iso.box, jsReq, props)
	if err != nil {
		iso.reportUncaught(scope, thrownOr(err))
		resp := internalError()
		resp.Exception = exceptionText(thrownOr(err))
		if ep != nil {
			resp.thrown, _ = iso.errException(err)
		}
		answer(resp)
		return jsReq
	}
	iso.response(res, func(resp *Response, exception goja.Value) {
		if resp == nil {
			iso.reportUncaught(scope, exception)
			resp = internalError()
			resp.Exception = exceptionText(exception)
			if ep != nil {
				resp.thrown, _ = iso.thrownException(exception)
			}
		}
		answer(resp)
	})
	return jsReq
}

// response turns what a fetch handler returned (internal.dispatch's
// result) into a Response and calls then with it, or with what was thrown
// (a nil Response), once the handler's promise settles: at once when
// nothing is left to wait for. The native Response is serialized by
// native.responseOut (response.go) into iso.out.
func (iso *isolate) response(res goja.Value, then func(*Response, goja.Value)) {
	if res.SameAs(iso.box) {
		// A Response answered synchronously: serialized already.
		resp := iso.out
		iso.out = nil
		then(resp, nil)
		return
	}
	iso.await(res, func(ok bool, v goja.Value) {
		if !ok {
			then(nil, v)
			return
		}
		var resp *Response
		if c := iso.fetchc; c != nil {
			if r, ok := c.responseOf(v); ok {
				// A native Response: serialized here, without a call into
				// the prelude (what it throws is what respond would).
				if ex := iso.vm.Try(func() { resp = c.serialize(r) }); ex != nil {
					then(nil, ex.Value())
					return
				}
				then(resp, nil)
				return
			}
		}
		if _, err := iso.respond(goja.Undefined(), v); err != nil {
			iso.out = nil
			then(nil, thrown(err))
			return
		}
		resp = iso.out
		iso.out = nil
		then(resp, nil)
	})
}

// thrownOr is what a script threw, or err itself when it is not a throw
// (an interrupt).
func thrownOr(err error) any {
	if v := thrown(err); v != nil {
		return v
	}
	return err
}

// thrown is the JavaScript value of an error from calling into a script.
func thrown(err error) goja.Value {
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return ex.Value()
	}
	return nil
}

// await calls then with the outcome of v as `await v` would see it. For
// a promise of the runtime's own: at once when it has settled (a handler
// that finished without waiting on I/O: its microtasks drained before
// this runs), else after the task in which it settles. Any other object
// goes through a reaction (internal.settle: Promise.resolve semantics, so
// thenables are followed as JavaScript would).
func (iso *isolate) await(v goja.Value, then func(ok bool, v goja.Value)) {
	if p := iso.ownPromise(v); p != nil {
		switch p.State() {
		case goja.PromiseStateFulfilled:
			then(true, p.Result())
		case goja.PromiseStateRejected:
			iso.handleRejection(p)
			then(false, p.Result())
		default:
			// The loop looks at it again after every task (pollAwaited):
			// no reaction, closure or derived promise per wait.
			iso.awaiting = append(iso.awaiting, awaited{p, then})
		}
		return
	} else if _, isObj := v.(*goja.Object); !isObj {
		// Not a thenable: the value itself.
		then(true, v)
		return
	}
	done := iso.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		then(call.Argument(0).ToBoolean(), call.Argument(1))
		return goja.Undefined()
	})
	if _, err := iso.settle(goja.Undefined(), v, done); err != nil {
		then(false, thrown(err))
	}
}

// awaited is a promise Go waits for (isolate.await).
type awaited struct {
	p    *goja.Promise
	then func(ok bool, v goja.Value)
}

// pollAwaited runs, between tasks, the continuations of awaited promises
// that have settled (and of those that settle while they run).
func (iso *isolate) pollAwaited() {
	for progress := true; progress; {
		progress = false
		for i := 0; i < len(iso.awaiting); i++ {
			a := iso.awaiting[i]
			state := a.p.State()
			if state == goja.PromiseStatePending {
				continue
			}
			iso.awaiting = append(iso.awaiting[:i], iso.awaiting[i+1:]...)
			i--
			progress = true
			iso.enterTask()
			if state == goja.PromiseStateRejected {
				iso.handleRejection(a.p)
				a.then(false, a.p.Result())
			} else {
				a.then(true, a.p.Result())
			}
			iso.leaveTask()
		}
	}
}

// awaitOwn is await for a value the prelude made: a promise of its own
// or a plain value, never some other thenable.
func (iso *isolate) awaitOwn(v goja.Value, then func(ok bool, v goja.Value)) {
	if iso.ownPromise(v) == nil {
		then(true, v)
		return
	}
	iso.await(v, then)
}

// ownPromise returns v as a promise whose then is the runtime's own, or
// nil: only the state of such a promise may be read instead of calling
// its then.
func (iso *isolate) ownPromise(v goja.Value) *goja.Promise {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ExportType() != typePromise || obj.Prototype() != iso.promiseProto {
		return nil
	}
	if !obj.Get("then").SameAs(iso.promiseThen) {
		return nil
	}
	p, _ := obj.Export().(*goja.Promise)
	return p
}

// handleRejection marks the rejected promise p as handled: its rejection
// reaches the caller, so it is not reported as unhandled.
func (iso *isolate) handleRejection(p *goja.Promise) {
	iso.trackRejection(p, goja.PromiseRejectionHandle)
}

// headersValue is hdr as immutable Headers (names lowercase).
func (iso *isolate) headersValue(hdr http.Header) goja.Value {
	vm := iso.vm
	names := make([]string, 0, len(hdr))
	n := 0
	for k, vs := range hdr {
		names = append(names, k)
		n += len(vs)
	}
	sort.Strings(names)
	h := &jsHeaders{immutable: true, entries: make([]headerEntry, 0, n)}
	for _, k := range names {
		lk := iso.headerName(k)
		for _, v := range hdr[k] {
			h.add(headerEntry{name: lk.String(), nameV: lk, value: vm.ToValue(v), valueS: v})
		}
	}
	return iso.loadHeaders().newObject(h, nil)
}

// headerArg reads the headers a native was given: Headers, or
// [name, value, ...].
func (iso *isolate) headerArg(v goja.Value) http.Header {
	if h, ok := headersOf(v); ok {
		return iso.httpHeader(h)
	}
	header := http.Header{}
	if obj, ok := v.(*goja.Object); ok {
		n := int(obj.Get("length").ToInteger())
		for i := 0; i+1 < n; i += 2 {
			header.Add(obj.Get(itoa(i)).String(), obj.Get(itoa(i+1)).String())
		}
	}
	return header
}

// loadHeaders returns the isolate's Headers class, loading it first if
// need be.
func (iso *isolate) loadHeaders() *headersClass {
	if iso.hdrs == nil {
		iso.preludeGlobal("Headers")
	}
	return iso.headersClass()
}

// headerName returns the lowercase JavaScript string of a header name,
// remembered per isolate (the same few names come with every request).
func (iso *isolate) headerName(k string) goja.Value {
	if v, ok := iso.names[k]; ok {
		return v
	}
	v := iso.vm.ToValue(strings.ToLower(k))
	if iso.names == nil || len(iso.names) >= 256 {
		iso.names = map[string]goja.Value{}
	}
	iso.names[k] = v
	return v
}

// methodValue is the JavaScript string of an HTTP method, remembered per
// isolate.
func (iso *isolate) methodValue(m string) goja.Value {
	if v, ok := iso.methods[m]; ok {
		return v
	}
	v := iso.vm.ToValue(m)
	if iso.methods == nil || len(iso.methods) >= 16 {
		iso.methods = map[string]goja.Value{}
	}
	iso.methods[m] = v
	return v
}

// abortRequest fires request.signal of a request whose caller went away.
func (iso *isolate) abortRequest(jsReq goja.Value) {
	if jsReq == nil || iso.internal == nil {
		return
	}
	abort, ok := goja.AssertFunction(iso.internal.Get("abortRequest"))
	if !ok {
		return
	}
	if _, err := abort(goja.Undefined(), jsReq); err != nil {
		iso.reportException("abort request", err)
	}
}

var typeBytes = reflect.TypeOf([]byte(nil))

// discardStream cancels the stream body of a response nobody will read
// (an answer to HEAD). Call it on the loop.
func discardStream(resp *Response) {
	if s, ok := resp.Stream.(*bodyStream); ok {
		s.discard()
		resp.Stream = nil
	}
}

func exportGoBody(v goja.Value) (*goBody, bool) {
	if v == nil {
		return nil, false
	}
	gb, ok := v.Export().(*goBody)
	return gb, ok
}

// httpHeader is h as Go's http.Header: canonical names (remembered per
// isolate), the values of one name joined with ", " except Set-Cookie's,
// as iteration yields them.
func (iso *isolate) httpHeader(h *jsHeaders) http.Header {
	out := make(http.Header, len(h.entries))
	es := h.entries
	for i := 0; i < len(es); {
		j := run(es, i)
		key := iso.canonicalName(es[i].name)
		switch {
		case j == i+1:
			out[key] = []string{es[i].valueS}
		case es[i].name == "set-cookie":
			vs := make([]string, 0, j-i)
			for k := i; k < j; k++ {
				vs = append(vs, es[k].valueS)
			}
			out[key] = vs
		default:
			vs := make([]string, 0, j-i)
			for k := i; k < j; k++ {
				vs = append(vs, es[k].valueS)
			}
			out[key] = []string{strings.Join(vs, ", ")}
		}
		i = j
	}
	return out
}

// canonicalName is the canonical form of a lowercase header name,
// remembered per isolate.
func (iso *isolate) canonicalName(lower string) string {
	if c, ok := iso.canon[lower]; ok {
		return c
	}
	c := textproto.CanonicalMIMEHeaderKey(lower)
	if iso.canon == nil || len(iso.canon) >= 256 {
		iso.canon = map[string]string{}
	}
	iso.canon[lower] = c
	return c
}

// reportUncaught logs a fetch handler's uncaught exception, unless it
// followed a refusal of a cell the request called (the cell is moving, its
// owner is gone, its restore fails, the node is full): the host answers
// that 503 and logs the refusal once per cell, not a stack per request.
func (iso *isolate) reportUncaught(scope *eventScope, exception any) {
	if scope != nil && scope.unavailable != nil {
		iso.log.Debug("fetch handler threw after a cell it called was unavailable", "refusal", scope.unavailable)
		return
	}
	iso.reportException("uncaught exception in fetch handler", exception)
}
