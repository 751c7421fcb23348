package r2js

import (
	"context"
	"net/http"
	"testing"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/r2"
	"github.com/celldgo/celld/worker"
)

// A record's maps reach the script in the same key order every time (Go's
// map order is random): customMetadata in the order it was written,
// checksums in workerd's order (every hash, undefined where absent).
func TestBinding_RecordKeyOrder(t *testing.T) {
	bk, err := r2.Open(bucket.NewMem(), "order")
	if err != nil {
		t.Fatal(err)
	}
	script, err := worker.Compile("order", []byte(`module.exports.default = {
  async fetch(request, env) {
    await env.B.put("k", "hello", {
      customMetadata: { m: "1", b: "2", z: "3", a: "4", q: "5" },
      sha1: "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d",
    });
    const out = [];
    for (let i = 0; i < 20; i++) {
      const o = await (i % 2 ? env.B.head("k") : env.B.get("k"));
      out.push(JSON.stringify([o.customMetadata, o.checksums, Object.keys(o.checksums)]));
    }
    return new Response([...new Set(out)].join("\n"));
  },
};`))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := worker.New(script, worker.Config{Bindings: map[string]worker.Binding{"B": Binding(bk)}, Isolates: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	resp, err := rt.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://localhost/", Header: http.Header{}})
	if err != nil || resp.Status != 200 {
		t.Fatalf("fetch: %v %+v", err, resp)
	}
	want := `[{"m":"1","b":"2","z":"3","a":"4","q":"5"},` +
		`{"md5":"5d41402abc4b2a76b9719d911017c592","sha1":"aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d"},["sha512","sha384","sha256","sha1","md5"]]`
	if got := string(resp.Body); got != want {
		t.Errorf("records read back as\n%s\nwant every one\n%s", got, want)
	}
}

// Custom metadata keys named like Object.prototype's members come back
// like any other (a lookup through the prototype once took them as set).
func TestBinding_MetadataKeysNamedLikeObjectMembers(t *testing.T) {
	bk, err := r2.Open(bucket.NewMem(), "proto")
	if err != nil {
		t.Fatal(err)
	}
	script, err := worker.Compile("proto", []byte(`module.exports.default = {
  async fetch(request, env) {
    await env.B.put("k", "v", { customMetadata: { toString: "1", constructor: "2", a: "3", valueOf: "4" } });
    const h = await env.B.head("k"), g = await env.B.get("k"), l = await env.B.list({ include: ["customMetadata"] });
    return new Response([h, g, l.objects[0]].map((o) => JSON.stringify(o.customMetadata)).join("\n"));
  },
};`))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := worker.New(script, worker.Config{Bindings: map[string]worker.Binding{"B": Binding(bk)}, Isolates: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	resp, err := rt.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://localhost/", Header: http.Header{}})
	if err != nil || resp.Status != 200 {
		t.Fatalf("fetch: %v %+v", err, resp)
	}
	one := `{"toString":"1","constructor":"2","a":"3","valueOf":"4"}`
	if want := one + "\n" + one + "\n" + one; string(resp.Body) != want {
		t.Errorf("custom metadata read back as\n%s\nwant\n%s", resp.Body, want)
	}
}
