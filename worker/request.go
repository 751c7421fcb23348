package worker

import (
	"strings"

	"github.com/dop251/goja"
)

// Request is native, like Response (response.go): a goja dynamic object
// over a Go jsRequest. The incoming request of a fetch event is made by Go
// directly (newJSRequest): its headers are the immutable Headers Go
// built, its body bytes stay a Go slice until read, and its signal and cf
// are made on first use.

// jsRequest is the state of one Request.
type jsRequest struct {
	dynProps
	method   goja.Value
	url      goja.Value
	headers  *goja.Object
	redirect goja.Value
	signal   *goja.Object // nil: made on first use
	followIn *jsRequest   // until signal is made: the Request whose signal it follows
	cf       goja.Value   // nil: undefined
	cfLazy   bool         // an incoming request's cf: {} made on first use
	body     jsBody
}

// knownMethods are the methods workerd's HTTP layer knows (CONNECT and
// unknown ones are refused), matched without regard to case.
var knownMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Fields("GET HEAD POST PUT DELETE PATCH PURGE OPTIONS TRACE COPY LOCK MKCOL MOVE PROPFIND PROPPATCH SEARCH UNLOCK ACL REPORT MKACTIVITY CHECKOUT MERGE M-SEARCH NOTIFY SUBSCRIBE UNSUBSCRIBE QUERY") {
		m[s] = true
	}
	return m
}()

func (c *fetchClass) request(this goja.Value) *jsRequest {
	if r, ok := c.stateOf(this).(*jsRequest); ok {
		return r
	}
	panic(c.iso.vm.NewTypeError(illegalInvocation))
}

// newIncoming is the incoming Request of a fetch event.
func (c *fetchClass) newIncoming(method, url goja.Value, headers *goja.Object, body jsBody) *goja.Object {
	r := &jsRequest{method: method, url: url, headers: headers, redirect: c.manual, cfLazy: true, body: body}
	return c.instance(r, c.reqCtor, c.reqProto, c.reqCtor)
}

// constructRequest is new Request(input, init).
func (c *fetchClass) constructRequest(call goja.FunctionCall) *goja.Object {
	vm := c.iso.vm
	if goja.IsUndefined(call.Argument(0)) {
		panic(vm.NewTypeError("Failed to construct 'Request': constructor parameter 1 is not of type 'Request or string'."))
	}
	input, newTarget := call.Argument(0), call.Argument(2)
	d, _ := call.Argument(1).(*goja.Object)
	r := &jsRequest{method: c.get, redirect: c.follow}
	var signal goja.Value // init's signal, when given
	var followIn *jsRequest
	hc := c.iso.loadHeaders()
	var srcHeaders *goja.Object
	if in, ok := c.stateOf(input).(*jsRequest); ok {
		r.url, r.method, r.redirect = in.url, in.method, in.redirect
		srcHeaders = in.headers
		followIn = in
		if cf := c.cfOf(in); !goja.IsUndefined(cf) {
			r.cf = cf
		}
		if ib := &in.body; goja.IsUndefined(dictGet(d, "body")) && ib.kind != bodyNone {
			if c.bodyUsed(ib) {
				panic(vm.NewTypeError("Cannot reconstruct a Request with a used body."))
			}
			if ib.stream != nil && locked(ib.stream) {
				panic(vm.NewTypeError("The ReadableStream has been locked to a reader."))
			}
			if ib.stream != nil {
				r.body = jsBody{kind: bodyReadable, src: ib.stream}
			} else {
				r.body = jsBody{kind: ib.kind, text: ib.text, data: ib.data, shared: ib.shared}
			}
			ib.used = true
		}
	} else {
		r.url = c.href(input.String())
	}
	if m := dictGet(d, "method"); !goja.IsUndefined(m) {
		ms := m.String()
		up := strings.ToUpper(ms)
		if !knownMethods[up] {
			panic(vm.NewTypeError("Invalid HTTP method string: " + ms))
		}
		r.method = c.iso.methodValue(up)
	}
	h := &jsHeaders{}
	r.headers = hc.newObject(h, nil)
	if hv := dictGet(d, "headers"); !goja.IsUndefined(hv) {
		hc.fillFrom(r.headers, h, hv)
	} else if srcHeaders != nil {
		src, _ := headersOf(srcHeaders)
		h.entries = append(h.entries, src.entries...)
	}
	if rv := dictGet(d, "redirect"); !goja.IsUndefined(rv) {
		switch rv.String() {
		case "follow":
			r.redirect = c.follow
		case "manual":
			r.redirect = c.manual
		default:
			panic(vm.NewTypeError(`Invalid redirect value, must be one of "follow" or "manual" ("error" won't be implemented since it does not make sense at the edge; use "manual" and check the response status code).`))
		}
	}
	if sv := dictGet(d, "signal"); !goja.IsUndefined(sv) {
		signal = sv
	}
	if cf := dictGet(d, "cf"); !goja.IsUndefined(cf) {
		r.cf = cf
	}
	bv := dictGet(d, "body")
	if (!isNullish(bv) || (goja.IsUndefined(bv) && r.body.kind != bodyNone)) && (r.method.String() == "GET" || r.method.String() == "HEAD") {
		panic(vm.NewTypeError("Request with a GET or HEAD method cannot have a body."))
	}
	if !isNullish(bv) {
		var ct string
		r.body, ct = c.extract(bv)
		if ct != "" {
			c.setDefault(h, "content-type", ct)
		}
	} else if goja.IsNull(bv) {
		r.body = jsBody{}
	}
	switch {
	case signal != nil && !goja.IsNull(signal):
		// made now: a value that is not an AbortSignal throws here
		r.signal = c.call(c.helpers.newSignal, signal).(*goja.Object)
	case signal == nil:
		// Made on first use (most requests' signal is never read): it
		// then follows input's, aborted already if that one was.
		r.followIn = followIn
	}
	return c.instance(r, c.reqCtor, c.reqProto, newTarget)
}

// href is the serialized URL of a Request's input, remembered for the
// last few inputs (a script makes its subrequests to a few URLs).
func (c *fetchClass) href(s string) goja.Value {
	if v, ok := c.hrefs[s]; ok {
		return v
	}
	u := parseURL(s, nil)
	if u == nil {
		panic(c.iso.vm.NewTypeError("Invalid URL: " + s))
	}
	v := c.iso.vm.ToValue(u.Href(false))
	if c.hrefs == nil || len(c.hrefs) >= urlCacheSize {
		c.hrefs = map[string]goja.Value{}
	}
	c.hrefs[s] = v
	return v
}

func (c *fetchClass) signalOf(r *jsRequest) *goja.Object {
	if r.signal == nil {
		follow := goja.Value(goja.Null())
		if r.followIn != nil {
			follow = c.signalOf(r.followIn)
			r.followIn = nil
		}
		r.signal = c.call(c.helpers.newSignal, follow).(*goja.Object)
	}
	return r.signal
}

func (c *fetchClass) cfOf(r *jsRequest) goja.Value {
	if r.cfLazy {
		r.cf, r.cfLazy = c.iso.vm.NewObject(), false
	}
	if r.cf == nil {
		return goja.Undefined()
	}
	return r.cf
}

func (c *fetchClass) installRequest() {
	vm := c.iso.vm
	proto := c.reqProto
	getter := func(name string, f func(r *jsRequest) goja.Value) {
		c.accessor(proto, name, func(call goja.FunctionCall) goja.Value { return f(c.request(call.This)) })
	}
	getter("method", func(r *jsRequest) goja.Value { return r.method })
	getter("url", func(r *jsRequest) goja.Value { return r.url })
	getter("headers", func(r *jsRequest) goja.Value { return r.headers })
	getter("redirect", func(r *jsRequest) goja.Value { return r.redirect })
	getter("signal", func(r *jsRequest) goja.Value { return c.signalOf(r) })
	getter("cf", func(r *jsRequest) goja.Value { return c.cfOf(r) })
	getter("fetcher", func(r *jsRequest) goja.Value { return goja.Null() })
	getter("integrity", func(r *jsRequest) goja.Value { return c.empty })
	getter("keepalive", func(r *jsRequest) goja.Value { return vm.ToValue(false) })
	getter("cache", func(r *jsRequest) goja.Value { return goja.Undefined() })
	c.method(proto, "clone", 0, func(call goja.FunctionCall) goja.Value {
		r := c.request(call.This)
		n := &jsRequest{method: r.method, url: r.url, redirect: r.redirect, signal: c.signalOf(r)}
		if cf := c.cfOf(r); !goja.IsUndefined(cf) {
			n.cf = cf
		}
		n.body = c.clone(&r.body)
		n.headers = c.copyHeaders(r.headers)
		return c.instance(n, c.reqCtor, c.reqProto, c.reqCtor)
	})
}

func registerRequestNatives(set func(string, nativeFunc)) {
	set("requestConstruct", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.fetchClass().constructRequest(call)
	})
	// requestSignal(request) is the request's AbortSignal (made on first
	// use), which the prelude fires when the caller went away.
	set("requestSignal", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c := iso.fetchClass()
		return c.signalOf(c.request(call.Argument(0)))
	})
}

// newJSRequest builds the incoming Request object of req.
func (iso *isolate) newJSRequest(req *Request, href string) (goja.Value, error) {
	var v goja.Value
	if ex := iso.vm.Try(func() { v = iso.incoming(req, href) }); ex != nil {
		return nil, ex
	}
	return v, nil
}

// incoming is the incoming Request object of req.
func (iso *isolate) incoming(req *Request, href string) *goja.Object {
	c := iso.fetchClass()
	var body jsBody
	switch {
	case req.Stream != nil:
		if s, err := (&Host{iso: iso}).ReadableStream(req.Stream); err == nil {
			body = jsBody{kind: bodyReadable, src: s.(*goja.Object)}
		}
	case req.Body != nil:
		body = jsBody{kind: bodyBytes, data: append([]byte(nil), req.Body...)}
	}
	m := req.Method
	if m == "" {
		m = "GET"
	}
	return c.newIncoming(iso.methodValue(m), iso.vm.ToValue(href), iso.headersValue(req.Header).(*goja.Object), body)
}
