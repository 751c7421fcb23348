package worker

import (
	"context"
	"fmt"

	"github.com/dop251/goja"
)

// Events other than fetch (a queue batch, and later others): the default
// export's method of that name, called in a pooled isolate with an
// argument a binding package builds on the loop.

// eventCall calls handler[method](arg, env, ctx) — or, for a class
// export, new handler(ctx, env)[method](arg) — with a fresh
// ExecutionContext.
const eventCallSource = `(function (handler, method, arg, env, EC, kCreate) {
  const ctx = Object.create(EC.prototype);
  ctx.props = {};
  if (typeof handler === "function" && handler.prototype && typeof handler.prototype[method] === "function") {
    return new handler(ctx, env)[method](arg);
  }
  if (handler && typeof handler[method] === "function") return handler[method](arg, env, ctx);
  throw new Error("Handler does not export a " + method + "() function.");
})`

var eventCallProgram = goja.MustCompile("celld:event", eventCallSource, true)

// Event runs the default export's method with the argument build makes on
// the loop (it may install natives on h), and returns once the promise
// the handler returns settles: nil, or the *Exception it threw or
// rejected with. ctx ending first ends the calls the handler has in
// flight and returns its cause; the handler's own code may go on.
func (r *Runtime) Event(ctx context.Context, method string, build func(h *Host) (goja.Value, error)) error {
	if r.closed.Load() {
		return ErrClosed
	}
	i := r.pick()
	iso := r.isolates[i]
	r.load[i].Add(1)
	defer r.load[i].Add(-1)
	ch := make(chan error, 1)
	scope := &eventScope{}
	if !iso.post(func() { iso.startEvent(method, build, scope, ch) }) {
		return ErrClosed
	}
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		iso.post(scope.clientGone)
		return fmt.Errorf("%s event: %w", method, context.Cause(ctx))
	case <-r.stop:
		return ErrClosed
	}
}

func (iso *isolate) startEvent(method string, build func(h *Host) (goja.Value, error), scope *eventScope, ch chan<- error) {
	defer iso.enter(scope)()
	done := false
	finish := func(err error) {
		if !done {
			done = true
			scope.answered = true
			ch <- err
		}
	}
	arg, err := build(&Host{iso: iso})
	if err != nil {
		finish(fmt.Errorf("build %s event: %w", method, err))
		return
	}
	callV, err := iso.vm.RunProgram(eventCallProgram)
	if err != nil {
		finish(err)
		return
	}
	call, _ := goja.AssertFunction(callV)
	ec := iso.vm.Get("ExecutionContext")
	res, err := call(goja.Undefined(), iso.handler, iso.vm.ToValue(method), arg, iso.env, ec, iso.internal.Get("kCreate"))
	if err != nil {
		v := thrownOr(err)
		iso.reportException("uncaught exception in "+method+" handler", v)
		finish(iso.eventException(thrown(err), err))
		return
	}
	iso.await(res, func(ok bool, v goja.Value) {
		if ok {
			finish(nil)
			return
		}
		iso.reportException("uncaught exception in "+method+" handler", v)
		finish(iso.eventException(v, nil))
	})
}

// eventException is what a handler threw, as an *Exception.
func (iso *isolate) eventException(v goja.Value, err error) error {
	if v == nil {
		if err != nil {
			return &Exception{Name: "Error", Message: err.Error()}
		}
		return &Exception{Name: "Error", Message: "unknown"}
	}
	if obj, ok := v.(*goja.Object); ok {
		name, msg := obj.Get("name"), obj.Get("message")
		if name != nil && msg != nil && !goja.IsUndefined(msg) {
			return &Exception{Name: name.String(), Message: msg.String()}
		}
	}
	return &Exception{Name: "Error", Message: describeValue(v)}
}

// Serialize writes v in the structured-clone wire format (what
// Durable Object storage and RPC use); a value that cannot be cloned
// throws a DataCloneError. Call it on the loop, from a native.
func (h *Host) Serialize(v goja.Value) []byte { return h.iso.codec.serialize(v) }

// Deserialize reads a value Serialize wrote; bad data throws.
func (h *Host) Deserialize(data []byte) goja.Value { return h.iso.codec.deserialize(data) }

// Refusals returns what records a failed call's error in the scope of
// the code running now (call it on the loop as the call starts): when the
// error is a refusal worth retrying (ErrUnavailable, ErrObjectClosed) and
// the script then throws, its request is answered 503 with Retry-After,
// as for a Durable Object call.
func (h *Host) Refusals() func(error) {
	s := h.iso.scope
	return s.noteRefusal
}
