package worker_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sync"
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

func TestNode_Globals(t *testing.T) {
	nodeCheck(t, `
  const { Buffer } = require("node:buffer");
  return [typeof globalThis.Buffer, Buffer === globalThis.Buffer, process.env.NAME, process.env.N, typeof setImmediate, global === globalThis];`,
		[]any{"function", true, "x", "5", "function", true})
	// v1: the modules, no globals; without the flag, no modules.
	if got := nodeRun(t, worker.NodeV1, `return [typeof globalThis.Buffer, typeof require("node:buffer").Buffer, typeof globalThis.process];`); got != `["undefined","function","undefined"]` {
		t.Errorf("v1: %s", got)
	}
	if got := nodeRun(t, worker.NodeALS, `
  let e; try { require("node:buffer"); } catch (x) { e = x.message; }
  return [typeof require("node:async_hooks").AsyncLocalStorage, e];`); got != `["function","No such module \"node:buffer\"."]` {
		t.Errorf("als: %s", got)
	}
	if got := nodeRun(t, worker.NodeOff, `let e; try { require("node:events"); } catch (x) { e = x.message; } return e;`); got != `"No such module \"node:events\"."` {
		t.Errorf("off: %s", got)
	}
}

// Buffer edge cases beyond the recorded fixture: shared memory, bounds,
// big inputs crossing the Go fast paths.
func TestNode_BufferEdges(t *testing.T) {
	nodeCheck(t, `
  const big = "A".repeat(3 << 20);
  const b64 = Buffer.from(big).toString("base64");
  const round = Buffer.from(b64, "base64");
  const u8 = new Uint8Array([1, 2, 3, 4]);
  const view = Buffer.from(u8.buffer, 1, 2);
  view[0] = 9;
  const sub = Buffer.from("abcdef").subarray(2, 4);
  const utf16 = Buffer.from("\ud83d\ude00 a", "utf16le");
  const w = Buffer.alloc(4);
  return [
    round.length === big.length && round.toString() === big,
    Buffer.from(b64.slice(0, 10) + "\n" + b64.slice(10, 20), "base64").toString(),
    u8[1], view.byteOffset, sub.toString(), sub.buffer.byteLength >= 6,
    utf16.toString("utf16le"), utf16.length,
    w.write("\u20ac\u20ac", 0), w.toString("hex"),
    Buffer.byteLength("\ud83d\ude00\ud800"), Buffer.from("\ud800").toString("hex"),
    Buffer.from("ff00", "hex").readInt16BE(0), Buffer.from([0, 0, 0x80, 0x3f]).readFloatLE(0),
    Buffer.concat([Buffer.from("a"), new Uint8Array([98])]).toString(),
    Buffer.alloc(0).toString("base64"), Buffer.from("", "hex").length,
    Buffer.from("hello").indexOf("l", -2), Buffer.from("aaa").lastIndexOf("a", -2),
  ];`, []any{true, "AAAAAAAAAAAAAAA", 9.0, 1.0, "cd", true, "\U0001F600 a", 8.0, 3.0, "e282ac00", 7.0, "efbfbd", -256.0, 1.0, "ab", "", 0.0, 3.0, 1.0})
}

// AsyncLocalStorage keeps each request's store while requests interleave
// in one isolate over awaits, timers and nextTick.
func TestNode_AsyncLocalStorageInterleaved(t *testing.T) {
	rt := newRuntime(t, `
const { AsyncLocalStorage } = require("node:async_hooks");
const als = new AsyncLocalStorage();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
module.exports.default = { async fetch(req) {
  const id = new URL(req.url).searchParams.get("id");
  return als.run(id, async () => {
    const seen = [];
    for (let i = 0; i < 4; i++) {
      await sleep(1 + ((Number(id) + i) % 3));
      seen.push(als.getStore());
      await new Promise((r) => process.nextTick(r));
      seen.push(als.getStore());
      await new Promise((r) => setTimeout(() => { seen.push(als.getStore()); r(); }, 0));
    }
    return new Response(seen.every((s) => s === id) ? "ok" : "mixed: " + seen.join(","));
  });
} };`, worker.Config{Isolates: 1, Node: worker.NodeV2})
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := 0; i < 16; i++ {
		wg.Go(func() {
			resp := fetch(t, rt, "GET", fmt.Sprintf("/?id=%d", i), nil)
			if string(resp.Body) != "ok" {
				errs <- fmt.Sprintf("request %d: %s", i, resp.Body)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// zlib reads what Node's zlib wrote and writes what Node's zlib reads
// (round trips here; the recorded fixture has workerd's side).
func TestNode_ZlibNodeData(t *testing.T) {
	// zlib.gzipSync / deflateSync / deflateRawSync in Node 20 of
	// "The quick brown fox jumps over the lazy dog. " x 20.
	nodeCheck(t, `
  const zlib = require("node:zlib");
  const fox = "The quick brown fox jumps over the lazy dog. ".repeat(20);
  const gz = "H4sIAAAAAAAAAwvJSFUoLM1MzlZIKsovz1NIy69QyCrNLShWyC9LLVIoyUhVyEmsqlRIyU/XUwgZVTyqeFQxtRUDAOZKZrCEAwAA";
  const df = "eNoLyUhVKCzNTM5WSCrKL89TSMuvUMgqzS0oVsgvSy1SKMlIVchJrKpUSMlP11MIGVU8qnhUMbUVAwBHpUMc";
  const raw = "C8lIVSgszUzOVkgqyi/PU0jLr1DIKs0tKFbIL0stUijJSFXISayqVEjJT9dTCBlVPKp4VDG1FQMA";
  const out = [];
  out.push(zlib.gunzipSync(Buffer.from(gz, "base64")).toString() === fox);
  out.push(zlib.inflateSync(Buffer.from(df, "base64")).toString() === fox);
  out.push(zlib.inflateRawSync(Buffer.from(raw, "base64")).toString() === fox);
  const big = Buffer.concat([require("node:crypto").randomBytes(1 << 18), Buffer.alloc(1 << 18, "compressible ")]);
  for (const [c, d] of [["gzipSync", "gunzipSync"], ["deflateSync", "inflateSync"], ["deflateRawSync", "inflateRawSync"]]) {
    out.push(zlib[d](zlib[c](big)).equals(big));
  }
  const parts = [];
  const gzip = zlib.createGzip(), gunzip = zlib.createGunzip();
  gzip.pipe(gunzip);
  gunzip.on("data", (c) => parts.push(c));
  await new Promise((res, rej) => {
    gunzip.on("end", res); gunzip.on("error", rej);
    for (let i = 0; i < 4; i++) gzip.write(big.subarray(i << 17, (i + 1) << 17));
    gzip.end();
  });
  out.push(Buffer.concat(parts).equals(big));
  const g = zlib.gzipSync("x");
  out.push([g[0], g[1], g[2], g[9]]);
  let e; try { zlib.gunzipSync(Buffer.from(gz, "base64").subarray(0, 30)); } catch (x) { e = x.message; }
  out.push(e);
  return out;`, []any{true, true, true, true, true, true, true, []any{31.0, 139.0, 8.0, 3.0}, "unexpected end of file"})
}

func TestNode_Crypto(t *testing.T) {
	// Values from Node 20.
	nodeCheck(t, `
  const c = require("node:crypto");
  const k = Buffer.alloc(32, 1), iv = Buffer.alloc(16, 2);
  const ci = c.createCipheriv("aes-256-cbc", k, iv);
  const enc = Buffer.concat([ci.update("hello world", "utf8"), ci.final()]);
  const de = c.createDecipheriv("aes-256-cbc", k, iv);
  return [
    c.createHash("sha256").update("abc").digest("hex"),
    c.createHmac("sha256", "key").update("data").digest("base64"),
    c.scryptSync("pw", "salt", 16, { N: 1024 }).toString("hex").length,
    c.pbkdf2Sync("pw", "salt", 1000, 16, "sha256").toString("hex"),
    enc.toString("hex"),
    de.update(enc, undefined, "utf8") + de.final("utf8"),
  ];`, []any{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "UDH+PZicbRU3oBP6bnOdojRj/a7DtwE32Cjjas4iG9A=",
		32.0, "0a38253555ce37f5c72a6b703f996814", "f563737a376afbed282274255a7fcabd", "hello world"})
}

// Buffers are Uint8Arrays to the rest of the runtime: bodies, encoders,
// digests and structured clones take them.
func TestNode_BufferInterop(t *testing.T) {
	nodeCheck(t, `
  const b = Buffer.from("héllo");
  const cloned = structuredClone(b);
  const digest = Buffer.from(await crypto.subtle.digest("SHA-1", b)).toString("hex");
  return [
    await new Response(b).text(),
    new TextDecoder().decode(b),
    cloned instanceof Uint8Array, Buffer.isBuffer(cloned), cloned.length,
    digest,
    await new Blob([b, Buffer.from("!")]).text(),
    btoa(String.fromCharCode(...b.subarray(0, 1))),
  ];`, /* SHA-1 of "héllo" from Node */ []any{"héllo", "héllo", true, false, 6.0, "35b5ea45c5e41f78b46a937cc74d41dfea920890", "héllo!", "aA=="})
}

// Sign and Verify against keys and signatures Node 20 made
// (testdata/node-keys.json: throwaway test keys). RSA PKCS#1 v1.5 and
// Ed25519 signatures are deterministic, so celld's must equal Node's.
func TestNode_SignVerify(t *testing.T) {
	keys, err := os.ReadFile("testdata/node-keys.json")
	if err != nil {
		t.Fatal(err)
	}
	nodeCheck(t, `
  const c = require("node:crypto");
  const k = `+string(keys)+`;
  const msg = Buffer.from("message");
  const rsaPriv = c.createPrivateKey(k.rsaPriv);
  const rsaPub = c.createPublicKey(k.rsaPriv);
  const ecPub = c.createPublicKey(k.ecPub);
  return [
    c.createSign("RSA-SHA256").update("message").sign(k.rsaPriv, "base64") === k.rsaSig,
    c.createSign("sha256").update("mess").update("age").sign(c.createPrivateKey(k.rsaPkcs1), "base64") === k.rsaSig,
    c.createVerify("RSA-SHA256").update("message").verify(k.rsaPub, k.rsaSig, "base64"),
    c.createVerify("RSA-SHA256").update("other").verify(k.rsaPub, k.rsaSig, "base64"),
    c.verify("sha256", msg, k.ecPub, Buffer.from(k.ecSig, "base64")),
    c.verify("sha256", msg, { key: k.ecPub, dsaEncoding: "ieee-p1363" }, Buffer.from(k.ecSigP1363, "base64")),
    c.verify("sha256", msg, k.ecPub, c.sign("sha256", msg, k.ecPriv)),
    c.sign(null, msg, k.edPriv).toString("base64") === k.edSig,
    c.verify(null, msg, k.edPub, Buffer.from(k.edSig, "base64")),
    // Node signed with the longest salt; the default here is workerd's
    // digest-length salt, so say so.
    c.verify("sha256", msg, { key: k.rsaPub, padding: c.constants.RSA_PKCS1_PSS_PADDING, saltLength: c.constants.RSA_PSS_SALTLEN_AUTO }, Buffer.from(k.pssSig, "base64")),
    [rsaPriv.type, rsaPriv.asymmetricKeyType, rsaPriv.asymmetricKeyDetails.modulusLength, rsaPub.type, ecPub.asymmetricKeyDetails.namedCurve],
    rsaPub.export({ type: "spki", format: "pem" }) === k.rsaPub,
    rsaPub.equals(c.createPublicKey(k.rsaPub)),
    (() => { const p = c.generateKeyPairSync("ec", { namedCurve: "P-256" }); return c.verify("sha256", msg, p.publicKey, c.sign("sha256", msg, p.privateKey)); })(),
    (() => { try { c.createPrivateKey(k.rsaPub); return "no error"; } catch (e) { return e.name; } })(),
  ];`, []any{true, true, true, false, true, true, true, true, true, true,
		[]any{"private", "rsa", 2048.0, "public", "prime256v1"}, true, true, true, "Error"})
}

// A decompressing stream hands out output as its input arrives, before
// end(), and fails with Node's error when the data is corrupt.
func TestNode_ZlibStreamIncremental(t *testing.T) {
	nodeCheck(t, `
  const zlib = require("node:zlib");
  const text = "line of text that compresses\n".repeat(4000);
  const packed = zlib.gzipSync(text);
  const gunzip = zlib.createGunzip();
  const got = [];
  gunzip.on("data", (c) => got.push(c));
  const done = new Promise((res, rej) => { gunzip.on("end", res); gunzip.on("error", rej); });
  gunzip.write(packed.subarray(0, packed.length >> 1));
  await new Promise((r) => setTimeout(r, 5));
  const beforeEnd = Buffer.concat(got).length;
  gunzip.end(packed.subarray(packed.length >> 1));
  await done;
  const all = Buffer.concat(got).toString();
  const bad = zlib.createInflate();
  const err = await new Promise((res) => { bad.on("error", (e) => res(e.message)); bad.on("end", () => res("ended")); bad.resume(); bad.end(Buffer.from("definitely not zlib")); });
  const dropped = zlib.createInflateRaw();
  dropped.write(zlib.deflateRawSync("abandoned"));
  return [beforeEnd > 0 && beforeEnd < text.length, all === text, err];`, []any{true, true, "incorrect header check"})
}
