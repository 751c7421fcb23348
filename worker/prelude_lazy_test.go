package worker_test

import (
	"testing"

	"github.com/celldgo/celld/worker"
)

// TestPrelude_ScriptGlobalsWin: a global the prelude defines on demand
// behaves as if it had been defined before the script ran: a script that
// replaces it (before anything loaded it) keeps its own value, even once
// the file defining it runs, and every other global is there when first
// used.
func TestPrelude_ScriptGlobalsWin(t *testing.T) {
	rt := newRuntime(t, `
		globalThis.Headers = "mine";
		module.exports.default = {
			fetch(request) {
				const seen = [
					String(Headers), typeof URL, typeof ReadableStream, typeof crypto.randomUUID,
					typeof structuredClone, "AbortController" in globalThis, typeof TextEncoder,
				];
				return new Response(seen.join(","), { headers: { "x-a": "1" } });
			},
		};`, worker.Config{})
	got := fetch(t, rt, "GET", "/", nil)
	if want := "mine,function,function,function,function,true,function"; string(got.Body) != want {
		t.Errorf("body = %q, want %q", got.Body, want)
	}
	if got.Header.Get("X-A") != "1" {
		t.Errorf("header x-a = %q", got.Header.Get("X-A"))
	}
}
