package worker

import (
	"reflect"
	"runtime"
	"sync"
	"weak"

	"github.com/dop251/goja"
)

// The body of a native Request or Response (request.go, response.go): a
// Go value holding what the body was made from. A string stays the
// JavaScript string it came as (text() hands it back, Go encodes it once
// when the response leaves), bytes are a Go slice (Go sends them as they
// are), and a ReadableStream is made only when script reads .body. The
// stream work that is easier said in JavaScript (reading a stream whole,
// taking a stream's bytes back for Go) is done by helpers of 60_fetch.js.

type bodyKind uint8

const (
	bodyNone     bodyKind = iota // null body
	bodyText                     // text: a JavaScript string
	bodyBytes                    // data: bytes of the body's own
	bodyReadable                 // src: a ReadableStream
)

// jsBody is the body state of a Request or a Response.
type jsBody struct {
	kind   bodyKind
	text   goja.Value   // bodyText
	data   []byte       // bodyBytes
	src    *goja.Object // bodyReadable
	stream *goja.Object // the stream .body returned, once read
	used   bool
	shared bool // data is shared with a clone: copy before handing it out
}

// readKind is what a body is read as.
type readKind int

// The order of fetchHelpers.readStream's `how` argument.
const (
	readText readKind = iota
	readJSON
	readArrayBuffer
	readBytes
	readBlob
	readFormData
)

const (
	usedBodyText   = "Body has already been used. It can only be used once. Use tee() first if you need to read it twice."
	lockedBodyText = "This ReadableStream is currently locked to a reader."
)

// fetchHelpers are 60_fetch.js's functions the native classes call.
type fetchHelpers struct {
	u8          *goja.Object // Uint8Array
	isDisturbed goja.Callable
	usedStream  goja.Callable // () -> a closed, disturbed, locked stream
	extract     goja.Callable // (init) -> source; leaves the implied type in helpers.type
	checkStream goja.Callable // (stream): throws unless it may become a body
	rsProto     *goja.Object  // ReadableStream.prototype
	readStream  goja.Callable // (stream, how, contentType) -> promise
	streamOut   goja.Callable // (stream) -> string | Uint8Array | Go body | reader
	tee         goja.Callable // (stream) -> [s1, s2]
	makeBlob    goja.Callable // (Uint8Array, type) -> Blob
	parseForm   goja.Callable // (contentType, Uint8Array) -> FormData
	parseJSON   goja.Callable // JSON.parse
	handOff     goja.Callable // internal.ws.handOff
	newSignal   goja.Callable // (signal | null) -> a new AbortSignal following it
	isWebSocket goja.Callable
	obj         *goja.Object // the helpers object (its `type` property)
}

func (c *fetchClass) callable(name string) goja.Callable {
	f, ok := goja.AssertFunction(c.helpers.obj.Get(name))
	if !ok {
		panic(c.iso.vm.NewTypeError("fetch helpers: " + name + " missing"))
	}
	return f
}

// fetchClass is an isolate's native Request and Response.
type fetchClass struct {
	iso      *isolate
	resCtor  *goja.Object
	resProto *goja.Object
	reqCtor  *goja.Object
	reqProto *goja.Object
	helpers  fetchHelpers
	marks    lazyMarks
	lazy     [lazyStreams]lazyStream // lazy streams Go made, without a state (body_lazy.go)
	reasons  map[int]goja.Value
	empty    goja.Value            // ""
	get      goja.Value            // "GET"
	follow   goja.Value            // "follow"
	manual   goja.Value            // "manual"
	hrefs    map[string]goja.Value // recent Request inputs -> their href
	// the native object stateOf saw last, and its state
	lastObj   *goja.Object
	lastState any
	// The state of instances of subclasses: ordinary objects (so a
	// subclass may have private fields and anything else an object may
	// have), their state found by identity. Cleared by the collector.
	mu   sync.Mutex
	subs map[weak.Pointer[goja.Object]]any
}

// the fetch classes of an isolate, loading 60_fetch.js first if need be.
func (iso *isolate) fetchClass() *fetchClass {
	if iso.fetchc == nil {
		iso.preludeGlobal("Response")
		if iso.fetchc == nil {
			panic(iso.vm.NewTypeError("Response is not loaded"))
		}
	}
	return iso.fetchc
}

// instance makes the object of a new Request or Response with state st:
// a dynamic object, unless newTarget is a subclass.
func (c *fetchClass) instance(st goja.DynamicObject, ctor, proto *goja.Object, newTarget goja.Value) *goja.Object {
	vm := c.iso.vm
	if nt, ok := newTarget.(*goja.Object); ok && nt != ctor {
		p, ok := nt.Get("prototype").(*goja.Object)
		if !ok {
			p = proto
		}
		o := vm.CreateObject(p)
		wp := weak.Make(o)
		c.mu.Lock()
		if c.subs == nil {
			c.subs = map[weak.Pointer[goja.Object]]any{}
		}
		c.subs[wp] = st
		c.mu.Unlock()
		runtime.AddCleanup(o, func(wp weak.Pointer[goja.Object]) {
			c.mu.Lock()
			delete(c.subs, wp)
			c.mu.Unlock()
		}, wp)
		return o
	}
	o := vm.NewDynamicObject(st)
	if err := o.SetPrototype(proto); err != nil {
		panic(err)
	}
	return o
}

// stateOf returns the native state behind v (a Request or a Response,
// of any subclass), or nil.
func (c *fetchClass) stateOf(v goja.Value) any {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	if o == c.lastObj {
		return c.lastState
	}
	if t := o.ExportType(); t == typeJSResponse || t == typeJSRequest {
		// Export allocates: the state of the object last asked about is
		// remembered (its accessors are usually read one after another).
		c.lastObj, c.lastState = o, o.Export()
		return c.lastState
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.subs) == 0 {
		return nil
	}
	return c.subs[weak.Make(o)]
}

var (
	typeJSResponse = reflect.TypeOf((*jsResponse)(nil))
	typeJSRequest  = reflect.TypeOf((*jsRequest)(nil))
)

// extract turns a BodyInit into a body and the content type it implies
// ("" for none).
func (c *fetchClass) extract(init goja.Value) (jsBody, string) {
	if init == nil || goja.IsUndefined(init) || goja.IsNull(init) {
		return jsBody{}, ""
	}
	if goja.IsString(init) {
		return jsBody{kind: bodyText, text: init}, "text/plain;charset=UTF-8"
	}
	o, ok := init.(*goja.Object)
	if !ok {
		return jsBody{kind: bodyText, text: c.iso.vm.ToValue(init.String())}, "text/plain;charset=UTF-8"
	}
	switch o.ExportType() {
	case typeBytes, typeArrayBuffer:
		return jsBody{kind: bodyBytes, data: append([]byte{}, c.iso.bytesArg(o)...)}, ""
	}
	if o.Prototype() == c.helpers.rsProto {
		// A ReadableStream (a response's .body re-wrapped, say): checked
		// in one call, without extractBody's instanceof chain, or none
		// for a lazy stream Go made (it is unlocked and unread).
		if c.lazySource(o) == nil {
			c.call(c.helpers.checkStream, o)
		}
		return jsBody{kind: bodyReadable, src: o}, ""
	}
	src, err := c.helpers.extract(goja.Undefined(), init)
	if err != nil {
		panic(err)
	}
	ct := ""
	if t := c.helpers.obj.Get("type"); t != nil && goja.IsString(t) {
		ct = t.String()
	}
	return c.bodyOfSource(src), ct
}

// bodyOfSource is a body of a source 60_fetch.js made: a string, a
// Uint8Array of its own, or a ReadableStream.
func (c *fetchClass) bodyOfSource(src goja.Value) jsBody {
	switch {
	case src == nil || goja.IsNull(src) || goja.IsUndefined(src):
		return jsBody{}
	case goja.IsString(src):
		return jsBody{kind: bodyText, text: src}
	}
	o := src.(*goja.Object)
	if o.ExportType() == typeBytes || o.ExportType() == typeArrayBuffer {
		return jsBody{kind: bodyBytes, data: c.iso.bytesArg(o)}
	}
	return jsBody{kind: bodyReadable, src: o}
}

func (c *fetchClass) call(f goja.Callable, args ...goja.Value) goja.Value {
	v, err := f(goja.Undefined(), args...)
	if err != nil {
		panic(err)
	}
	return v
}

// u8 is a new Uint8Array over data.
func (c *fetchClass) u8(data []byte) goja.Value {
	vm := c.iso.vm
	o, err := vm.New(c.helpers.u8, vm.ToValue(vm.NewArrayBuffer(data)))
	if err != nil {
		panic(err)
	}
	return o
}

// stream is the body as a ReadableStream (made on first use), or null.
func (c *fetchClass) stream(b *jsBody) goja.Value {
	if b.kind == bodyNone {
		return goja.Null()
	}
	if b.stream == nil && b.used {
		b.stream = c.call(c.helpers.usedStream).(*goja.Object)
	}
	if b.stream == nil {
		switch b.kind {
		case bodyReadable:
			b.stream = b.src
		case bodyText:
			b.stream = c.newLazyStream(b.text, jsString(b.text).Length())
		default:
			b.stream = c.newLazyStream(c.u8(c.ownData(b)), len(b.data))
		}
	}
	return b.stream
}

// ownData is b's bytes for a reader to keep.
func (c *fetchClass) ownData(b *jsBody) []byte {
	if b.shared {
		return append([]byte{}, b.data...)
	}
	return b.data
}

func (c *fetchClass) bodyUsed(b *jsBody) bool {
	if b.used {
		return true
	}
	s := b.stream
	if s == nil && b.kind == bodyReadable {
		s = b.src // a stream body script still holds may have been read
	}
	return s != nil && c.lazySource(s) == nil && c.call(c.helpers.isDisturbed, s).ToBoolean()
}

// locked tells a locked stream.
func locked(s *goja.Object) bool { return s.Get("locked").ToBoolean() }

// read reads the body whole, as how says, and returns a promise of it.
// contentType is called only for blob() and formData().
func (c *fetchClass) read(b *jsBody, how readKind, headers *goja.Object) goja.Value {
	vm := c.iso.vm
	if c.bodyUsed(b) {
		return c.rejected(vm.NewTypeError(usedBodyText))
	}
	ct := goja.Value(goja.Undefined())
	if how == readBlob || how == readFormData {
		ct = c.contentType(headers)
	}
	if b.kind == bodyReadable || b.stream != nil {
		s := c.stream(b).(*goja.Object)
		if src := c.lazySource(s); src != nil {
			// Read in Go: the stream is left as reading it whole leaves it.
			b.used = true
			whole := c.sourceBody(c.takeLazy(s, src))
			return c.settle(&whole, how, ct)
		}
		if locked(s) {
			return c.rejected(vm.NewTypeError(lockedBodyText))
		}
		b.used = true
		return c.call(c.helpers.readStream, s, vm.ToValue(int(how)), ct)
	}
	if b.kind != bodyNone {
		b.used = true
	}
	return c.settle(b, how, ct)
}

// rejected is a promise rejected with err.
func (c *fetchClass) rejected(err *goja.Object) goja.Value {
	p, _, reject := c.iso.vm.NewPromise()
	_ = reject(err)
	return c.iso.vm.ToValue(p)
}

// settle is a promise of b, whole, read as how says.
func (c *fetchClass) settle(b *jsBody, how readKind, ct goja.Value) goja.Value {
	vm := c.iso.vm
	p, resolve, reject := vm.NewPromise()
	var v goja.Value
	if ex := vm.Try(func() { v = c.convert(b, how, ct) }); ex != nil {
		_ = reject(ex.Value())
	} else {
		_ = resolve(v)
	}
	return vm.ToValue(p)
}

// convert is the whole body (not a stream), read as how says.
func (c *fetchClass) convert(b *jsBody, how readKind, ct goja.Value) goja.Value {
	vm := c.iso.vm
	switch how {
	case readText, readJSON:
		var s goja.Value
		switch b.kind {
		case bodyText:
			s = b.text
		case bodyBytes:
			s = vm.ToValue(decodeText(b.data))
		default:
			s = c.empty
		}
		if how == readText {
			return s
		}
		return c.call(c.helpers.parseJSON, s)
	}
	var data []byte
	switch b.kind {
	case bodyText:
		data = []byte(b.text.String())
	case bodyBytes:
		data = c.ownData(b)
	default:
		data = []byte{}
	}
	switch how {
	case readArrayBuffer:
		return vm.ToValue(vm.NewArrayBuffer(data))
	case readBytes:
		return c.u8(data)
	case readBlob:
		return c.call(c.helpers.makeBlob, c.u8(data), ct)
	default:
		return c.call(c.helpers.parseForm, ct, c.u8(data))
	}
}

// decodeText decodes as text() does: UTF-8, a leading BOM dropped,
// invalid sequences U+FFFD.
func decodeText(b []byte) string {
	s, _, _ := decodeUTF8(b, false, false)
	if len(s) >= 3 && s[:3] == "\uFEFF" {
		s = s[3:]
	}
	return s
}

// contentType is headers' content-type as blob() and formData() read it:
// the value, or "" (blob) / null.
func (c *fetchClass) contentType(headers *goja.Object) goja.Value {
	h, ok := headersOf(headers)
	if !ok {
		return goja.Null()
	}
	i, ok := h.find("content-type")
	if !ok {
		return goja.Null()
	}
	return c.iso.hdrs.joined(h.entries[i:run(h.entries, i)])
}

// clone tees b for a clone and returns the clone's body.
func (c *fetchClass) clone(b *jsBody) jsBody {
	// workerd's text, trailing comma included.
	if c.bodyUsed(b) || (b.stream != nil && locked(b.stream)) {
		panic(c.iso.vm.NewTypeError("This ReadableStream is currently locked to a reader,"))
	}
	switch {
	case b.kind == bodyNone:
		return jsBody{}
	case b.stream == nil && b.kind != bodyReadable:
		b.shared = true
		return jsBody{kind: b.kind, text: b.text, data: b.data, shared: true}
	}
	pair := c.call(c.helpers.tee, c.stream(b)).(*goja.Object)
	s1, _ := pair.Get("0").(*goja.Object)
	s2, _ := pair.Get("1").(*goja.Object)
	b.kind, b.src, b.stream = bodyReadable, s1, s1
	return jsBody{kind: bodyReadable, src: s2, stream: s2}
}

// out takes the body for Go (the response leaves): bytes, or a stream
// body as Response.Body or Response.Stream; it throws as reading it would.
func (c *fetchClass) out(b *jsBody, resp *Response) {
	vm := c.iso.vm
	if b.kind == bodyNone {
		resp.Body = []byte{}
		return
	}
	if c.bodyUsed(b) {
		panic(vm.NewTypeError(usedBodyText))
	}
	if b.stream == nil && b.kind != bodyReadable {
		b.used = true
		if b.kind == bodyText {
			resp.Body = []byte(b.text.String())
		} else {
			resp.Body = c.ownData(b)
		}
		return
	}
	s := c.stream(b).(*goja.Object)
	b.used = true
	if src := c.lazySource(s); src != nil {
		if whole := c.sourceBody(c.takeLazy(s, src)); whole.kind == bodyText {
			resp.Body = []byte(whole.text.String())
		} else {
			// The source is a Uint8Array Go made for the stream; no
			// script can reach it now.
			resp.Body = whole.data
		}
		return
	}
	v := c.call(c.helpers.streamOut, s) // throws when s is locked
	if goja.IsString(v) {
		resp.Body = []byte(v.String())
	} else if gb, ok := exportGoBody(v); ok {
		// A Go body handed back untouched (internal.takeGoStream).
		resp.Stream = gb.rc
	} else if r, ok := v.(*goja.Object); ok && r.ExportType() != typeBytes {
		resp.Stream = c.iso.newBodyStream(r)
	} else {
		resp.Body = append([]byte(nil), c.iso.bytesArg(v)...)
	}
}

// dynProps are the own properties script gives a native object, in the
// order they were added (a goja.DynamicObject's).
type dynProps struct{ props *ownProps }

func (d *dynProps) Get(key string) goja.Value {
	if d.props == nil {
		return nil
	}
	return d.props.vals[key]
}

func (d *dynProps) Set(key string, v goja.Value) bool {
	if d.props == nil {
		d.props = &ownProps{vals: map[string]goja.Value{}}
	}
	if _, ok := d.props.vals[key]; !ok {
		d.props.keys = append(d.props.keys, key)
	}
	d.props.vals[key] = v
	return true
}

func (d *dynProps) Has(key string) bool {
	if d.props == nil {
		return false
	}
	_, ok := d.props.vals[key]
	return ok
}

func (d *dynProps) Delete(key string) bool {
	if d.props == nil {
		return true
	}
	if _, ok := d.props.vals[key]; ok {
		delete(d.props.vals, key)
		for i, k := range d.props.keys {
			if k == key {
				d.props.keys = append(d.props.keys[:i], d.props.keys[i+1:]...)
				break
			}
		}
	}
	return true
}

func (d *dynProps) Keys() []string {
	if d.props == nil {
		return nil
	}
	return d.props.keys
}
