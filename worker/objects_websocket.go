package worker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// The WebSocket Hibernation API of a Durable Object. A socket accepted
// with ctx.acceptWebSocket is held by the Object in Go (a wsRec): its
// tags, attachment and auto-response timestamp live here, not in
// JavaScript, so the isolate can be dropped while the socket stays open.
// Each message (or close, or error) is an event of the object, like a
// fetch: it wakes a hibernating object (constructor re-run), passes the
// gate of blockConcurrencyWhile, and runs webSocketMessage /
// webSocketClose / webSocketError. A message matching the auto-response
// request is answered on the reading goroutine, without an event.

// maxTags and maxTagLength are workerd's limits on acceptWebSocket tags.
const (
	maxTags       = 10
	maxTagLength  = 256
	maxAutoLength = 2048
)

// wsRec is a socket of the object: hibernatable (acceptWebSocket) or not
// (accept(); counted so that the object is not hibernated or evicted
// under it).
type wsRec struct {
	s      *Socket
	hib    bool
	tags   []string
	autoTS time.Time
}

// objectSockets is the Object's part (embedded).
type objectSockets struct {
	wsMu  sync.Mutex
	socks []*wsRec // in the order they were accepted
	auto  *[2]string
}

// Sockets is how many WebSockets the object holds open (or is about to:
// accepted, the 101 response still on its way).
func (o *Object) Sockets() int {
	o.wsMu.Lock()
	defer o.wsMu.Unlock()
	return len(o.socks)
}

// HibernatableSockets is how many of them were accepted with
// ctx.acceptWebSocket.
func (o *Object) HibernatableSockets() int {
	o.wsMu.Lock()
	defer o.wsMu.Unlock()
	n := 0
	for _, r := range o.socks {
		if r.hib {
			n++
		}
	}
	return n
}

// unattachedSockets counts the hibernatable sockets whose transport is not
// attached yet: their script end must stay in JavaScript until it is.
func (o *Object) unattachedSockets() int {
	o.wsMu.Lock()
	defer o.wsMu.Unlock()
	n := 0
	for _, r := range o.socks {
		if r.hib && !r.s.Attached() {
			n++
		}
	}
	return n
}

func (o *Object) gateFunc() func(context.Context) error {
	gate := o.rt.cfg.OutputGate
	if gate == nil {
		return nil
	}
	return func(ctx context.Context) error { return gate(ctx, o.class, o.id) }
}

// trackSocket records a socket of the object until it ends.
func (o *Object) trackSocket(s *Socket, rec *wsRec) *wsRec {
	if rec == nil {
		rec = &wsRec{s: s}
	}
	s.rec = rec
	o.wsMu.Lock()
	o.socks = append(o.socks, rec)
	o.wsMu.Unlock()
	s.OnEnd(func() {
		o.wsMu.Lock()
		for i, r := range o.socks {
			if r == rec {
				o.socks = append(o.socks[:i], o.socks[i+1:]...)
				break
			}
		}
		o.wsMu.Unlock()
	})
	return rec
}

// hibernatable makes the Go socket of ws, accepted with
// ctx.acceptWebSocket. Call it on the loop.
func (o *Object) hibernatable(ws goja.Value) *Socket {
	s := newSocket(nil)
	rec := &wsRec{s: s, hib: true}
	s.sink = func(ev wsEvent) { o.socketEvent(rec, ev) }
	s.gate = o.gateFunc()
	s.autoReply = func(msg []byte) ([]byte, bool) {
		o.wsMu.Lock()
		defer o.wsMu.Unlock()
		if o.auto == nil || o.auto[0] != string(msg) {
			return nil, false
		}
		rec.autoTS = time.Now()
		return []byte(o.auto[1]), true
	}
	// The object may have gone quiet while this socket's 101 was on its
	// way, and an unattached socket keeps it from hibernating: once it is
	// attached, the loop looks again.
	s.onAttach = o.poke
	o.trackSocket(s, rec)
	o.iso.wrapSocket(s, ws)
	return s
}

// poke makes the object's loop take a turn (and so count towards
// hibernation again) without waiting for room in its queue: a full queue
// means it takes turns anyway.
func (o *Object) poke() {
	select {
	case o.iso.tasks <- func() {}:
	default:
	}
}

// wrapSocket remembers the JavaScript object of a socket in this VM.
func (iso *isolate) wrapSocket(s *Socket, ws goja.Value) {
	if iso.wsObjs == nil {
		iso.wsObjs = map[*Socket]goja.Value{}
	}
	iso.wsObjs[s] = ws
}

// socketValue is the JavaScript object of a hibernatable socket in the
// current VM: the one the script accepted, or after hibernation a new
// one.
func (o *Object) socketValue(s *Socket) goja.Value {
	iso := o.iso
	if v, ok := iso.wsObjs[s]; ok {
		return v
	}
	w := iso.internal.Get("ws").(*goja.Object)
	f, _ := goja.AssertFunction(w.Get("fromGo"))
	v, err := f(goja.Undefined(), iso.vm.ToValue(s), iso.vm.ToValue(false), iso.vm.ToValue("hibernate"))
	if err != nil {
		panic(err)
	}
	iso.wrapSocket(s, v)
	return v
}

// socketEvent delivers a message, close or error of a hibernatable socket
// as an event of the object and waits until its handler settled, so a
// socket's events run in order and a slow handler holds back its socket.
func (o *Object) socketEvent(rec *wsRec, ev wsEvent) {
	o.busy.Add(1)
	defer o.busy.Add(-1)
	if o.closing.Load() {
		return
	}
	ch := make(chan struct{}, 1)
	if !o.iso.post(func() { o.startSocketEvent(rec, ev, ch) }) {
		return
	}
	select {
	case <-ch:
	case <-o.stop:
	}
}

func (o *Object) startSocketEvent(rec *wsRec, ev wsEvent, ch chan<- struct{}) {
	iso := o.iso
	e, finish := o.newEvent()
	done := func() {
		if finish() {
			ch <- struct{}{}
		}
	}
	e.fail = func(ex *Exception) {
		o.logException("exception in Durable Object WebSocket handler", ex, "")
		done()
	}
	if ex := o.wake(); ex != nil {
		e.fail(ex)
		return
	}
	e.run = func() {
		vm := iso.vm
		var data goja.Value = goja.Undefined()
		if ev.kind == 'm' {
			if ev.text {
				data = vm.ToValue(string(ev.data))
			} else {
				data = vm.ToValue(vm.NewArrayBuffer(ev.data))
			}
		}
		res, ok := o.invoke(e, "exception in Durable Object WebSocket handler", "objectWebSocket", o.instance,
			o.socketValue(rec.s), vm.ToValue(string(ev.kind)), data, vm.ToValue(ev.code), vm.ToValue(ev.reason), vm.ToValue(ev.clean))
		if !ok {
			return
		}
		iso.await(res, func(ok bool, v goja.Value) {
			if !ok {
				ex, stack := o.thrownException(v)
				o.logException("exception in Durable Object WebSocket handler", ex, stack)
			}
			done()
		})
	}
	o.admit(e, "", false)
}

// closeSockets closes every socket of the object with code (1012 when
// the cell moves) and waits until they are finished or ctx ends.
func (o *Object) closeSockets(ctx context.Context, code int, reason string) {
	o.wsMu.Lock()
	socks := append([]*wsRec(nil), o.socks...)
	o.wsMu.Unlock()
	var wg sync.WaitGroup
	for _, r := range socks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.s.Shutdown(ctx, code, reason)
		}()
	}
	wg.Wait()
}

func init() {
	registerSocketStateNatives(func(name string, f storageFunc) { storageFuncs[name] = f })
}

// registerSocketStateNatives adds the ctx WebSocket methods to the
// storage natives (prelude/96_state.js).
func registerSocketStateNatives(set func(string, storageFunc)) {
	set("wsAccept", func(o *Object, call goja.FunctionCall) goja.Value {
		vm := o.iso.vm
		var tags []string
		if t := call.Argument(1); !goja.IsUndefined(t) && !goja.IsNull(t) {
			if err := vm.ExportTo(t, &tags); err != nil {
				panic(vm.NewTypeError("Failed to execute 'acceptWebSocket' on 'DurableObjectState': parameter 2 is not of type 'Array'."))
			}
		}
		if len(tags) > maxTags {
			panic(jsErr(vm, fmt.Sprintf("a Hibernatable WebSocket cannot have more than %d tags", maxTags)))
		}
		seen := map[string]bool{}
		for _, t := range tags {
			if len(t) > maxTagLength {
				panic(jsErr(vm, fmt.Sprintf("\"%s\" is longer than the max tag length (%d characters).", t, maxTagLength)))
			}
			if seen[t] {
				panic(jsErr(vm, fmt.Sprintf("\"%s\" is a duplicate tag", t)))
			}
			seen[t] = true
		}
		w := o.iso.internal.Get("ws").(*goja.Object)
		f, _ := goja.AssertFunction(w.Get("hibernate"))
		h, err := f(goja.Undefined(), call.Argument(0))
		if err != nil {
			panic(err)
		}
		s := h.Export().(*Socket)
		o.wsMu.Lock()
		s.rec.tags = tags
		o.wsMu.Unlock()
		return goja.Undefined()
	})
	set("wsList", func(o *Object, call goja.FunctionCall) goja.Value {
		tag, all := "", goja.IsUndefined(call.Argument(0)) || goja.IsNull(call.Argument(0))
		if !all {
			tag = call.Argument(0).String()
		}
		o.wsMu.Lock()
		var out []*Socket
		for _, r := range o.socks {
			if !r.hib || r.s.Ended() {
				continue
			}
			if all || contains(r.tags, tag) {
				out = append(out, r.s)
			}
		}
		o.wsMu.Unlock()
		vals := make([]any, len(out))
		for i, s := range out {
			vals[i] = o.socketValue(s)
		}
		return o.iso.vm.NewArray(vals...)
	})
	set("wsTags", func(o *Object, call goja.FunctionCall) goja.Value {
		rec := o.recOf(call.Argument(0))
		if rec == nil || !rec.hib {
			panic(jsErr(o.iso.vm, "you must call 'acceptWebSocket()' before attempting to access the tags of a WebSocket."))
		}
		o.wsMu.Lock()
		tags := append([]string{}, rec.tags...)
		o.wsMu.Unlock()
		vals := make([]any, len(tags))
		for i, t := range tags {
			vals[i] = t
		}
		return o.iso.vm.NewArray(vals...)
	})
	set("wsSetAuto", func(o *Object, call goja.FunctionCall) goja.Value {
		o.wsMu.Lock()
		defer o.wsMu.Unlock()
		if goja.IsUndefined(call.Argument(0)) {
			o.auto = nil
			return goja.Undefined()
		}
		req, res := call.Argument(0).String(), call.Argument(1).String()
		for _, s := range []struct{ what, v string }{{"Request", req}, {"Response", res}} {
			if len(s.v) > maxAutoLength {
				panic(rangeError(o.iso.vm, fmt.Sprintf("%s cannot be larger than %d bytes. A %s of size %d was provided.", s.what, maxAutoLength, strings.ToLower(s.what), len(s.v))))
			}
		}
		o.auto = &[2]string{req, res}
		return goja.Undefined()
	})
	set("wsGetAuto", func(o *Object, call goja.FunctionCall) goja.Value {
		o.wsMu.Lock()
		defer o.wsMu.Unlock()
		if o.auto == nil {
			return goja.Null()
		}
		return o.iso.vm.NewArray(o.auto[0], o.auto[1])
	})
	set("wsAutoTS", func(o *Object, call goja.FunctionCall) goja.Value {
		rec := o.recOf(call.Argument(0))
		if rec == nil {
			return goja.Null()
		}
		o.wsMu.Lock()
		ts := rec.autoTS
		o.wsMu.Unlock()
		if ts.IsZero() {
			return goja.Null()
		}
		return o.iso.vm.ToValue(float64(ts.UnixMilli()))
	})
}

// recOf is the record of a JavaScript WebSocket of this object, nil if
// it has none.
func (o *Object) recOf(ws goja.Value) *wsRec {
	w := o.iso.internal.Get("ws").(*goja.Object)
	f, _ := goja.AssertFunction(w.Get("handle"))
	h, err := f(goja.Undefined(), ws)
	if err != nil {
		return nil
	}
	s, ok := h.Export().(*Socket)
	if !ok || s == nil {
		return nil
	}
	return s.rec
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// rangeError is a JavaScript RangeError with msg.
func rangeError(vm *goja.Runtime, msg string) goja.Value { return jsErrorOf(vm, "RangeError", msg) }

// jsErr is a JavaScript Error with msg (workerd throws plain Errors from
// the Hibernation API).
func jsErr(vm *goja.Runtime, msg string) goja.Value { return jsErrorOf(vm, "Error", msg) }

func jsErrorOf(vm *goja.Runtime, class, msg string) goja.Value {
	if ctor, ok := goja.AssertConstructor(vm.Get(class)); ok {
		if obj, err := ctor(nil, vm.ToValue(msg)); err == nil {
			return obj
		}
	}
	return vm.NewTypeError(msg)
}
