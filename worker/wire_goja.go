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
	e := &jsEncoder{c: c, w: newWireWriter(), seen: map[*goja.Object]uint64{}}
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
		e.w.undefined()
		return
	case goja.IsNull(v):
		e.w.null()
		return
	case goja.IsNumber(v):
		e.w.number(v.ToFloat())
		return
	case goja.IsString(v):
		e.w.text(v.String())
		return
	case goja.IsBigInt(v):
		e.w.bigint(v.Export().(*big.Int))
		return
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		if _, sym := v.(*goja.Symbol); !sym && v.ExportType() != nil && v.ExportType().Kind() == reflect.Bool {
			e.w.boolean(v.ToBoolean())
			return
		}
		c.throwUncloneable(v)
	}
	if n, ok := e.seen[obj]; ok {
		e.w.backRef(n)
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
		e.w.buffer(ab.Bytes())
		return
	case typePromise, typeProxy:
		c.throwUncloneable(v)
	}
	e.seen[obj] = uint64(len(e.seen))
	switch obj.ClassName() {
	case "Array":
		n := obj.Get("length").ToInteger()
		e.w.array(int(n))
		for i := int64(0); i < n; i++ {
			el := obj.Get(strconv.FormatInt(i, 10))
			if el == nil {
				e.w.hole()
				continue
			}
			e.value(el)
		}
		return
	case "Date":
		e.w.date(c.call(c.wire().dateTime, obj).ToFloat())
		return
	case "RegExp":
		e.w.regexp(obj.Get("source").String(), obj.Get("flags").String())
		return
	case "Boolean", "Number", "String":
		e.w.wrapper()
		e.value(c.call(c.wire().unwrap, obj))
		return
	case "Error":
		e.jsError(obj)
		return
	}
	if obj.ExportType() == typeBigInt { // a BigInt wrapper object
		e.w.wrapper()
		e.w.bigint(obj.Export().(*big.Int))
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
	e.w.object(len(keys))
	for _, k := range keys {
		e.w.key(k)
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
		e.w.mapOf(int(n / 2))
		for i := int64(0); i < n; i++ {
			e.value(flat.Get(strconv.FormatInt(i, 10)))
		}
		return true
	}
	if set, _ := c.set(); vm.InstanceOf(obj, set) {
		vals := c.call(c.wire().setValues, obj).(*goja.Object)
		n := vals.Get("length").ToInteger()
		e.w.setOf(int(n))
		for i := int64(0); i < n; i++ {
			e.value(vals.Get(strconv.FormatInt(i, 10)))
		}
		return true
	}
	if blob := c.iso.original("Blob"); blob != nil && vm.InstanceOf(obj, blob) {
		var data []byte
		_ = vm.ExportTo(c.call(c.wire().blobBytes, obj), &data)
		if file := c.iso.original("File"); file != nil && vm.InstanceOf(obj, file) {
			e.w.file(obj.Get("name").String(), obj.Get("type").String(), obj.Get("lastModified").ToFloat(), data)
		} else {
			e.w.blob(obj.Get("type").String(), data)
		}
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
	e.w.view(kind)
	e.value(obj.Get("buffer"))
	n := obj.Get("length")
	if viewKinds[kind] == "DataView" {
		n = obj.Get("byteLength")
	}
	e.w.viewRange(uint64(obj.Get("byteOffset").ToInteger()), uint64(n.ToInteger()))
}

func (e *jsEncoder) jsError(obj *goja.Object) {
	c := e.c
	if domEx := c.iso.original("DOMException"); domEx != nil && c.vm.InstanceOf(obj, domEx) {
		e.w.domException(obj.Get("name").String(), obj.Get("message").String())
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
	var message, stack *string
	if hasMessage {
		m := obj.Get("message").String()
		message = &m
	}
	if s := obj.Get("stack"); s != nil && goja.IsString(s) && s.String() != "" {
		st := s.String()
		stack = &st
	}
	e.w.errorHead(name, message, stack, hasCause)
	if hasCause {
		e.value(obj.Get("cause"))
	}
}

// deserialize decodes the wire format into a JavaScript value. Bytes that
// are not in the format throw an Error.
func (c *jsCodec) deserialize(data []byte) goja.Value {
	v, err := readWire[goja.Value](data, jsSink{c})
	if err != nil {
		panic(c.vm.NewGoError(errors.New("celld: stored or transmitted value is corrupt")))
	}
	return v
}

// jsSink builds JavaScript values from the wire format. A constructor
// that throws (it cannot for what the reader has checked) throws into the
// script.
type jsSink struct{ c *jsCodec }

var _ wireSink[goja.Value] = jsSink{}

func (s jsSink) construct(ctor *goja.Object, args ...goja.Value) *goja.Object {
	o, err := s.c.vm.New(ctor, args...)
	if err != nil {
		panic(err)
	}
	return o
}

func (s jsSink) undefined() goja.Value           { return goja.Undefined() }
func (s jsSink) null() goja.Value                { return goja.Null() }
func (s jsSink) boolean(b bool) goja.Value       { return s.c.vm.ToValue(b) }
func (s jsSink) number(f float64) goja.Value     { return s.c.vm.ToValue(f) }
func (s jsSink) text(str string) goja.Value      { return s.c.vm.ToValue(str) }
func (s jsSink) bigint(n *big.Int) goja.Value    { return s.c.vm.ToValue(n) }
func (s jsSink) wrapper(p goja.Value) goja.Value { return p.ToObject(s.c.vm) }
func (s jsSink) date(ms float64) goja.Value {
	return s.construct(s.c.builtin("Date"), s.c.vm.ToValue(ms))
}

func (s jsSink) regexp(source, flags string) (goja.Value, error) {
	return s.construct(s.c.builtin("RegExp"), s.c.vm.ToValue(source), s.c.vm.ToValue(flags)), nil
}

func (s jsSink) buffer(data []byte) goja.Value {
	return s.c.vm.ToValue(s.c.vm.NewArrayBuffer(append([]byte{}, data...)))
}

func (s jsSink) view(kind int, buf goja.Value, off, n uint64) (goja.Value, error) {
	views, _ := s.c.viewCtors()
	return s.construct(views[kind], buf, s.c.vm.ToValue(off), s.c.vm.ToValue(n)), nil
}

// array is as new Array(n) (the intrinsic, length n, holes until set)
// without a constructor call: an RPC's argument list is one.
func (s jsSink) array(n int) goja.Value {
	arr := s.c.vm.NewArray()
	if n > 0 {
		if err := arr.Set("length", n); err != nil {
			panic(err)
		}
	}
	return arr
}

func (s jsSink) arraySet(arr goja.Value, i int, el goja.Value) error {
	return arr.(*goja.Object).Set(strconv.Itoa(i), el)
}

func (s jsSink) object(int) goja.Value { return s.c.vm.NewObject() }

func (s jsSink) objectSet(obj goja.Value, k string, v goja.Value) error {
	o := obj.(*goja.Object)
	if k == "__proto__" {
		return o.DefineDataProperty(k, v, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	}
	return o.Set(k, v)
}

func (s jsSink) mapOf(int) goja.Value { return s.construct(s.c.mapCtor) }

func (s jsSink) mapSet(m goja.Value, k, v goja.Value) error {
	_, err := s.c.mapSet(m, k, v)
	return err
}

func (s jsSink) setOf(int) goja.Value {
	ctor, _ := s.c.set()
	return s.construct(ctor)
}

func (s jsSink) setAdd(set goja.Value, v goja.Value) error {
	_, add := s.c.set()
	_, err := add(set, v)
	return err
}

func (s jsSink) jsError(name string, message, stack *string) (goja.Value, error) {
	vm := s.c.vm
	if !standardErrors[name] {
		name = "Error"
	}
	ctor := s.c.builtin(name)
	var e *goja.Object
	if message != nil {
		e = s.construct(ctor, vm.ToValue(*message))
	} else {
		e = s.construct(ctor)
	}
	if stack != nil {
		if err := e.DefineDataProperty("stack", vm.ToValue(*stack), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func (s jsSink) errorCause(e goja.Value, cause goja.Value) error {
	return e.(*goja.Object).DefineDataProperty("cause", cause, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

func (s jsSink) domException(name, message string) goja.Value {
	return s.construct(s.c.iso.preludeGlobal("DOMException"), s.c.vm.ToValue(message), s.c.vm.ToValue(name))
}

func (s jsSink) blob(typ string, data []byte) goja.Value {
	return s.c.call(s.c.wire().makeBlob, s.buffer(data), s.c.vm.ToValue(typ))
}

func (s jsSink) file(name, typ string, lastModified float64, data []byte) goja.Value {
	vm := s.c.vm
	return s.c.call(s.c.wire().makeFile, s.buffer(data), vm.ToValue(name), vm.ToValue(typ), vm.ToValue(lastModified))
}
