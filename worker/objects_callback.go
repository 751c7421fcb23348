package worker

import (
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/dop251/goja"
)

// Callbacks: a function or RpcTarget passed as an argument of a stub call
// stays in the caller's isolate; the object receives a stub whose calls
// come back to that isolate (prelude 95_stubs.js exportArgs, 96_state.js
// importArgs). Isolates are found by a random token, so this works while
// caller and object share a node; from another node (or once the caller's
// isolate has stopped, or runs another deployment) such a call fails
// with errCallbackGone. The registry is the Runtime's (Runtime.callbacks).

var errCallbackGone = errors.New("celld: this function or RpcTarget was passed by a caller whose isolate has ended or runs on another node; callbacks across nodes are not supported")

// callbackToken registers iso as a callback owner; it runs on iso's loop.
func (iso *isolate) callbackToken() string {
	if iso.cbToken == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b) // crypto/rand.Read never fails
		iso.cbToken = hex.EncodeToString(b)
		iso.rt.callbacks.Store(iso.cbToken, iso)
	}
	return iso.cbToken
}

// forgetCallbacks unregisters iso once its loop ends.
func (iso *isolate) forgetCallbacks() {
	if iso.cbToken != "" {
		iso.rt.callbacks.Delete(iso.cbToken)
	}
}

func registerCallbackNatives(set func(string, nativeFunc)) {
	set("doCallbackToken", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.vm.ToValue(iso.callbackToken())
	})
	// doCallbackCall(token, ref, args) -> a promise of what the callback
	// returned in its own isolate (internal.callbackInvoke there).
	set("doCallbackCall", func(iso *isolate, call goja.FunctionCall) goja.Value {
		token, ref := call.Argument(0).String(), call.Argument(1).String()
		args := iso.codec.serialize(call.Argument(2))
		ctx := iso.ctx
		return iso.spawn(func() func(resolve, reject func(goja.Value)) {
			type answer struct {
				data []byte
				ex   *Exception
				err  error
			}
			ch := make(chan answer, 1)
			v, ok := iso.rt.callbacks.Load(token)
			if !ok {
				ch <- answer{err: errCallbackGone}
			} else if owner := v.(*isolate); !owner.post(func() {
				owner.invokeCallback(ref, args, func(d []byte, ex *Exception) { ch <- answer{data: d, ex: ex} })
			}) {
				ch <- answer{err: errCallbackGone}
			}
			var a answer
			select {
			case a = <-ch:
			case <-ctx.Done():
				a.err = ctx.Err()
			}
			return func(resolve, reject func(goja.Value)) {
				switch {
				case a.ex != nil:
					reject(iso.rebuild(a.ex))
				case a.err != nil:
					reject(iso.vm.NewTypeError(a.err.Error()))
				default:
					var res goja.Value
					if ex := iso.vm.Try(func() { res = iso.codec.deserialize(a.data) }); ex != nil {
						reject(ex.Value())
						return
					}
					resolve(res)
				}
			}
		})
	})
}

// invokeCallback runs callback ref of this isolate on args; it runs on the
// loop and answers through reply once the result settled.
func (iso *isolate) invokeCallback(ref string, args []byte, reply func([]byte, *Exception)) {
	fail := func(v goja.Value) {
		reply(nil, iso.thrown(v))
	}
	f, ok := goja.AssertFunction(iso.internal.Get("callbackInvoke"))
	if !ok {
		reply(nil, &Exception{Name: "Error", Message: "celld: prelude lacks callbackInvoke"})
		return
	}
	res, err := f(goja.Undefined(), iso.vm.ToValue(ref), iso.vm.ToValue(iso.vm.NewArrayBuffer(args)))
	if err != nil {
		var jex *goja.Exception
		if errors.As(err, &jex) {
			fail(jex.Value())
		} else {
			reply(nil, &Exception{Name: "Error", Message: err.Error()})
		}
		return
	}
	iso.await(res, func(ok bool, v goja.Value) {
		if !ok {
			fail(v)
			return
		}
		var data []byte
		if ex := iso.vm.Try(func() { data = iso.codec.serialize(v) }); ex != nil {
			fail(ex.Value())
			return
		}
		reply(data, nil)
	})
}

// thrown is a thrown value as an Exception (internal.tunnel).
func (iso *isolate) thrown(v goja.Value) *Exception {
	if tunnel, ok := goja.AssertFunction(iso.internal.Get("tunnel")); ok {
		if t, err := tunnel(goja.Undefined(), v); err == nil {
			if o, ok := t.(*goja.Object); ok {
				return &Exception{Name: o.Get("name").String(), Message: o.Get("message").String(), DOMException: o.Get("dom") != nil && o.Get("dom").ToBoolean()}
			}
		}
	}
	return &Exception{Name: "Error", Message: describeValue(v)}
}
