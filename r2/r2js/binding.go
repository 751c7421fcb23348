// Package r2js is the JavaScript half of R2: the R2Bucket an r2_buckets
// binding puts in env, on package r2. binding.js parses options and
// builds R2Object/R2ObjectBody values; the natives here run the calls off
// the isolate's loop and stream bodies both ways.
package r2js

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/dop251/goja"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/r2"
	"github.com/celldgo/celld/worker"
)

//go:embed binding.js
var bindingSource string

var bindingProgram = goja.MustCompile("r2/r2js/binding.js", bindingSource, true)

// Binding is the env value of an r2_buckets binding on b. In a Durable
// Object's isolate every mutation first waits for the object's earlier
// writes to be durable (the output gate).
func Binding(b *r2.Bucket) worker.Binding {
	return func(h *worker.Host) (goja.Value, error) {
		vm := h.VM()
		f, err := vm.RunProgram(bindingProgram)
		if err != nil {
			return nil, fmt.Errorf("r2 binding: %w", err)
		}
		factory, ok := goja.AssertFunction(f)
		if !ok {
			return nil, fmt.Errorf("r2 binding: binding.js is not a function")
		}
		bk := b
		if gate := h.OutputGate(); gate != nil {
			bk = b.WithGate(gate)
		}
		n := natives{h: h, b: bk, s: &shapes{}}
		obj := vm.NewObject()
		for name, fn := range map[string]func(goja.FunctionCall) goja.Value{
			"head": n.head, "get": n.get, "put": n.put, "delete": n.delete, "list": n.list,
			"create": n.create, "uploadPart": n.uploadPart, "complete": n.complete, "abort": n.abort, "shapes": n.setShapes,
			"disturbed": n.disturbed,
		} {
			if err := obj.Set(name, fn); err != nil {
				return nil, fmt.Errorf("r2 binding: %w", err)
			}
		}
		return factory(goja.Undefined(), obj)
	}
}

var typeBytes = reflect.TypeOf([]byte(nil))

// bytesBody is a body at hand that stays seekable.
type bytesBody struct{ *bytes.Reader }

func (bytesBody) Close() error { return nil }

type natives struct {
	h *worker.Host
	b *r2.Bucket
	s *shapes // set by binding.js at start
}

type settle = func(*goja.Runtime) (goja.Value, error)

func (n natives) async(work func(ctx context.Context) settle) goja.Value {
	return n.h.AsyncContext(work)
}

// Options as binding.js sends them.
type etagJSON struct {
	Value    string `json:"value"`
	Weak     bool   `json:"weak"`
	Wildcard bool   `json:"wildcard"`
}

type condJSON struct {
	ETagMatches        []etagJSON `json:"etagMatches"`
	ETagDoesNotMatch   []etagJSON `json:"etagDoesNotMatch"`
	UploadedBefore     *float64   `json:"uploadedBefore"`
	UploadedAfter      *float64   `json:"uploadedAfter"`
	SecondsGranularity bool       `json:"secondsGranularity"`
}

func (c *condJSON) conditional() *r2.Conditional {
	if c == nil {
		return nil
	}
	etags := func(in []etagJSON) []r2.ETagCond {
		if in == nil {
			return nil
		}
		out := make([]r2.ETagCond, 0, len(in))
		for _, e := range in {
			out = append(out, r2.ETagCond(e))
		}
		return out
	}
	ms := func(v *float64) *time.Time {
		if v == nil {
			return nil
		}
		t := time.UnixMilli(int64(*v))
		return &t
	}
	return &r2.Conditional{ETagMatches: etags(c.ETagMatches), ETagDoesNotMatch: etags(c.ETagDoesNotMatch),
		UploadedBefore: ms(c.UploadedBefore), UploadedAfter: ms(c.UploadedAfter), SecondsGranularity: c.SecondsGranularity}
}

type httpJSON struct {
	ContentType        string   `json:"contentType"`
	ContentLanguage    string   `json:"contentLanguage"`
	ContentDisposition string   `json:"contentDisposition"`
	ContentEncoding    string   `json:"contentEncoding"`
	CacheControl       string   `json:"cacheControl"`
	CacheExpiry        *float64 `json:"cacheExpiry"`
}

func (h httpJSON) metadata() r2.HTTPMetadata {
	m := r2.HTTPMetadata{ContentType: h.ContentType, ContentLanguage: h.ContentLanguage,
		ContentDisposition: h.ContentDisposition, ContentEncoding: h.ContentEncoding, CacheControl: h.CacheControl}
	if h.CacheExpiry != nil {
		t := time.UnixMilli(int64(*h.CacheExpiry)).UTC()
		m.CacheExpiry = &t
	}
	return m
}

type optsJSON struct {
	Range          *r2.GetRange      `json:"-"`
	RangeRaw       *rangeJSON        `json:"range"`
	OnlyIf         *condJSON         `json:"onlyIf"`
	HTTPMetadata   httpJSON          `json:"httpMetadata"`
	CustomMetadata map[string]string `json:"customMetadata"`
	CustomKeys     []string          `json:"customKeys"` // customMetadata's keys in the script's order
	Checksums      map[string]string `json:"checksums"`
	StorageClass   string            `json:"storageClass"`
	Prefix         string            `json:"prefix"`
	Delimiter      string            `json:"delimiter"`
	Cursor         string            `json:"cursor"`
	StartAfter     string            `json:"startAfter"`
	Limit          *int              `json:"limit"`
	Include        []string          `json:"include"`
}

type rangeJSON struct {
	Offset *int64 `json:"offset"`
	Length *int64 `json:"length"`
	Suffix *int64 `json:"suffix"`
}

func parseOpts(vm *goja.Runtime, v goja.Value) optsJSON {
	var o optsJSON
	if goja.IsUndefined(v) {
		return o // no options
	}
	if err := json.Unmarshal([]byte(v.String()), &o); err != nil {
		panic(vm.NewTypeError("r2: options: %v", err))
	}
	return o
}

// body reads a put value: a string, a Uint8Array binding.js made, or a
// ReadableStream read off the loop.
func (n natives) body(vm *goja.Runtime, v goja.Value) (io.ReadCloser, int64) {
	if goja.IsString(v) {
		s := v.String()
		return bytesBody{bytes.NewReader([]byte(s))}, int64(len(s))
	}
	if obj, ok := v.(*goja.Object); ok {
		if obj.ExportType() == typeBytes {
			var ab []byte
			if err := vm.ExportTo(obj, &ab); err != nil {
				panic(vm.NewTypeError("r2: body: %v", err))
			}
			return bytesBody{bytes.NewReader(ab)}, int64(len(ab))
		}
		rc, size, err := n.h.StreamReader(obj)
		if err != nil {
			panic(vm.NewTypeError("r2: body: %v", err))
		}
		return rc, size
	}
	panic(vm.NewTypeError("r2: body of an unexpected type"))
}

// disturbed(stream) -> bool: whether an object's body was read or taken.
func (n natives) disturbed(call goja.FunctionCall) goja.Value {
	return n.h.VM().ToValue(n.h.StreamDisturbed(call.Argument(0)))
}

func (n natives) head(call goja.FunctionCall) goja.Value {
	key := call.Argument(0).String()
	return n.async(func(ctx context.Context) settle {
		o, err := n.b.Head(ctx, key)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return n.objectValue(vm, o, answerHead, nil), nil
		}
	})
}

// get(key, opts) -> null | R2Object (a condition that did not hold) | R2ObjectBody
func (n natives) get(call goja.FunctionCall) goja.Value {
	vm := n.h.VM()
	key := call.Argument(0).String()
	o := parseOpts(vm, call.Argument(1))
	var opts r2.GetOptions
	if o.RangeRaw != nil {
		opts.Range = &r2.GetRange{Offset: o.RangeRaw.Offset, Length: o.RangeRaw.Length, Suffix: o.RangeRaw.Suffix}
	}
	opts.OnlyIf = o.OnlyIf.conditional()
	h := n.h
	return n.async(func(ctx context.Context) settle {
		obj, rc, err := n.b.Get(ctx, key, opts)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			if obj == nil {
				return goja.Null(), nil
			}
			if rc == nil {
				return n.objectValue(vm, obj, answerGet, nil), nil
			}
			stream, err := h.ReadableStream(worker.SizedBody(rc, obj.Range.Length))
			if err != nil {
				return nil, err
			}
			return n.objectValue(vm, obj, answerGet, stream), nil
		}
	})
}

// put(key, body, opts) -> R2Object | null
func (n natives) put(call goja.FunctionCall) goja.Value {
	vm := n.h.VM()
	key := call.Argument(0).String()
	o := parseOpts(vm, call.Argument(2))
	po := r2.PutOptions{HTTP: o.HTTPMetadata.metadata(), Custom: o.CustomMetadata, CustomKeys: o.CustomKeys, StorageClass: o.StorageClass,
		OnlyIf: o.OnlyIf.conditional(), Checksums: map[string][]byte{}}
	for f, hx := range o.Checksums {
		b, err := hex.DecodeString(hx)
		if err != nil {
			panic(vm.NewTypeError("r2: checksum %s: %v", f, err))
		}
		po.Checksums[f] = b
	}
	rc, size := n.body(vm, call.Argument(1))
	return n.async(func(ctx context.Context) settle {
		obj, err := n.b.Put(ctx, key, rc, size, po)
		rc.Close()
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return n.objectValue(vm, obj, answerPut, nil), nil
		}
	})
}

// delete(keys)
func (n natives) delete(call goja.FunctionCall) goja.Value {
	vm := n.h.VM()
	var keys []string
	if err := vm.ExportTo(call.Argument(0), &keys); err != nil {
		panic(vm.NewTypeError("r2 delete: %v", err))
	}
	return n.async(func(ctx context.Context) settle {
		err := n.b.Delete(ctx, keys...)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return goja.Undefined(), nil
		}
	})
}

// list(opts) -> { objects, delimitedPrefixes, truncated, cursor? }
func (n natives) list(call goja.FunctionCall) goja.Value {
	vm := n.h.VM()
	o := parseOpts(vm, call.Argument(0))
	lo := r2.ListOptions{Prefix: o.Prefix, Delimiter: o.Delimiter, Cursor: o.Cursor, StartAfter: o.StartAfter}
	if o.Limit != nil {
		lo.Limit = *o.Limit
		if lo.Limit == 0 {
			lo.Limit = -1 // an explicit 0 is refused, as R2 does
		}
	}
	for _, i := range o.Include {
		lo.HTTP = lo.HTTP || i == "httpMetadata"
		lo.Custom = lo.Custom || i == "customMetadata"
	}
	return n.async(func(ctx context.Context) settle {
		res, err := n.b.List(ctx, lo)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			objs := make([]any, len(res.Objects))
			for i, obj := range res.Objects {
				o := *obj
				if !lo.HTTP {
					o.HTTP = r2.HTTPMetadata{}
				}
				if !lo.Custom {
					o.Custom = nil
				}
				objs[i] = n.objectValue(vm, &o, answerPut, nil)
			}
			prefixes := make([]any, len(res.DelimitedPrefixes))
			for i, p := range res.DelimitedPrefixes {
				prefixes[i] = p
			}
			cursor := goja.Undefined()
			if res.Truncated {
				cursor = vm.ToValue(res.Cursor)
			}
			out := vm.NewObject()
			out.Set("objects", vm.NewArray(objs...))
			out.Set("truncated", res.Truncated)
			out.Set("cursor", cursor)
			out.Set("delimitedPrefixes", vm.NewArray(prefixes...))
			return out, nil
		}
	})
}

// create(key, opts) -> uploadId
func (n natives) create(call goja.FunctionCall) goja.Value {
	vm := n.h.VM()
	key := call.Argument(0).String()
	o := parseOpts(vm, call.Argument(1))
	mo := r2.MultipartOptions{HTTP: o.HTTPMetadata.metadata(), Custom: o.CustomMetadata, CustomKeys: o.CustomKeys, StorageClass: o.StorageClass}
	return n.async(func(ctx context.Context) settle {
		id, err := n.b.CreateMultipart(ctx, key, mo)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return vm.ToValue(id), nil
		}
	})
}

// uploadPart(key, id, n, body) -> etag
func (n natives) uploadPart(call goja.FunctionCall) goja.Value {
	vm := n.h.VM()
	key, id, num := call.Argument(0).String(), call.Argument(1).String(), int(call.Argument(2).ToInteger())
	rc, size := n.body(vm, call.Argument(3))
	return n.async(func(ctx context.Context) settle {
		var etag string
		var err error
		if size < 0 {
			// A stream of unknown length: a part is at most 5 GiB, so it is
			// read into memory first. Prefer bodies of known length.
			var data []byte
			data, err = io.ReadAll(io.LimitReader(rc, 5<<30))
			if err == nil {
				etag, err = n.b.UploadPart(ctx, key, id, num, bytes.NewReader(data), int64(len(data)))
			}
		} else {
			etag, err = n.b.UploadPart(ctx, key, id, num, rc, size)
		}
		rc.Close()
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return vm.ToValue(etag), nil
		}
	})
}

// complete(key, id, partsJSON) -> R2Object
func (n natives) complete(call goja.FunctionCall) goja.Value {
	vm := n.h.VM()
	key, id := call.Argument(0).String(), call.Argument(1).String()
	var raw []struct {
		N    int    `json:"n"`
		ETag string `json:"etag"`
	}
	if err := json.Unmarshal([]byte(call.Argument(2).String()), &raw); err != nil {
		panic(vm.NewTypeError("r2 complete: %v", err))
	}
	parts := make([]bucket.Part, len(raw))
	for i, p := range raw {
		parts[i] = bucket.Part{N: p.N, ETag: p.ETag}
	}
	return n.async(func(ctx context.Context) settle {
		obj, err := n.b.CompleteMultipart(ctx, key, id, parts)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return n.objectValue(vm, obj, answerPut, nil), nil
		}
	})
}

// abort(key, id)
func (n natives) abort(call goja.FunctionCall) goja.Value {
	key, id := call.Argument(0).String(), call.Argument(1).String()
	return n.async(func(ctx context.Context) settle {
		err := n.b.AbortMultipart(ctx, key, id)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return goja.Undefined(), nil
		}
	})
}
