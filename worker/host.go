package worker

import (
	"context"
	"errors"

	"github.com/dop251/goja"
)

// Host is what a binding sees of the isolate it is installed in. Its
// methods must be called on the isolate's loop: from a native function
// called by JavaScript, or from the binding constructor itself.
type Host struct {
	iso *isolate
}

// VM returns the isolate's JavaScript runtime.
func (h *Host) VM() *goja.Runtime { return h.iso.vm }

// Async runs work on its own goroutine and returns a promise that settles
// on the loop with what finish returns (an error rejects it; a
// *goja.Exception rejects with the thrown value). work must not touch the
// VM; finish runs on the loop and may.
//
// The loop counts the work as pending: it keeps the isolate's timers and
// does not take a request that waits on it for hung. I/O a binding does
// outside Async is invisible to the loop, so a request waiting only on it
// would be failed with "The script will never generate a response."
func (h *Host) Async(work func() (finish func(vm *goja.Runtime) (goja.Value, error))) goja.Value {
	iso := h.iso
	return iso.spawn(func() func(resolve, reject func(goja.Value)) {
		finish := work()
		return func(resolve, reject func(goja.Value)) {
			v, err := finish(iso.vm)
			if err == nil {
				resolve(v)
				return
			}
			var ex *goja.Exception
			if errors.As(err, &ex) {
				reject(ex.Value())
			} else {
				reject(iso.vm.NewGoError(err))
			}
		}
	})
}

// spawn runs work on its own goroutine and returns a promise that finish,
// the function work returns, settles on the loop. The loop counts the work
// as background (see Host.Async).
func (iso *isolate) spawn(work func() (finish func(resolve, reject func(goja.Value)))) goja.Value {
	p, resolve, reject := iso.vm.NewPromise()
	iso.background++
	go func() {
		finish := work()
		// post fails only once the isolate has stopped; nobody waits then.
		_ = iso.post(func() {
			iso.background--
			finish(func(v goja.Value) { _ = resolve(v) }, func(v goja.Value) { _ = reject(v) })
		})
	}()
	return iso.vm.ToValue(p)
}

// AsyncContext is Async for work that runs under the isolate's context
// (cancelled when the isolate closes), taken on the loop before the work
// leaves it.
func (h *Host) AsyncContext(work func(ctx context.Context) (finish func(vm *goja.Runtime) (goja.Value, error))) goja.Value {
	ctx := h.Context()
	return h.Async(func() func(*goja.Runtime) (goja.Value, error) { return work(ctx) })
}

// ErrorOf is what a finish function returns to reject with a plain JS
// Error whose message is err's text — the shape the bindings' errors have
// on workerd ("KV GET failed: …", "get: …") — rather than a Go error
// object; it runs on the loop.
func ErrorOf(vm *goja.Runtime, err error) error {
	ctor, ok := goja.AssertConstructor(vm.Get("Error"))
	if !ok {
		return err
	}
	obj, cerr := ctor(nil, vm.ToValue(err.Error()))
	if cerr != nil {
		return err
	}
	return vm.Try(func() { panic(obj) })
}
