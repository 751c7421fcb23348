package worker_test

import (
	"testing"

	"github.com/celldgo/celld/worker"
)

const stubBenchScript = `
const { DurableObject } = require("cloudflare:workers");
class Echo extends DurableObject {
	echo(i) { return i; }
}
module.exports = {
	Echo,
	default: {
		async fetch(request, env) {
			const stub = env.ECHO.getByName("bench");
			const calls = [];
			for (let i = 0; i < 32; i++) calls.push(stub.echo(i));
			const got = await Promise.all(calls);
			return new Response(String(got.length));
		},
	},
};
`

// BenchmarkStub_ConcurrentCalls: one request making 32 concurrent RPC
// calls on one stub (E-order numbering, pipelined promises, result
// import) against an object on the same host.
func BenchmarkStub_ConcurrentCalls(b *testing.B) {
	host := newLocalObjects(b)
	rt := newRuntime(b, stubBenchScript, worker.Config{Isolates: 1, Objects: host, DurableObjects: map[string]string{"ECHO": "Echo"}})
	host.use(rt)
	b.ResetTimer()
	for range b.N {
		if resp := fetch(b, rt, "GET", "/", nil); string(resp.Body) != "32" {
			b.Fatalf("got %d %q", resp.Status, resp.Body)
		}
	}
}
