package worker_test

import (
	"log/slog"
	"testing"

	"github.com/celldgo/celld/worker"
)

// BenchmarkNodeBufferFromBase64 is bench/apps/node-base64 in-process: one
// Buffer.from(string, "base64") of 1 MiB per request (bench/run.sh
// compares it with workerd).
func BenchmarkNodeBufferFromBase64(b *testing.B) {
	rt := newRuntime(b, `
const { Buffer } = require("node:buffer");
const raw = new Uint8Array(1 << 20);
for (let i = 0; i < raw.length; i++) raw[i] = (i * 31 + 7) & 255;
const B64 = Buffer.from(raw).toString("base64");
module.exports.default = { fetch() {
  const b = Buffer.from(B64, "base64");
  return new Response(b.length + ":" + b[777]);
} };`, worker.Config{Isolates: 1, Node: worker.NodeV2, Logger: slog.New(slog.DiscardHandler)})
	if got := string(fetch(b, rt, "GET", "/", nil).Body); got != "1048576:30" {
		b.Fatalf("body %q", got)
	}
	b.SetBytes(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fetch(b, rt, "GET", "/", nil)
	}
}
