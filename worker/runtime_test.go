package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/worker"
)

// newRuntime compiles a CommonJS script and starts a runtime for it; the
// runtime is closed when the test ends.
func newRuntime(t testing.TB, code string, cfg worker.Config) *worker.Runtime {
	t.Helper()
	script, err := worker.Compile("test.js", []byte(code))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	rt, err := worker.New(script, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

func fetch(t testing.TB, rt *worker.Runtime, method, path string, body []byte) *worker.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := rt.Fetch(ctx, &worker.Request{Method: method, URL: "http://localhost" + path, Body: body})
	if err != nil {
		t.Fatalf("fetch %s %s: %v", method, path, err)
	}
	return resp
}

// syncBuffer collects log output written from isolate goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRuntime_FetchUncaughtException(t *testing.T) {
	var logs syncBuffer
	rt := newRuntime(t, `
		function explode() { throw new Error("kaboom"); }
		module.exports.default = {
			async fetch(request) {
				const path = new URL(request.url).pathname;
				if (path === "/throw") explode();
				if (path === "/not-a-response") return "nope";
				return new Response("ok");
			},
		};`, worker.Config{Isolates: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	for _, path := range []string{"/throw", "/not-a-response"} {
		if got := fetch(t, rt, "GET", path, nil); got.Status != http.StatusInternalServerError {
			t.Errorf("GET %s: status = %d, want 500", path, got.Status)
		}
	}
	if got := fetch(t, rt, "GET", "/ok", nil); got.Status != 200 || string(got.Body) != "ok" {
		t.Errorf("GET /ok after failures = %d %q, want 200 \"ok\"", got.Status, got.Body)
	}
	out := logs.String()
	for _, want := range []string{"kaboom", "at explode", "did not resolve to 'Response'"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

func TestRuntime_FetchWaitUntilDoesNotDelayResponse(t *testing.T) {
	var logs syncBuffer
	rt := newRuntime(t, `
		let finished = 0;
		module.exports.default = {
			fetch(request, env, ctx) {
				if (new URL(request.url).pathname === "/count") return new Response(String(finished));
				ctx.waitUntil(new Promise((r) => setTimeout(r, 200)).then(() => { finished++; console.log("background done"); }));
				return new Response("scheduled");
			},
		};`, worker.Config{Isolates: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	start := time.Now()
	if got := fetch(t, rt, "GET", "/", nil); string(got.Body) != "scheduled" {
		t.Fatalf("body = %q", got.Body)
	}
	if d := time.Since(start); d > 150*time.Millisecond {
		t.Errorf("response took %v: waitUntil delayed it", d)
	}
	if got := fetch(t, rt, "GET", "/count", nil); string(got.Body) != "0" {
		t.Errorf("count right after = %q, want 0", got.Body)
	}
	time.Sleep(400 * time.Millisecond)
	if got := fetch(t, rt, "GET", "/count", nil); string(got.Body) != "1" {
		t.Errorf("count later = %q, want 1", got.Body)
	}
	if !strings.Contains(logs.String(), "background done") {
		t.Errorf("console.log did not reach the logger:\n%s", logs.String())
	}
}

func TestRuntime_FetchNeverSettles(t *testing.T) {
	var logs syncBuffer
	rt := newRuntime(t, `
		module.exports.default = {
			async fetch(request) {
				if (new URL(request.url).pathname === "/hang") {
					await new Promise((r) => setTimeout(r, 10)); // a timer first: not hung yet
					return new Promise(() => {});
				}
				return new Response("ok");
			},
		};`, worker.Config{Isolates: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	start := time.Now()
	if got := fetch(t, rt, "GET", "/hang", nil); got.Status != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", got.Status)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("hung request answered after %v", d)
	}
	if !strings.Contains(logs.String(), "will never generate a response") {
		t.Errorf("log lacks the hang message:\n%s", logs.String())
	}
	if got := fetch(t, rt, "GET", "/ok", nil); got.Status != 200 {
		t.Errorf("after a hung request: status = %d", got.Status)
	}
}

func TestRuntime_FetchEndlessLoopIsInterrupted(t *testing.T) {
	rt := newRuntime(t, `
		module.exports.default = {
			fetch(request) {
				if (new URL(request.url).pathname === "/spin") for (;;) {}
				return new Response("ok");
			},
		};`, worker.Config{Isolates: 1, TaskTimeout: 200 * time.Millisecond})
	if got := fetch(t, rt, "GET", "/spin", nil); got.Status != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", got.Status)
	}
	if got := fetch(t, rt, "GET", "/ok", nil); got.Status != 200 || string(got.Body) != "ok" {
		t.Errorf("after an interrupted request: %d %q", got.Status, got.Body)
	}
}

func TestRuntime_CloseWaitsForWaitUntil(t *testing.T) {
	script, err := worker.Compile("test.js", []byte(`
		module.exports.default = {
			fetch(request, env, ctx) {
				ctx.waitUntil(new Promise((r) => setTimeout(r, 100)).then(() => console.log("flushed")));
				return new Response("ok");
			},
		};`))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	rt, err := worker.New(script, worker.Config{Isolates: 1, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	fetch(t, rt, "GET", "/", nil)
	if err := rt.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "flushed") {
		t.Errorf("Close returned before the waitUntil work finished:\n%s", logs.String())
	}
	if _, err := rt.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://localhost/"}); !errors.Is(err, worker.ErrClosed) {
		t.Errorf("Fetch after Close: err = %v, want ErrClosed", err)
	}
}

func TestNew_ScriptErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		code string
		want string
	}{
		"no default export": {`module.exports.x = 1;`, "no default export"},
		"unknown module":    {`require("left-pad");`, `cannot load module "left-pad"`},
		"node module":       {`require("node:buffer");`, `No such module "node:buffer".`},
		"top-level throw":   {`throw new RangeError("at load");`, "at load"},
	} {
		t.Run(name, func(t *testing.T) {
			script, err := worker.Compile("bad.js", []byte(tc.code))
			if err != nil {
				t.Fatal(err)
			}
			_, err = worker.New(script, worker.Config{Isolates: 1, Logger: testLogger(t)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if _, err := worker.Compile("syntax.js", []byte(`export default {`)); err == nil {
		t.Error("Compile accepted a syntax error")
	}
}

func TestRuntime_FetchEntrypointClassAndHead(t *testing.T) {
	rt := newRuntime(t, `
		const { WorkerEntrypoint } = require("cloudflare:workers");
		class Main extends WorkerEntrypoint {
			fetch(request) {
				return Response.json({ greeting: this.env.GREETING, method: request.method });
			}
		}
		module.exports.default = Main;`, worker.Config{Vars: map[string]any{"GREETING": "hi"}})
	got := fetch(t, rt, "GET", "/", nil)
	if string(got.Body) != `{"greeting":"hi","method":"GET"}` {
		t.Errorf("body = %s", got.Body)
	}
	head := fetch(t, rt, "HEAD", "/", nil)
	if head.Status != 200 || len(head.Body) != 0 || head.Header.Get("Content-Type") != "application/json" {
		t.Errorf("HEAD = %d %q %v, want 200, empty body, JSON content type", head.Status, head.Body, head.Header)
	}
}

// TestRuntime_WebAPIs runs assertions inside the isolate for APIs the
// fixtures do not reach: HMAC, AES-GCM, polyfilled built-ins.
func TestRuntime_WebAPIs(t *testing.T) {
	rt := newRuntime(t, `
		const enc = new TextEncoder();
		const hex = (b) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");
		module.exports.default = {
			async fetch() {
				const out = {};
				const key = await crypto.subtle.importKey("raw", enc.encode("key"), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
				const sig = await crypto.subtle.sign("HMAC", key, enc.encode("The quick brown fox jumps over the lazy dog"));
				out.hmac = hex(sig);
				out.verify = await crypto.subtle.verify("HMAC", key, sig, enc.encode("The quick brown fox jumps over the lazy dog"));
				out.verify_bad = await crypto.subtle.verify("HMAC", key, sig, enc.encode("tampered"));
				const aes = await crypto.subtle.generateKey({ name: "AES-GCM", length: 256 }, true, ["encrypt", "decrypt"]);
				const iv = crypto.getRandomValues(new Uint8Array(12));
				const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, aes, enc.encode("secret"));
				out.aes = new TextDecoder().decode(await crypto.subtle.decrypt({ name: "AES-GCM", iv }, aes, ct));
				try {
					await crypto.subtle.decrypt({ name: "AES-GCM", iv }, aes, new Uint8Array(ct).fill(0));
				} catch (e) { out.aes_tampered = e.name; }
				const { promise, resolve } = Promise.withResolvers();
				resolve(7);
				out.with_resolvers = await promise;
				out.group_by = Object.groupBy([1, 2, 3], (n) => (n % 2 ? "odd" : "even"));
				out.async_iterator = typeof Symbol.asyncIterator;
				const e = {};
				Error.captureStackTrace(e);
				out.capture_stack = typeof e.stack;
				out.locale = (1234.5).toLocaleString().length > 0;
				const chunks = [];
				const stream = new ReadableStream({ start(c) { c.enqueue("a"); c.enqueue("b"); c.close(); } });
				const it = stream[Symbol.asyncIterator]();
				for (let r = await it.next(); !r.done; r = await it.next()) chunks.push(r.value);
				out.iterated = chunks;
				return Response.json(out);
			},
		};`, worker.Config{})
	got := fetch(t, rt, "GET", "/", nil)
	var body map[string]any
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatalf("status %d body %q: %v", got.Status, got.Body, err)
	}
	want := map[string]any{
		"hmac":           "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8",
		"verify":         true,
		"verify_bad":     false,
		"aes":            "secret",
		"aes_tampered":   "OperationError",
		"with_resolvers": 7.0,
		"group_by":       map[string]any{"odd": []any{1.0, 3.0}, "even": []any{2.0}},
		"async_iterator": "symbol",
		"capture_stack":  "string",
		"locale":         true,
		"iterated":       []any{"a", "b"},
	}
	for k, w := range want {
		if g := body[k]; !jsonEqual(g, w) {
			t.Errorf("%s = %v, want %v", k, g, w)
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestRuntime_FetchConcurrent spreads parallel requests over isolates, each
// waiting on a timer, and checks that answers do not cross.
func TestRuntime_FetchConcurrent(t *testing.T) {
	rt := newRuntime(t, `
		module.exports.default = {
			async fetch(request) {
				const n = new URL(request.url).searchParams.get("n");
				await new Promise((r) => setTimeout(r, 5));
				return new Response(n);
			},
		};`, worker.Config{Isolates: 3})
	var wg sync.WaitGroup
	for i := 0; i < 60; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			n := strings.Repeat("x", i%7) + string(rune('a'+i%26))
			got := fetch(t, rt, "GET", "/?n="+n, nil)
			if string(got.Body) != n {
				t.Errorf("request %d: body = %q, want %q", i, got.Body, n)
			}
		}(i)
	}
	wg.Wait()
}

func BenchmarkFetchHello(b *testing.B) {
	rt := newRuntime(b, `
		module.exports.default = {
			fetch(request) { return new Response("Hello, world!"); },
		};`, worker.Config{Logger: slog.New(slog.DiscardHandler)})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			resp, err := rt.Fetch(ctx, &worker.Request{Method: "GET", URL: "http://localhost/", Header: http.Header{"Accept": {"*/*"}}})
			if err != nil || resp.Status != 200 {
				b.Fatalf("fetch: %v %v", resp, err)
			}
		}
	})
}
