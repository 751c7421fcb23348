package r2js

import (
	"encoding/hex"
	"maps"
	"slices"

	"github.com/dop251/goja"

	"github.com/celldgo/celld/r2"
)

// shapes are what binding.js hands Go when it starts (native.shapes): the
// prototypes of the values a call answers with and the symbols of their
// hidden state. Go builds R2Object, R2ObjectBody and R2Checksums values
// directly on them — own properties in the order workerd gives them —
// so a get or head makes no record for a script constructor to copy.
type shapes struct {
	object, objectBody, checksums *goja.Object
	hex, body                     *goja.Symbol
	date                          goja.Constructor
}

// setShapes is native.shapes(R2Object.prototype, R2ObjectBody.prototype,
// R2Checksums.prototype, kHex, kBody, Date).
func (n natives) setShapes(call goja.FunctionCall) goja.Value {
	vm := n.h.VM()
	objs := make([]*goja.Object, 3)
	for i := range objs {
		o, ok := call.Argument(i).(*goja.Object)
		if !ok {
			panic(vm.NewTypeError("r2: shapes: argument %d is not an object", i))
		}
		objs[i] = o
	}
	hexSym, ok1 := call.Argument(3).(*goja.Symbol)
	bodySym, ok2 := call.Argument(4).(*goja.Symbol)
	date, ok3 := goja.AssertConstructor(call.Argument(5))
	if !ok1 || !ok2 || !ok3 {
		panic(vm.NewTypeError("r2: shapes: bad symbols or Date"))
	}
	*n.s = shapes{object: objs[0], objectBody: objs[1], checksums: objs[2], hex: hexSym, body: bodySym, date: date}
	return goja.Undefined()
}

// hashOrder is the order of a Checksums' own properties, as workerd
// defines them (every hash, undefined when the object has none).
var hashOrder = []string{"sha512", "sha384", "sha256", "sha1", "md5"}

// What an object value answers: its range is absent after a put or in a
// list, the whole object after a head, the span read after a get.
type answer int

const (
	answerPut answer = iota
	answerHead
	answerGet
)

// readonly defines name on obj as workerd defines a result's properties:
// read-only, enumerable, configurable.
func readonly(obj *goja.Object, name string, v goja.Value) {
	obj.DefineDataProperty(name, v, goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_TRUE)
}

// objectValue is o as a HeadResult (R2Object), or null. With a body (a
// get's stream) it is a GetResult (R2ObjectBody). Its own properties come
// in workerd's order.
func (n natives) objectValue(vm *goja.Runtime, o *r2.Object, kind answer, body goja.Value) goja.Value {
	if o == nil {
		return goja.Null()
	}
	s := n.s
	obj := vm.NewObject()
	if body != nil {
		obj.SetPrototype(s.objectBody)
		obj.DefineDataPropertySymbol(s.body, body, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	} else {
		obj.SetPrototype(s.object)
	}
	readonly(obj, "ssecKeyMd5", goja.Undefined())
	readonly(obj, "storageClass", vm.ToValue(o.StorageClass))
	rng := goja.Undefined()
	switch {
	case kind == answerHead:
		rng = rangeValue(vm, 0, o.Size)
	case kind == answerGet && o.Range != nil:
		rng = rangeValue(vm, o.Range.Offset, o.Range.Length)
	}
	readonly(obj, "range", rng)
	readonly(obj, "customMetadata", orderedStrings(vm, o.Custom, o.CustomKeys))
	hm := vm.NewObject()
	for _, f := range [...]struct{ name, v string }{
		{"contentType", o.HTTP.ContentType}, {"contentLanguage", o.HTTP.ContentLanguage},
		{"contentDisposition", o.HTTP.ContentDisposition}, {"contentEncoding", o.HTTP.ContentEncoding},
		{"cacheControl", o.HTTP.CacheControl},
	} {
		if f.v != "" {
			hm.Set(f.name, f.v)
		}
	}
	if o.HTTP.CacheExpiry != nil {
		hm.Set("cacheExpiry", n.dateValue(vm, o.HTTP.CacheExpiry.UnixMilli()))
	}
	readonly(obj, "httpMetadata", hm)
	readonly(obj, "uploaded", n.dateValue(vm, o.Uploaded.UnixMilli()))
	readonly(obj, "checksums", n.checksumsValue(vm, o.Checksums))
	readonly(obj, "httpEtag", vm.ToValue(o.HTTPETag()))
	readonly(obj, "etag", vm.ToValue(o.ETag))
	readonly(obj, "size", vm.ToValue(o.Size))
	readonly(obj, "version", vm.ToValue(o.Version))
	readonly(obj, "key", vm.ToValue(o.Key))
	return obj
}

func rangeValue(vm *goja.Runtime, offset, length int64) goja.Value {
	rg := vm.NewObject()
	rg.Set("offset", offset)
	rg.Set("length", length)
	return rg
}

// checksumsValue is an R2Checksums: each hash's bytes as an ArrayBuffer,
// and the hex strings (sorted by name) its toJSON gives.
func (n natives) checksumsValue(vm *goja.Runtime, hexes map[string]string) *goja.Object {
	c := vm.NewObject()
	c.SetPrototype(n.s.checksums)
	c.DefineDataPropertySymbol(n.s.hex, sortedStrings(vm, hexes), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	for _, f := range hashOrder {
		v := goja.Undefined()
		if h, ok := hexes[f]; ok {
			b, err := hex.DecodeString(h)
			if err != nil {
				panic(vm.NewTypeError("r2: checksum %s: %v", f, err))
			}
			v = vm.ToValue(vm.NewArrayBuffer(b))
		}
		readonly(c, f, v)
	}
	return c
}

func (n natives) dateValue(vm *goja.Runtime, ms int64) goja.Value {
	d, err := n.s.date(nil, vm.ToValue(ms))
	if err != nil {
		panic(err)
	}
	return d
}

// sortedStrings is m as an object whose keys are in sorted order (a
// script sees the order in Object.keys and JSON.stringify; Go's map order
// is random).
func sortedStrings(vm *goja.Runtime, m map[string]string) *goja.Object {
	return orderedStrings(vm, m, nil)
}

// orderedStrings is m as an object whose keys come in the order of keys
// (as they were written), then any others sorted.
func orderedStrings(vm *goja.Runtime, m map[string]string, keys []string) *goja.Object {
	obj := vm.NewObject()
	// Written keys are tracked here, not by asking obj: Get would find
	// toString or constructor on the prototype and skip them.
	set := make(map[string]bool, len(m))
	for _, k := range keys {
		if v, ok := m[k]; ok && !set[k] {
			obj.Set(k, v)
			set[k] = true
		}
	}
	if len(set) == len(m) {
		return obj
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !set[k] {
			obj.Set(k, m[k])
		}
	}
	return obj
}
