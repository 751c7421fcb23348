package worker

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// The natives behind prelude/62_websocket.js.

func init() {
	registerWebSocketNatives(func(name string, f nativeFunc) { nativeFuncs[name] = f })
}

func registerWebSocketNatives(set func(string, nativeFunc)) {
	// wsSocket(ws, hibernatable) -> handle: the Go socket ws, the script's
	// end, talks to from now on.
	set("wsSocket", func(iso *isolate, call goja.FunctionCall) goja.Value {
		ws := call.Argument(0)
		if call.Argument(1).ToBoolean() {
			if iso.obj == nil {
				panic(iso.vm.NewTypeError("acceptWebSocket() is only available on a Durable Object's state"))
			}
			return iso.vm.ToValue(iso.obj.hibernatable(ws))
		}
		return iso.vm.ToValue(iso.liveSocket(ws))
	})
	set("wsSend", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s := socketArg(iso, call.Argument(0))
		text := call.Argument(1).ToBoolean()
		var data []byte
		if text {
			data = []byte(call.Argument(2).String())
		} else {
			data = append([]byte(nil), iso.bytesArg(call.Argument(2))...)
		}
		s.send(wsFrame{text: text, data: data}, true)
		return goja.Undefined()
	})
	set("wsClose", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s := socketArg(iso, call.Argument(0))
		s.send(wsFrame{close: true, code: int(call.Argument(1).ToInteger()), reason: call.Argument(2).String()}, true)
		return goja.Undefined()
	})
	set("wsSerialize", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.vm.ToValue(iso.vm.NewArrayBuffer(iso.codec.serialize(call.Argument(0))))
	})
	set("wsSetAttachment", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s := socketArg(iso, call.Argument(0))
		data := iso.codec.serialize(call.Argument(1))
		// Sizes as V8's serializer counts them: its header is a byte
		// longer than the wire format's.
		if n := len(data) + 1; n > maxAttachment {
			panic(jsErr(iso.vm, fmt.Sprintf("A WebSocket 'attachment' cannot be larger than %d bytes.'attachment' was %d bytes.", maxAttachment, n)))
		}
		s.mu.Lock()
		s.attachment = data
		s.mu.Unlock()
		return goja.Undefined()
	})
	set("wsGetAttachment", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s := socketArg(iso, call.Argument(0))
		s.mu.Lock()
		data := s.attachment
		s.mu.Unlock()
		if data == nil {
			return goja.Null()
		}
		return iso.codec.deserialize(data)
	})
	// wsAborted() -> a socket whose connection is dropped once attached.
	set("wsAborted", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s := newSocket(nil)
		s.aborted = true
		return iso.vm.ToValue(s)
	})
	set("wsBind", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s := socketArg(iso, call.Argument(0))
		if b := s.bind; b != nil {
			s.bind = nil
			b(call.Argument(1))
		}
		return goja.Undefined()
	})
	set("wsAdopt", func(iso *isolate, call goja.FunctionCall) goja.Value {
		panic(iso.vm.NewTypeError("celld: accept() on a WebSocket another Worker or Durable Object returned is not supported yet; return it in a Response instead"))
	})
	// wsDial(url, protocols, ws): open an outbound socket for ws (new
	// WebSocket(url)); ws hears open, or error and close.
	set("wsDial", func(iso *isolate, call goja.FunctionCall) goja.Value {
		url := call.Argument(0).String()
		var protocols []string
		_ = iso.vm.ExportTo(call.Argument(1), &protocols)
		ws := call.Argument(2)
		header := http.Header{}
		if len(protocols) > 0 {
			header.Set("Sec-WebSocket-Protocol", strings.Join(protocols, ", "))
		}
		iso.dial(url, header, func(t Transport, resp *http.Response, err error) {
			w := iso.internal.Get("ws").(*goja.Object)
			if err != nil {
				f, _ := goja.AssertFunction(w.Get("dialFailed"))
				_, _ = f(goja.Undefined(), ws, iso.vm.ToValue("WebSocket connection failed: "+err.Error()))
				return
			}
			s := iso.liveSocket(ws)
			s.Attach(t)
			f, _ := goja.AssertFunction(w.Get("opened"))
			_, _ = f(goja.Undefined(), ws, iso.vm.ToValue(s), iso.vm.ToValue(resp.Header.Get("Sec-WebSocket-Protocol")),
				iso.vm.ToValue(resp.Header.Get("Sec-WebSocket-Extensions")))
		})
		return goja.Undefined()
	})
	// wsFetch(url, [name, value, ...]) -> promise of {ok, status, headers,
	// socket} | {ok: false, error}: fetch() with Upgrade: websocket.
	set("wsFetch", func(iso *isolate, call goja.FunctionCall) goja.Value {
		url := call.Argument(0).String()
		if strings.HasPrefix(url, "http:") {
			url = "ws:" + url[5:]
		} else if strings.HasPrefix(url, "https:") {
			url = "wss:" + url[6:]
		}
		header := http.Header{}
		if h, ok := call.Argument(1).(*goja.Object); ok {
			n := int(h.Get("length").ToInteger())
			for i := 0; i+1 < n; i += 2 {
				k := h.Get(itoa(i)).String()
				switch strings.ToLower(k) {
				case "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions":
					continue // the dialer's own
				}
				header.Add(k, h.Get(itoa(i+1)).String())
			}
		}
		p, resolve, _ := iso.vm.NewPromise()
		iso.dial(url, header, func(t Transport, resp *http.Response, err error) {
			vm := iso.vm
			out := vm.NewObject()
			if err != nil && resp == nil {
				_ = out.Set("ok", false)
				_ = out.Set("error", "Network connection lost: "+err.Error())
				_ = resolve(out)
				return
			}
			if err != nil {
				// The server refused the upgrade: its answer, without a socket.
				r := &Response{Status: resp.StatusCode, StatusText: http.StatusText(resp.StatusCode), Header: resp.Header, Body: []byte{}}
				_ = resolve(iso.responseOutcome(r))
				return
			}
			r := &Response{Status: resp.StatusCode, StatusText: http.StatusText(resp.StatusCode), Header: resp.Header, Body: []byte{}}
			o := iso.responseOutcome(r).(*goja.Object)
			// The script's end is made on accept(): a socket with no sink
			// yet queues what arrives.
			s := iso.liveSocket(nil)
			s.Attach(t)
			_ = o.Set("socket", vm.ToValue(s))
			_ = resolve(o)
		})
		return iso.vm.ToValue(p)
	})
}

// maxAttachment is workerd's limit on a serialized attachment.
const maxAttachment = 16384

func socketArg(iso *isolate, v goja.Value) *Socket {
	s, ok := v.Export().(*Socket)
	if !ok || s == nil {
		panic(iso.vm.NewTypeError("not a WebSocket"))
	}
	return s
}

// dial opens an outbound socket off the loop and calls then on the loop.
func (iso *isolate) dial(url string, header http.Header, then func(Transport, *http.Response, error)) {
	ctx := iso.ctx
	gate, obj := iso.rt.cfg.OutputGate, iso.obj
	iso.spawn(func() func(resolve, reject func(goja.Value)) {
		var t Transport
		var resp *http.Response
		var err error
		if gate != nil && obj != nil {
			err = gate(ctx, obj.class, obj.id)
		}
		if err == nil {
			t, resp, err = dialWebSocket(ctx, url, header)
		}
		return func(resolve, reject func(goja.Value)) { then(t, resp, err) }
	})
}

// liveSocket makes the Go socket of a script's end accepted with accept()
// (or an outbound socket): what arrives is posted to this isolate's loop
// and dispatched on ws (held until the end is set, when ws is nil). The
// isolate counts it open until it ends: a Durable Object with such a
// socket never hibernates.
func (iso *isolate) liveSocket(ws goja.Value) *Socket {
	s := newSocket(nil)
	var pending []wsEvent
	target := ws
	s.sink = func(ev wsEvent) {
		iso.post(func() {
			if target == nil || iso.vm == nil {
				pending = append(pending, ev)
				return
			}
			iso.deliverWS(target, ev)
		})
	}
	s.bind = func(v goja.Value) { // on the loop
		target = v
		for _, ev := range pending {
			iso.deliverWS(target, ev)
		}
		pending = nil
	}
	if obj := iso.obj; obj != nil {
		s.gate = obj.gateFunc()
		obj.trackSocket(s, nil)
	} else {
		iso.rt.trackWorkerSocket(s)
	}
	iso.liveWS++
	s.OnEnd(func() { iso.post(func() { iso.liveWS-- }) })
	return s
}

// deliverWS hands an event to the script's end ws. Call it on the loop.
func (iso *isolate) deliverWS(ws goja.Value, ev wsEvent) {
	w, ok := iso.internal.Get("ws").(*goja.Object)
	if !ok {
		return
	}
	f, _ := goja.AssertFunction(w.Get("deliver"))
	vm := iso.vm
	var data goja.Value = goja.Undefined()
	if ev.kind == 'm' {
		if ev.text {
			data = vm.ToValue(string(ev.data))
		} else {
			data = vm.ToValue(vm.NewArrayBuffer(ev.data))
		}
	}
	if _, err := f(goja.Undefined(), ws, vm.ToValue(string(ev.kind)), vm.ToValue(ev.text), data,
		vm.ToValue(ev.code), vm.ToValue(ev.reason), vm.ToValue(ev.clean)); err != nil {
		iso.reportException("WebSocket event", thrownOr(err))
	}
}

// trackWorkerSocket records an open socket of a stateless isolate, so
// that closing the runtime (a new deployment, a shutdown) closes it.
func (r *Runtime) trackWorkerSocket(s *Socket) {
	r.objMu.Lock()
	if r.sockets == nil {
		r.sockets = map[*Socket]struct{}{}
	}
	r.sockets[s] = struct{}{}
	r.objMu.Unlock()
	s.OnEnd(func() {
		r.objMu.Lock()
		delete(r.sockets, s)
		r.objMu.Unlock()
	})
}

// closeWorkerSockets closes the stateless isolates' sockets with 1012
// (the Worker is being replaced or the node is going away) and waits for
// them until deadline.
func (r *Runtime) closeWorkerSockets(ctx context.Context, deadline time.Time) {
	r.objMu.Lock()
	socks := make([]*Socket, 0, len(r.sockets))
	for s := range r.sockets {
		socks = append(socks, s)
	}
	r.objMu.Unlock()
	if len(socks) == 0 {
		return
	}
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range socks {
		wg.Go(func() { s.Shutdown(sctx, 1012, "celld: the Worker is being replaced; reconnect") })
	}
	wg.Wait()
}
