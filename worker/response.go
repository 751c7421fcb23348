package worker

import (
	"math"

	"github.com/dop251/goja"
)

// Response is native: an instance is a goja dynamic object over a Go
// jsResponse (an instance of a subclass is an ordinary object whose state
// fetchClass finds by identity), so `new Response(text, {headers})` and a
// response that arrives from a Durable Object or fetch() are one Go value
// and a Headers, not a JavaScript object graph, and Go reads the response
// of a handler without a JavaScript call. Its accessors and methods are
// native functions on Response.prototype; 60_fetch.js gives the class its
// shell constructor, the statics and the stream helpers.

// jsResponse is the state of one Response.
type jsResponse struct {
	dynProps
	status     int
	statusText goja.Value
	headers    *goja.Object
	isError    bool
	url        goja.Value // a string; nil: ""
	redirected bool
	webSocket  goja.Value // nil: null
	cf         goja.Value // nil: undefined
	body       jsBody
}

var reasonPhrases = map[int]string{
	100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
	200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
	205: "Reset Content", 206: "Partial Content", 207: "Multi-Status", 208: "Already Reported", 226: "IM Used",
	300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
	305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
	400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
	405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
	409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Payload Too Large",
	414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
	418: "I'm a teapot", 421: "Misdirected Request", 422: "Unprocessable Entity", 423: "Locked", 424: "Failed Dependency",
	425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
	431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
	500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
	504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
	507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
}

func nullBodyStatus(s int) bool { return s == 101 || s == 204 || s == 205 || s == 304 }

// reason is the status text of a status code, remembered per isolate.
func (c *fetchClass) reason(status int) goja.Value {
	if v, ok := c.reasons[status]; ok {
		return v
	}
	v := c.empty
	if r, ok := reasonPhrases[status]; ok {
		v = c.iso.vm.ToValue(r)
	}
	c.reasons[status] = v
	return v
}

// response returns the state of this, or throws Illegal invocation.
func (c *fetchClass) response(this goja.Value) *jsResponse {
	if r, ok := c.stateOf(this).(*jsResponse); ok {
		return r
	}
	panic(c.iso.vm.NewTypeError(illegalInvocation))
}

// responseOf returns the state of v when it is a Response.
func (c *fetchClass) responseOf(v goja.Value) (*jsResponse, bool) {
	r, ok := c.stateOf(v).(*jsResponse)
	return r, ok
}

// get reads a property of a dictionary argument (undefined when it is
// not an object).
func dictGet(d *goja.Object, name string) goja.Value {
	if d == nil {
		return goja.Undefined()
	}
	v := d.Get(name)
	if v == nil {
		return goja.Undefined()
	}
	return v
}

// toJSString is String(v) as a JavaScript string.
func toJSString(vm *goja.Runtime, v goja.Value) goja.Value {
	if goja.IsString(v) {
		return v
	}
	return vm.ToValue(v.String())
}

func isNullish(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }

// validStatusText tells text workerd accepts as a status text: tab and
// the bytes 0x20-0x7e and 0x80-0xff.
func validStatusText(s string) bool {
	for _, r := range s {
		if !(r == '\t' || (r >= 0x20 && r <= 0x7e) || (r >= 0x80 && r <= 0xff)) {
			return false
		}
	}
	return true
}

// construct is new Response(body, init) (newTarget: the class
// constructed).
func (c *fetchClass) construct(body, init, newTarget goja.Value) *goja.Object {
	vm := c.iso.vm
	d, _ := init.(*goja.Object)
	r := &jsResponse{status: 200}
	if v := dictGet(d, "status"); !goja.IsUndefined(v) {
		// Truncated; out of range is an error (workerd does not wrap).
		f := math.Trunc(v.ToFloat())
		s := 0
		if f >= 0 && f <= 65535 {
			s = int(f)
		}
		if !(s >= 200 && s <= 599) && !(s == 101 && !isNullish(dictGet(d, "webSocket"))) {
			panic(rangeError(c.iso.vm, "Responses may only be constructed with status codes in the range 200 to 599, inclusive."))
		}
		r.status = s
	}
	if v := dictGet(d, "statusText"); !goja.IsUndefined(v) {
		st := toJSString(vm, v)
		if !validStatusText(st.String()) {
			panic(vm.NewTypeError("Invalid statusText"))
		}
		r.statusText = st
	} else {
		r.statusText = c.reason(r.status)
	}
	hc := c.iso.loadHeaders()
	h := &jsHeaders{}
	r.headers = hc.newObject(h, nil)
	hv := dictGet(d, "headers")
	if _, ok := hv.(*goja.Object); !ok && !isNullish(hv) {
		panic(vm.NewTypeError("Incorrect type for the 'headers' field on 'InitializerDict': the provided value is not of type 'Headers or Sequence or object'."))
	}
	hc.fillFrom(r.headers, h, hv)
	var ct string
	r.body, ct = c.extract(body)
	if r.body.kind != bodyNone && nullBodyStatus(r.status) {
		panic(vm.NewTypeError("Response with null body status (101, 204, 205, or 304) cannot have a body."))
	}
	if r.body.kind != bodyNone && ct != "" {
		c.setDefault(h, "content-type", ct)
	}
	if ws := dictGet(d, "webSocket"); !isNullish(ws) {
		if !c.call(c.helpers.isWebSocket, ws).ToBoolean() {
			panic(vm.NewTypeError("Incorrect type for the 'webSocket' field on 'InitializerDict': the provided value is not of type 'WebSocket'."))
		}
		r.webSocket = ws
		if r.status != 101 {
			panic(rangeError(c.iso.vm, "Responses with a WebSocket must have status code 101."))
		}
	}
	if cf := dictGet(d, "cf"); !goja.IsUndefined(cf) {
		r.cf = cf
	}
	return c.instance(r, c.resCtor, c.resProto, newTarget)
}

// setDefault sets a trusted header (a lowercase name) unless present.
func (c *fetchClass) setDefault(h *jsHeaders, name, value string) {
	if _, ok := h.find(name); ok {
		return
	}
	hc := c.iso.hdrs
	n, nv := hc.nameOf(name, nil)
	h.add(headerEntry{name: n, nameV: nv, value: c.iso.vm.ToValue(value), valueS: value})
}

// copyHeaders is a copy of a Headers object, with the same guard.
func (c *fetchClass) copyHeaders(headers *goja.Object) *goja.Object {
	src, _ := headersOf(headers)
	h := &jsHeaders{immutable: src.immutable, entries: append([]headerEntry(nil), src.entries...)}
	return c.iso.hdrs.newObject(h, nil)
}

// serialize converts a handler's Response for Go; it throws what a
// response that cannot be sent throws (an error response, a used body).
func (c *fetchClass) serialize(r *jsResponse) *Response {
	if r.isError {
		panic(c.iso.vm.NewTypeError("Return value from serve handler must not be an error response (like Response.error())."))
	}
	h, _ := headersOf(r.headers)
	resp := &Response{Status: r.status, StatusText: r.statusText.String(), Header: c.iso.httpHeader(h)}
	if r.webSocket != nil && r.status == 101 {
		if s, ok := c.call(c.helpers.handOff, r.webSocket).Export().(*Socket); ok {
			resp.WebSocket = s
		}
	}
	c.out(&r.body, resp)
	return resp
}

// illegalInvocation is workerd's text for a method called on the wrong
// object.
const illegalInvocation = "Illegal invocation: function called with incorrect `this` reference. See https://developers.cloudflare.com/workers/observability/errors/#illegal-invocation-errors for details."

// accessor defines a read-only accessor on proto as workerd's are
// (enumerable, configurable, the getter nameless).
func (c *fetchClass) accessor(proto *goja.Object, name string, f func(call goja.FunctionCall) goja.Value) {
	vm := c.iso.vm
	fn := vm.ToValue(f).(*goja.Object)
	named(vm, fn, "", 0)
	if err := proto.DefineAccessorProperty(name, fn, nil, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
		panic(err)
	}
}

// method defines a method on proto as workerd's are (writable,
// enumerable, configurable).
func (c *fetchClass) method(proto *goja.Object, name string, length int, f func(call goja.FunctionCall) goja.Value) {
	vm := c.iso.vm
	fn := vm.ToValue(f).(*goja.Object)
	named(vm, fn, name, length)
	if err := proto.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
		panic(err)
	}
}

// bodyOf returns the body and headers of a Request or a Response.
func (c *fetchClass) bodyOf(this goja.Value) (*jsBody, *goja.Object) {
	switch st := c.stateOf(this).(type) {
	case *jsResponse:
		return &st.body, st.headers
	case *jsRequest:
		return &st.body, st.headers
	}
	panic(c.iso.vm.NewTypeError(illegalInvocation))
}

// installBody puts the body members on Body.prototype, which both
// Request.prototype and Response.prototype inherit, as in workerd.
func (c *fetchClass) installBody(proto *goja.Object) {
	vm := c.iso.vm
	c.accessor(proto, "body", func(call goja.FunctionCall) goja.Value {
		b, _ := c.bodyOf(call.This)
		return c.stream(b)
	})
	c.accessor(proto, "bodyUsed", func(call goja.FunctionCall) goja.Value {
		b, _ := c.bodyOf(call.This)
		return vm.ToValue(c.bodyUsed(b))
	})
	reader := func(name string, how readKind) {
		c.method(proto, name, 0, func(call goja.FunctionCall) goja.Value {
			b, h := c.bodyOf(call.This)
			return c.read(b, how, h)
		})
	}
	reader("arrayBuffer", readArrayBuffer)
	reader("bytes", readBytes)
	reader("text", readText)
	reader("json", readJSON)
	reader("blob", readBlob)
	reader("formData", readFormData)
}

// installResponse puts the accessors and methods on Response.prototype.
func (c *fetchClass) installResponse() {
	vm := c.iso.vm
	proto := c.resProto
	getter := func(name string, f func(r *jsResponse) goja.Value) {
		c.accessor(proto, name, func(call goja.FunctionCall) goja.Value { return f(c.response(call.This)) })
	}
	getter("status", func(r *jsResponse) goja.Value { return vm.ToValue(r.status) })
	getter("statusText", func(r *jsResponse) goja.Value { return r.statusText })
	getter("ok", func(r *jsResponse) goja.Value { return vm.ToValue(r.status >= 200 && r.status <= 299) })
	getter("headers", func(r *jsResponse) goja.Value { return r.headers })
	getter("type", func(r *jsResponse) goja.Value {
		if r.isError {
			return vm.ToValue("error")
		}
		return vm.ToValue("default")
	})
	getter("url", func(r *jsResponse) goja.Value {
		if r.url == nil {
			return c.empty
		}
		return r.url
	})
	getter("redirected", func(r *jsResponse) goja.Value { return vm.ToValue(r.redirected) })
	getter("webSocket", func(r *jsResponse) goja.Value {
		if r.webSocket == nil {
			return goja.Null()
		}
		return r.webSocket
	})
	getter("cf", func(r *jsResponse) goja.Value {
		if r.cf == nil {
			return goja.Undefined()
		}
		return r.cf
	})
	c.method(proto, "clone", 0, func(call goja.FunctionCall) goja.Value {
		r := c.response(call.This)
		body := c.clone(&r.body)
		n := *r
		n.dynProps = dynProps{}
		n.headers = c.copyHeaders(r.headers)
		n.body = body
		return c.instance(&n, c.resCtor, c.resProto, c.resCtor)
	})
}

// makeResponse is a Response that arrived from elsewhere (fetch(), a
// Durable Object, the cache): any status, immutable headers.
func (c *fetchClass) makeResponse(status int, statusText goja.Value, headers *goja.Object, body jsBody, url goja.Value, redirected bool, ws goja.Value) *goja.Object {
	r := &jsResponse{status: status, statusText: statusText, headers: headers, body: body, url: url, redirected: redirected}
	if !isNullish(ws) {
		r.webSocket = ws
	}
	return c.instance(r, c.resCtor, c.resProto, c.resCtor)
}

func registerResponseNatives(set func(string, nativeFunc)) {
	// fetchInstall(Body, Request, Response, helpers) makes the native
	// classes.
	set("fetchInstall", func(iso *isolate, call goja.FunctionCall) goja.Value {
		body, _ := call.Argument(0).(*goja.Object)
		req, _ := call.Argument(1).(*goja.Object)
		res, _ := call.Argument(2).(*goja.Object)
		helpers, _ := call.Argument(3).(*goja.Object)
		if body == nil || req == nil || res == nil || helpers == nil {
			panic(iso.vm.NewTypeError("fetchInstall: bad arguments"))
		}
		vm := iso.vm
		c := &fetchClass{iso: iso, resCtor: res, reqCtor: req, reasons: map[int]goja.Value{}, empty: vm.ToValue(""),
			get: vm.ToValue("GET"), follow: vm.ToValue("follow"), manual: vm.ToValue("manual")}
		c.resProto = res.Get("prototype").(*goja.Object)
		c.reqProto = req.Get("prototype").(*goja.Object)
		c.helpers.obj = helpers
		c.helpers.u8, _ = helpers.Get("Uint8Array").(*goja.Object)
		c.helpers.rsProto, _ = helpers.Get("streamProto").(*goja.Object)
		c.marks.source, _ = helpers.Get("kLazy").(*goja.Symbol)
		c.marks.state, _ = helpers.Get("kState").(*goja.Symbol)
		c.marks.drained = helpers.Get("drainedState")
		if c.helpers.rsProto == nil || c.marks.source == nil || c.marks.state == nil || c.marks.drained == nil {
			panic(vm.NewTypeError("fetchInstall: stream marks missing"))
		}
		for _, f := range []struct {
			name string
			dst  *goja.Callable
		}{
			{"isDisturbed", &c.helpers.isDisturbed},
			{"usedStream", &c.helpers.usedStream}, {"extract", &c.helpers.extract}, {"checkStream", &c.helpers.checkStream},
			{"readStream", &c.helpers.readStream}, {"streamOut", &c.helpers.streamOut},
			{"tee", &c.helpers.tee}, {"makeBlob", &c.helpers.makeBlob}, {"parseForm", &c.helpers.parseForm},
			{"parseJSON", &c.helpers.parseJSON}, {"handOff", &c.helpers.handOff},
			{"newSignal", &c.helpers.newSignal}, {"isWebSocket", &c.helpers.isWebSocket},
		} {
			*f.dst = c.callable(f.name)
		}
		c.installBody(body.Get("prototype").(*goja.Object))
		c.installResponse()
		c.installRequest()
		iso.fetchc = c
		return goja.Undefined()
	})
	// responseConstruct(body, init, newTarget) is the body of the
	// constructor.
	set("responseConstruct", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.fetchClass().construct(call.Argument(0), call.Argument(1), call.Argument(2))
	})
	// responseError() is Response.error().
	set("responseError", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.fetchClass()
		hc := iso.loadHeaders()
		r := &jsResponse{status: 0, statusText: c.empty, isError: true, headers: hc.newObject(&jsHeaders{}, nil)}
		return c.instance(r, c.resCtor, c.resProto, c.resCtor)
	})
	// responseRedirect(href, status) is Response.redirect once checked.
	set("responseRedirect", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.fetchClass()
		hc := iso.loadHeaders()
		status := int(call.Argument(1).ToInteger())
		h := &jsHeaders{immutable: true}
		n, nv := hc.nameOf("location", nil)
		loc := call.Argument(0)
		h.add(headerEntry{name: n, nameV: nv, value: loc, valueS: loc.String()})
		r := &jsResponse{status: status, statusText: c.reason(status), headers: hc.newObject(h, nil)}
		return c.instance(r, c.resCtor, c.resProto, c.resCtor)
	})
	// responseJSON(text | null, init) is Response.json once stringified.
	set("responseJSON", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.fetchClass()
		o := c.construct(goja.Null(), call.Argument(1), c.resCtor)
		r := c.stateOf(o).(*jsResponse)
		if text := call.Argument(0); goja.IsString(text) {
			if nullBodyStatus(r.status) {
				panic(iso.vm.NewTypeError("Response with null body status (101, 204, 205, or 304) cannot have a body."))
			}
			r.body = jsBody{kind: bodyText, text: text}
		}
		h, _ := headersOf(r.headers)
		c.setDefault(h, "content-type", "application/json")
		return o
	})
	// responseMake(status, statusText, flatHeaders, body, url, redirected,
	// webSocket): a response from elsewhere; body is an ArrayBuffer, a
	// ReadableStream or null.
	set("responseMake", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.fetchClass()
		headers := iso.loadHeaders().fromFlat(call.Argument(2), true)
		url := call.Argument(4)
		if goja.IsUndefined(url) {
			url = nil
		}
		return c.makeResponse(int(call.Argument(0).ToInteger()), toJSString(iso.vm, call.Argument(1)), headers,
			c.bodyOfSource(call.Argument(3)), url, call.Argument(5).ToBoolean(), call.Argument(6))
	})
	set("isResponse", func(iso *isolate, call goja.FunctionCall) goja.Value {
		_, ok := iso.fetchClass().responseOf(call.Argument(0))
		return iso.vm.ToValue(ok)
	})
	// responseOut(res) serializes a handler's response for Go (into
	// iso.out).
	set("responseOut", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.fetchClass()
		r, ok := c.responseOf(call.Argument(0))
		if !ok {
			panic(iso.vm.NewTypeError("Incorrect type for Promise: the Promise did not resolve to 'Response'."))
		}
		iso.out = c.serialize(r)
		return goja.Undefined()
	})
}
