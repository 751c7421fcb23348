package worker_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/celldgo/celld/worker"
)

// nodeRun runs body (the body of an async function that may use require)
// in a nodejs_compat_v2 isolate and returns its result as JSON text.
func nodeRun(t *testing.T, mode worker.NodeMode, body string) string {
	t.Helper()
	rt := newRuntime(t, `module.exports.default = { async fetch() {
  try {
    const r = await (async () => {`+body+`
    })();
    return new Response(JSON.stringify(r === undefined ? null : r));
  } catch (e) {
    return new Response(JSON.stringify({ threw: String(e && e.stack || e) }), { status: 500 });
  }
} };`, worker.Config{Isolates: 1, Node: mode, NodeProcessEnv: true, Vars: map[string]any{"NAME": "x", "N": 5}})
	resp := fetch(t, rt, "GET", "/", nil)
	if resp.Status != 200 {
		t.Fatalf("status %d: %s", resp.Status, resp.Body)
	}
	return string(resp.Body)
}

// nodeCheck runs body and compares its JSON result with want.
func nodeCheck(t *testing.T, body string, want any) {
	t.Helper()
	got := nodeRun(t, worker.NodeV2, body)
	var g any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("result %s: %v", got, err)
	}
	wb, _ := json.Marshal(want)
	var w any
	_ = json.Unmarshal(wb, &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, wb)
	}
}

func TestNode_Smoke(t *testing.T) {
	out := nodeRun(t, worker.NodeV2, `
  const { Buffer } = require("node:buffer");
  return [Buffer.from("hello").toString("base64"), typeof globalThis.Buffer, Buffer === globalThis.Buffer, process.env.NAME];`)
	if !strings.Contains(out, `"aGVsbG8="`) {
		t.Errorf("got %s", out)
	}
	t.Log(out)
}

func TestNode_Quick(t *testing.T) {
	t.Log(nodeRun(t, worker.NodeV2, `
  const util = require("node:util");
  const { Readable, Transform, pipeline, Writable } = require("node:stream");
  const EventEmitter = require("node:events");
  const e = new EventEmitter(); let got = []; e.on("x", (a) => got.push(a)); e.once("x", (a) => got.push("once" + a)); e.emit("x", 1); e.emit("x", 2);
  const up = new Transform({ transform(c, enc, cb) { cb(null, c.toString().toUpperCase()); } });
  const out = [];
  const sink = new Writable({ write(c, enc, cb) { out.push(c.toString()); cb(); } });
  await new Promise((res, rej) => pipeline(Readable.from(["a", "b", "c"]), up, sink, (err) => err ? rej(err) : res()));
  const chunks = [];
  const it = Readable.from([1, 2, 3])[Symbol.asyncIterator](); for (let r = await it.next(); !r.done; r = await it.next()) chunks.push(r.value);
  return [got, out, chunks, util.inspect({a:[1,2,{b:new Map([[1,2]])}], s:"x", d:new Date(0), u:undefined, f(){}, sym:Symbol("q")}), util.format("%s %d %i %j %o %%", "a", 1.5, 2.7, {x:1}, [1]), util.inspect(Buffer.from("hello"))];`))
}

func TestNode_Quick2(t *testing.T) {
	t.Log(nodeRun(t, worker.NodeV2, `
  const c = require("node:crypto"); const zlib = require("node:zlib");
  const h = c.createHash("sha256").update("abc").digest("hex");
  const m = c.createHmac("sha256", "key").update("data").digest("base64");
  const key = c.scryptSync("pw", "salt", 16).toString("hex");
  const pb = c.pbkdf2Sync("pw", "salt", 1000, 16, "sha256").toString("hex");
  const k = Buffer.alloc(32, 1), iv = Buffer.alloc(16, 2);
  const ci = c.createCipheriv("aes-256-cbc", k, iv); const enc = Buffer.concat([ci.update("hello world"), ci.final()]);
  const de = c.createDecipheriv("aes-256-cbc", k, iv); const dec = de.update(enc, undefined, "utf8") + de.final("utf8");
  const g = zlib.gzipSync("hello hello hello"); const back = zlib.gunzipSync(g).toString();
  const chunks = []; const gz = zlib.createGzip(); const gun = zlib.createGunzip();
  gz.pipe(gun); gun.on("data", (d) => chunks.push(d));
  await new Promise((res) => { gun.on("end", res); gz.end("stream me"); });
  return [h, m, key, pb, enc.toString("hex"), dec, back, Buffer.concat(chunks).toString(), zlib.crc32("hello"), c.randomUUID().length];`))
}
