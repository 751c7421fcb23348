package worker

import (
	"net/http"
	"sort"
	"strings"

	"github.com/dop251/goja"
)

// The natives behind the Cache API (prelude/45_cache.js). The store is
// Config.Cache, one per node (httpcache); without one nothing is ever
// stored, as with workerd's cache disabled. The calls are synchronous:
// the store is memory.

func registerCacheNatives(set func(string, nativeFunc)) {
	// cachePut(ns, url, status, flatHeaders, body) -> stored
	set("cachePut", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.rt.cfg.Cache
		if c == nil {
			return iso.vm.ToValue(false)
		}
		body := iso.bytesArg(call.Argument(4))
		ok := c.Put(call.Argument(0).String(), call.Argument(1).String(), int(call.Argument(2).ToInteger()),
			flatHeader(call.Argument(3)), body)
		return iso.vm.ToValue(ok)
	})
	// cacheMatch(ns, url, flatRequestHeaders) -> null | {status, headers, body}
	set("cacheMatch", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.rt.cfg.Cache
		if c == nil {
			return goja.Null()
		}
		hit, ok := c.Match(call.Argument(0).String(), call.Argument(1).String(), flatHeader(call.Argument(2)))
		if !ok {
			return goja.Null()
		}
		vm := iso.vm
		out := vm.NewObject()
		_ = out.Set("status", hit.Status)
		names := make([]string, 0, len(hit.Header))
		for k := range hit.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		flat := make([]any, 0, 2*len(names))
		for _, k := range names {
			for _, v := range hit.Header[k] {
				flat = append(flat, strings.ToLower(k), v)
			}
		}
		_ = out.Set("headers", vm.NewArray(flat...))
		_ = out.Set("body", vm.NewArrayBuffer(append([]byte{}, hit.Body...)))
		return out
	})
	// cacheDelete(ns, url) -> whether a live entry was removed
	set("cacheDelete", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.rt.cfg.Cache
		if c == nil {
			return iso.vm.ToValue(false)
		}
		return iso.vm.ToValue(c.Delete(call.Argument(0).String(), call.Argument(1).String()))
	})
}

// flatHeader reads a [name, value, ...] array.
func flatHeader(v goja.Value) http.Header {
	h := http.Header{}
	obj, ok := v.(*goja.Object)
	if !ok {
		return h
	}
	n := int(obj.Get("length").ToInteger())
	for i := 0; i+1 < n; i += 2 {
		h.Add(obj.Get(itoa(i)).String(), obj.Get(itoa(i+1)).String())
	}
	return h
}
