package worker_test

import (
	"encoding/json"
	"io"
	"strings"
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

// Go reads, checks and drains the lazy stream it made for a body's .body
// without calling into JavaScript while nobody has used the stream
// (body_lazy.go); it remembers only the last few it made. Each probe runs
// on a fresh stream and again on one pushed out of Go's memory by newer
// streams (so the prelude's stream code does the work): the answers must
// be the same, and be what workerd answers (fixture
// celld/body-stream-reuse records these probes).
func TestResponse_LazyBodyStreamsBehaveAsStreams(t *testing.T) {
	rt := newRuntime(t, `
const probes = {
  // read through a re-wrapped response, the first one is used up
  async text(a) { const b = new Response(a.body, a); const t = await b.text(); return [t, a.bodyUsed, a.body.locked, b.bodyUsed]; },
  async bytes(a) { const b = new Response(a.body); return [[...new Uint8Array(await b.arrayBuffer())].join(), a.bodyUsed]; },
  async json(a) { const b = new Response(a.body); try { await b.json(); return "parsed"; } catch (e) { return [e.name, a.bodyUsed]; } },
  // a stream somebody used cannot become a body
  async readerFirst(a) { const s = a.body; s.getReader(); try { new Response(s); return "made"; } catch (e) { return [e.name, e.message]; } },
  async readFirst(a) { const s = a.body; await s.getReader().read(); try { new Response(s); return "made"; } catch (e) { return [e.name, e.message, a.bodyUsed]; } },
  async cancelled(a) { const s = a.body; await s.cancel(); try { new Response(s); return "made"; } catch (e) { return [e.name, a.bodyUsed]; } },
  async lockedRead(a) { const s = a.body; const b = new Response(s); s.getReader(); try { await b.text(); return "read"; } catch (e) { return [e.name, e.message, b.bodyUsed]; } },
  // the body stream itself, read through a reader after a re-wrap
  async readerAfter(a) { const s = a.body; const b = new Response(s); const r = s.getReader(); const { value } = await r.read(); return [typeof value, value.byteLength, b.bodyUsed, a.bodyUsed]; },
  async twice(a) { const b = new Response(a.body); await b.text(); try { new Response(a.body); return "made"; } catch (e) { return [e.name, a.body.locked]; } },
};
module.exports.default = {
  async fetch(req) {
    const make = (name) => name === "bytes" ? new Response(new Uint8Array([1, 2, 3])) : name === "json" ? new Response("{oops") : new Response("hello");
    const out = {};
    for (const name of Object.keys(probes)) {
      const fresh = await probes[name](make(name));
      const old = make(name);
      old.body; // made first, then pushed out by newer streams
      for (let i = 0; i < 8; i++) new Response("x").body;
      out[name] = [fresh, await probes[name](old)];
    }
    return Response.json(out);
  },
};`, worker.Config{})
	resp := fetch(t, rt, "GET", "/", nil)
	var got map[string][2]any
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatalf("%v: %s", err, resp.Body)
	}
	want := map[string]string{
		"text":        `["hello",true,true,true]`,
		"bytes":       `["1,2,3",true]`,
		"json":        `["SyntaxError",true]`,
		"readerFirst": `"made"`,
		"readFirst":   `["TypeError","This ReadableStream is disturbed (has already been read from), and cannot be used as a body.",true]`,
		"lockedRead":  `["TypeError","This ReadableStream is currently locked to a reader.",false]`,
		"cancelled":   `["TypeError",true]`,
		"readerAfter": `["object",5,true,true]`,
		"twice":       `["TypeError",true]`,
	}
	for name, pair := range got {
		fresh, _ := json.Marshal(pair[0])
		old, _ := json.Marshal(pair[1])
		if string(fresh) != string(old) {
			t.Errorf("%s: fresh stream %s, stream Go forgot %s", name, fresh, old)
		}
		if w, ok := want[name]; ok && string(fresh) != w {
			t.Errorf("%s = %s, want %s", name, fresh, w)
		}
	}
	if len(got) != 9 {
		t.Errorf("%d probes answered: %s", len(got), resp.Body)
	}
}

// A body larger than Go remembers a lazy stream for (body_lazy.go) takes
// the prelude's path, with the same results.
func TestResponse_LargeBodyRewrapped(t *testing.T) {
	rt := newRuntime(t, `
module.exports.default = {
  async fetch(req) {
    const big = "x".repeat(200000);
    const a = new Response(big);
    const b = new Response(a.body, a);
    if (new URL(req.url).pathname === "/wire") return b;
    const c = new Response(new Response(big).body);
    return Response.json([(await c.text()).length, c.bodyUsed, a.bodyUsed, a.body.locked]);
  },
};`, worker.Config{})
	if resp := fetch(t, rt, "GET", "/", nil); string(resp.Body) != `[200000,true,false,false]` {
		t.Errorf("body = %s", resp.Body)
	}
	resp := fetch(t, rt, "GET", "/wire", nil)
	body := resp.Body
	if resp.Stream != nil {
		var err error
		if body, err = io.ReadAll(resp.Stream); err != nil {
			t.Fatal(err)
		}
		resp.Stream.Close()
	}
	if string(body) != strings.Repeat("x", 200000) {
		t.Errorf("re-wrapped on the wire: %d bytes", len(body))
	}
}
