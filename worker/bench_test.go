package worker_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/celldgo/celld/worker"
)

// jsProfile writes a profile of the JavaScript the benchmark runs (goja's
// sampling profiler, by function) to $CELLD_JSPROF when it is set.
func jsProfile(b *testing.B) {
	path := os.Getenv("CELLD_JSPROF")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := goja.StartProfile(f); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		goja.StopProfile()
		f.Close()
	})
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time the process spent per operation from now
// to the end of the benchmark (cpu-ns/op): unlike ns/op it does not move
// when other processes compete for the CPUs.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

// The request headers Go's HTTP client sends (bench/load).
func loadHeaders() http.Header {
	return http.Header{"User-Agent": {"Go-http-client/1.1"}, "Accept-Encoding": {"gzip"}}
}

// examples/hello/src/index.js as esbuild bundles it.
const helloExample = `
var src_default = {
  async fetch(request, env) {
    const url = new URL(request.url);
    return new Response(` + "`${env.GREETING} from celld! You asked for ${url.pathname}\\n`" + `, {
      headers: { "content-type": "text/plain; charset=utf-8" }
    });
  }
};
module.exports.default = src_default;`

// examples/counter/src/index.js as esbuild bundles it.
const counterExample = `
var import_cloudflare_workers = require("cloudflare:workers");
var Counter = class extends import_cloudflare_workers.DurableObject {
  async increment() {
    const next = (await this.ctx.storage.get("count") ?? 0) + 1;
    await this.ctx.storage.put("count", next);
    return next;
  }
  async current() {
    return await this.ctx.storage.get("count") ?? 0;
  }
};
var src_default = {
  async fetch(request, env) {
    const url = new URL(request.url);
    const stub = env.COUNTER.getByName(url.searchParams.get("name") ?? "default");
    if (url.pathname === "/") {
      return new Response(` + "`${await stub.increment()}\\n`" + `);
    }
    if (url.pathname === "/peek") {
      return new Response(` + "`${await stub.current()}\\n`" + `);
    }
    return new Response("not found\n", { status: 404 });
  }
};
module.exports.Counter = Counter;
module.exports.default = src_default;`

func benchFetch(b *testing.B, rt *worker.Runtime, url, want string) {
	ctx := context.Background()
	resp, err := rt.Fetch(ctx, &worker.Request{Method: "GET", URL: url, Header: loadHeaders()})
	if err != nil || resp.Status != 200 || string(resp.Body) != want {
		b.Fatalf("fetch %s: %v %v", url, resp, err)
	}
	jsProfile(b)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := rt.Fetch(ctx, &worker.Request{Method: "GET", URL: url, Header: loadHeaders()})
			if err != nil || resp.Status != 200 || len(resp.Body) != len(want) {
				b.Errorf("fetch %s: %v %v", url, resp, err)
				return
			}
		}
	})
}

// BenchmarkFetchHelloExample runs examples/hello's fetch handler.
func BenchmarkFetchHelloExample(b *testing.B) {
	rt := newRuntime(b, helloExample, worker.Config{Vars: map[string]any{"GREETING": "Hello"}, Logger: slog.New(slog.DiscardHandler)})
	benchFetch(b, rt, "http://localhost/", "Hello from celld! You asked for /\n")
}

// BenchmarkFetchCounterRead runs examples/counter's GET /peek: a stub RPC
// to a local object that reads its storage.
func BenchmarkFetchCounterRead(b *testing.B) {
	host := newLocalObjects(b)
	rt := newRuntime(b, counterExample, worker.Config{
		Objects: host, DurableObjects: map[string]string{"COUNTER": "Counter"}, Logger: slog.New(slog.DiscardHandler),
	})
	host.use(rt)
	if resp := fetch(b, rt, "GET", "/?name=bench", nil); string(resp.Body) != "1\n" {
		b.Fatalf("first write = %q", resp.Body)
	}
	benchFetch(b, rt, "http://localhost/peek?name=bench", "1\n")
}
