package worker

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/dop251/goja"
)

// The caller's side of Durable Objects: ids, the object name carried with
// an event, exceptions that travel back to the caller, and the natives
// behind namespace stubs (prelude/95_objects.js).

// ObjectHost resolves a Durable Object for a namespace binding's stub. The
// server implements it (activation through the fleet, one SQLite file per
// cell).
type ObjectHost interface {
	Object(ctx context.Context, class, id string) (ObjectHandle, error)
}

// ObjectHandle delivers events to one object, whichever isolate holds it.
type ObjectHandle interface {
	Fetch(ctx context.Context, req *Request) (*Response, error)
	// Call runs an RPC method. args is the argument array and the result
	// the return value, both in the wire format (Serialize/Deserialize).
	// An exception thrown by the method is returned as an *Exception.
	Call(ctx context.Context, method string, args []byte) ([]byte, error)
}

// Errors of objects.
var (
	// ErrObjectClosed means the object refused the event because it is
	// closing or closed: the event was not delivered, so it is safe to
	// deliver it again to a new activation.
	ErrObjectClosed = errors.New("durable object closed")
	// ErrObjectStopped means the object stopped while the event was in
	// flight: it may have run in part.
	ErrObjectStopped = errors.New("durable object stopped before answering")
)

// Object ids: 32 bytes, shown as 64 lowercase hex digits. The first 24
// bytes identify the object (derived from the name, or random); the last 8
// are a check that binds the id to its class, so idFromString can refuse
// an id of another namespace as workerd does.
const (
	idBodyLen  = 24
	idCheckLen = 8
)

func idCheck(class string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte("celld/durable-object-id/v1\x00"))
	h.Write([]byte(class))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)[:idCheckLen]
}

func makeID(class string, body []byte) string {
	return hex.EncodeToString(append(body[:idBodyLen:idBodyLen], idCheck(class, body)...))
}

// ObjectIDFromName is idFromName(name) of the namespace of class: the same
// id on every node and in every isolate.
func ObjectIDFromName(class, name string) string {
	h := sha256.New()
	h.Write([]byte("celld/durable-object-name/v1\x00"))
	h.Write([]byte(class))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return makeID(class, h.Sum(nil)[:idBodyLen])
}

// NewUniqueObjectID is newUniqueId() of the namespace of class.
func NewUniqueObjectID(class string) string {
	body := make([]byte, idBodyLen)
	_, _ = rand.Read(body) // crypto/rand.Read never fails
	return makeID(class, body)
}

// ValidObjectID reports whether id (64 lowercase hex digits) is an id of
// the namespace of class.
func ValidObjectID(class, id string) bool {
	if len(id) != 2*(idBodyLen+idCheckLen) || strings.ToLower(id) != id {
		return false
	}
	b, err := hex.DecodeString(id)
	if err != nil {
		return false
	}
	return string(b[idBodyLen:]) == string(idCheck(class, b[:idBodyLen]))
}

type objectNameKey struct{}

// WithObjectName returns a context that carries the name an object was
// addressed by (idFromName / getByName): the object shows it as
// ctx.id.name. Stubs attach it to the context of every Fetch and Call; a
// host that forwards events elsewhere should carry it along.
func WithObjectName(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, objectNameKey{}, name)
}

// ObjectName returns the name WithObjectName attached, if any.
func ObjectName(ctx context.Context) (string, bool) {
	name, ok := ctx.Value(objectNameKey{}).(string)
	return name, ok
}

// ExceptionHeader marks a response of ObjectHandle.Fetch made because the
// object's fetch handler threw: the status is 500 and the header holds
// the exception (Exception.Encode), which the calling stub rethrows. A
// host forwarding responses between nodes keeps it as any other header.
const ExceptionHeader = "Celld-Object-Exception"

// Exception is a JavaScript exception thrown by a Durable Object's code,
// as it travels to the caller. Like workerd, it keeps the class of
// standard errors (Error, TypeError, RangeError, ...) and DOMExceptions;
// any other thrown value arrives as an Error whose message is its string
// form.
type Exception struct {
	Name         string `json:"name"`
	Message      string `json:"message"`
	DOMException bool   `json:"dom,omitempty"`
}

func (e *Exception) Error() string { return e.Name + ": " + e.Message }

// Encode is the exception as one header-safe token (base64url of JSON).
func (e *Exception) Encode() string {
	b, _ := json.Marshal(e) // a struct of strings always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeException reverses Encode.
func DecodeException(s string) (*Exception, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("decode exception: %w", err)
	}
	var e Exception
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("decode exception: %w", err)
	}
	if e.Name == "" {
		e.Name = "Error"
	}
	return &e, nil
}

// maxHeaderMessage bounds the message an exception carries in
// ExceptionHeader, so a huge message cannot make the response unsendable.
const maxHeaderMessage = 8 << 10

// exceptionResponse is what Object.Fetch answers when the handler threw.
func exceptionResponse(ex *Exception) *Response {
	if len(ex.Message) > maxHeaderMessage {
		short := *ex
		short.Message = strings.ToValidUTF8(ex.Message[:maxHeaderMessage], "") + "…"
		ex = &short
	}
	resp := internalError()
	resp.Header.Set(ExceptionHeader, ex.Encode())
	return resp
}

// deliveryAttempts bounds how often a stub retries an event an object
// refused while closing (ErrObjectClosed: never delivered), so eviction
// racing with a call stays invisible to the script.
const deliveryAttempts = 3

// registerObjectNatives adds the natives behind namespace bindings.
func registerObjectNatives(set func(string, nativeFunc)) {
	// doIdFromName(class, name) -> id; the ids of the last few names are
	// remembered per class (two SHA-256 sums each).
	set("doIdFromName", func(iso *isolate, call goja.FunctionCall) goja.Value {
		class, name := call.Argument(0).String(), call.Argument(1).String()
		ids := iso.ids[class]
		if id, ok := ids[name]; ok {
			return id
		}
		id := iso.vm.ToValue(ObjectIDFromName(class, name))
		if len(name) <= 256 {
			if ids == nil || len(ids) >= 64 {
				ids = make(map[string]goja.Value)
				if iso.ids == nil {
					iso.ids = make(map[string]map[string]goja.Value)
				}
				iso.ids[class] = ids
			}
			ids[name] = id
		}
		return id
	})
	set("doNewUniqueId", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		return vm.ToValue(NewUniqueObjectID(call.Argument(0).String()))
	})
	set("doIdValid", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		return vm.ToValue(ValidObjectID(call.Argument(0).String(), call.Argument(1).String()))
	})
	// doCall(class, id, name|null, method, args: array, order, idObject) -> a promise of
	// the method's result, rejected with the error it threw (rebuilt by
	// internal.rebuild) or with an Error saying the call failed. It throws
	// DataCloneError when args cannot be serialized.
	set("doCall", func(iso *isolate, call goja.FunctionCall) goja.Value {
		class, id := call.Argument(0).String(), call.Argument(1).String()
		method := call.Argument(3).String()
		// The call takes its number here (doOrderTake), in call order.
		seq, _ := call.Argument(5).Export().(*stubSeq)
		var n uint64
		if seq != nil {
			n = seq.take()
		}
		classArg, idArg, ordArg := call.Argument(0), call.Argument(6), call.Argument(5)
		var args []byte
		if ex := iso.vm.Try(func() { args = iso.codec.serialize(call.Argument(4)) }); ex != nil {
			seq.finish(n)
			panic(ex.Value())
		}
		scope := iso.scope
		ctx, settle := scope.callContext(iso.eventContext(call.Argument(2)))
		ctx = seq.context(ctx, n)
		return iso.spawn(func() func(resolve, reject func(goja.Value)) {
			var res []byte
			err := iso.deliver(ctx, class, id, func(h ObjectHandle) (err error) {
				res, err = h.Call(ctx, method, args)
				return err
			})
			return func(resolve, reject func(goja.Value)) {
				seq.finish(n)
				settle()
				if err != nil {
					scope.noteRefusal(err)
					reject(iso.rebuild(err))
					return
				}
				var v goja.Value
				if ex := iso.vm.Try(func() { v = iso.codec.deserialize(res) }); ex != nil {
					reject(ex.Value())
					return
				}
				if _, isObj := v.(*goja.Object); isObj {
					// RpcTargets and functions in the result become stubs
					// (internal.importValue, 95_stubs.js).
					if imp, ok := goja.AssertFunction(iso.internal.Get("importValue")); ok {
						var err error
						if v, err = imp(goja.Undefined(), classArg, idArg, ordArg, v); err != nil {
							var jex *goja.Exception
							if errors.As(err, &jex) {
								reject(jex.Value())
							} else {
								reject(iso.vm.NewGoError(err))
							}
							return
						}
					}
				}
				resolve(v)
			}
		})
	})
	// doOrder() -> the event numbering of a new stub (objects_order.go);
	// doOrderTake(order) -> the next number; doOrderSkip(order, n) marks
	// event n as never sent.
	set("doOrder", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.vm.ToValue(newStubSeq())
	})
	set("doOrderTake", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s, _ := call.Argument(0).Export().(*stubSeq)
		if s == nil {
			return goja.Undefined()
		}
		return iso.vm.ToValue(s.take())
	})
	set("doOrderSkip", func(iso *isolate, call goja.FunctionCall) goja.Value {
		seq, n := orderArgs(call, 0)
		seq.finish(n)
		return goja.Undefined()
	})
	// doFetch(class, id, name|null, method, url, flatHeaders, body|null, order, n) -> Promise<outcome>
	set("doFetch", func(iso *isolate, call goja.FunctionCall) goja.Value {
		class, id := call.Argument(0).String(), call.Argument(1).String()
		ctx := iso.eventContext(call.Argument(2))
		req := &Request{Method: call.Argument(3).String(), URL: call.Argument(4).String(), Header: iso.headerArg(call.Argument(5))}
		if b := call.Argument(6); !goja.IsNull(b) && !goja.IsUndefined(b) {
			req.Body = append([]byte{}, iso.bytesArg(b)...)
		}
		host := &Host{iso: iso}
		scope := iso.scope
		ctx, settle := scope.callContext(ctx)
		seq, n := orderArgs(call, 7)
		ctx = seq.context(ctx, n)
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			var resp *Response
			err := iso.deliver(ctx, class, id, func(h ObjectHandle) (err error) {
				resp, err = h.Fetch(ctx, req)
				return err
			})
			if err == nil && resp.Status == http.StatusInternalServerError {
				if s := resp.Header.Get(ExceptionHeader); s != "" {
					if ex, derr := DecodeException(s); derr == nil {
						err = ex
					}
				}
			}
			if err != nil || resp.Stream == nil {
				settle()
			} else {
				resp.Stream = &settleOnClose{ReadCloser: resp.Stream, settle: settle}
			}
			return func(vm *goja.Runtime) (goja.Value, error) {
				seq.finish(n)
				if err != nil {
					scope.noteRefusal(err)
					return iso.failedOutcome(err), nil
				}
				return iso.responseOutcome(resp), nil
			}
		})
	})
}

// eventContext is the context of an outgoing event: the isolate's, with
// the object name when the stub has one.
func (iso *isolate) eventContext(name goja.Value) context.Context {
	if goja.IsNull(name) || goja.IsUndefined(name) {
		return iso.ctx
	}
	return WithObjectName(iso.ctx, name.String())
}

// deliver resolves the object and hands it the event, again when the
// object refused it while closing. It runs off the loop.
func (iso *isolate) deliver(ctx context.Context, class, id string, send func(ObjectHandle) error) error {
	if ep, ok := parseServiceClass(class); ok {
		return send(serviceHandle{from: iso, ep: ep})
	}
	host := iso.rt.cfg.Objects
	if host == nil {
		return fmt.Errorf("no Durable Object host is configured for class %s", class)
	}
	var err error
	for range deliveryAttempts {
		var h ObjectHandle
		if h, err = host.Object(ctx, class, id); err != nil {
			return err
		}
		if err = send(h); !errors.Is(err, ErrObjectClosed) {
			return err
		}
	}
	return err
}

// rebuild is the error a failed call rejects with: the exception the
// object threw, rebuilt (internal.rebuild), or an Error saying why the
// call failed.
func (iso *isolate) rebuild(err error) goja.Value {
	out := iso.failedOutcome(err)
	if rebuild, ok := goja.AssertFunction(iso.internal.Get("rebuild")); ok {
		if v, rerr := rebuild(goja.Undefined(), out); rerr == nil {
			return v
		}
	}
	return iso.vm.NewGoError(err)
}

// failedOutcome is {ok: false, exception: {...}} for an exception the
// object threw, {ok: false, error: message} for any other failure.
func (iso *isolate) failedOutcome(err error) goja.Value {
	vm := iso.vm
	out := vm.NewObject()
	_ = out.Set("ok", false)
	var ex *Exception
	if errors.As(err, &ex) {
		x := vm.NewObject()
		_ = x.Set("name", ex.Name)
		_ = x.Set("message", ex.Message)
		_ = x.Set("dom", ex.DOMException)
		_ = out.Set("exception", x)
		return out
	}
	_ = out.Set("error", "celld: Durable Object call failed: "+err.Error())
	return out
}

func (iso *isolate) responseOutcome(resp *Response) goja.Value {
	vm := iso.vm
	out := vm.NewObject()
	_ = out.Set("ok", true)
	_ = out.Set("status", resp.Status)
	text := resp.StatusText
	if text == "" {
		text = http.StatusText(resp.Status)
	}
	_ = out.Set("statusText", text)
	_ = out.Set("headers", iso.headersValue(resp.Header))
	if resp.WebSocket != nil {
		_ = out.Set("webSocket", vm.ToValue(resp.WebSocket))
	}
	if resp.Stream != nil {
		// The body follows as a ReadableStream (stream_in.go).
		_ = out.Set("body", goja.Null())
		_ = out.Set("stream", iso.newGoBody(resp.Stream))
		return out
	}
	_ = out.Set("body", vm.NewArrayBuffer(append([]byte{}, resp.Body...)))
	return out
}

// orderArgs reads the (order, n) pair of a stub event at argument i: the
// stub's numbering (doOrder) and the event's number (doOrderTake). A
// missing pair is a nil numbering, which orders nothing.
func orderArgs(call goja.FunctionCall, i int) (*stubSeq, uint64) {
	s, _ := call.Argument(i).Export().(*stubSeq)
	if s == nil {
		return nil, 0
	}
	n := call.Argument(i + 1).ToInteger()
	if n <= 0 || uint64(n) >= s.next {
		return nil, 0
	}
	return s, uint64(n)
}
