package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
)

// isolate is one goja.Runtime with its own event loop. Only the loop
// goroutine (run) touches vm and the fields below the line.
type isolate struct {
	rt    *Runtime
	id    int
	obj   *Object         // the Durable Object this isolate runs, if any
	ctx   context.Context // of outgoing Durable Object calls
	tasks chan func()
	stop  chan struct{}
	done  chan struct{}
	log   *slog.Logger
	clock taskClock // shared with the watchdog

	// --- loop-confined state
	vm          *goja.Runtime
	internal    *goja.Object // prelude helpers shared with Go
	codec       *jsCodec     // the wire format for this VM
	dispatch    goja.Callable
	makeRequest goja.Callable
	handler     goja.Value // the script's default export
	exports     goja.Value // the script's module.exports
	env         goja.Value
	timers      timerHeap
	timerByID   map[int64]*timer
	lastTimerID int64
	seq         uint64
	soon        []func()        // macrotasks queued on the loop itself (isolate.later)
	waiting     []*pendingFetch // requests started and not yet answered, oldest first
	background  int             // waitUntil promises and Host.Async work still pending
	rejected    []*goja.Promise
}

// newIsolate builds an isolate: natives, prelude, env and the script's
// module, in that order. It runs on the caller's goroutine; the loop starts
// only afterwards, so nothing else touches the VM yet. The loop stops when
// stop is closed. obj is the Durable Object the isolate is made for (nil
// for the stateless Worker's isolates).
func newIsolate(r *Runtime, id int, stop chan struct{}, log *slog.Logger, obj *Object) (*isolate, error) {
	iso := &isolate{
		rt:        r,
		id:        id,
		obj:       obj,
		ctx:       r.ctx,
		tasks:     make(chan func(), 64),
		stop:      stop,
		done:      make(chan struct{}),
		log:       log,
		vm:        goja.New(),
		timerByID: make(map[int64]*timer),
	}
	if obj != nil {
		iso.ctx = obj.ctx
	}
	vm := iso.vm
	vm.SetPromiseRejectionTracker(iso.trackRejection)
	native := vm.NewObject()
	iso.installNatives(native)
	iso.internal = vm.NewObject()
	for _, p := range r.prelude {
		v, err := vm.RunProgram(p.program)
		if err != nil {
			return nil, fmt.Errorf("run prelude %s: %w", p.name, err)
		}
		fn, ok := goja.AssertFunction(v)
		if !ok {
			return nil, fmt.Errorf("run prelude %s: not a function", p.name)
		}
		if _, err := fn(goja.Undefined(), native, iso.internal, vm.GlobalObject()); err != nil {
			return nil, fmt.Errorf("run prelude %s: %w", p.name, err)
		}
	}
	codec, err := newJSCodec(vm, iso.internal)
	if err != nil {
		return nil, fmt.Errorf("prelude: %w", err)
	}
	iso.codec = codec
	var ok bool
	if iso.dispatch, ok = goja.AssertFunction(iso.internal.Get("dispatch")); !ok {
		return nil, errors.New("prelude: internal.dispatch missing")
	}
	if iso.makeRequest, ok = goja.AssertFunction(iso.internal.Get("makeRequest")); !ok {
		return nil, errors.New("prelude: internal.makeRequest missing")
	}
	if err := iso.buildEnv(); err != nil {
		return nil, err
	}
	// The watchdog only watches running loops: bound the script's
	// top-level evaluation here.
	limit := r.cfg.TaskTimeout
	if limit <= 0 {
		limit = DefaultTaskTimeout
	}
	stuck := time.AfterFunc(limit, func() { vm.Interrupt("script evaluation exceeded " + limit.String()) })
	err = iso.loadScript()
	stuck.Stop()
	vm.ClearInterrupt()
	if err != nil {
		return nil, err
	}
	return iso, nil
}

func (iso *isolate) buildEnv() error {
	vm := iso.vm
	env := vm.NewObject()
	if len(iso.rt.varsJSON) > 0 {
		parse, _ := goja.AssertFunction(vm.Get("JSON").ToObject(vm).Get("parse"))
		v, err := parse(goja.Undefined(), vm.ToValue(string(iso.rt.varsJSON)))
		if err != nil {
			return fmt.Errorf("build env vars: %w", err)
		}
		env = v.ToObject(vm)
	}
	if len(iso.rt.cfg.DurableObjects) > 0 {
		mk, ok := goja.AssertFunction(iso.internal.Get("makeNamespace"))
		if !ok {
			return errors.New("prelude: internal.makeNamespace missing")
		}
		names := make([]string, 0, len(iso.rt.cfg.DurableObjects))
		for name := range iso.rt.cfg.DurableObjects {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			ns, err := mk(goja.Undefined(), vm.ToValue(iso.rt.cfg.DurableObjects[name]))
			if err == nil {
				err = env.Set(name, ns)
			}
			if err != nil {
				return fmt.Errorf("build Durable Object binding %s: %w", name, err)
			}
		}
	}
	names := make([]string, 0, len(iso.rt.cfg.Bindings))
	for name := range iso.rt.cfg.Bindings {
		names = append(names, name)
	}
	sort.Strings(names)
	host := &Host{iso: iso}
	for _, name := range names {
		v, err := iso.rt.cfg.Bindings[name](host)
		if err != nil {
			return fmt.Errorf("build binding %s: %w", name, err)
		}
		if err := env.Set(name, v); err != nil {
			return fmt.Errorf("build binding %s: %w", name, err)
		}
	}
	iso.env = env
	iso.internal.Set("env", env)
	return nil
}

// loadScript evaluates the bundle as a CommonJS module and keeps its
// default export.
func (iso *isolate) loadScript() error {
	vm := iso.vm
	v, err := vm.RunProgram(iso.rt.script.program)
	if err != nil {
		return fmt.Errorf("evaluate script %s: %w", iso.rt.script.name, err)
	}
	wrapper, ok := goja.AssertFunction(v)
	if !ok {
		return fmt.Errorf("evaluate script %s: module wrapper is not a function", iso.rt.script.name)
	}
	module := vm.NewObject()
	exports := vm.NewObject()
	module.Set("exports", exports)
	require := iso.internal.Get("require")
	if _, err := wrapper(goja.Undefined(), module, exports, require); err != nil {
		return fmt.Errorf("evaluate script %s: %w", iso.rt.script.name, err)
	}
	iso.exports = module.Get("exports")
	if obj, ok := iso.exports.(*goja.Object); ok {
		iso.handler = obj.Get("default")
	}
	if iso.handler == nil || goja.IsUndefined(iso.handler) || goja.IsNull(iso.handler) {
		return fmt.Errorf("evaluate script %s: %w", iso.rt.script.name, ErrNoDefaultExport)
	}
	return nil
}

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

// startFetch runs on the loop: it hands the request to the script and
// arranges for the answer to reach ch as soon as the response is complete,
// independent of any waitUntil work.
func (iso *isolate) startFetch(req *Request, href string, ch chan<- fetchResult) goja.Value {
	vm := iso.vm
	pf := &pendingFetch{}
	iso.waiting = append(iso.waiting, pf)
	answer := func(resp *Response) {
		if pf.answered {
			return
		}
		pf.answered = true
		for i, w := range iso.waiting {
			if w == pf {
				iso.waiting = append(iso.waiting[:i], iso.waiting[i+1:]...)
				break
			}
		}
		if req.Method == http.MethodHead {
			resp.Body = nil
		}
		ch <- fetchResult{resp: resp}
	}
	pf.answer = answer
	jsReq, err := iso.newJSRequest(req, href)
	if err != nil {
		iso.reportException("build request", err)
		answer(internalError())
		return nil
	}
	done := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		if !call.Argument(0).ToBoolean() {
			iso.reportException("uncaught exception in fetch handler", call.Argument(1))
			answer(internalError())
			return goja.Undefined()
		}
		resp, err := iso.toResponse(call.Argument(1))
		if err != nil {
			iso.log.Error("convert response", "error", err)
			answer(internalError())
			return goja.Undefined()
		}
		answer(resp)
		return goja.Undefined()
	})
	if _, err := iso.dispatch(goja.Undefined(), iso.handler, jsReq, iso.env, done); err != nil {
		iso.reportException("uncaught exception in fetch handler", err)
		answer(internalError())
	}
	return jsReq
}

// newJSRequest builds the incoming Request object of req.
func (iso *isolate) newJSRequest(req *Request, href string) (goja.Value, error) {
	vm := iso.vm
	names := make([]string, 0, len(req.Header))
	for k := range req.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	flat := make([]any, 0, 2*len(names))
	for _, k := range names {
		lk := strings.ToLower(k)
		for _, v := range req.Header[k] {
			flat = append(flat, lk, v)
		}
	}
	var body goja.Value = goja.Null()
	if req.Body != nil {
		body = vm.ToValue(vm.NewArrayBuffer(append([]byte(nil), req.Body...)))
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	return iso.makeRequest(goja.Undefined(), vm.ToValue(method), vm.ToValue(href), vm.NewArray(flat...), body)
}

// abortRequest fires request.signal of a request whose caller went away.
func (iso *isolate) abortRequest(jsReq goja.Value) {
	if jsReq == nil {
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

// toResponse converts the prelude's serialized response
// {status, statusText, headers: [k, v, ...], body: Uint8Array|null}.
func (iso *isolate) toResponse(v goja.Value) (*Response, error) {
	obj, ok := v.(*goja.Object)
	if !ok {
		return nil, errors.New("serialized response is not an object")
	}
	resp := &Response{
		Status:     int(obj.Get("status").ToInteger()),
		StatusText: obj.Get("statusText").String(),
		Header:     make(http.Header),
	}
	if h, ok := obj.Get("headers").(*goja.Object); ok {
		n := int(h.Get("length").ToInteger())
		for i := 0; i+1 < n; i += 2 {
			resp.Header.Add(h.Get(itoa(i)).String(), h.Get(itoa(i+1)).String())
		}
	}
	if b := obj.Get("body"); b != nil && !goja.IsNull(b) && !goja.IsUndefined(b) {
		var data []byte
		if err := iso.vm.ExportTo(b, &data); err != nil {
			return nil, fmt.Errorf("export response body: %w", err)
		}
		resp.Body = append([]byte(nil), data...)
	} else {
		resp.Body = []byte{}
	}
	return resp, nil
}

func internalError() *Response {
	return &Response{
		Status:     http.StatusInternalServerError,
		StatusText: "Internal Server Error",
		Header:     http.Header{"Content-Type": {"text/plain;charset=UTF-8"}},
		Body:       []byte("Internal Server Error"),
	}
}

// reportException logs a JavaScript exception (an error or a thrown value)
// with its stack.
func (iso *isolate) reportException(what string, err any) {
	switch e := err.(type) {
	case *goja.Exception:
		iso.log.Error(what, "error", describeValue(e.Value()), "stack", e.String())
	case goja.Value:
		iso.log.Error(what, "error", describeValue(e), "stack", stackOf(e))
	case error:
		iso.log.Error(what, "error", e.Error())
	default:
		iso.log.Error(what, "error", fmt.Sprint(e))
	}
}

// describeValue renders a thrown value for a log line without running
// arbitrary user code beyond toString.
func describeValue(v goja.Value) (s string) {
	defer func() {
		if recover() != nil {
			s = "<unprintable value>"
		}
	}()
	if v == nil {
		return "undefined"
	}
	return v.String()
}

func stackOf(v goja.Value) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	if obj, ok := v.(*goja.Object); ok {
		if st := obj.Get("stack"); st != nil && !goja.IsUndefined(st) {
			return st.String()
		}
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }

// waitIdle blocks (off the loop) until the isolate has no request in
// flight and no background work, or until deadline.
func (iso *isolate) waitIdle(deadline time.Time) bool {
	for {
		idle := make(chan bool, 1)
		if !iso.post(func() { idle <- len(iso.waiting) == 0 && iso.background == 0 }) {
			return true
		}
		if <-idle {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
