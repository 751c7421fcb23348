package worker

import (
	"errors"
	"math/big"
	"reflect"
	"strconv"

	"github.com/dop251/goja"
)

// The wire format (wire.go) read and written straight from and to
// JavaScript values, in Go: one implementation of the format, and no byte
// loop in the interpreter. Both directions run on the loop, inside a call
// from JavaScript, so they throw by panicking with a JavaScript value.

// jsCodec holds what the codec needs from one isolate. The built-ins the
// prelude's first file has already touched (Array, Map, Promise, Error,
// %TypedArray%) are captured when the isolate starts, before the script
// runs, so a script that replaces one of those globals cannot change what
// a stored value means. Everything else is looked up the first time a
// value needs it, so an isolate that only ever stores numbers and strings
// does not instantiate Set, RegExp, the typed arrays or the prelude's
// stream and Blob classes: the prelude's own classes come from what the
// prelude exposed (isolate.original: a class that was never defined has
// no instances), other built-ins from the global object at that moment.
type jsCodec struct {
	iso        *isolate
	vm         *goja.Runtime
	objProto   *goja.Object // %Object.prototype%
	typedArray *goja.Object // %TypedArray%
	arrayCtor  *goja.Object
	mapCtor    *goja.Object
	promise    *goja.Object
	mapSet     goja.Callable

	// looked up on first use
	setCtor     *goja.Object
	setAdd      goja.Callable
	views       []*goja.Object
	viewProtos  []*goja.Object
	builtins    map[string]*goja.Object // Date, RegExp, WeakMap, ... and the standard errors
	helpers     bool
	mapEntries  goja.Callable
	setValues   goja.Callable
	dateTime    goja.Callable
	unwrap      goja.Callable
	blobBytes   goja.Callable
	makeBlob    goja.Callable
	makeFile    goja.Callable
	uncloneable goja.Callable
	detached    goja.Callable
}

func newJSCodec(iso *isolate) (*jsCodec, error) {
	vm := iso.vm
	c := &jsCodec{iso: iso, vm: vm, objProto: vm.NewObject().Prototype()}
	var err error
	for _, p := range []struct {
		dst  **goja.Object
		name string
	}{{&c.arrayCtor, "Array"}, {&c.mapCtor, "Map"}, {&c.promise, "Promise"}} {
		if *p.dst, err = globalObject(vm, p.name); err != nil {
			return nil, err
		}
	}
	u8, err := globalObject(vm, "Uint8Array")
	if err != nil {
		return nil, err
	}
	c.typedArray = u8.Prototype() // Object.getPrototypeOf(Uint8Array)
	if c.mapSet, err = protoMethod(c.mapCtor, "set"); err != nil {
		return nil, err
	}
	c.builtins = map[string]*goja.Object{"Array": c.arrayCtor, "Map": c.mapCtor, "Promise": c.promise}
	if c.builtins["Error"], err = globalObject(vm, "Error"); err != nil {
		return nil, err
	}
	return c, nil
}

func globalObject(vm *goja.Runtime, name string) (*goja.Object, error) {
	o, ok := vm.Get(name).(*goja.Object)
	if !ok {
		return nil, errors.New("wire: global " + name + " missing")
	}
	return o, nil
}

func protoMethod(o *goja.Object, name string) (goja.Callable, error) {
	proto, _ := o.Get("prototype").(*goja.Object)
	if proto != nil {
		if f, ok := goja.AssertFunction(proto.Get(name)); ok {
			return f, nil
		}
	}
	return nil, errors.New("wire: method " + name + " missing")
}

// must panics with err (thrown into the script as an error) unless nil.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// builtin returns the global constructor name, looked up once.
func (c *jsCodec) builtin(name string) *goja.Object {
	if o := c.builtins[name]; o != nil {
		return o
	}
	o := must(globalObject(c.vm, name))
	c.builtins[name] = o
	return o
}

func (c *jsCodec) set() (*goja.Object, goja.Callable) {
	if c.setCtor == nil {
		ctor := c.builtin("Set")
		c.setAdd = must(protoMethod(ctor, "add"))
		c.setCtor = ctor
	}
	return c.setCtor, c.setAdd
}

// viewCtors returns the typed array constructors and DataView, in
// viewKinds order, with their prototypes.
func (c *jsCodec) viewCtors() ([]*goja.Object, []*goja.Object) {
	if c.views == nil {
		for _, name := range viewKinds {
			v := c.builtin(name)
			proto, _ := v.Get("prototype").(*goja.Object)
			c.views = append(c.views, v)
			c.viewProtos = append(c.viewProtos, proto)
		}
	}
	return c.views, c.viewProtos
}

// wire returns the prelude's helpers (72_wire.js), loading them once.
func (c *jsCodec) wire() *jsCodec {
	if c.helpers {
		return c
	}
	helpers, _ := c.iso.internal.Get("wire").(*goja.Object)
	if helpers == nil {
		panic(errors.New("wire: prelude helpers missing"))
	}
	for _, h := range []struct {
		dst  *goja.Callable
		name string
	}{
		{&c.mapEntries, "mapEntries"}, {&c.setValues, "setValues"}, {&c.dateTime, "dateTime"},
		{&c.unwrap, "unwrap"}, {&c.blobBytes, "blobBytes"}, {&c.makeBlob, "makeBlob"},
		{&c.makeFile, "makeFile"}, {&c.uncloneable, "uncloneable"}, {&c.detached, "detached"},
	} {
		f, ok := goja.AssertFunction(helpers.Get(h.name))
		if !ok {
			panic(errors.New("wire: helper " + h.name + " missing"))
		}
		*h.dst = f
	}
	c.helpers = true
	return c
}

// refused lists the constructors whose instances never clone.
var refusedBuiltins = []string{"Promise", "WeakMap", "WeakSet"}
var refusedPrelude = []string{"ReadableStream", "WritableStream", "Request", "Response", "Headers"}

// call runs a helper; a JavaScript exception propagates as one.
func (c *jsCodec) call(f goja.Callable, args ...goja.Value) goja.Value {
	v, err := f(goja.Undefined(), args...)
	if err != nil {
		panic(err)
	}
	return v
}

// throwUncloneable throws the DataCloneError for v.
func (c *jsCodec) throwUncloneable(v goja.Value) {
	panic(c.vm.ToValue(c.call(c.wire().uncloneable, v)))
}

// serialize encodes a JavaScript value in the wire format.
func (c *jsCodec) serialize(v goja.Value) []byte {
	e := &jsEncoder{c: c, w: wireWriter{buf: []byte{wireVersion}}, seen: map[*goja.Object]uint64{}}
	e.value(v)
	return e.w.buf
}

type jsEncoder struct {
	c    *jsCodec
	w    wireWriter
	seen map[*goja.Object]uint64
}

var (
	typeArrayBuffer = reflect.TypeOf(goja.ArrayBuffer{})
	typeBigInt      = reflect.TypeOf((*big.Int)(nil))
	typePromise     = reflect.TypeOf((*goja.Promise)(nil))
	typeProxy       = reflect.TypeOf(goja.Proxy{})
)

func (e *jsEncoder) value(v goja.Value) {
	c := e.c
	e.w.depth++
	defer func() { e.w.depth-- }()
	if e.w.depth > maxWireDepth {
		panic(c.vm.NewTypeError("Value is nested too deeply to be cloned."))
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		e.w.buf = append(e.w.buf, 'u')
		return
	case goja.IsNull(v):
		e.w.buf = append(e.w.buf, 'n')
		return
	case goja.IsNumber(v):
		e.w.number(v.ToFloat())
		return
	case goja.IsString(v):
		e.w.buf = append(e.w.buf, 's')
		e.w.str(v.String())
		return
	case goja.IsBigInt(v):
		_ = e.w.value(v.Export().(*big.Int))
		return
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		if _, sym := v.(*goja.Symbol); !sym && v.ExportType() != nil && v.ExportType().Kind() == reflect.Bool {
			_ = e.w.value(v.ToBoolean())
			return
		}
		c.throwUncloneable(v)
	}
	if n, ok := e.seen[obj]; ok {
		e.w.buf = append(e.w.buf, 'r')
		e.w.varint(n)
		return
	}
	if _, fn := goja.AssertFunction(obj); fn {
		c.throwUncloneable(v)
	}
	switch t := obj.ExportType(); t {
	case typeArrayBuffer:
		ab := obj.Export().(goja.ArrayBuffer)
		if ab.Detached() {
			panic(c.call(c.wire().detached))
		}
		e.seen[obj] = uint64(len(e.seen))
		e.w.buf = append(e.w.buf, 'B')
		e.w.bytes(ab.Bytes())
		return
	case typePromise, typeProxy:
		c.throwUncloneable(v)
	}
	e.seen[obj] = uint64(len(e.seen))
	switch obj.ClassName() {
	case "Array":
		n := obj.Get("length").ToInteger()
		e.w.buf = append(e.w.buf, 'a')
		e.w.varint(uint64(n))
		for i := int64(0); i < n; i++ {
			el := obj.Get(strconv.FormatInt(i, 10))
			if el == nil {
				e.w.buf = append(e.w.buf, 'h')
				continue
			}
			e.value(el)
		}
		return
	case "Date":
		e.w.buf = append(e.w.buf, 'D')
		e.w.f64(c.call(c.wire().dateTime, obj).ToFloat())
		return
	case "RegExp":
		e.w.buf = append(e.w.buf, 'R')
		e.w.str(obj.Get("source").String())
		e.w.str(obj.Get("flags").String())
		return
	case "Boolean", "Number", "String":
		e.w.buf = append(e.w.buf, 'w')
		e.value(c.call(c.wire().unwrap, obj))
		return
	case "Error":
		e.jsError(obj)
		return
	}
	if obj.ExportType() == typeBigInt { // a BigInt wrapper object
		e.w.buf = append(e.w.buf, 'w')
		_ = e.w.value(obj.Export().(*big.Int))
		return
	}
	// An object whose prototype is Object.prototype (or null) is an
	// instance of none of the classes below: skip looking them up.
	if proto := obj.Prototype(); proto != nil && proto != c.objProto && e.classed(obj) {
		return
	}
	if tag := obj.GetSymbol(goja.SymToStringTag); tag != nil && goja.IsString(tag) && tag.String() != "Object" {
		c.throwUncloneable(v)
	}
	// Plain objects and class instances: own enumerable string keys only;
	// the prototype (and so any method or getter on it) is not kept.
	keys := obj.Keys()
	e.w.buf = append(e.w.buf, 'o')
	e.w.varint(uint64(len(keys)))
	for _, k := range keys {
		e.w.str(k)
		e.value(obj.Get(k))
	}
}

// classed writes obj if it is an instance of a class the format knows
// (a view, Map, Set, Blob or File) and throws if it is one that never
// clones; it reports whether it wrote obj.
func (e *jsEncoder) classed(obj *goja.Object) bool {
	c := e.c
	vm := c.vm
	if vm.InstanceOf(obj, c.typedArray) || vm.InstanceOf(obj, c.builtin("DataView")) {
		e.view(obj)
		return true
	}
	if vm.InstanceOf(obj, c.mapCtor) {
		flat := c.call(c.wire().mapEntries, obj).(*goja.Object)
		n := flat.Get("length").ToInteger()
		e.w.buf = append(e.w.buf, 'M')
		e.w.varint(uint64(n / 2))
		for i := int64(0); i < n; i++ {
			e.value(flat.Get(strconv.FormatInt(i, 10)))
		}
		return true
	}
	if set, _ := c.set(); vm.InstanceOf(obj, set) {
		vals := c.call(c.wire().setValues, obj).(*goja.Object)
		n := vals.Get("length").ToInteger()
		e.w.buf = append(e.w.buf, 'S')
		e.w.varint(uint64(n))
		for i := int64(0); i < n; i++ {
			e.value(vals.Get(strconv.FormatInt(i, 10)))
		}
		return true
	}
	if blob := c.iso.original("Blob"); blob != nil && vm.InstanceOf(obj, blob) {
		var data []byte
		_ = vm.ExportTo(c.call(c.wire().blobBytes, obj), &data)
		if file := c.iso.original("File"); file != nil && vm.InstanceOf(obj, file) {
			e.w.buf = append(e.w.buf, 'f')
			e.w.str(obj.Get("name").String())
			e.w.str(obj.Get("type").String())
			e.w.f64(obj.Get("lastModified").ToFloat())
		} else {
			e.w.buf = append(e.w.buf, 'L')
			e.w.str(obj.Get("type").String())
		}
		e.w.bytes(data)
		return true
	}
	for _, name := range refusedBuiltins {
		if vm.InstanceOf(obj, c.builtin(name)) {
			c.throwUncloneable(obj)
		}
	}
	for _, name := range refusedPrelude {
		if r := c.iso.original(name); r != nil && vm.InstanceOf(obj, r) {
			c.throwUncloneable(obj)
		}
	}
	return false
}

func (e *jsEncoder) view(obj *goja.Object) {
	c := e.c
	kind := -1
	proto := obj.Prototype()
	views, viewProtos := c.viewCtors()
	for i, p := range viewProtos {
		if p == proto {
			kind = i
			break
		}
	}
	for i := 0; kind < 0 && i < len(views); i++ { // a subclass
		if c.vm.InstanceOf(obj, views[i]) {
			kind = i
		}
	}
	if kind < 0 {
		c.throwUncloneable(obj)
	}
	e.w.buf = append(e.w.buf, 'v', byte(kind))
	e.value(obj.Get("buffer"))
	e.w.varint(uint64(obj.Get("byteOffset").ToInteger()))
	if viewKinds[kind] == "DataView" {
		e.w.varint(uint64(obj.Get("byteLength").ToInteger()))
	} else {
		e.w.varint(uint64(obj.Get("length").ToInteger()))
	}
}

func (e *jsEncoder) jsError(obj *goja.Object) {
	c := e.c
	if domEx := c.iso.original("DOMException"); domEx != nil && c.vm.InstanceOf(obj, domEx) {
		e.w.buf = append(e.w.buf, 'X')
		e.w.str(obj.Get("name").String())
		e.w.str(obj.Get("message").String())
		return
	}
	name := "Error"
	if n := obj.Get("name"); n != nil && goja.IsString(n) && standardErrors[n.String()] {
		name = n.String()
	}
	var hasMessage, hasCause bool
	for _, k := range obj.GetOwnPropertyNames() {
		switch k {
		case "message":
			hasMessage = true
		case "cause":
			hasCause = true
		}
	}
	var stack string
	if s := obj.Get("stack"); s != nil && goja.IsString(s) {
		stack = s.String()
	}
	flags := byte(0)
	if hasMessage {
		flags |= 1
	}
	if stack != "" {
		flags |= 2
	}
	if hasCause {
		flags |= 4
	}
	e.w.buf = append(e.w.buf, 'E')
	e.w.str(name)
	e.w.buf = append(e.w.buf, flags)
	if hasMessage {
		e.w.str(obj.Get("message").String())
	}
	if stack != "" {
		e.w.str(stack)
	}
	if hasCause {
		e.value(obj.Get("cause"))
	}
}

// deserialize decodes the wire format into a JavaScript value. Bytes that
// are not in the format throw an Error.
func (c *jsCodec) deserialize(data []byte) goja.Value {
	corrupt := func() { panic(c.vm.NewGoError(errors.New("celld: stored or transmitted value is corrupt"))) }
	if len(data) == 0 || data[0] != wireVersion {
		corrupt()
	}
	d := &jsDecoder{c: c, r: wireReader{b: data, p: 1}}
	v, err := d.value()
	if err != nil || d.r.p != len(data) {
		corrupt()
	}
	return v
}

type jsDecoder struct {
	c    *jsCodec
	r    wireReader
	refs []goja.Value
}

func (d *jsDecoder) keep(v goja.Value) goja.Value {
	d.refs = append(d.refs, v)
	return v
}

func (d *jsDecoder) construct(ctor *goja.Object, args ...goja.Value) *goja.Object {
	o, err := d.c.vm.New(ctor, args...)
	if err != nil {
		panic(err)
	}
	return o
}

func (d *jsDecoder) value() (goja.Value, error) {
	vm := d.c.vm
	r := &d.r
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > maxWireDepth {
		return nil, errors.New("nested too deeply")
	}
	tag, err := r.byte()
	if err != nil {
		return nil, err
	}
	switch tag {
	case 'u':
		return goja.Undefined(), nil
	case 'n':
		return goja.Null(), nil
	case 'T':
		return vm.ToValue(true), nil
	case 'F':
		return vm.ToValue(false), nil
	case 'i', 'd', 's', 'g':
		r.p--
		v, err := r.value() // a primitive: the Go reader's value is the JavaScript one
		if err != nil {
			return nil, err
		}
		return vm.ToValue(v), nil
	case 'w':
		i := len(d.refs)
		d.refs = append(d.refs, nil)
		prim, err := d.value()
		if err != nil {
			return nil, err
		}
		d.refs[i] = prim.ToObject(vm)
		return d.refs[i], nil
	case 'D':
		ms, err := r.f64()
		if err != nil {
			return nil, err
		}
		return d.keep(d.construct(d.c.builtin("Date"), vm.ToValue(ms))), nil
	case 'R':
		src, err := r.str()
		if err != nil {
			return nil, err
		}
		flags, err := r.str()
		if err != nil {
			return nil, err
		}
		return d.keep(d.construct(d.c.builtin("RegExp"), vm.ToValue(src), vm.ToValue(flags))), nil
	case 'B':
		b, err := r.raw()
		if err != nil {
			return nil, err
		}
		return d.keep(vm.ToValue(vm.NewArrayBuffer(append([]byte{}, b...)))), nil
	case 'v':
		return d.view()
	case 'a':
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		// As new Array(n) (the intrinsic, length n, holes until set)
		// without a constructor call: an RPC's argument list is one.
		arr := vm.NewArray()
		if n > 0 {
			if err := arr.Set("length", n); err != nil {
				return nil, err
			}
		}
		d.keep(arr)
		for i := range n {
			if r.p < len(r.b) && r.b[r.p] == 'h' {
				r.p++
				continue
			}
			el, err := d.value()
			if err != nil {
				return nil, err
			}
			if err := arr.Set(strconv.Itoa(i), el); err != nil {
				return nil, err
			}
		}
		return arr, nil
	case 'o':
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		obj := vm.NewObject()
		d.keep(obj)
		for range n {
			k, err := r.str()
			if err != nil {
				return nil, err
			}
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			if k == "__proto__" {
				err = obj.DefineDataProperty(k, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
			} else {
				err = obj.Set(k, v)
			}
			if err != nil {
				return nil, err
			}
		}
		return obj, nil
	case 'M', 'S':
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		ctor, add := d.c.mapCtor, d.c.mapSet
		if tag == 'S' {
			ctor, add = d.c.set()
		}
		coll := d.construct(ctor)
		d.keep(coll)
		for range n {
			k, err := d.value()
			if err != nil {
				return nil, err
			}
			args := []goja.Value{k}
			if tag == 'M' {
				v, err := d.value()
				if err != nil {
					return nil, err
				}
				args = append(args, v)
			}
			if _, err := add(coll, args...); err != nil {
				return nil, err
			}
		}
		return coll, nil
	case 'E':
		return d.jsError()
	case 'X':
		name, err := r.str()
		if err != nil {
			return nil, err
		}
		msg, err := r.str()
		if err != nil {
			return nil, err
		}
		return d.keep(d.construct(d.c.iso.preludeGlobal("DOMException"), vm.ToValue(msg), vm.ToValue(name))), nil
	case 'L', 'f':
		var name, typ string
		var lastModified float64
		if tag == 'f' {
			if name, err = r.str(); err != nil {
				return nil, err
			}
		}
		if typ, err = r.str(); err != nil {
			return nil, err
		}
		if tag == 'f' {
			if lastModified, err = r.f64(); err != nil {
				return nil, err
			}
		}
		data, err := r.raw()
		if err != nil {
			return nil, err
		}
		buf := vm.ToValue(vm.NewArrayBuffer(append([]byte{}, data...)))
		if tag == 'f' {
			return d.keep(d.c.call(d.c.wire().makeFile, buf, vm.ToValue(name), vm.ToValue(typ), vm.ToValue(lastModified))), nil
		}
		return d.keep(d.c.call(d.c.wire().makeBlob, buf, vm.ToValue(typ))), nil
	case 'r':
		n, err := r.varint()
		if err != nil {
			return nil, err
		}
		if n >= uint64(len(d.refs)) || d.refs[n] == nil {
			return nil, errors.New("bad back reference")
		}
		return d.refs[n], nil
	}
	return nil, errors.New("unknown tag")
}

func (d *jsDecoder) view() (goja.Value, error) {
	vm := d.c.vm
	kind, err := d.r.byte()
	if err != nil {
		return nil, err
	}
	views, _ := d.c.viewCtors()
	if int(kind) >= len(views) {
		return nil, errors.New("unknown view kind")
	}
	i := len(d.refs)
	d.refs = append(d.refs, nil)
	buf, err := d.value()
	if err != nil {
		return nil, err
	}
	off, err := d.r.varint()
	if err != nil {
		return nil, err
	}
	n, err := d.r.varint()
	if err != nil {
		return nil, err
	}
	v := d.construct(views[kind], buf, vm.ToValue(off), vm.ToValue(n))
	d.refs[i] = v
	return v, nil
}

func (d *jsDecoder) jsError() (goja.Value, error) {
	vm := d.c.vm
	r := &d.r
	name, err := r.str()
	if err != nil {
		return nil, err
	}
	flags, err := r.byte()
	if err != nil {
		return nil, err
	}
	if !standardErrors[name] {
		name = "Error"
	}
	ctor := d.c.builtin(name)
	var e *goja.Object
	if flags&1 != 0 {
		msg, err := r.str()
		if err != nil {
			return nil, err
		}
		e = d.construct(ctor, vm.ToValue(msg))
	} else {
		e = d.construct(ctor)
	}
	if flags&2 != 0 {
		stack, err := r.str()
		if err != nil {
			return nil, err
		}
		if err := e.DefineDataProperty("stack", vm.ToValue(stack), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return nil, err
		}
	}
	d.keep(e)
	if flags&4 != 0 {
		cause, err := d.value()
		if err != nil {
			return nil, err
		}
		if err := e.DefineDataProperty("cause", cause, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return nil, err
		}
	}
	return e, nil
}
