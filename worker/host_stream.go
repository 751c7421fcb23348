package worker

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/dop251/goja"
)

// ReadableStream hands rc to the script as a byte ReadableStream that
// reads it a chunk at a time; cancelling the stream, reading it to the
// end or dropping it closes rc. Call it on the loop.
func (h *Host) ReadableStream(rc io.ReadCloser) (goja.Value, error) {
	iso := h.iso
	mk, ok := goja.AssertFunction(iso.internal.Get("goStream"))
	if !ok {
		rc.Close()
		return nil, errors.New("prelude: internal.goStream missing")
	}
	handle := iso.vm.ToValue(iso.newGoBody(rc))
	// Passed on unread (new Response(stream)), it goes back to Go whole.
	return mk(goja.Undefined(), handle)
}

// StreamReader locks the script's ReadableStream and returns a reader of
// its bytes, for use off the loop (within Async work), and their number
// when known (else -1). Closing it before the end cancels the stream.
// Call it on the loop.
func (h *Host) StreamReader(stream goja.Value) (io.ReadCloser, int64, error) {
	obj, ok := stream.(*goja.Object)
	if !ok {
		return nil, 0, errors.New("not a ReadableStream")
	}
	// An unread Go body (another R2 object's, say) is read directly.
	if take, ok := goja.AssertFunction(h.iso.internal.Get("takeGoStream")); ok {
		if v, err := take(goja.Undefined(), obj); err == nil {
			if gb, ok := exportGoBody(v); ok {
				return gb.rc, BodySize(gb.rc), nil
			}
		}
	}
	// So is an unread stream over bytes (a request body): whole, and of a
	// known length.
	if take, ok := goja.AssertFunction(h.iso.internal.Get("takeBytesStream")); ok {
		if v, err := take(goja.Undefined(), obj); err == nil && !goja.IsNull(v) && !goja.IsUndefined(v) {
			var b []byte
			if err := h.iso.vm.ExportTo(v, &b); err == nil {
				return bytesBody{bytes.NewReader(b)}, int64(len(b)), nil
			}
		}
	}
	getReader, ok := goja.AssertFunction(obj.Get("getReader"))
	if !ok {
		return nil, 0, errors.New("not a ReadableStream")
	}
	reader, err := getReader(obj)
	if err != nil {
		return nil, 0, err
	}
	return h.iso.newBodyStream(reader), -1, nil
}

// StreamDisturbed reports whether stream, a ReadableStream, has been
// read from or taken whole (a body used once). Call it on the loop.
func (h *Host) StreamDisturbed(stream goja.Value) bool {
	f, ok := goja.AssertFunction(h.iso.internal.Get("isDisturbed"))
	if !ok {
		return false
	}
	v, err := f(goja.Undefined(), stream)
	return err == nil && v.ToBoolean()
}

// BodySize is the length of a Go body known before it is read — an R2
// object's, a request's with a Content-Length: the Size of a body that
// has one (SizedBody, or a bytes.Reader's), else -1. A host writing such a
// body sends its Content-Length, as workerd does for a stream of known
// length; a binding taking it (R2 put) knows the size up front.
func BodySize(r io.Reader) int64 {
	if s, ok := r.(interface{ Size() int64 }); ok {
		return s.Size()
	}
	return -1
}

// SizedBody is rc, of n bytes, as a body whose BodySize is n.
func SizedBody(rc io.ReadCloser, n int64) io.ReadCloser { return sizedBody{rc, n} }

type sizedBody struct {
	io.ReadCloser
	n int64
}

func (s sizedBody) Size() int64 { return s.n }

// OutputGate returns the wait a binding's mutation must pass in a Durable
// Object's isolate: it returns once the object's earlier writes are
// durable. Outside an object it is nil. Call it on the loop; call the
// function it returns off the loop.
func (h *Host) OutputGate() func(ctx context.Context) error {
	gate, obj := h.iso.rt.cfg.OutputGate, h.iso.obj
	if gate == nil || obj == nil {
		return nil
	}
	class, id := obj.class, obj.id
	return func(ctx context.Context) error { return gate(ctx, class, id) }
}

// bytesBody is bytes as a body that stays seekable (a store can then sign
// it once instead of chunk by chunk).
type bytesBody struct{ *bytes.Reader }

func (bytesBody) Close() error { return nil }
