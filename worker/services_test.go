package worker_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/celldgo/celld/worker"
)

const servicesScript = `
	const { WorkerEntrypoint, RpcTarget } = require("cloudflare:workers");
	class Box extends RpcTarget {
		constructor(v) { super(); this.v = v; }
		add(n) { this.v += n; return this.v; }
	}
	class Api extends WorkerEntrypoint {
		box(v) { return new Box(v); }
		tenant() { return this.ctx.props.tenant; }
		async slow(ms) { await new Promise((r) => setTimeout(r, ms)); return ms; }
	}
	module.exports.Api = Api;
	module.exports.default = {
		async fetch(request, env) {
			// Many calls at once, RpcTargets kept across calls, a
			// waiting call not holding up the others.
			const boxes = await Promise.all(Array.from({ length: 20 }, (_, i) => env.API.box(i)));
			const sums = await Promise.all(boxes.map((b, i) => b.add(100 * i)));
			const [slow, tenant] = await Promise.all([env.API.slow(20), env.API.tenant()]);
			return Response.json({ sums, slow, tenant });
		},
	};`

func TestServices_ManyCallsAndTargets(t *testing.T) {
	rt := newRuntime(t, servicesScript, worker.Config{Isolates: 3,
		Services: map[string]worker.Service{"API": {Entrypoint: "Api", Props: map[string]any{"tenant": "acme"}}}})
	for range 3 { // each request may land on another isolate
		got := fetch(t, rt, "GET", "/", nil)
		var want strings.Builder
		want.WriteString(`{"sums":[`)
		for i := range 20 {
			if i > 0 {
				want.WriteString(",")
			}
			want.WriteString(strconv.Itoa(i + 100*i))
		}
		want.WriteString(`],"slow":20,"tenant":"acme"}`)
		if string(got.Body) != want.String() {
			t.Fatalf("body = %s\nwant %s", got.Body, want.String())
		}
	}
}

func TestRuntime_CheckEntrypoints(t *testing.T) {
	rt := newRuntime(t, servicesScript, worker.Config{Isolates: 1})
	if err := rt.CheckEntrypoints([]string{"", "Api"}); err != nil {
		t.Fatalf("exported entrypoints refused: %v", err)
	}
	err := rt.CheckEntrypoints([]string{"Auth"})
	if !errors.Is(err, worker.ErrCannotStart) || !strings.Contains(err.Error(), "service entrypoint Auth is named in the config but not exported") {
		t.Fatalf("err = %v, want ErrCannotStart naming Auth", err)
	}
}
