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
const bytes = (n) => { const u = new Uint8Array(n); for (let i = 0; i < n; i++) u[i] = (i * 31 + (i >> 5)) & 0x7f; return u; };
let setup;
const init = async () => ({
  hmacKey: await S.importKey("raw", bytes(32), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
  k1: bytes(1024),
  m1: bytes(1 << 20),
});
const ops = {
  hmac: (s) => S.sign("HMAC", s.hmacKey, s.k1),
  sha256: (s) => S.digest("SHA-256", s.m1),
  async gzip(s) {
    const r = new Response(s.m1).body.pipeThrough(new CompressionStream("gzip"));
    return new Response(r).arrayBuffer();
  },
};
module.exports.default = {
  async fetch(request) {
    setup ??= await init();
    const url = new URL(request.url);
    const op = ops[url.searchParams.get("op")];
    const n = Number(url.searchParams.get("n"));
    let last;
    for (let i = 0; i < n; i++) last = await op(setup);
    return new Response(String(last && (last.byteLength ?? last.length)));
  },
};
`

func benchWebPlatform(b *testing.B, op string) {
	rt := newRuntime(b, webPlatformBench, worker.Config{Isolates: 1, Logger: slog.New(slog.DiscardHandler)})
	if resp := fetch(b, rt, "GET", "/?op="+op+"&n=1", nil); resp.Status != 200 {
		b.Fatalf("op %s: %d %s", op, resp.Status, resp.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	if resp := fetch(b, rt, "GET", fmt.Sprintf("/?op=%s&n=%d", op, b.N), nil); resp.Status != 200 {
		b.Fatalf("op %s: %d %s", op, resp.Status, resp.Body)
	}
}

// BenchmarkWebCrypto_HMACSign1KiB: crypto.subtle.sign("HMAC", key, 1 KiB).
func BenchmarkWebCrypto_HMACSign1KiB(b *testing.B) { benchWebPlatform(b, "hmac") }

// BenchmarkWebCrypto_SHA256_1MiB: crypto.subtle.digest("SHA-256", 1 MiB).
func BenchmarkWebCrypto_SHA256_1MiB(b *testing.B) { benchWebPlatform(b, "sha256") }

// BenchmarkCompressionStream_Gzip1MiB: 1 MiB through CompressionStream("gzip").
func BenchmarkCompressionStream_Gzip1MiB(b *testing.B) { benchWebPlatform(b, "gzip") }
