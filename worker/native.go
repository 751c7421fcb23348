package worker

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"time"

	"github.com/dop251/goja"
)

// registerCoreNatives registers the host functions of the object the
// prelude receives as `native` (prelude.go instantiates them per isolate
// on first use): what the JavaScript Web APIs are built on. None of them
// is reachable from user code directly.
func registerCoreNatives(set func(string, nativeFunc)) {
	set("now", func(iso *isolate, _ goja.FunctionCall) goja.Value {
		return iso.vm.ToValue(float64(time.Since(iso.origin).Microseconds()) / 1000)
	})
	set("timeOrigin", func(iso *isolate, _ goja.FunctionCall) goja.Value {
		return iso.vm.ToValue(float64(iso.origin.UnixMicro()) / 1000)
	})
	set("log", func(iso *isolate, call goja.FunctionCall) goja.Value {
		level := slog.LevelInfo
		switch call.Argument(0).String() {
		case "debug":
			level = slog.LevelDebug
		case "warn":
			level = slog.LevelWarn
		case "error":
			level = slog.LevelError
		}
		if s := iso.scope; s != nil && s.requestID != "" {
			iso.log.Log(context.Background(), level, call.Argument(1).String(), "source", "console", "request_id", s.requestID)
		} else {
			iso.log.Log(context.Background(), level, call.Argument(1).String(), "source", "console")
		}
		return goja.Undefined()
	})
	set("setTimer", (*isolate).setTimer)
	set("clearTimer", (*isolate).clearTimer)
	// background(+1|-1) counts ctx.waitUntil promises still pending.
	set("background", func(iso *isolate, call goja.FunctionCall) goja.Value {
		n := int(call.Argument(0).ToInteger())
		iso.background += n
		if iso.scope != nil {
			iso.scope.waits += n // the request's own (scope.go)
		}
		return goja.Undefined()
	})
	set("detach", func(iso *isolate, call goja.FunctionCall) goja.Value {
		if ab, ok := call.Argument(0).Export().(goja.ArrayBuffer); ok {
			ab.Detach()
		}
		return goja.Undefined()
	})
	set("isDetached", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		ab, ok := call.Argument(0).Export().(goja.ArrayBuffer)
		return vm.ToValue(ok && ab.Detached())
	})
	// parseFormData(contentType, bytes) -> [name, value, ...] where a file
	// value is {filename, type, data}; null when the content type is not a
	// form; a string describing the problem when the body is malformed.
	set("parseFormData", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		mediaType, params, err := mime.ParseMediaType(call.Argument(0).String())
		if err != nil {
			return goja.Null()
		}
		body := iso.bytesArg(call.Argument(1))
		switch mediaType {
		case "application/x-www-form-urlencoded":
			s, _, _ := decodeUTF8(body, false, false)
			return vm.NewArray(parseForm(s)...)
		case "multipart/form-data":
			out, err := iso.parseMultipart(body, params["boundary"])
			if err != nil {
				return vm.ToValue(err.Error())
			}
			return vm.NewArray(out...)
		}
		return goja.Null()
	})
	// fulfilled(value, other) -> what value, a promise of the runtime's own
	// that has been fulfilled already, was fulfilled with; other when value
	// is anything else (not settled, rejected, or not such a promise).
	set("fulfilled", func(iso *isolate, call goja.FunctionCall) goja.Value {
		if p := iso.ownPromise(call.Argument(0)); p != nil && p.State() == goja.PromiseStateFulfilled {
			return p.Result()
		}
		return call.Argument(1)
	})
	// deserialize(bytes) -> the value in the wire format (an RPC's
	// arguments; stub calls serialize theirs in Go, doCall).
	set("deserialize", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.codec.deserialize(iso.bytesArg(call.Argument(0)))
	})
}

func (iso *isolate) parseMultipart(body []byte, boundary string) ([]any, error) {
	if boundary == "" {
		return nil, errors.New("multipart/form-data value missing boundary")
	}
	vm := iso.vm
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	var out []any
	for {
		part, err := r.NextRawPart()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, errors.New("Failed to parse body as FormData.")
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, errors.New("Failed to parse body as FormData.")
		}
		name := part.FormName()
		_, dispParams, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
		filename, isFile := dispParams["filename"]
		if !isFile {
			s, _, _ := decodeUTF8(data, false, false)
			out = append(out, name, s)
			continue
		}
		ct := part.Header.Get("Content-Type")
		if ct == "" {
			ct = "text/plain"
		}
		f := vm.NewObject()
		f.Set("filename", filename)
		f.Set("type", ct)
		f.Set("data", vm.NewArrayBuffer(data))
		out = append(out, name, f)
	}
}
