package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"time"
	"weak"

	"github.com/dop251/goja"
)

// isolate is one goja.Runtime with its own event loop. Only the loop
// goroutine (run) touches vm and the rest of jsState.
type isolate struct {
	rt      *Runtime
	id      int
	obj     *Object         // the Durable Object this isolate runs, if any
	cbToken string          // callback owner token (objects_callback.go), loop-confined
	ctx     context.Context // of outgoing Durable Object calls
	tasks   chan func()
	stop    chan struct{}
	done    chan struct{}
	log     *slog.Logger
	clock   taskClock // shared with the watchdog
	// liveWS counts the open WebSockets the script accepted with accept()
	// or opened (websocket_natives.go); loop-confined.
	liveWS int

	jsState // loop-confined; empty while a Durable Object hibernates
}

// jsState is everything an isolate holds of JavaScript: the VM and what
// Go keeps of it. A hibernating Durable Object drops all of it at once
// (dropJS) and builds it again (boot) for its next event, so a field
// added here can never outlive the VM its values belong to.
type jsState struct {
	vm            *goja.Runtime // written under clock.mu (the watchdog reads it)
	prelude       *preludeSet
	modState      []uint8       // per prelude file: 0, moduleLoading, moduleLoaded
	loading       []int         // prelude files running, innermost last
	preludeCycles int           // lookups that met a cycle between prelude files
	native        *goja.Object  // the host functions the prelude is built on
	internal      *goja.Object  // prelude helpers shared with Go
	originals     *goja.Object  // what the prelude exposed, by global name
	origin        time.Time     // performance.timeOrigin
	codec         *jsCodec      // the wire format for this VM
	dispatch      goja.Callable // the fetch glue (fetch.go), looked up on first use
	respond       goja.Callable
	settle        goja.Callable
	box           *goja.Object          // dispatch's answer slot for a synchronous Response
	scope         *eventScope           // the event whose code runs now (scope.go)
	als           goja.Value            // the AsyncLocalStorage frame of the code running now (node.go)
	grabbed       *asyncCtx             // the context scopeTracker.Grab handed out last
	names         map[string]goja.Value // lowercase header names (fetch.go)
	hdrs          *headersClass         // the native Headers (headers.go), once loaded
	fetchc        *fetchClass           // the native Request and Response (body.go), once loaded
	out           *Response             // the handler's response, serialized (native.responseOut)
	canon         map[string]string     // lowercase -> canonical header names (fetch.go)
	scrub         goja.Callable         // internal.scrubCalls (stream_in.go)
	scrubbed      bool                  // no task ran since scrubCalls
	methods       map[string]goja.Value
	urls          map[string]goja.Value            // native.urlParse's recent results
	urlSets       map[urlSetKey]goja.Value         // native.urlSet's recent results
	ids           map[string]map[string]goja.Value // class -> name -> id (doIdFromName)
	promiseProto  *goja.Object                     // %Promise.prototype% and its then, before the script ran
	promiseThen   goja.Value
	handler       goja.Value // the script's default export
	exports       goja.Value // the script's module.exports
	env           goja.Value
	timers        timerHeap
	timerByID     map[int64]*timer
	lastTimerID   int64
	seq           uint64
	soon          []func()        // macrotasks queued on the loop itself (isolate.later)
	waiting       []*pendingFetch // requests started and not yet answered, oldest first
	background    int             // waitUntil promises and Host.Async work still pending
	rejected      []*goja.Promise
	awaiting      []awaited              // promises Go waits for (fetch.go)
	goBodies      []weak.Pointer[goBody] // Go streams handed to JavaScript and not yet closed (stream_in.go)
	wsObjs        map[*Socket]goja.Value // a Durable Object's hibernatable sockets, as this VM knows them
}

// newIsolate builds an isolate: natives, prelude, env and the script's
// module, in that order. It runs on the caller's goroutine; the loop starts
// only afterwards, so nothing else touches the VM yet. The loop stops when
// stop is closed. obj is the Durable Object the isolate is made for (nil
// for the stateless Worker's isolates).
func newIsolate(r *Runtime, id int, stop chan struct{}, log *slog.Logger, obj *Object) (*isolate, error) {
	iso := newIsolateShell(r, id, stop, log, obj)
	if err := iso.boot(); err != nil {
		return nil, err
	}
	return iso, nil
}

// newIsolateShell makes an isolate without JavaScript state: its loop's
// channels, log and clock. boot gives it a VM.
func newIsolateShell(r *Runtime, id int, stop chan struct{}, log *slog.Logger, obj *Object) *isolate {
	iso := &isolate{
		rt:    r,
		id:    id,
		obj:   obj,
		ctx:   r.ctx,
		tasks: make(chan func(), 64),
		stop:  stop,
		done:  make(chan struct{}),
		log:   log,
	}
	if obj != nil {
		iso.ctx = obj.ctx
	}
	return iso
}

// boot builds the JavaScript state of an isolate that has none: a new VM,
// the prelude, env and the script's module. On error the state is
// partial; dropJS clears it.
func (iso *isolate) boot() error {
	r := iso.rt
	vm := goja.New()
	vm.SetAsyncContextTracker(scopeTracker{iso})
	iso.setVM(vm)
	iso.timerByID = make(map[int64]*timer)
	iso.origin = time.Now()
	vm.SetPromiseRejectionTracker(iso.trackRejection)
	if err := iso.installPrelude(r.prelude); err != nil {
		return err
	}
	codec, err := newJSCodec(iso)
	if err != nil {
		return fmt.Errorf("prelude: %w", err)
	}
	iso.codec = codec
	if err := iso.buildEnv(); err != nil {
		return err
	}
	if err := iso.setupNode(); err != nil {
		return err
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
		return err
	}
	return iso.lockCodeGeneration()
}

// setVM installs vm where the watchdog may read it.
func (iso *isolate) setVM(vm *goja.Runtime) {
	iso.clock.mu.Lock()
	iso.vm = vm
	iso.clock.mu.Unlock()
}

// dropJS forgets the isolate's JavaScript state, VM included, so the
// garbage collector can take it. Call it on the loop, between tasks.
func (iso *isolate) dropJS() {
	iso.clock.mu.Lock()
	iso.jsState = jsState{}
	iso.clock.mu.Unlock()
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
	if err := iso.buildServices(env); err != nil {
		return err
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
	_ = iso.internal.Set("moduleExports", iso.exports) // ctx.exports (95_svc.js)
	if obj, ok := iso.exports.(*goja.Object); ok {
		iso.handler = obj.Get("default")
	}
	if iso.handler == nil || goja.IsUndefined(iso.handler) || goja.IsNull(iso.handler) {
		return fmt.Errorf("evaluate script %s: %w", iso.rt.script.name, ErrNoDefaultExport)
	}
	return nil
}

func internalError() *Response {
	return &Response{
		Status:     http.StatusInternalServerError,
		StatusText: "Internal Server Error",
		Header:     http.Header{"Content-Type": {"text/plain;charset=UTF-8"}},
		Body:       []byte("Internal Server Error"),
		Uncaught:   true,
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

// exceptionText is a thrown value's text and stack, as reportException
// logs them.
func exceptionText(err any) string {
	switch e := err.(type) {
	case *goja.Exception:
		return e.String()
	case goja.Value:
		if st := stackOf(e); st != "" {
			return st
		}
		return describeValue(e)
	case error:
		return e.Error()
	default:
		return fmt.Sprint(e)
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
