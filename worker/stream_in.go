package worker

import (
	"errors"
	"io"
	"runtime"
	"slices"
	"sync"
	"weak"

	"github.com/dop251/goja"
)

// A Durable Object's streamed answer reaches the calling script as a
// ReadableStream that pulls from the Go stream: a Worker that returns the
// stub's Response passes the chunks on as they come instead of holding
// them all back.

// streamChunkSize bounds one read of a Go body into JavaScript.
const streamChunkSize = 64 << 10

// goBody is a Go stream handed to JavaScript, opaque to it.
type goBody struct {
	iso     *isolate
	rc      io.ReadCloser
	buf     []byte
	closed  bool // loop only
	started bool // loop only: a bodyRead was made
	closer  *onceCloser
}

// registerStreamNatives adds the natives behind a ReadableStream fed by
// a Go body.
func registerStreamNatives(set func(string, nativeFunc)) {
	// defineHidden(obj, symbol, value) defines a writable, configurable,
	// non-enumerable property, as internal.define does, without a
	// descriptor object.
	set("defineHidden", func(iso *isolate, call goja.FunctionCall) goja.Value {
		obj, ok1 := call.Argument(0).(*goja.Object)
		sym, ok2 := call.Argument(1).(*goja.Symbol)
		if !ok1 || !ok2 {
			panic(iso.vm.NewTypeError("defineHidden: bad arguments"))
		}
		if c := iso.fetchc; c != nil && sym == c.marks.state {
			// A stream's state is made: Go no longer knows it untouched.
			c.forgetLazy(obj)
		}
		if err := obj.DefineDataPropertySymbol(sym, call.Argument(2), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			panic(err)
		}
		return goja.Undefined()
	})
	// bodyRead(handle) -> Promise<ArrayBuffer | null>: the next chunk, or
	// null at the end.
	set("bodyRead", func(iso *isolate, call goja.FunctionCall) goja.Value {
		b, ok := call.Argument(0).Export().(*goBody)
		if !ok {
			panic(iso.vm.NewTypeError("bodyRead: not a body"))
		}
		b.started = true
		host := &Host{iso: iso}
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			if b.buf == nil {
				b.buf = make([]byte, streamChunkSize)
			}
			n, err := io.ReadAtLeast(b.rc, b.buf, 1)
			data := append([]byte(nil), b.buf[:n]...)
			return func(vm *goja.Runtime) (goja.Value, error) {
				if n > 0 {
					return vm.ToValue(vm.NewArrayBuffer(data)), nil
				}
				if errors.Is(err, io.EOF) {
					b.close()
					return goja.Null(), nil
				}
				b.close()
				return nil, err
			}
		})
	})
	// bodyReadAll(handle, limit) -> Promise<ArrayBuffer | null>: the rest of
	// a body Go took (bodyTake), read whole off the loop in one go rather
	// than chunk by chunk through a reader; null when it holds more than
	// limit bytes. The body is closed either way.
	set("bodyReadAll", func(iso *isolate, call goja.FunctionCall) goja.Value {
		b, ok := call.Argument(0).Export().(*goBody)
		if !ok || !b.closed {
			panic(iso.vm.NewTypeError("bodyReadAll: not a taken body"))
		}
		limit := call.Argument(1).ToInteger()
		host := &Host{iso: iso}
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			data, err := readWhole(b.rc, limit)
			b.rc.Close()
			return func(vm *goja.Runtime) (goja.Value, error) {
				if err != nil {
					return nil, err
				}
				if data == nil {
					return goja.Null(), nil
				}
				return vm.ToValue(vm.NewArrayBuffer(data)), nil
			}
		})
	})
	// bodyTake(handle) -> bool: Go takes the body whole (take), if no
	// read of it has started.
	set("bodyTake", func(iso *isolate, call goja.FunctionCall) goja.Value {
		b, ok := call.Argument(0).Export().(*goBody)
		return iso.vm.ToValue(ok && b.take())
	})
	// bodyCancel(handle): nobody wants the rest.
	set("bodyCancel", func(iso *isolate, call goja.FunctionCall) goja.Value {
		if b, ok := call.Argument(0).Export().(*goBody); ok {
			b.close()
		}
		return goja.Undefined()
	})
}

// newGoBody hands rc to JavaScript. Call it on the loop.
//
// The isolate keeps only a weak reference: a body the script dropped
// without reading it to the end (a fetch() whose status was all it
// wanted) is closed once the garbage collector finds it unreachable,
// so a busy isolate that is never idle (when closeGoBodies runs) does not
// pile up open connections.
func (iso *isolate) newGoBody(rc io.ReadCloser) *goBody {
	b := &goBody{iso: iso, rc: rc}
	live := iso.goBodies[:0]
	for _, w := range iso.goBodies {
		if w.Value() != nil {
			live = append(live, w)
		}
	}
	iso.goBodies = append(live, weak.Make(b))
	b.closer = &onceCloser{rc: rc}
	runtime.AddCleanup(b, (*onceCloser).close, b.closer)
	return b
}

// onceCloser closes a stream once, whether the script's reading ended it
// or the garbage collector found its body dropped.
type onceCloser struct {
	rc   io.ReadCloser
	once sync.Once
}

func (c *onceCloser) close() { c.once.Do(func() { c.rc.Close() }) }

// take hands the unread stream to Go: the body forgets it (neither the
// script nor the garbage collector will close it) and its reader is the
// new owner's. It fails once a read has started or the body is closed.
// Call it on the loop.
func (b *goBody) take() bool {
	if b.closed || b.started {
		return false
	}
	b.closed = true
	for i, w := range b.iso.goBodies {
		if w.Value() == b {
			b.iso.goBodies = append(b.iso.goBodies[:i], b.iso.goBodies[i+1:]...)
			break
		}
	}
	b.closer.once.Do(func() {}) // a later close is a no-op: the reader is passed on
	return true
}

// close closes the Go stream once. Call it on the loop.
func (b *goBody) close() {
	if b.closed {
		return
	}
	b.closed = true
	for i, w := range b.iso.goBodies {
		if w.Value() == b {
			b.iso.goBodies = append(b.iso.goBodies[:i], b.iso.goBodies[i+1:]...)
			break
		}
	}
	go b.closer.close() // it may wait on another isolate's loop
}

// scrubCalls runs, before the loop waits, a chain of nested calls as
// deep as most scripts go, once per task while Go streams are open. goja
// keeps the records of returned calls in its call stack; those of a call
// a native function made keep that call's variables reachable until a
// later call as deep overwrites them, and with them a Go stream the
// script dropped, which the garbage collector must find to close it.
func (iso *isolate) scrubCalls() {
	if len(iso.goBodies) == 0 || iso.scrubbed || iso.vm == nil {
		return
	}
	iso.scrubbed = true
	if iso.scrub == nil {
		fn, ok := goja.AssertFunction(iso.internal.Get("scrubCalls"))
		if !ok {
			return
		}
		iso.scrub = fn
	}
	_, _ = iso.scrub(goja.Undefined(), iso.vm.ToValue(scrubDepth))
}

// scrubDepth is how deep scrubCalls goes.
const scrubDepth = 48

// closeGoBodies closes every Go stream JavaScript still holds. Call it on
// the loop.
func (iso *isolate) closeGoBodies() {
	for _, w := range slices.Clone(iso.goBodies) {
		if b := w.Value(); b != nil {
			b.close()
		}
	}
	iso.goBodies = iso.goBodies[:0]
}

// readWhole reads r to its end, or returns (nil, nil) once it holds more
// than limit bytes. A body of known length is read into one buffer of
// that length.
func readWhole(r io.Reader, limit int64) ([]byte, error) {
	size := BodySize(r)
	if size > limit {
		return nil, nil
	}
	buf := make([]byte, 0, max(size, 512)+1)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 1)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, nil
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
