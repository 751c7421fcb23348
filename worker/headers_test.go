package worker_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/celldgo/celld/worker"
)

// The native Headers (headers.go) behind the JavaScript surface: what a
// Go-backed object could get wrong that the workerd-recorded fixtures
// (headers-api, response-constructors) do not reach — subclasses, own
// properties, the shape of the class, brand checks — and the hand-off of
// headers to and from Go.
const headersScript = `
const err = (f) => { try { f(); return "no error"; } catch (e) { return e.constructor.name + ": " + e.message; } };
class Sub extends Headers {
  constructor(init) { super(init); this.extra = 1; }
  get(name) { return "sub:" + super.get(name); }
}
module.exports.default = {
  async fetch(request) {
    const out = {};
    const s = new Sub([["B", "2"], ["a", "1"]]);
    out.subclass = [s instanceof Sub, s instanceof Headers, s.get("a"), s.extra, Object.keys(s), [...s]];
    const h = new Headers({ x: "1" });
    h.foo = 2;
    out.own = [h.foo, "foo" in h, Object.keys(h), delete h.foo, "foo" in h, "get" in h, Object.hasOwn(h, "get")];
    out.callWithoutNew = err(() => Headers());
    const sym = Symbol("s");
    out.refused = [err(() => { "use strict"; h[sym] = 1; }), h[sym] === undefined, err(() => Object.freeze(h)).slice(0, 10),
      err(() => Object.defineProperty(h, "ro", { value: 1 })), Object.getOwnPropertyDescriptor(h, "ro"),
      err(() => new (class extends Headers { #p = 1; })()).slice(0, 10)];
    out.illegal = err(() => Headers.prototype.get.call({}, "a"));
    out.shape = [Headers.length, Headers.name, Headers.prototype.append.length, Headers.prototype.append.name,
      Headers.prototype[Symbol.iterator] === Headers.prototype.entries, Object.prototype.toString.call(h),
      Object.getPrototypeOf(Headers.prototype) === Object.prototype, typeof Headers.prototype.forEach];
    const m = new Headers();
    m.append("x-b", "1"); m.append("X-A", "2"); m.append("x-b", "3"); m.append("set-cookie", "c=1"); m.append("Set-Cookie", "d=2");
    out.order = [...m];
    m.set("x-b", "4");
    out.set = [...m.keys()];
    m.delete("X-A");
    out.deleted = [m.has("x-a"), m.get("x-a"), [...m.values()]];
    out.request = [request.headers.get("X-In"), request.headers === request.headers, err(() => request.headers.set("a", "b"))];
    const r = new Response("hi", { headers: { "x-one": "1" } });
    const body = r.body;
    out.lazyBody = [body instanceof ReadableStream, body.locked, r.bodyUsed];
    const r2 = new Response(body, r);
    out.rewrapped = [await r2.text(), r.bodyUsed, body.locked, r2.headers.get("x-one")];
    const chunk = await new Response("abc").body.getReader().read();
    out.readLazy = [new TextDecoder().decode(chunk.value), chunk.done];
    const res = new Response(JSON.stringify(out), { headers: { "content-type": "application/json" } });
    res.headers.append("x-multi", "a");
    res.headers.append("x-multi", "b");
    res.headers.append("set-cookie", "k=1");
    res.headers.append("set-cookie", "l=2");
    return res;
  },
};
`

func TestHeaders_Native(t *testing.T) {
	rt := newRuntime(t, headersScript, worker.Config{})
	resp, err := rt.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://localhost/", Header: map[string][]string{"X-In": {"v"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 {
		t.Fatalf("status %d: %s", resp.Status, resp.Body)
	}
	var got map[string]any
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatalf("%v: %s", err, resp.Body)
	}
	want := map[string]any{
		"subclass":       []any{true, true, "sub:1", 1.0, []any{"extra"}, []any{[]any{"a", "1"}, []any{"b", "2"}}},
		"own":            []any{2.0, true, []any{"foo"}, true, false, true, false},
		"callWithoutNew": "TypeError: Class constructor cannot be invoked without 'new'",
		"illegal":        "TypeError: Illegal invocation",
		"refused": []any{"TypeError: Dynamic objects do not support Symbol properties", true, "TypeError:", "no error",
			map[string]any{"configurable": true, "enumerable": true, "value": 1.0, "writable": true}, "TypeError:"},
		"shape":     []any{0.0, "Headers", 2.0, "append", true, "[object Headers]", true, "function"},
		"order":     []any{[]any{"set-cookie", "c=1"}, []any{"set-cookie", "d=2"}, []any{"x-a", "2"}, []any{"x-b", "1, 3"}},
		"set":       []any{"set-cookie", "set-cookie", "x-a", "x-b"},
		"deleted":   []any{false, nil, []any{"c=1", "d=2", "4"}},
		"request":   []any{"v", true, "TypeError: Can't modify immutable headers."},
		"lazyBody":  []any{true, false, false},
		"rewrapped": []any{"hi", true, true, "1"},
		"readLazy":  []any{"abc", false},
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
	if v := resp.Header.Values("X-Multi"); !reflect.DeepEqual(v, []string{"a, b"}) {
		t.Errorf("X-Multi to Go = %q, want one joined value", v)
	}
	if v := resp.Header.Values("Set-Cookie"); !reflect.DeepEqual(v, []string{"k=1", "l=2"}) {
		t.Errorf("Set-Cookie to Go = %q, want each on its own", v)
	}
	if v := resp.Header.Get("Content-Type"); v != "application/json" {
		t.Errorf("Content-Type to Go = %q", v)
	}
}
