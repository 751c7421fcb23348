// Package kvjs is the JavaScript side of Workers KV: the env value of a
// kv_namespaces binding (a KvNamespace, binding.js) over a cell.Caller.
// It is the only KV code that knows goja and package worker; package kv
// stays free of the JS engine.
package kvjs

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dop251/goja"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/kv"
	"github.com/celldgo/celld/worker"
)

//go:embed binding.js
var bindingSource string

// bindingProgram is compiled once and run in every isolate.
var bindingProgram = goja.MustCompile("kv/kvjs/binding.js", bindingSource, true)

// Bindings are the env values of a deployment's kv_namespaces, each
// reaching its namespace's cell through c.
func Bindings(m *deploy.Manifest, c cell.Caller) map[string]worker.Binding {
	out := map[string]worker.Binding{}
	for _, ns := range m.KVNamespaces {
		out[ns.Binding] = Binding(c, ns.ID)
	}
	return out
}

// Binding is the env value of a kv_namespaces binding: a KvNamespace whose
// calls go through c to the namespace's cell, kv:<namespaceID>. Argument
// errors are thrown as workerd throws them (by the JavaScript half,
// binding.js); a failure the namespace reports rejects with a plain Error
// carrying its text.
func Binding(c cell.Caller, namespaceID string) worker.Binding {
	client := kv.NewClient(c, namespaceID)
	return func(h *worker.Host) (goja.Value, error) {
		vm := h.VM()
		f, err := vm.RunProgram(bindingProgram)
		if err != nil {
			return nil, fmt.Errorf("kv binding: %w", err)
		}
		factory, ok := goja.AssertFunction(f)
		if !ok {
			return nil, fmt.Errorf("kv binding: binding.js is not a function")
		}
		n := natives{h: h, client: client}
		obj := vm.NewObject()
		for name, fn := range map[string]func(goja.FunctionCall) goja.Value{
			"get":     n.get,
			"getBulk": n.getBulk,
			"put":     n.put,
			"delete":  n.delete,
			"list":    n.list,
		} {
			if err := obj.Set(name, fn); err != nil {
				return nil, fmt.Errorf("kv binding: %w", err)
			}
		}
		ns, err := factory(goja.Undefined(), obj)
		if err != nil {
			return nil, fmt.Errorf("kv binding: %w", err)
		}
		return ns, nil
	}
}

// natives are the functions binding.js calls. Each returns a promise
// settled on the isolate's loop; the request runs off it.
type natives struct {
	h      *worker.Host
	client *kv.Client
}

type settle = func(*goja.Runtime) (goja.Value, error)

// async runs work off the loop under the isolate's context.
func (n natives) async(work func(ctx context.Context) settle) goja.Value {
	return n.h.AsyncContext(work)
}

// value is a stored value for JavaScript: a string when asked as text and
// valid UTF-8 (the common case, decoded here), otherwise an ArrayBuffer
// (binding.js decodes invalid UTF-8 with TextDecoder's replacement rules).
func value(vm *goja.Runtime, b []byte, asText bool) goja.Value {
	if asText && utf8.Valid(b) {
		return vm.ToValue(string(b))
	}
	return vm.ToValue(vm.NewArrayBuffer(b))
}

func metadata(vm *goja.Runtime, m json.RawMessage) goja.Value {
	if m == nil {
		return goja.Null()
	}
	return vm.ToValue(string(m))
}

// get(key, asText) -> null | [value, metadataJSON | null]
func (n natives) get(call goja.FunctionCall) goja.Value {
	key, asText := call.Argument(0).String(), call.Argument(1).ToBoolean()
	return n.async(func(ctx context.Context) settle {
		e, err := n.client.Get(ctx, key)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			if !e.Found {
				return goja.Null(), nil
			}
			return vm.NewArray(value(vm, e.Value, asText), metadata(vm, e.Metadata)), nil
		}
	})
}

// getBulk(keys) -> [null | [text, metadataJSON | null], ...] in key order
func (n natives) getBulk(call goja.FunctionCall) goja.Value {
	var keys []string
	vm := n.h.VM()
	if err := vm.ExportTo(call.Argument(0), &keys); err != nil {
		panic(vm.NewTypeError("kv getBulk: %v", err))
	}
	return n.async(func(ctx context.Context) settle {
		es, err := n.client.GetBulk(ctx, keys)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			out := make([]any, len(es))
			for i, e := range es {
				if !e.Found {
					out[i] = goja.Null()
					continue
				}
				out[i] = vm.NewArray(value(vm, e.Value, true), metadata(vm, e.Metadata))
			}
			return vm.NewArray(out...), nil
		}
	})
}

// put(key, string | Uint8Array, expiration?, expirationTtl?, metadataJSON?)
func (n natives) put(call goja.FunctionCall) goja.Value {
	vm := n.h.VM()
	p := kv.Pair{Key: call.Argument(0).String()}
	switch v := call.Argument(1).Export().(type) {
	case string:
		p.Value = []byte(v)
	default:
		// binding.js passes a Uint8Array of its own: nothing else holds
		// it, so it is read without a copy.
		if err := vm.ExportTo(call.Argument(1), &p.Value); err != nil {
			panic(vm.NewTypeError("kv put: %v", err))
		}
	}
	p.Expiration = optionalInt(call.Argument(2))
	p.ExpirationTTL = optionalInt(call.Argument(3))
	if m := call.Argument(4); !goja.IsUndefined(m) && !goja.IsNull(m) {
		p.Metadata = json.RawMessage(m.String())
	}
	return n.async(func(ctx context.Context) settle {
		err := n.client.Put(ctx, p)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return goja.Undefined(), nil
		}
	})
}

func optionalInt(v goja.Value) *int64 {
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	i := v.ToInteger()
	return &i
}

// delete(key)
func (n natives) delete(call goja.FunctionCall) goja.Value {
	key := call.Argument(0).String()
	return n.async(func(ctx context.Context) settle {
		err := n.client.Delete(ctx, key)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return goja.Undefined(), nil
		}
	})
}

// list(prefix, cursor, limit) -> the page as JSON text
func (n natives) list(call goja.FunctionCall) goja.Value {
	o := kv.ListOptions{Prefix: call.Argument(0).String(), Cursor: call.Argument(1).String(), Limit: int(call.Argument(2).ToInteger())}
	return n.async(func(ctx context.Context) settle {
		res, err := n.client.List(ctx, o)
		var text []byte
		if err == nil {
			text, err = res.JSON()
		}
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return vm.ToValue(string(text)), nil
		}
	})
}
