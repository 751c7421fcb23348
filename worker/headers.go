package worker

import (
	"reflect"
	"strings"

	"github.com/dop251/goja"
)

// Headers is native: an instance is a goja dynamic object over a Go list
// of (lowercase name, value) entries kept sorted by name (values of one
// name in the order they were added), so a request's or a response's
// headers are one small Go value instead of a JavaScript object, a Map and
// an array per name, iteration needs no sort, and Go reads a response's
// headers without a JavaScript array in between. The methods live on
// Headers.prototype as native functions; 50_headers.js gives the class its
// toStringTag and the sequence form of the constructor's argument.
//
// Names and values are kept as the JavaScript strings they came as (a
// lowercase name from a small per-isolate table), so get() hands back the
// string it was given without building one.

// headerEntry is one header of a Headers object.
type headerEntry struct {
	name   string     // lowercase
	nameV  goja.Value // the same, as a JavaScript string
	value  goja.Value // a JavaScript string, validated and trimmed
	valueS string
}

// jsHeaders is the state of one Headers object.
type jsHeaders struct {
	entries   []headerEntry // sorted by name, stable
	immutable bool
	dynProps  // properties script set on the object (rare)
}

// ownProps are the own properties of a native object, in the order they
// were added.
type ownProps struct {
	keys []string
	vals map[string]goja.Value
}

// find returns the index of name's first entry and whether there is one;
// without one, the index is where it would go.
func (h *jsHeaders) find(name string) (int, bool) {
	for i := range h.entries {
		if c := strings.Compare(h.entries[i].name, name); c >= 0 {
			return i, c == 0
		}
	}
	return len(h.entries), false
}

// add appends a value to name's values.
func (h *jsHeaders) add(e headerEntry) {
	i, _ := h.find(e.name)
	for i < len(h.entries) && h.entries[i].name == e.name {
		i++
	}
	if i == len(h.entries) {
		h.entries = append(h.entries, e)
		return
	}
	h.entries = append(h.entries, headerEntry{})
	copy(h.entries[i+1:], h.entries[i:])
	h.entries[i] = e
}

// set makes e the only value of its name.
func (h *jsHeaders) set(e headerEntry) {
	i, ok := h.find(e.name)
	if !ok {
		h.add(e)
		return
	}
	h.entries[i] = e
	h.cut(i+1, e.name)
}

// cut removes the entries of name from index i on.
func (h *jsHeaders) cut(i int, name string) {
	j := i
	for j < len(h.entries) && h.entries[j].name == name {
		j++
	}
	if j > i {
		h.entries = append(h.entries[:i], h.entries[j:]...)
	}
}

// headersClass is an isolate's Headers: its prototype and what its
// natives share.
type headersClass struct {
	iso     *isolate
	ctor    *goja.Object
	proto   *goja.Object
	iterate goja.Callable // Array.prototype.values
	fill    goja.Callable // fills a Headers from a sequence of pairs (50_headers.js)
	known   map[string]goja.Value
}

// the Headers of an isolate, made when 50_headers.js first runs.
func (iso *isolate) headersClass() *headersClass {
	if iso.hdrs == nil {
		panic(iso.vm.NewTypeError("Headers is not loaded"))
	}
	return iso.hdrs
}

// headersOf returns the state of v when it is a Headers object.
func headersOf(v goja.Value) (*jsHeaders, bool) {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ExportType() != typeJSHeaders {
		return nil, false
	}
	h, ok := obj.Export().(*jsHeaders)
	return h, ok
}

var typeJSHeaders = reflect.TypeOf((*jsHeaders)(nil))

func (c *headersClass) this(call goja.FunctionCall) *jsHeaders {
	h, ok := headersOf(call.This)
	if !ok {
		panic(c.iso.vm.NewTypeError("Illegal invocation"))
	}
	return h
}

// newObject wraps h as a Headers object with prototype proto.
func (c *headersClass) newObject(h *jsHeaders, proto *goja.Object) *goja.Object {
	o := c.iso.vm.NewDynamicObject(h)
	if proto == nil {
		proto = c.proto
	}
	if err := o.SetPrototype(proto); err != nil {
		panic(err)
	}
	return o
}

// isTokenByte tells the bytes of an HTTP token (a header name).
var isTokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// name validates a header name and returns it lowercase, as a Go and a
// JavaScript string. Names seen before come from a small table.
func (c *headersClass) name(v goja.Value) (string, goja.Value) {
	return c.nameOf(v.String(), v)
}

// nameOf is name for a name given as a Go string s, and as the
// JavaScript value v when there is one (nil otherwise).
func (c *headersClass) nameOf(s string, v goja.Value) (string, goja.Value) {
	if lv, ok := c.known[s]; ok {
		return lv.String(), lv
	}
	if s == "" {
		panic(c.iso.vm.NewTypeError("Invalid header name."))
	}
	upper := false
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !isTokenByte[b] {
			panic(c.iso.vm.NewTypeError("Invalid header name."))
		}
		upper = upper || ('A' <= b && b <= 'Z')
	}
	var lv goja.Value
	if upper || v == nil || !goja.IsString(v) {
		lv = c.iso.vm.ToValue(strings.ToLower(s))
	} else {
		lv = v
	}
	if len(c.known) < 1000 {
		c.known[s] = lv
	}
	return lv.String(), lv
}

// value validates a header value: leading and trailing HTTP whitespace
// removed, no NUL, CR or LF.
func (c *headersClass) value(v goja.Value) (goja.Value, string) {
	s := v.String()
	t := strings.Trim(s, "\t\n\r ")
	if strings.ContainsAny(t, "\x00\r\n") {
		panic(c.iso.vm.NewTypeError("Invalid header value."))
	}
	if len(t) == len(s) && goja.IsString(v) {
		return v, s
	}
	return c.iso.vm.ToValue(t), t
}

func (c *headersClass) entry(name, value goja.Value) headerEntry {
	n, nv := c.name(name)
	v, vs := c.value(value)
	return headerEntry{name: n, nameV: nv, value: v, valueS: vs}
}

func (c *headersClass) checkMutable(h *jsHeaders) {
	if h.immutable {
		panic(c.iso.vm.NewTypeError("Can't modify immutable headers."))
	}
}

// joined is the value of the n entries of one name from es[0] on.
func (c *headersClass) joined(es []headerEntry) goja.Value {
	if len(es) == 1 {
		return es[0].value
	}
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.valueS)
	}
	return c.iso.vm.ToValue(b.String())
}

// run of the entries of h from i on that share its name.
func run(es []headerEntry, i int) int {
	j := i + 1
	for j < len(es) && es[j].name == es[i].name {
		j++
	}
	return j
}

// pairs calls f with each (name, value) as iteration yields them: sorted,
// values of one name joined, each Set-Cookie on its own.
func (c *headersClass) pairs(h *jsHeaders, f func(name, value goja.Value)) {
	es := h.entries
	for i := 0; i < len(es); {
		j := run(es, i)
		if es[i].name == "set-cookie" {
			for k := i; k < j; k++ {
				f(es[k].nameV, es[k].value)
			}
		} else {
			f(es[i].nameV, c.joined(es[i:j]))
		}
		i = j
	}
}

// fillFrom adds init (Headers, a sequence of pairs or a record) to h,
// the state of obj.
func (c *headersClass) fillFrom(obj *goja.Object, h *jsHeaders, init goja.Value) {
	if goja.IsUndefined(init) || goja.IsNull(init) {
		return
	}
	if src, ok := headersOf(init); ok {
		h.entries = append(h.entries[:0:0], src.entries...)
		return
	}
	o, ok := init.(*goja.Object)
	if !ok {
		panic(c.iso.vm.NewTypeError("Failed to construct 'Headers': The provided value is not of type '(record<ByteString, ByteString> or sequence<sequence<ByteString>>)'."))
	}
	if it := o.GetSymbol(goja.SymIterator); it != nil {
		if _, isFn := goja.AssertFunction(it); isFn {
			if _, err := c.fill(goja.Undefined(), obj, init); err != nil {
				panic(err)
			}
			return
		}
	}
	for _, k := range o.Keys() {
		n, nv := c.nameOf(k, nil)
		v, vs := c.value(o.Get(k))
		h.add(headerEntry{name: n, nameV: nv, value: v, valueS: vs})
	}
}

// install makes the class: the constructor, its prototype and methods.
func (c *headersClass) install(ctor *goja.Object, fill goja.Callable) {
	iso := c.iso
	vm := iso.vm
	c.fill = fill
	c.known = map[string]goja.Value{}
	c.ctor = ctor
	c.proto = ctor.Get("prototype").(*goja.Object)
	arrayProto := vm.Get("Array").(*goja.Object).Get("prototype").(*goja.Object)
	c.iterate, _ = goja.AssertFunction(arrayProto.Get("values"))
	method := func(name string, length int, f func(call goja.FunctionCall) goja.Value) goja.Value {
		fn := vm.ToValue(f)
		named(vm, fn.(*goja.Object), name, length)
		if err := c.proto.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			panic(err)
		}
		return fn
	}
	method("append", 2, func(call goja.FunctionCall) goja.Value {
		h := c.this(call)
		e := c.entry(call.Argument(0), call.Argument(1))
		c.checkMutable(h)
		h.add(e)
		return goja.Undefined()
	})
	method("delete", 1, func(call goja.FunctionCall) goja.Value {
		h := c.this(call)
		name, _ := c.name(call.Argument(0))
		c.checkMutable(h)
		if i, ok := h.find(name); ok {
			h.cut(i, name)
		}
		return goja.Undefined()
	})
	method("get", 1, func(call goja.FunctionCall) goja.Value {
		h := c.this(call)
		name, _ := c.name(call.Argument(0))
		i, ok := h.find(name)
		if !ok {
			return goja.Null()
		}
		return c.joined(h.entries[i:run(h.entries, i)])
	})
	method("getAll", 1, func(call goja.FunctionCall) goja.Value {
		h := c.this(call)
		if name, _ := c.name(call.Argument(0)); name != "set-cookie" {
			panic(vm.NewTypeError(`getAll() can only be used with the header name "Set-Cookie".`))
		}
		return c.setCookies(h)
	})
	method("getSetCookie", 0, func(call goja.FunctionCall) goja.Value {
		return c.setCookies(c.this(call))
	})
	method("has", 1, func(call goja.FunctionCall) goja.Value {
		h := c.this(call)
		name, _ := c.name(call.Argument(0))
		_, ok := h.find(name)
		return vm.ToValue(ok)
	})
	method("set", 2, func(call goja.FunctionCall) goja.Value {
		h := c.this(call)
		e := c.entry(call.Argument(0), call.Argument(1))
		c.checkMutable(h)
		h.set(e)
		return goja.Undefined()
	})
	method("forEach", 1, func(call goja.FunctionCall) goja.Value {
		h := c.this(call)
		cb, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(vm.NewTypeError("Headers.forEach: callback must be a function"))
		}
		var snap []goja.Value
		c.pairs(h, func(n, v goja.Value) { snap = append(snap, n, v) })
		for i := 0; i < len(snap); i += 2 {
			if _, err := cb(call.Argument(1), snap[i+1], snap[i], call.This); err != nil {
				panic(err)
			}
		}
		return goja.Undefined()
	})
	iter := func(what int) func(call goja.FunctionCall) goja.Value {
		return func(call goja.FunctionCall) goja.Value {
			h := c.this(call)
			var out []any
			c.pairs(h, func(n, v goja.Value) {
				switch what {
				case 0:
					out = append(out, n)
				case 1:
					out = append(out, v)
				default:
					out = append(out, vm.NewArray(n, v))
				}
			})
			it, err := c.iterate(vm.NewArray(out...))
			if err != nil {
				panic(err)
			}
			return it
		}
	}
	method("keys", 0, iter(0))
	method("values", 0, iter(1))
	entries := method("entries", 0, iter(2))
	if err := c.proto.DefineDataPropertySymbol(goja.SymIterator, entries, goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		panic(err)
	}
}

func (c *headersClass) setCookies(h *jsHeaders) goja.Value {
	var out []any
	if i, ok := h.find("set-cookie"); ok {
		for j := run(h.entries, i); i < j; i++ {
			out = append(out, h.entries[i].value)
		}
	}
	return c.iso.vm.NewArray(out...)
}

// named gives a native function its JavaScript name and length.
func named(vm *goja.Runtime, fn *goja.Object, name string, length int) {
	_ = fn.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = fn.DefineDataProperty("length", vm.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// fromFlat builds Headers from trusted [name, value, ...] pairs (names
// lowercase, values valid): a fetch() response's, an object's request's.
// Headers Go made already (headersValue) are returned as they are.
func (c *headersClass) fromFlat(flat goja.Value, immutable bool) *goja.Object {
	h := &jsHeaders{immutable: immutable}
	obj, ok := flat.(*goja.Object)
	if !ok {
		return c.newObject(h, nil)
	}
	if obj.ExportType() == typeJSHeaders {
		return obj // made by Go (headersValue)
	}
	n := int(obj.Get("length").ToInteger())
	h.entries = make([]headerEntry, 0, n/2)
	for i := 0; i+1 < n; i += 2 {
		nv, v := obj.Get(itoa(i)), obj.Get(itoa(i+1))
		name := nv.String()
		if lv, ok := c.known[name]; ok {
			nv = lv
		}
		h.add(headerEntry{name: name, nameV: nv, value: v, valueS: v.String()})
	}
	return c.newObject(h, nil)
}

func registerHeadersNatives(set func(string, nativeFunc)) {
	// headersInstall(Headers, fillPairs) puts the methods on
	// Headers.prototype.
	set("headersInstall", func(iso *isolate, call goja.FunctionCall) goja.Value {
		ctor, _ := call.Argument(0).(*goja.Object)
		fill, ok := goja.AssertFunction(call.Argument(1))
		if ctor == nil || !ok {
			panic(iso.vm.NewTypeError("headersInstall: bad arguments"))
		}
		iso.hdrs = &headersClass{iso: iso}
		iso.hdrs.install(ctor, fill)
		return goja.Undefined()
	})
	// headersConstruct(init, newTarget) is the body of the constructor.
	set("headersConstruct", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.headersClass()
		proto := c.proto
		if nt, ok := call.Argument(1).(*goja.Object); ok && nt != c.ctor {
			if p, ok := nt.Get("prototype").(*goja.Object); ok {
				proto = p
			}
		}
		h := &jsHeaders{}
		obj := c.newObject(h, proto)
		c.fillFrom(obj, h, call.Argument(0))
		return obj
	})
	// headersNew(init) is new Headers(init) for the prelude's own use.
	set("headersNew", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.headersClass()
		h := &jsHeaders{}
		obj := c.newObject(h, nil)
		c.fillFrom(obj, h, call.Argument(0))
		return obj
	})
	// headersFrom(flat, guard) builds Headers from trusted pairs.
	set("headersFrom", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.headersClass().fromFlat(call.Argument(0), call.Argument(1).String() == "immutable")
	})
	set("headersGuard", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h := iso.headersClass().this(goja.FunctionCall{This: call.Argument(0)})
		if h.immutable {
			return iso.vm.ToValue("immutable")
		}
		return iso.vm.ToValue("none")
	})
	set("headersSetGuard", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h := iso.headersClass().this(goja.FunctionCall{This: call.Argument(0)})
		h.immutable = call.Argument(1).String() == "immutable"
		return goja.Undefined()
	})
	// headersAppendTo(out, headers) appends name, value, ... (sorted, each
	// Set-Cookie on its own) to the array out and returns it.
	set("headersAppendTo", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.headersClass()
		h := c.this(goja.FunctionCall{This: call.Argument(1)})
		out := call.Argument(0).(*goja.Object)
		n := int(out.Get("length").ToInteger())
		c.pairs(h, func(name, value goja.Value) {
			_ = out.Set(itoa(n), name)
			_ = out.Set(itoa(n+1), value)
			n += 2
		})
		return out
	})
	// headersSetDefault(headers, name, value) sets a trusted header (a
	// lowercase name, a valid value) unless the name is present.
	set("headersSetDefault", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.headersClass()
		h := c.this(goja.FunctionCall{This: call.Argument(0)})
		nv, v := call.Argument(1), call.Argument(2)
		if _, ok := h.find(nv.String()); !ok {
			h.add(headerEntry{name: nv.String(), nameV: nv, value: v, valueS: v.String()})
		}
		return goja.Undefined()
	})
}
