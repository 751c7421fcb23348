package kvjs

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/internal/conformance"
	"github.com/celldgo/celld/kv"
	"github.com/celldgo/celld/worker"
)

// TestBinding_Conformance replays the KV fixtures recorded on workerd
// against the binding, each namespace a cell on a local database.
func TestBinding_Conformance(t *testing.T) {
	for _, name := range []string{"kv-basics", "ctx-waituntil"} {
		t.Run(name, func(t *testing.T) { replay(t, filepath.Join(conformance.Dir, name)) })
	}
}

func replay(t *testing.T, dir string) {
	src, err := os.ReadFile(filepath.Join(dir, "wrangler.jsonc"))
	if err != nil {
		t.Fatalf("read config: %v (fixtures: internal/conformance/testdata)", err)
	}
	cfg, err := deploy.ParseConfig("wrangler.jsonc", src)
	if err != nil {
		t.Fatal(err)
	}
	lc := newLocalCaller(t)
	bindings := map[string]worker.Binding{}
	for _, ns := range cfg.KVNamespaces {
		bindings[ns.Binding] = Binding(lc, ns.ID)
	}
	bundle, err := deploy.Bundle(dir, cfg.Main)
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, cfg.Name, bundle.Code, bindings)
	conformance.ReplayRuntime(t, rt, dir)
}

func newRuntime(t testing.TB, name string, code []byte, bindings map[string]worker.Binding) *worker.Runtime {
	t.Helper()
	script, err := worker.Compile(name, code)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := worker.New(script, worker.Config{Bindings: bindings, Isolates: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	return rt
}

// run evaluates an async function body against env.KV in a Worker and
// returns what it resolved with, as JSON.
func run(t *testing.T, rt *worker.Runtime, body string) string {
	t.Helper()
	req := &worker.Request{Method: "POST", URL: "http://localhost/", Header: http.Header{}, Body: []byte(body)}
	resp, err := rt.Fetch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 {
		t.Fatalf("status %d: %s", resp.Status, resp.Body)
	}
	return string(resp.Body)
}

// evalWorker runs the request body as the body of an async function of
// env, and answers with JSON of its result (errors as {name, message}).
const evalWorker = `
// Code generation is refused once the top level has run, as on workerd:
// the constructor is taken here, at startup, for the harness.
const compile = Function;
export default {
  async fetch(request, env) {
    const fn = new compile("env", "return (async () => {" + await request.text() + "})()");
    const errInfo = (e) => ({ error: e?.name, message: e?.message });
    try {
      return Response.json(await fn(env) ?? null);
    } catch (e) {
      return Response.json(errInfo(e));
    }
  },
};`

func TestBinding_API(t *testing.T) {
	start := time.Now()
	cur := start
	clock := &cur
	lc := newLocalCaller(t)
	lc.handle = kv.HandleAt(func() time.Time { return *clock })
	rt := newRuntime(t, "api", []byte(transpile(t, evalWorker)), map[string]worker.Binding{"KV": Binding(lc, testNS)})
	check := func(name, js, want string) {
		t.Helper()
		t.Run(name, func(t *testing.T) {
			if got := run(t, rt, js); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	exp := start.Unix() + 3600
	check("key errors", `
		const out = [];
		for (const k of ["", ".", "..", "x".repeat(513), "é".repeat(257)]) {
			for (const op of [() => env.KV.get(k), () => env.KV.put(k, "v"), () => env.KV.delete(k)]) {
				out.push(await op().then(() => "ok", (e) => e.constructor.name + ": " + e.message));
			}
		}
		return out;`,
		`["TypeError: Key name cannot be empty.","TypeError: Key name cannot be empty.","TypeError: Key name cannot be empty.",`+
			`"TypeError: \".\" is not allowed as a key name.","TypeError: \".\" is not allowed as a key name.","TypeError: \".\" is not allowed as a key name.",`+
			`"TypeError: \"..\" is not allowed as a key name.","TypeError: \"..\" is not allowed as a key name.","TypeError: \"..\" is not allowed as a key name.",`+
			`"Error: KV GET failed: 414 UTF-8 encoded length of 513 exceeds key length limit of 512.","Error: KV PUT failed: 414 UTF-8 encoded length of 513 exceeds key length limit of 512.","Error: KV DELETE failed: 414 UTF-8 encoded length of 513 exceeds key length limit of 512.",`+
			`"Error: KV GET failed: 414 UTF-8 encoded length of 514 exceeds key length limit of 512.","Error: KV PUT failed: 414 UTF-8 encoded length of 514 exceeds key length limit of 512.","Error: KV DELETE failed: 414 UTF-8 encoded length of 514 exceeds key length limit of 512."]`)
	check("put option errors", `
		const e = (p) => p.then(() => "ok", (e) => e.constructor.name + ": " + e.message);
		return [
			await e(env.KV.put("k", "v", { expirationTtl: 30 })),
			await e(env.KV.put("k", "v", { expiration: 1000 })),
			await e(env.KV.put("k", "v", { metadata: { m: "x".repeat(1100) } })),
			await e(env.KV.put("k", {})),
			await e(env.KV.get("k", { cacheTtl: 10 })),
			await e(env.KV.list({ limit: 1001 })),
			await e(env.KV.get(Array.from({ length: 101 }, (_, i) => "k" + i))),
			await e(env.KV.get(["a"], "arrayBuffer")),
		];`,
		`["Error: KV PUT failed: 400 Invalid expiration_ttl of 30. Expiration TTL must be at least 60.",`+
			`"Error: KV PUT failed: 400 Invalid expiration of 1000. Please specify integer greater than the current number of seconds since the UNIX epoch.",`+
			`"Error: KV PUT failed: 413 Metadata length of 1108 exceeds limit of 1024.",`+
			`"TypeError: KV put() accepts only strings, ArrayBuffers, ArrayBufferViews, and ReadableStreams as values.",`+
			`"Error: KV GET failed: 400 Invalid cache_ttl of 10. Cache TTL must be at least 30.",`+
			`"Error: KV GET failed: 400 Invalid key_count_limit of 1001. Please specify an integer less than 1000.",`+
			`"Error: KV GET_BULK failed: 400 You can request a maximum of 100 keys",`+
			`"Error: KV GET_BULK failed: 400 \"arrayBuffer\" is not a valid type. Use \"json\" or \"text\""]`)
	check("values of every kind", `
		const bytes = new Uint8Array([9, 8, 7, 6, 5]);
		await env.KV.put("view", bytes.subarray(1, 4));
		await env.KV.put("stream", new Response("streamed ✓").body);
		await env.KV.put("num", 42);
		await env.KV.put("bad-utf8", new Uint8Array([0x61, 0xff, 0x62]));
		return [
			[...new Uint8Array(await env.KV.get("view", "arrayBuffer"))],
			await env.KV.get("stream"),
			await env.KV.get("num", "json"),
			await env.KV.get("bad-utf8"),
		];`,
		`[[8,7,6],"streamed ✓",42,"a`+"\ufffd"+`b"]`)
	check("bulk get", `
		await env.KV.put("j1", JSON.stringify({ a: 1 }), { metadata: { m: 1 } });
		await env.KV.put("j2", "[2]");
		const text = await env.KV.get(["j1", "missing", "j2"]);
		const json = await env.KV.get(["j1", "j2"], { type: "json" });
		const meta = await env.KV.getWithMetadata(["j1", "missing"], "json");
		const bad = await env.KV.get(["j1", "num", "stream"], "json").catch((e) => e.message);
		return { text: [...text], json: [...json], meta: [...meta], isMap: text instanceof Map, bad };`,
		`{"text":[["j1","{\"a\":1}"],["missing",null],["j2","[2]"]],"json":[["j1",{"a":1}],["j2",[2]]],`+
			`"meta":[["j1",{"value":{"a":1},"metadata":{"m":1}}],["missing",null]],"isMap":true,`+
			`"bad":"KV GET_BULK failed: 400 At least one of the requested keys corresponds to a non-json value"}`)
	check("expiration and list pages", `
		await env.KV.put("page:a", "1", { expiration: `+strconv.FormatInt(exp, 10)+`, metadata: { n: 1 } });
		await env.KV.put("page:b", "2", { expirationTtl: 60 });
		await env.KV.put("page:c", "3");
		const first = await env.KV.list({ prefix: "page:", limit: 2 });
		const second = await env.KV.list({ prefix: "page:", cursor: first.cursor });
		const meta = await env.KV.getWithMetadata("page:a");
		return { first: first.keys, complete: first.list_complete, hasCursor: typeof first.cursor, second, meta };`,
		`{"first":[{"name":"page:a","expiration":`+strconv.FormatInt(exp, 10)+`,"metadata":{"n":1}},{"name":"page:b","expiration":`+strconv.FormatInt(start.Unix()+60, 10)+`}],`+
			`"complete":false,"hasCursor":"string","second":{"keys":[{"name":"page:c"}],"list_complete":true,"cacheStatus":null},`+
			`"meta":{"value":"1","metadata":{"n":1},"cacheStatus":null}}`)
	*clock = start.Add(61 * time.Second)
	check("expired pairs are gone from get and list", `
		return [await env.KV.get("page:b"), (await env.KV.list({ prefix: "page:" })).keys.map((k) => k.name)];`,
		`[null,["page:a","page:c"]]`)
	check("unknown type only fails for a present key", `
		return [await env.KV.get("missing", "xml"), await env.KV.get("page:a", "xml").catch((e) => e.constructor.name)];`,
		`[null,"TypeError"]`)

	var decoded any
	if err := json.Unmarshal([]byte(run(t, rt, `return 1`)), &decoded); err != nil || decoded != 1.0 {
		t.Errorf("sanity: %v %v", decoded, err)
	}
}

// transpile bundles an ES module Worker the way deploy does.
func transpile(t testing.TB, src string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.js"), []byte(strings.TrimSpace(src)), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := deploy.Bundle(dir, "index.js")
	if err != nil {
		t.Fatal(err)
	}
	return string(b.Code)
}
