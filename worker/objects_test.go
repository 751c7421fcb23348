package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/worker"
)

// objectScript is a Worker with Durable Object classes used by the tests
// below. The default export routes /<binding>/<name>/<method> to an RPC
// call and /fetch/<name>/... to a stub fetch.
const objectScript = `
const { DurableObject } = require("cloudflare:workers");
class Box extends DurableObject {
	constructor(ctx, env) {
		super(ctx, env);
		this.constructed = (globalThis.constructions = (globalThis.constructions || 0) + 1);
	}
	async fetch(request) {
		const url = new URL(request.url);
		if (url.pathname === "/throw") throw new TypeError("thrown by fetch");
		if (url.pathname === "/slow") {
			await new Promise((r) => setTimeout(r, 150));
			return new Response("slow done");
		}
		if (url.pathname === "/spin") { for (;;) {} }
		return new Response(JSON.stringify({ name: this.ctx.id.name ?? null, id: this.ctx.id.toString() }));
	}
	async put(key, value) { await this.ctx.storage.put(key, value); return true; }
	async get(key) { return this.ctx.storage.get(key); }
	whoAmI() { return this.ctx.id.name ?? null; }
	constructions() { return this.constructed; }
	hang() { return new Promise(() => {}); }
	badPut() { return this.ctx.storage.put("f", () => 1); }
	async roundTrip() {
		const s = this.ctx.storage;
		const shared = { n: 1 };
		const cyc = { shared, again: shared, list: [1, , 3] };
		cyc.self = cyc;
		const buf = new ArrayBuffer(8);
		class Point { constructor() { this.x = 1; } get y() { return 2; } }
		const err = new RangeError("r", { cause: { why: 1 } });
		await s.put({
			cyc, negZero: -0, big: -(2n ** 70n), wrapped: [Object(1), Object("s"), Object(false)],
			views: [new Uint16Array(buf, 2, 2), new DataView(buf, 1, 3), buf], point: new Point(), err,
			blob: new Blob(["hi"], { type: "text/plain" }), file: new File(["f"], "f.txt", { lastModified: 5 }),
			date: new Date(NaN), re: /x+/y, symKey: { [Symbol("s")]: 1, k: 2 }, dom: new DOMException("d", "AbortError"),
		});
		const r = await s.get(["cyc", "negZero", "big", "wrapped", "views", "point", "err", "blob", "file", "date", "re", "symKey", "dom"]);
		const c = r.get("cyc");
		const [u16, dv, ab] = r.get("views");
		const e = r.get("err");
		const refuse = async (v) => { try { await s.put("x", v); return "stored"; } catch (e) { return e.name; } };
		return {
			cycle: c.self === c, shared: c.shared === c.again, hole: !(1 in c.list) && c.list.length === 3,
			negZero: Object.is(r.get("negZero"), -0), big: r.get("big") === -(2n ** 70n),
			wrapped: r.get("wrapped").map((w) => typeof w + ":" + w.valueOf()),
			sharedBuffer: u16.buffer === dv.buffer && dv.buffer === ab && u16.byteOffset === 2 && u16.length === 2 && dv.byteLength === 3,
			point: JSON.stringify(r.get("point")) + (r.get("point") instanceof Point),
			err: e instanceof RangeError && e.message === "r" && e.cause.why === 1,
			blob: r.get("blob") instanceof Blob && r.get("blob").type === "text/plain" && (await r.get("blob").text()) === "hi",
			file: r.get("file") instanceof File && r.get("file").name === "f.txt" && r.get("file").lastModified === 5,
			date: isNaN(r.get("date").getTime()), re: String(r.get("re")), symKey: Object.keys(r.get("symKey")),
			dom: r.get("dom") instanceof DOMException && r.get("dom").name === "AbortError",
			refused: [await refuse(Promise.resolve()), await refuse(new WeakSet()), await refuse(new Headers()),
				await refuse(new Proxy({}, {})), await refuse(Symbol("x")), await refuse({ f() {} })],
		};
	}
	async txn(fail) {
		const s = this.ctx.storage;
		await s.put("t", "before");
		try {
			await s.transaction(async (txn) => {
				await txn.put("t", "inside");
				await new Promise((r) => setTimeout(r, 5)); // not storage: other events may run
				if (fail === "throw") throw new Error("undo");
				if (fail === "rollback") txn.rollback();
			});
		} catch (e) {
			return { error: e.message, t: await s.get("t") };
		}
		return { t: await s.get("t") };
	}
	selfCall() { return this.env.BOX.get(this.ctx.id).whoAmI(); }
	sql() {
		const sql = this.ctx.storage.sql;
		sql.exec("CREATE TABLE IF NOT EXISTS b (v BLOB, n)");
		sql.exec("INSERT INTO b VALUES (?, ?)", new Uint16Array([1, 2]), true);
		const row = sql.exec("SELECT v, n, typeof(n) AS t FROM b").one();
		const sum = this.ctx.storage.transactionSync(() => sql.exec("SELECT count(*) AS c FROM b").one().c);
		this.ctx.storage.kv.put("kv", { x: 1 });
		return { v: [...new Uint8Array(row.v)], n: row.n, t: row.t, isBuffer: row.v instanceof ArrayBuffer, sum, kv: this.ctx.storage.kv.get("kv") };
	}
}
class Gated extends DurableObject {
	constructor(ctx, env) {
		super(ctx, env);
		ctx.blockConcurrencyWhile(async () => {
			await new Promise((r) => setTimeout(r, 10));
			if (!globalThis.failedOnce) {
				globalThis.failedOnce = true;
				throw new RangeError("schema setup failed");
			}
		});
	}
	ok() { return "ok"; }
}
class Plain {
	constructor(ctx) { this.ctx = ctx; }
	async fetch() { return new Response("plain fetch"); }
	method() { return 1; }
}
module.exports = {
	Box, Gated, Plain,
	default: {
		async fetch(request, env) {
			const url = new URL(request.url);
			const [, what, name, arg] = url.pathname.split("/");
			try {
				if (what === "gated") return Response.json(await env.GATED.getByName(name).ok());
				if (what === "plain-rpc") return Response.json(await env.PLAIN.getByName(name).method());
				if (what === "plain-fetch") return env.PLAIN.getByName(name).fetch("http://x/");
				if (what === "fetch") return await env.BOX.getByName(name).fetch("http://x/" + (arg || ""));
				return Response.json(await env.BOX.getByName(name)[what](arg));
			} catch (e) {
				return Response.json({ caught: { name: e.name, message: e.message } }, { status: 500 });
			}
		},
	},
};
`

func newObjectRuntime(t *testing.T, cfg worker.Config) (*worker.Runtime, *localObjects) {
	t.Helper()
	host := newLocalObjects(t)
	cfg.DurableObjects = map[string]string{"BOX": "Box", "GATED": "Gated", "PLAIN": "Plain"}
	cfg.Objects = host
	if cfg.Isolates == 0 {
		cfg.Isolates = 2
	}
	rt := newRuntime(t, objectScript, cfg)
	host.use(rt)
	return rt, host
}

func getJSON(t *testing.T, rt *worker.Runtime, path string) (int, any) {
	t.Helper()
	resp := fetch(t, rt, "GET", path, nil)
	var v any
	if err := json.Unmarshal(resp.Body, &v); err != nil {
		t.Fatalf("GET %s: body %q is not JSON: %v", path, resp.Body, err)
	}
	return resp.Status, v
}

func TestObjects_IDs(t *testing.T) {
	a := worker.ObjectIDFromName("Box", "alpha")
	if a != worker.ObjectIDFromName("Box", "alpha") || len(a) != 64 || strings.ToLower(a) != a {
		t.Fatalf("ObjectIDFromName = %q: not stable 64 lowercase hex", a)
	}
	if a == worker.ObjectIDFromName("Other", "alpha") || a == worker.ObjectIDFromName("Box", "beta") {
		t.Fatal("ids collide across classes or names")
	}
	u := worker.NewUniqueObjectID("Box")
	if !worker.ValidObjectID("Box", a) || !worker.ValidObjectID("Box", u) {
		t.Fatal("own ids not valid")
	}
	if worker.ValidObjectID("Other", a) || worker.ValidObjectID("Box", strings.ToUpper(a)) || worker.ValidObjectID("Box", a[:63]) {
		t.Fatal("foreign or malformed id accepted")
	}
}

func TestObjects_NewObjectChecks(t *testing.T) {
	rt, _ := newObjectRuntime(t, worker.Config{})
	db, err := cell.Open(filepath.Join(t.TempDir(), "x.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := rt.NewObject("Box", worker.ObjectIDFromName("Other", "x"), db); err == nil {
		t.Error("NewObject accepted an id of another class")
	}
	if _, err := rt.NewObject("Missing", worker.ObjectIDFromName("Missing", "x"), db); err == nil || !strings.Contains(err.Error(), "Missing") {
		t.Errorf("NewObject of a class the script does not export: %v", err)
	}
}

func TestObjects_NameAndExceptionOverFetch(t *testing.T) {
	rt, host := newObjectRuntime(t, worker.Config{})
	if _, v := getJSON(t, rt, "/fetch/alpha"); v.(map[string]any)["name"] != "alpha" {
		t.Errorf("id.name inside = %v, want alpha", v)
	}
	status, v := getJSON(t, rt, "/fetch/alpha/throw")
	want := map[string]any{"caught": map[string]any{"name": "TypeError", "message": "thrown by fetch"}}
	if status != 500 || !reflect.DeepEqual(v, want) {
		t.Errorf("stub.fetch of a throwing handler = %d %v, want the TypeError rethrown", status, v)
	}

	// The Go side of the same: a 500 that carries the exception.
	h, err := host.Object(context.Background(), "Box", worker.ObjectIDFromName("Box", "alpha"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://x/throw"})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := worker.DecodeException(resp.Header.Get(worker.ExceptionHeader))
	if resp.Status != 500 || err != nil || ex.Name != "TypeError" || ex.Message != "thrown by fetch" {
		t.Errorf("Fetch = %d, exception %+v (%v)", resp.Status, ex, err)
	}
	// Without a name in the context the object keeps the one it learned.
	resp, err = h.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://x/"})
	if err != nil || !strings.Contains(string(resp.Body), `"name":"alpha"`) {
		t.Errorf("Fetch = %q, %v", resp.Body, err)
	}
}

func TestObjects_CallFromGo(t *testing.T) {
	_, host := newObjectRuntime(t, worker.Config{})
	id := worker.NewUniqueObjectID("Box")
	h, err := host.Object(context.Background(), "Box", id)
	if err != nil {
		t.Fatal(err)
	}
	ctx := worker.WithObjectName(context.Background(), "box")
	value := map[string]any{"n": big.NewInt(7), "when": time.UnixMilli(1700000000000).UTC(), "list": []any{"a", 1.0}}
	args, err := worker.Serialize([]any{"k", value})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Call(ctx, "put", args); err != nil {
		t.Fatalf("Call put: %v", err)
	}
	args, _ = worker.Serialize([]any{"k"})
	res, err := h.Call(ctx, "get", args)
	if err != nil {
		t.Fatalf("Call get: %v", err)
	}
	got, err := worker.Deserialize(res)
	if err != nil || !reflect.DeepEqual(got, value) {
		t.Errorf("get = %#v (%v), want %#v", got, err, value)
	}
	_, err = h.Call(ctx, "noSuch", args)
	var ex *worker.Exception
	if !errors.As(err, &ex) || ex.Name != "TypeError" || ex.Message != `The RPC receiver does not implement the method "noSuch".` {
		t.Errorf("unknown method: %v", err)
	}
}

// TestObjects_StorageSharedWithGo writes values in JavaScript and reads
// the cell with Go's Deserialize after the object stopped, and back.
func TestObjects_StorageSharedWithGo(t *testing.T) {
	_, host := newObjectRuntime(t, worker.Config{})
	id := worker.ObjectIDFromName("Box", "shared")
	h, err := host.Object(context.Background(), "Box", id)
	if err != nil {
		t.Fatal(err)
	}
	call := func(method string, args ...any) any {
		t.Helper()
		b, err := worker.Serialize(args)
		if err != nil {
			t.Fatal(err)
		}
		res, err := h.Call(context.Background(), method, b)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		v, err := worker.Deserialize(res)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	call("put", "from-js", map[string]any{"set": &worker.JSSet{Values: []any{"x"}}, "bytes": &worker.JSTypedArray{Type: "Uint8Array", Data: []byte{1, 2}}})
	if err := host.evict("Box", id); err != nil {
		t.Fatal(err)
	}
	db, err := cell.Open(filepath.Join(host.dir, "Box:"+id+".sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	raw, ok, err := db.Get("from-js")
	if err != nil || !ok {
		t.Fatalf("Get from-js: %v %v", ok, err)
	}
	v, err := worker.Deserialize(raw)
	want := map[string]any{"set": &worker.JSSet{Values: []any{"x"}}, "bytes": &worker.JSTypedArray{Type: "Uint8Array", Data: []byte{1, 2}}}
	if err != nil || !reflect.DeepEqual(v, want) {
		t.Errorf("stored by JS, read by Go = %#v (%v)", v, err)
	}
	fromGo, _ := worker.Serialize(&worker.JSMap{Keys: []any{1.0}, Values: []any{"one"}})
	if err := db.Put("from-go", fromGo); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if h, err = host.Object(context.Background(), "Box", id); err != nil {
		t.Fatal(err)
	}
	got := call("get", "from-go")
	if m, ok := got.(*worker.JSMap); !ok || !reflect.DeepEqual(m.Values, []any{"one"}) {
		t.Errorf("stored by Go, read by JS = %#v", got)
	}
	if got := call("constructions"); got != 1.0 {
		t.Errorf("constructions = %v, want 1 (a new activation is a new isolate)", got)
	}
}

func TestObjects_Transactions(t *testing.T) {
	rt, _ := newObjectRuntime(t, worker.Config{})
	for _, c := range []struct {
		arg  string
		want map[string]any
	}{
		{"commit", map[string]any{"t": "inside"}},
		{"throw", map[string]any{"error": "undo", "t": "before"}},
		{"rollback", map[string]any{"t": "before"}},
	} {
		if _, v := getJSON(t, rt, "/txn/t/"+c.arg); !reflect.DeepEqual(v, c.want) {
			t.Errorf("txn %s = %v, want %v", c.arg, v, c.want)
		}
	}
	// Two transactions at once on one object, each awaiting a timer.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			resp := fetch(t, rt, "GET", "/txn/t/commit", nil)
			if resp.Status != 200 {
				t.Errorf("concurrent txn: %d %s", resp.Status, resp.Body)
			}
		})
	}
	wg.Wait()
}

func TestObjects_SQLAndSyncAPIs(t *testing.T) {
	rt, _ := newObjectRuntime(t, worker.Config{})
	_, v := getJSON(t, rt, "/sql/s")
	want := map[string]any{"v": []any{1.0, 0.0, 2.0, 0.0}, "n": "true", "t": "text", "isBuffer": true, "sum": 1.0, "kv": map[string]any{"x": 1.0}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("sql = %v, want %v", v, want)
	}
}

func TestObjects_SelfCallAndPlainClass(t *testing.T) {
	rt, _ := newObjectRuntime(t, worker.Config{})
	if _, v := getJSON(t, rt, "/selfCall/me"); v != "me" {
		t.Errorf("self call = %v", v)
	}
	_, v := getJSON(t, rt, "/plain-rpc/p")
	if c, _ := v.(map[string]any)["caught"].(map[string]any); c == nil || c["name"] != "TypeError" || !strings.Contains(c["message"].(string), "extends DurableObject") {
		t.Errorf("RPC to a class without DurableObject = %v", v)
	}
	if resp := fetch(t, rt, "GET", "/plain-fetch/p", nil); string(resp.Body) != "plain fetch" {
		t.Errorf("fetch to a plain class = %d %q", resp.Status, resp.Body)
	}
}

func TestObjects_BlockConcurrencyWhileFailureResets(t *testing.T) {
	rt, _ := newObjectRuntime(t, worker.Config{})
	// The first construction's blockConcurrencyWhile callback rejects: the
	// event waiting for it fails with that exception, and the next event
	// constructs the object again.
	_, v := getJSON(t, rt, "/gated/g")
	want := map[string]any{"caught": map[string]any{"name": "RangeError", "message": "schema setup failed"}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("first event = %v, want %v", v, want)
	}
	if _, v := getJSON(t, rt, "/gated/g"); v != "ok" {
		t.Errorf("second event = %v, want ok", v)
	}
}

func TestObjects_StorageRoundTrip(t *testing.T) {
	rt, _ := newObjectRuntime(t, worker.Config{})
	_, v := getJSON(t, rt, "/roundTrip/r")
	want := map[string]any{
		"cycle": true, "shared": true, "hole": true, "negZero": true, "big": true,
		"wrapped": []any{"object:1", "object:s", "object:false"}, "sharedBuffer": true,
		"point": `{"x":1}false`, "err": true, "blob": true, "file": true, "date": true, "re": "/x+/y",
		"symKey": []any{"k"}, "dom": true,
		"refused": []any{"DataCloneError", "DataCloneError", "DataCloneError", "DataCloneError", "DataCloneError", "DataCloneError"},
	}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("round trip =\n%v\nwant\n%v", v, want)
	}
}

func TestObjects_DOMExceptionCrossesOver(t *testing.T) {
	rt, _ := newObjectRuntime(t, worker.Config{})
	_, v := getJSON(t, rt, "/badPut/b")
	c, _ := v.(map[string]any)["caught"].(map[string]any)
	if c == nil || c["name"] != "DataCloneError" || !strings.Contains(c["message"].(string), "could not be cloned") {
		t.Errorf("DataCloneError thrown in the object = %v", v)
	}
}

func BenchmarkObjects_CallPut(b *testing.B) {
	host := newLocalObjects(b)
	script, err := worker.Compile("bench.js", []byte(objectScript))
	if err != nil {
		b.Fatal(err)
	}
	rt, err := worker.New(script, worker.Config{Isolates: 1, Objects: host, DurableObjects: map[string]string{"BOX": "Box"}, Logger: testLogger(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close(context.Background()) })
	host.use(rt)
	h, err := host.Object(context.Background(), "Box", worker.ObjectIDFromName("Box", "bench"))
	if err != nil {
		b.Fatal(err)
	}
	args, _ := worker.Serialize([]any{"key", map[string]any{"n": 1.0, "s": "some text", "list": []any{1.0, 2.0, 3.0}}})
	b.ResetTimer()
	for range b.N {
		if _, err := h.Call(context.Background(), "put", args); err != nil {
			b.Fatal(err)
		}
	}
}

func TestObjects_HungCall(t *testing.T) {
	rt, _ := newObjectRuntime(t, worker.Config{})
	start := time.Now()
	_, v := getJSON(t, rt, "/hang/h")
	want := map[string]any{"caught": map[string]any{"name": "Error", "message": "The script will never generate a response."}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("hung method = %v", v)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
}

func TestObjects_CloseWaitsForEvents(t *testing.T) {
	_, host := newObjectRuntime(t, worker.Config{})
	id := worker.ObjectIDFromName("Box", "closing")
	h, err := host.Object(context.Background(), "Box", id)
	if err != nil {
		t.Fatal(err)
	}
	obj := host.resident("Box", id)
	got := make(chan *worker.Response, 1)
	go func() {
		resp, err := h.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://x/slow"})
		if err != nil {
			t.Errorf("slow fetch: %v", err)
		}
		got <- resp
	}()
	deadline := time.Now().Add(time.Second)
	for obj.Busy() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if obj.Busy() != 1 {
		t.Fatalf("Busy = %d during a slow fetch", obj.Busy())
	}
	if err := obj.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if resp := <-got; resp == nil || string(resp.Body) != "slow done" {
		t.Errorf("in-flight fetch was not finished before Close returned: %v", resp)
	}
	select {
	case <-obj.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if _, err := obj.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://x/"}); !errors.Is(err, worker.ErrObjectClosed) {
		t.Errorf("Fetch after Close: %v, want ErrObjectClosed", err)
	}
	if obj.Busy() != 0 {
		t.Errorf("Busy after Close = %d", obj.Busy())
	}
}

func TestObjects_CloseCutsOffRunawayHandler(t *testing.T) {
	_, host := newObjectRuntime(t, worker.Config{TaskTimeout: time.Minute})
	id := worker.ObjectIDFromName("Box", "spin")
	h, err := host.Object(context.Background(), "Box", id)
	if err != nil {
		t.Fatal(err)
	}
	obj := host.resident("Box", id)
	errc := make(chan error, 1)
	go func() {
		_, err := h.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://x/spin"})
		errc <- err
	}()
	for obj.Busy() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := obj.Close(ctx); err == nil {
		t.Error("Close of a spinning object reported no cut-off work")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := <-errc; !errors.Is(err, worker.ErrObjectStopped) {
		t.Errorf("in-flight fetch: %v, want ErrObjectStopped", err)
	}
	// The database is free: closing it now is safe (the race detector
	// watches).
	if err := host.evict("Box", id); err != nil {
		t.Errorf("close database after Close: %v", err)
	}
}

func TestObjects_HostFailureReachesScript(t *testing.T) {
	rt := newRuntime(t, objectScript, worker.Config{
		Isolates:       1,
		DurableObjects: map[string]string{"BOX": "Box"},
		Objects:        failingHost{},
	})
	_, v := getJSON(t, rt, "/whoAmI/x")
	c, _ := v.(map[string]any)["caught"].(map[string]any)
	if c == nil || c["name"] != "Error" || !strings.Contains(c["message"].(string), "no room") {
		t.Errorf("host failure = %v", v)
	}
}

type failingHost struct{}

func (failingHost) Object(context.Context, string, string) (worker.ObjectHandle, error) {
	return nil, errors.New("no room for objects")
}
