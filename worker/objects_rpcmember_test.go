package worker_test

import (
	"log/slog"
	"testing"

	"github.com/celldgo/celld/worker"
)

// TestObjects_RPCMemberLookup: an RPC call or property read finds a
// method or getter on the class or an ancestor short of DurableObject,
// and runs a getter with the instance as `this` (private fields included),
// as Reflect.get on the owning prototype would (96_state.js reflectGet);
// a getter that reads other getters runs each with the same receiver.
func TestObjects_RPCMemberLookup(t *testing.T) {
	host := newLocalObjects(t)
	rt := newRuntime(t, `
		const { DurableObject } = require("cloudflare:workers");
		class Base extends DurableObject {
			#secret = "s";
			get who() { return "base:" + this.#secret + ":" + this.tag; }
			hello() { return "hello " + this.tag; }
		}
		class Box extends Base {
			constructor(ctx, env) { super(ctx, env); this.tag = "t"; }
			get nested() { return this.who + "|" + Object.getPrototypeOf(this).constructor.name; }
		}
		module.exports.Box = Box;
		module.exports.default = {
			async fetch(request, env) {
				const stub = env.BOX.getByName("x");
				const out = [await stub.who, await stub.hello(), await stub.nested];
				try { await stub.missing(); } catch (e) { out.push(e.name); }
				return new Response(out.join(","));
			},
		};`, worker.Config{Objects: host, DurableObjects: map[string]string{"BOX": "Box"}, Logger: slog.New(slog.DiscardHandler)})
	host.use(rt)
	got := fetch(t, rt, "GET", "/", nil)
	if want := "base:s:t,hello t,base:s:t|Box,TypeError"; string(got.Body) != want {
		t.Errorf("body = %q, want %q", got.Body, want)
	}
}
