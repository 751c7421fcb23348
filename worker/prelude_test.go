package worker

import (
	"log/slog"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// TestPrelude_FilesLoadAlone loads each prelude file on demand, alone, in
// a fresh isolate (as the first lookup of one of its names would) and
// checks that it then defines every name it owns, without meeting a cycle
// between files: the order in which an isolate happens to need files must
// not change what they define.
func TestPrelude_FilesLoadAlone(t *testing.T) {
	ps, err := compilePrelude()
	if err != nil {
		t.Fatal(err)
	}
	discard := slog.New(slog.DiscardHandler)
	for i, m := range ps.modules {
		if m.eager {
			continue
		}
		t.Run(m.name, func(t *testing.T) {
			iso := &isolate{rt: &Runtime{log: discard}, log: discard}
			iso.vm, iso.timerByID, iso.origin = goja.New(), map[int64]*timer{}, time.Now()
			if err := iso.installPrelude(ps); err != nil {
				t.Fatal(err)
			}
			if err := iso.runModule(i); err != nil {
				t.Fatal(err)
			}
			if iso.preludeCycles != 0 {
				t.Errorf("%d lookups met a cycle between prelude files", iso.preludeCycles)
			}
			global := iso.vm.GlobalObject()
			for name, j := range ps.globalOf {
				if j == i && !hasOwn(iso.vm, global, name) {
					t.Errorf("global %s not defined", name)
				}
			}
			for name, j := range ps.internalOf {
				if j == i && !hasOwn(iso.vm, iso.internal, name) {
					t.Errorf("internal.%s not defined", name)
				}
			}
		})
	}
}

func hasOwn(vm *goja.Runtime, o *goja.Object, name string) bool {
	for _, k := range o.GetOwnPropertyNames() {
		if k == name {
			return true
		}
	}
	return false
}
