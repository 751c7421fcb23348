package worker_test

import (
	"testing"

	"github.com/celldgo/celld/worker"
)

// A response re-wrapped from another's unread body (as Hono does to change
// headers after next()) carries the same bytes, through text() and
// through the wire; the old body stays unlocked until the new one is read
// (as workerd: internal/conformance/testdata/celld/body-rewrap).
func TestResponse_RewrapsAnUnreadBody(t *testing.T) {
	rt := newRuntime(t, `
module.exports.default = {
  async fetch(req) {
    const a = new Response("hello bytes", { headers: { "x-a": "1" } });
    const b = new Response(a.body, a);
    b.headers.set("x-b", "2");
    const c = new Response(new Uint8Array([104, 105]));
    const d = new Response(c.body, c);
    const dText = await d.text();
    let again = "";
    try { await c.text(); } catch (e) { again = e.constructor.name; }
    const e = new Response(new Response("wire").body, { status: 201, headers: { "x-e": "3" } });
    if (new URL(req.url).pathname === "/wire") return e;
    return new Response(JSON.stringify({ locked: a.body.locked, dText, again, dUsed: d.bodyUsed }), { headers: b.headers });
  },
};`, worker.Config{})
	resp := fetch(t, rt, "GET", "/", nil)
	if got, want := string(resp.Body), `{"locked":false,"dText":"hi","again":"TypeError","dUsed":true}`; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
	if resp.Header.Get("x-a") != "1" || resp.Header.Get("x-b") != "2" {
		t.Errorf("headers = %v", resp.Header)
	}
	wire := fetch(t, rt, "GET", "/wire", nil)
	if wire.Status != 201 || string(wire.Body) != "wire" || wire.Header.Get("x-e") != "3" {
		t.Errorf("re-wrapped response on the wire: %d %q %v", wire.Status, wire.Body, wire.Header)
	}
}
