package worker_test

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/celldgo/celld/worker"
)

// webPlatformBench runs one of bench/webplatform's operations n times in
// a request (GET /?op=NAME&n=N); its inputs and keys are made once per
// isolate, so a benchmark measures the operation alone.
const webPlatformBench = `
const S = crypto.subtle;
const { Buffer } = require("node:buffer");
// text-like bytes made without a per-byte loop (as bench/webplatform does),
// so that the setup does not dominate a profile
const bytes = (n) => {
  const words = ["alpha ", "beta ", "gamma ", "delta ", "worker ", "cell ", "stream ", "42 "];
  let line = "";
  for (let i = 0; i < 4096; i++) line += words[(i * 7 + (i >> 3)) % words.length];
  return new TextEncoder().encode(line.repeat(Math.ceil(n / line.length))).subarray(0, n);
};
const RSA = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) };
// Each op's setup runs once, on its first request, and only for that op.
const inits = {
  hmac: async () => ({ key: await S.importKey("raw", bytes(32), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]), data: bytes(1024) }),
  sha256: async () => ({ data: bytes(1 << 20) }),
  async rsaverify() {
    const { publicKey, privateKey } = await S.generateKey(RSA, false, ["sign", "verify"]);
    const data = bytes(256);
    return { publicKey, data, sig: await S.sign(RSA.name, privateKey, data) };
  },
  ecdsasign: async () => ({ key: (await S.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"])).privateKey, data: bytes(256) }),
  base64: async () => ({ str: Buffer.from(bytes(1 << 20)).toString("base64") }),
  gzip: async () => ({ data: bytes(1 << 20) }),
  resolve: async () => ({ data: new ArrayBuffer(32) }),
};
const ops = {
  hmac: (s) => S.sign("HMAC", s.key, s.data),
  // the floor under every crypto.subtle call: a resolved promise of an
  // ArrayBuffer, awaited
  resolve: (s) => Promise.resolve(s.data),
  sha256: (s) => S.digest("SHA-256", s.data),
  async rsaverify(s) {
    if (!(await S.verify(RSA.name, s.publicKey, s.sig, s.data))) throw new Error("bad signature");
    return s.sig;
  },
  ecdsasign: (s) => S.sign({ name: "ECDSA", hash: "SHA-256" }, s.key, s.data),
  base64: (s) => Buffer.from(s.str, "base64"),
  // as bench/webplatform: one 1 MiB write, the output read to its end
  async gzip(s) {
    const cs = new CompressionStream("gzip");
    const w = cs.writable.getWriter();
    w.write(s.data);
    w.close();
    const r = cs.readable.getReader();
    let total = 0;
    for (;;) {
      const { done, value } = await r.read();
      if (done) return { byteLength: total };
      total += value.byteLength;
    }
  },
};
const setups = {};
module.exports.default = {
  async fetch(request) {
    const url = new URL(request.url);
    const name = url.searchParams.get("op");
    const op = ops[name];
    const setup = (setups[name] ??= await inits[name]());
    const n = Number(url.searchParams.get("n"));
    let last;
    for (let i = 0; i < n; i++) last = await op(setup);
    return new Response(String(last && (last.byteLength ?? last.length)));
  },
};
`

func benchWebPlatform(b *testing.B, op string) {
	rt := newRuntime(b, webPlatformBench, worker.Config{Isolates: 1, Node: worker.NodeV2, Logger: slog.New(slog.DiscardHandler)})
	if resp := fetch(b, rt, "GET", "/?op="+op+"&n=1", nil); resp.Status != 200 {
		b.Fatalf("op %s: %d %s", op, resp.Status, resp.Body)
	}
	// A request runs at most batch operations (about 0.2 s unloaded), so
	// that a large b.N on a loaded machine stays within fetch's deadline.
	batch := map[string]int{"hmac": 20000, "resolve": 20000, "rsaverify": 2000, "ecdsasign": 2000}[op]
	if batch == 0 {
		batch = 100
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	for done := 0; done < b.N; done += batch {
		n := min(batch, b.N-done)
		if resp := fetch(b, rt, "GET", fmt.Sprintf("/?op=%s&n=%d", op, n), nil); resp.Status != 200 {
			b.Fatalf("op %s: %d %s", op, resp.Status, resp.Body)
		}
	}
}

// BenchmarkWebCrypto_HMACSign1KiB: crypto.subtle.sign("HMAC", key, 1 KiB).
func BenchmarkWebCrypto_HMACSign1KiB(b *testing.B) { benchWebPlatform(b, "hmac") }

// BenchmarkWebCrypto_SHA256_1MiB: crypto.subtle.digest("SHA-256", 1 MiB).
func BenchmarkWebCrypto_SHA256_1MiB(b *testing.B) { benchWebPlatform(b, "sha256") }

// BenchmarkCompressionStream_Gzip1MiB: 1 MiB through CompressionStream("gzip").
func BenchmarkCompressionStream_Gzip1MiB(b *testing.B) { benchWebPlatform(b, "gzip") }

// BenchmarkWebCrypto_RSAVerify2048: crypto.subtle.verify of an RSASSA-PKCS1-v1_5
// SHA-256 signature with a 2048-bit key.
func BenchmarkWebCrypto_RSAVerify2048(b *testing.B) { benchWebPlatform(b, "rsaverify") }

// BenchmarkWebCrypto_ECDSASignP256: crypto.subtle.sign of ECDSA P-256 with SHA-256.
func BenchmarkWebCrypto_ECDSASignP256(b *testing.B) { benchWebPlatform(b, "ecdsasign") }

// BenchmarkNodeBuffer_FromBase64_1MiB: Buffer.from(string, "base64") of 1 MiB.
func BenchmarkNodeBuffer_FromBase64_1MiB(b *testing.B) { benchWebPlatform(b, "base64") }

// BenchmarkWebCrypto_PromiseFloor: Promise.resolve(bytes) awaited, the
// promise machinery every crypto.subtle call pays for on top of its work.
func BenchmarkWebCrypto_PromiseFloor(b *testing.B) { benchWebPlatform(b, "resolve") }
