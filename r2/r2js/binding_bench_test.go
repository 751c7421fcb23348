package r2js

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"syscall"
	"testing"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/r2"
	"github.com/celldgo/celld/worker"
)

// benchScript is the Worker of server.BenchmarkR2Throughput, in the
// CommonJS shape worker.Compile takes (deploy.Bundle's output), plus a
// path that answers without touching R2 (the runtime's own cost) and one
// that only heads the object.
const benchScript = `module.exports.default = {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (key === "hello") return new Response("x");
    if (key === "head") return new Response((await env.B.head("k")).etag);
    if (key === "head100") { let e; for (let i = 0; i < 100; i++) e = (await env.B.head("k")).etag; return new Response(e); }
    if (key === "get100") { for (let i = 0; i < 100; i++) { const o = await env.B.get("k"); await o.arrayBuffer(); } return new Response("x"); }
    if (key === "await100") { for (let i = 0; i < 100; i++) await Promise.resolve(i); return new Response("x"); }
    if (request.method === "PUT") {
      const o = await env.B.put(key, request.body);
      return new Response(String(o.size));
    }
    const o = await env.B.get(key);
    if (o === null) return new Response("missing", { status: 404 });
    return new Response(o.body);
  },
};
`

// BenchmarkBinding measures the binding's own cost per request on an
// in-memory bucket — the isolate's work for env.B.get/head/put and the
// body hand-over, without a network — for a 1 KiB object, where that cost
// is what a Worker adds to the store's round trip. "hello" is the same
// Worker answering without R2. cpu-ns/op is the process's CPU time per
// request (steadier than ns/op on a shared machine).
func BenchmarkBinding(b *testing.B) {
	bk, err := r2.Open(bucket.NewMem(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	script, err := worker.Compile("r2bench", []byte(benchScript))
	if err != nil {
		b.Fatal(err)
	}
	rt, err := worker.New(script, worker.Config{Bindings: map[string]worker.Binding{"B": Binding(bk)}, Isolates: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(context.Background())
	data := bytes.Repeat([]byte("x"), 1024)
	ctx := context.Background()
	fetch := func(b *testing.B, method, path string, body io.ReadCloser) *worker.Response {
		req := &worker.Request{Method: method, URL: "http://localhost/" + path, Header: http.Header{}, Stream: body}
		resp, err := rt.Fetch(ctx, req)
		if err != nil || resp.Status != 200 {
			b.Fatalf("%s %s: %v %+v", method, path, err, resp)
		}
		return resp
	}
	put := func(b *testing.B) {
		fetch(b, "PUT", "k", worker.SizedBody(io.NopCloser(bytes.NewReader(data)), int64(len(data))))
	}
	put(b)
	run := func(name string, op func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuNow()
			for b.Loop() {
				op(b)
			}
			b.ReportMetric(float64(cpuNow()-c0)/float64(b.N), "cpu-ns/op")
		})
	}
	run("hello", func(b *testing.B) { fetch(b, "GET", "hello", nil) })
	run("head", func(b *testing.B) { fetch(b, "GET", "head", nil) })
	run("head100", func(b *testing.B) { fetch(b, "GET", "head100", nil) })
	run("get100", func(b *testing.B) { fetch(b, "GET", "get100", nil) })
	run("await100", func(b *testing.B) { fetch(b, "GET", "await100", nil) })
	run("get", func(b *testing.B) {
		resp := fetch(b, "GET", "k", nil)
		if resp.Stream == nil || worker.BodySize(resp.Stream) != int64(len(data)) {
			b.Fatalf("get: body %T of size %d, want a Go body of %d", resp.Stream, worker.BodySize(resp.Stream), len(data))
		}
		n, err := io.Copy(io.Discard, resp.Stream)
		resp.Stream.Close()
		if err != nil || n != int64(len(data)) {
			b.Fatalf("get body: %d bytes, %v", n, err)
		}
	})
	run("put", put)
}

// cpuNow is the process's user+system CPU time so far, in ns.
func cpuNow() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
