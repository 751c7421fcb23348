package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/dop251/goja"
)

// Object is one Durable Object: an instance of an exported class living in
// its own isolate (a goja.Runtime from the script's compiled program, with
// its own loop goroutine), with its storage in one cell.DB.
//
// Events (Fetch, Call) run one at a time, except that while a handler
// awaits something other than storage (a timer, another object) the next
// event may start. Storage calls are synchronous SQLite on the loop, so
// they never let another event in; blockConcurrencyWhile holds every other
// event until its callback settles.
//
// The class is constructed before the first event, as new Class(ctx, env).
// A constructor that throws, or a blockConcurrencyWhile callback that
// rejects, resets the object: the events waiting for it fail with the
// exception, and the next event constructs it anew.
type Object struct {
	rt    *Runtime
	class string
	id    string
	db    *cell.DB
	iso   *isolate
	opts  ObjectOptions

	ctx      context.Context // outgoing calls; cancelled when the object stops
	cancel   context.CancelFunc
	stop     chan struct{} // closed to stop the loop
	stopOnce sync.Once
	done     chan struct{} // closed once stopped and off the database

	busy      atomic.Int64
	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error

	hibernateAfter time.Duration // idle this long, the isolate is dropped (<= 0: never)
	asleep         atomic.Bool   // hibernating: no isolate until the next event
	hibernations   atomic.Int64
	parkRetry      time.Duration // hibernating with its database open: try parking again after this (0: not)

	objectSockets           // WebSockets (objects_websocket.go)
	order         orderGate // E-order of each stub's events (objects_order.go)

	// --- loop-confined state
	ctor     goja.Value // the exported class
	instance goja.Value // nil until constructed, and after a reset
	store    *goja.Object
	named    bool
	name     string
	gate     int         // blockConcurrencyWhile callbacks pending
	queued   []*objEvent // events held by the gate, oldest first
	draining bool        // a drainOne is queued on the loop
	txns     []*openTxn  // async transactions, innermost last
	syncTxns int         // transactionSync calls running
	alarm    alarmState
}

var _ ObjectHandle = (*Object)(nil)

// NewObject starts the object class:id of the runtime's script on db. The
// class must be a named export of the script's module. The object is
// constructed when its first event arrives. The caller owns db: it must
// not use it while the object runs and may close it once Close returned.
func (r *Runtime) NewObject(class, id string, db *cell.DB) (*Object, error) {
	return r.NewObjectWith(class, id, db, ObjectOptions{})
}

// NewObjectWith is NewObject with hooks (see ObjectOptions).
func (r *Runtime) NewObjectWith(class, id string, db *cell.DB, opts ObjectOptions) (*Object, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	if db == nil {
		return nil, fmt.Errorf("new object %s:%s: nil database", class, id)
	}
	if !ValidObjectID(class, id) {
		return nil, fmt.Errorf("new object %s:%s: not an id of class %s", class, id, class)
	}
	o := &Object{
		rt: r, class: class, id: id, db: db, opts: opts,
		stop:           make(chan struct{}),
		done:           make(chan struct{}),
		hibernateAfter: r.cfg.HibernateAfter,
	}
	if o.hibernateAfter == 0 {
		o.hibernateAfter = DefaultHibernateAfter
	}
	o.ctx, o.cancel = context.WithCancel(r.ctx)
	log := r.log.With("cell", class+":"+id)
	if opts.Epoch > 0 {
		log = log.With("epoch", opts.Epoch)
	}
	o.iso = newIsolateShell(r, -1, o.stop, log, o)
	if err := o.boot(); err != nil {
		o.cancel()
		return nil, fmt.Errorf("new object %s:%s: %w", class, id, err)
	}
	if !r.addObject(o) {
		o.cancel()
		return nil, ErrClosed
	}
	// The host learns the stored alarm before the first event (the loop
	// has not started: the database is still ours to read here).
	o.alarmChanged()
	db.OnParkRequest(o.requestPark)
	go o.run()
	return o, nil
}

// requestPark asks the loop to park the object's database between tasks
// (cell.Pool: the process holds too many open); the database refuses
// while a transaction or cursor is open, and its next storage call opens
// it again. It never blocks: with the loop's queue full, the request is
// dropped (the pool asks again).
func (o *Object) requestPark() {
	select {
	case o.iso.tasks <- func() { o.db.Park() }:
	default:
	}
}

// logException logs an exception an object's code threw. Info, not
// Error: it reaches the caller, which may well handle it.
func (o *Object) logException(what string, ex *Exception, stack string) {
	o.iso.log.Info(what, "error", ex.Error(), "stack", stack)
}

// run is the object's goroutine: the isolate's loop, then cleanup that
// must happen before Close may return (open transactions rolled back).
func (o *Object) run() {
	defer close(o.done)
	defer o.db.OnParkRequest(nil)
	defer o.setAsleep(false) // a stopped object no longer counts as hibernating
	defer o.rt.removeObject(o)
	defer o.cancel()
	defer o.rollbackAll()
	defer o.dropWaiter()
	defer func() {
		if p := recover(); p != nil {
			o.iso.log.Error("durable object crashed", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			o.halt()
		}
	}()
	o.iso.run()
}

func (o *Object) halt() { o.stopOnce.Do(func() { close(o.stop) }) }

// Done is closed when the object has stopped: after Close, or after a
// fatal error (the object's goroutine crashed). Once Done is closed the
// object no longer touches its database.
func (o *Object) Done() <-chan struct{} { return o.done }

// Busy is the number of events (Fetch and Call) in flight.
func (o *Object) Busy() int { return int(o.busy.Load()) }

// Close stops the object: it refuses new events (ErrObjectClosed), waits
// until the events in flight and ctx.waitUntil work are done (at most
// until ctx ends, and at most DefaultWaitUntilLimit), then stops the loop,
// interrupting any JavaScript still running, and rolls back transactions
// left open. When Close returns the object no longer touches the database;
// events still waiting fail with ErrObjectStopped. The error reports that
// work was cut off. Closing twice is harmless.
func (o *Object) Close(ctx context.Context) error {
	o.closeOnce.Do(func() {
		o.closing.Store(true)
		deadline := time.Now().Add(DefaultWaitUntilLimit)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		// Sockets close first, with 1012: the object is moving (or going
		// away), and its clients reconnect to wherever it runs next.
		sctx, cancel := context.WithDeadline(ctx, deadline)
		o.closeSockets(sctx, 1012, "celld: the Durable Object is moving; reconnect")
		cancel()
		// A prepared alarm waiting for its time is not in flight: it is
		// left to whoever runs the object next (objects_alarm_prepare.go).
		select {
		case o.iso.tasks <- o.abandonWaiter:
		default:
		}
		if !o.waitIdle(ctx, deadline) {
			o.closeErr = fmt.Errorf("close object %s:%s: events still in flight were cut off", o.class, o.id)
		}
		o.halt()
		o.iso.interruptRunning("durable object closed")
		<-o.done
	})
	<-o.done
	return o.closeErr
}

func (o *Object) waitIdle(ctx context.Context, deadline time.Time) bool {
	timeout := time.NewTimer(time.Until(deadline))
	defer timeout.Stop()
	for {
		if o.busy.Load() == 0 {
			// Ask the loop, without ever blocking on it: it may be stuck in
			// a task, or its queue full.
			idle := make(chan bool, 1)
			probe := func() { idle <- len(o.iso.waiting) == 0 && o.iso.background == 0 }
			select {
			case o.iso.tasks <- probe:
			case <-o.done:
				return true
			case <-timeout.C:
				return false
			case <-ctx.Done():
				return false
			}
			select {
			case ok := <-idle:
				if ok && o.busy.Load() == 0 {
					return true
				}
			case <-o.done:
				return true
			case <-timeout.C:
				return false
			case <-ctx.Done():
				return false
			}
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-o.done:
			return true
		case <-timeout.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// Fetch delivers an HTTP request to the object's fetch handler. An
// exception thrown by the handler makes a 500 response carrying
// ExceptionHeader (the calling stub rethrows it); the object lives on.
// ctx may carry the object's name (WithObjectName).
func (o *Object) Fetch(ctx context.Context, req *Request) (*Response, error) {
	// busy before closing: Close sets closing, then waits for busy to
	// drop, so an event either counts as in flight or is refused.
	entered, err := o.order.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer entered.done()
	o.busy.Add(1)
	defer o.busy.Add(-1)
	if o.closing.Load() {
		return nil, ErrObjectClosed
	}
	href, ok := requestHref(req.URL)
	if !ok {
		return nil, fmt.Errorf("fetch: invalid request URL %q", req.URL)
	}
	name, named := ObjectName(ctx)
	ch := make(chan fetchResult, 1)
	var jsReq goja.Value // set and read on the loop
	id := RequestID(ctx)
	posted := o.iso.post(func() { jsReq = o.startFetch(req, href, name, named, id, ch) })
	entered.done()
	if !posted {
		return nil, ErrObjectClosed
	}
	select {
	case res := <-ch:
		return res.resp, res.err
	case <-ctx.Done():
		o.iso.post(func() { o.iso.abortRequest(jsReq) })
		return nil, fmt.Errorf("fetch %s: %w", req.URL, context.Cause(ctx))
	case <-o.stop:
		return nil, ErrObjectStopped
	}
}

type callResult struct {
	data []byte
	err  error
}

// Call runs the RPC method on the object (see ObjectHandle.Call). An
// exception thrown by the method is returned as an *Exception; the object
// lives on.
func (o *Object) Call(ctx context.Context, method string, args []byte) ([]byte, error) {
	entered, err := o.order.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer entered.done()
	o.busy.Add(1)
	defer o.busy.Add(-1)
	if o.closing.Load() {
		return nil, ErrObjectClosed
	}
	name, named := ObjectName(ctx)
	ch := make(chan callResult, 1)
	id := RequestID(ctx)
	posted := o.iso.post(func() { o.startCall(method, args, name, named, id, ch) })
	entered.done()
	if !posted {
		return nil, ErrObjectClosed
	}
	select {
	case res := <-ch:
		return res.data, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("call %s: %w", method, context.Cause(ctx))
	case <-o.stop:
		return nil, ErrObjectStopped
	}
}

// objEvent is an event waiting for, or running in, the object.
type objEvent struct {
	pf   *pendingFetch
	run  func()           // start the handler on the instance
	fail func(*Exception) // answer with an exception instead
}

// newEvent registers an event as waiting for its answer; finish (called
// by the answer) unregisters it.
func (o *Object) newEvent() (*objEvent, func() bool) {
	iso := o.iso
	ev := &objEvent{pf: &pendingFetch{}}
	iso.waiting = append(iso.waiting, ev.pf)
	finish := func() bool {
		if ev.pf.answered {
			return false
		}
		ev.pf.answered = true
		for i, w := range iso.waiting {
			if w == ev.pf {
				iso.waiting = append(iso.waiting[:i], iso.waiting[i+1:]...)
				break
			}
		}
		return true
	}
	ev.pf.hung = func() {
		iso.log.Error("The script will never generate a response.")
		ev.fail(&Exception{Name: "Error", Message: "The script will never generate a response."})
	}
	return ev, finish
}

func (o *Object) startFetch(req *Request, href, name string, named bool, requestID string, ch chan<- fetchResult) goja.Value {
	iso := o.iso
	ev, finish := o.newEvent()
	answer := func(resp *Response) {
		if !finish() {
			return
		}
		if req.Method == http.MethodHead {
			resp.Body = []byte{}
			discardStream(resp)
		}
		ch <- fetchResult{resp: resp}
	}
	ev.fail = func(ex *Exception) { answer(exceptionResponse(ex)) }
	if ex := o.wake(); ex != nil {
		ev.fail(ex)
		return nil
	}
	if err := iso.fetchGlue(); err != nil {
		iso.reportException("build request", err)
		answer(internalError())
		return nil
	}
	jsReq, err := iso.newJSRequest(req, href)
	if err != nil {
		iso.reportException("build request", err)
		answer(internalError())
		return nil
	}
	ev.run = func() {
		res, ok := o.invoke(ev, "exception in Durable Object fetch handler", "objectFetch", o.instance, jsReq)
		if !ok {
			return
		}
		iso.response(res, func(resp *Response, thrown goja.Value) {
			if resp == nil {
				ex, stack := o.thrownException(thrown)
				o.logException("exception in Durable Object fetch handler", ex, stack)
				ev.fail(ex)
				return
			}
			answer(resp)
		})
	}
	o.scoped(ev, requestID)
	o.admit(ev, name, named)
	return jsReq
}

// scoped runs ev in an event scope of its own when its caller gave a
// request id, so that the console output of its code, and of what that
// code awaits, carries the id.
func (o *Object) scoped(ev *objEvent, requestID string) {
	if requestID == "" {
		return
	}
	run := ev.run
	ev.run = func() {
		defer o.iso.enter(&eventScope{requestID: requestID})()
		run()
	}
}

func (o *Object) startCall(method string, args []byte, name string, named bool, requestID string, ch chan<- callResult) {
	iso := o.iso
	ev, finish := o.newEvent()
	ev.fail = func(ex *Exception) {
		if finish() {
			ch <- callResult{err: ex}
		}
	}
	if ex := o.wake(); ex != nil {
		ev.fail(ex)
		return
	}
	ev.run = func() {
		what := "exception in Durable Object method " + method
		res, ok := o.invoke(ev, what, "objectCall", o.instance, iso.vm.ToValue(method), iso.vm.ToValue(iso.vm.NewArrayBuffer(args)))
		if !ok {
			return
		}
		iso.await(res, func(ok bool, v goja.Value) {
			var data []byte
			if ok {
				if ex := iso.vm.Try(func() { data = iso.codec.serialize(o.exportResult(v)) }); ex != nil {
					ok, v = false, ex.Value()
				}
			}
			if !ok {
				ex, stack := o.thrownException(v)
				o.logException(what, ex, stack)
				ev.fail(ex)
				return
			}
			if finish() {
				ch <- callResult{data: data}
			}
		})
	}
	o.scoped(ev, requestID)
	o.admit(ev, name, named)
}

// invoke calls internal[fn](args...) and returns its result. When it
// throws it fails the event (logging what the script threw) and reports
// false.
func (o *Object) invoke(ev *objEvent, what, fn string, args ...goja.Value) (goja.Value, bool) {
	f, ok := goja.AssertFunction(o.iso.internal.Get(fn))
	if !ok {
		ev.fail(&Exception{Name: "Error", Message: "celld: prelude lacks " + fn})
		return nil, false
	}
	res, err := f(goja.Undefined(), args...)
	if err != nil {
		ex, stack := o.errException(err)
		var jsEx *goja.Exception
		if errors.As(err, &jsEx) {
			o.logException(what, ex, stack)
		}
		ev.fail(ex)
		return nil, false
	}
	return res, true
}

// exportResult is an RPC method's result with the RpcTargets and
// functions in it replaced by references (internal.exportValue); a
// primitive is itself. It throws what exportValue throws.
func (o *Object) exportResult(v goja.Value) goja.Value {
	if _, isObj := v.(*goja.Object); !isObj {
		return v
	}
	export, ok := goja.AssertFunction(o.iso.internal.Get("exportValue"))
	if !ok {
		return v
	}
	out, err := export(goja.Undefined(), o.instance, v)
	if err != nil {
		panic(err)
	}
	return out
}

// thrownException is the exception, as the caller sees it, of a value the
// object's code threw (or a promise of it rejected with).
func (o *Object) thrownException(v goja.Value) (*Exception, string) {
	return o.iso.thrownException(v)
}

// thrownException is Object.thrownException for any isolate (service
// entrypoints answer their callers the same way).
func (iso *isolate) thrownException(v goja.Value) (*Exception, string) {
	if tunnel, ok := goja.AssertFunction(iso.internal.Get("tunnel")); ok {
		if t, err := tunnel(goja.Undefined(), v); err == nil {
			return iso.exception(t)
		}
	}
	return &Exception{Name: "Error", Message: describeValue(v)}, ""
}

// admit constructs the object if needed, then runs the event or, while
// the gate is closed, queues it (at the front when it was already queued).
func (o *Object) admit(ev *objEvent, name string, named bool) {
	if named && !o.named {
		o.named, o.name = true, name
	}
	o.admitQueued(ev, false)
}

func (o *Object) admitQueued(ev *objEvent, front bool) {
	if o.instance == nil {
		if ex := o.construct(); ex != nil {
			ev.fail(ex)
			return
		}
	}
	if o.gate > 0 {
		if front {
			o.queued = append([]*objEvent{ev}, o.queued...)
		} else {
			o.queued = append(o.queued, ev)
		}
		return
	}
	ev.run()
}

// construct runs new Class(ctx, env).
func (o *Object) construct() *Exception {
	vm := o.iso.vm
	var name goja.Value = goja.Undefined()
	if o.named {
		name = vm.ToValue(o.name)
	}
	mk, _ := goja.AssertFunction(o.iso.internal.Get("objectState"))
	ctorFn, _ := goja.AssertFunction(o.iso.internal.Get("constructObject"))
	if mk == nil || ctorFn == nil {
		return &Exception{Name: "Error", Message: "celld: prelude lacks the Durable Object state"}
	}
	state, err := mk(goja.Undefined(), o.store, vm.ToValue(o.class), vm.ToValue(o.id), name)
	if err == nil {
		var inst goja.Value
		if inst, err = ctorFn(goja.Undefined(), o.ctor, state, o.iso.env); err == nil {
			o.instance = inst
			return nil
		}
	}
	ex, stack := o.errException(err)
	o.logException("Durable Object constructor threw", ex, stack)
	return ex
}

// reset forgets the instance after a fatal exception (a rejected
// blockConcurrencyWhile callback, ctx.abort()): queued events fail with
// it, and the next event constructs the object anew.
func (o *Object) reset(ex *Exception) {
	o.iso.log.Warn("resetting Durable Object", "error", ex.Error())
	o.instance = nil
	queued := o.queued
	o.queued = nil
	for _, ev := range queued {
		ev.fail(ex)
	}
}

// drain starts the queued events once the gate opens, each as a
// macrotask of its own, so one event's storage calls (and the microtasks
// between them) finish before the next event begins.
func (o *Object) drain() {
	if o.gate > 0 || len(o.queued) == 0 || o.draining {
		return
	}
	o.draining = true
	o.iso.later(o.drainOne)
}

func (o *Object) drainOne() {
	o.draining = false
	if o.gate > 0 || len(o.queued) == 0 {
		return
	}
	ev := o.queued[0]
	o.queued = o.queued[1:]
	o.admitQueued(ev, true)
	o.drain()
}

// exception reads a tunneled exception {name, message, dom, stack}.
func (o *Object) exception(v goja.Value) (*Exception, string) { return o.iso.exception(v) }

func (iso *isolate) exception(v goja.Value) (*Exception, string) {
	obj, ok := v.(*goja.Object)
	if !ok {
		return &Exception{Name: "Error", Message: describeValue(v)}, ""
	}
	str := func(k string) string {
		if v := obj.Get(k); v != nil && !goja.IsUndefined(v) && !goja.IsNull(v) {
			return v.String()
		}
		return ""
	}
	ex := &Exception{Name: str("name"), Message: str("message")}
	if v := obj.Get("dom"); v != nil {
		ex.DOMException = v.ToBoolean()
	}
	if ex.Name == "" {
		ex.Name = "Error"
	}
	return ex, str("stack")
}

// errException turns an error from calling into JavaScript into an
// exception as the caller should see it.
func (o *Object) errException(err error) (*Exception, string) { return o.iso.errException(err) }

func (iso *isolate) errException(err error) (*Exception, string) {
	var jsEx *goja.Exception
	if errors.As(err, &jsEx) {
		if tunnel, ok := goja.AssertFunction(iso.internal.Get("tunnel")); ok {
			if v, terr := tunnel(goja.Undefined(), jsEx.Value()); terr == nil {
				return iso.exception(v)
			}
		}
		return &Exception{Name: "Error", Message: describeValue(jsEx.Value())}, jsEx.String()
	}
	return &Exception{Name: "Error", Message: err.Error()}, ""
}
