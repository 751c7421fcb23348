package worker

import (
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// The state of subclass instances (ordinary objects, found by identity)
// goes when the instances do: a script that makes one per request does
// not grow the isolate.
func TestBody_SubclassStateIsCollected(t *testing.T) {
	ps, err := compilePrelude()
	if err != nil {
		t.Fatal(err)
	}
	discard := slog.New(slog.DiscardHandler)
	iso := &isolate{rt: &Runtime{log: discard}, log: discard}
	iso.vm, iso.timerByID, iso.origin = goja.New(), map[int64]*timer{}, time.Now()
	if err := iso.installPrelude(ps); err != nil {
		t.Fatal(err)
	}
	v, err := iso.vm.RunString(`
		class R extends Response { #n = 1; n() { return this.#n; } }
		class Q extends Request { #m = 2; m() { return this.#m; } }
		let keep = new R("kept", { status: 201 });
		var all = [];
		let sum = 0;
		for (let i = 0; i < 2000; i++) {
			all.push(new R("x"), new Q("http://x/"));
			sum += all[all.length - 2].n() + all[all.length - 1].m();
		}
		[sum, keep.status, keep instanceof R];
	`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Export(); !sameJSON(got, []any{int64(6000), int64(201), true}) {
		t.Fatalf("script = %v", got)
	}
	c := iso.fetchc
	count := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.subs)
	}
	if n := count(); n != 4001 {
		t.Fatalf("%d subclass states while the instances live, want 4001", n)
	}
	if _, err := iso.vm.RunString(`all = null;`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for count() > 1 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n != 1 {
		t.Fatalf("%d subclass states after collection, want 1 (the one kept)", n)
	}
	if v, err := iso.vm.RunString(`keep.status`); err != nil || v.ToInteger() != 201 {
		t.Fatalf("kept instance = %v, %v", v, err)
	}
}

func sameJSON(got any, want []any) bool {
	g, ok := got.([]any)
	if !ok || len(g) != len(want) {
		return false
	}
	for i := range g {
		if g[i] != want[i] {
			return false
		}
	}
	return true
}
