// Package d1js is the JavaScript side of D1: the env value of a
// d1_databases binding (a D1Database, binding.js) over a cell.Caller. It
// is the only D1 code that knows goja and package worker; package d1
// stays free of the JS engine.
package d1js

import (
	_ "embed"
	"errors"
	"fmt"

	"github.com/dop251/goja"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/d1"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/worker"
)

//go:embed binding.js
var bindingSource string

// bindingProgram is compiled once and run in every isolate that has a D1
// binding.
var bindingProgram = goja.MustCompile("d1/d1js/binding.js", bindingSource, true)

// Bindings are the env values of a deployment's d1_databases, each
// reaching its database's cell through c.
func Bindings(m *deploy.Manifest, c cell.Caller) map[string]worker.Binding {
	out := map[string]worker.Binding{}
	for _, db := range m.D1Databases {
		out[db.Binding] = Binding(c, d1.CellName(db.DatabaseID, db.DatabaseName))
	}
	return out
}

// d1Refusal reports an error that is D1's own refusal, whose text
// carries its prefix already: a *d1.Error from a handler run here, or a
// refusal with a code from a cell on a peer.
func d1Refusal(err error) bool {
	var de *d1.Error
	var re *host.RequestError
	return errors.As(err, &de) || errors.As(err, &re) && re.Code != ""
}

// Binding is the env value of a d1_databases binding: a D1Database whose
// queries go through c to the database's cell (see d1.CellName). Errors are
// thrown as workerd throws them: the cell's errors carry their prefix
// already; a failure to reach the cell is a D1_ERROR.
func Binding(c cell.Caller, cellName string) worker.Binding {
	return func(h *worker.Host) (goja.Value, error) {
		vm := h.VM()
		f, err := vm.RunProgram(bindingProgram)
		if err != nil {
			return nil, fmt.Errorf("d1 binding: %w", err)
		}
		factory, ok := goja.AssertFunction(f)
		if !ok {
			return nil, fmt.Errorf("d1 binding: binding.js is not a function")
		}
		send := func(call goja.FunctionCall) goja.Value {
			req := []byte(call.Argument(0).String())
			ctx := h.Context()
			return h.Async(func() func(*goja.Runtime) (goja.Value, error) {
				ans, err := c.Call(ctx, cellName, req)
				return func(vm *goja.Runtime) (goja.Value, error) {
					if err != nil {
						msg := err.Error()
						if !d1Refusal(err) {
							msg = d1.PrefixError + msg
						}
						return vm.NewArray(msg, goja.Null()), nil
					}
					return vm.NewArray(goja.Null(), string(ans)), nil
				}
			})
		}
		db, err := factory(goja.Undefined(), vm.ToValue(send))
		if err != nil {
			return nil, fmt.Errorf("d1 binding: %w", err)
		}
		return db, nil
	}
}
