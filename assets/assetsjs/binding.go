// Package assetsjs is the env binding of a Worker's static assets
// (env.ASSETS): the JavaScript half of the assets package, which stays
// free of the JavaScript engine.
package assetsjs

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"net/http"

	"github.com/dop251/goja"

	"github.com/celldgo/celld/worker"
)

//go:embed binding.js
var bindingSource string

var bindingProgram = goja.MustCompile("assets/binding.js", bindingSource, true)

// FetchFunc answers one request for an asset.
type FetchFunc func(ctx context.Context, r *http.Request) *http.Response

// Binding is the env value of the assets binding: an object whose
// fetch(input, init) resolves to the Response fetch gives.
func Binding(fetch FetchFunc) worker.Binding {
	return func(h *worker.Host) (goja.Value, error) {
		vm := h.VM()
		f, err := vm.RunProgram(bindingProgram)
		if err != nil {
			return nil, fmt.Errorf("assets binding: %w", err)
		}
		factory, ok := goja.AssertFunction(f)
		if !ok {
			return nil, fmt.Errorf("assets binding: binding.js is not a function")
		}
		native := vm.NewObject()
		if err := native.Set("fetch", func(call goja.FunctionCall) goja.Value {
			method, url := call.Argument(0).String(), call.Argument(1).String()
			var pairs [][2]string
			if err := vm.ExportTo(call.Argument(2), &pairs); err != nil {
				panic(vm.NewTypeError("assets binding: headers: %v", err))
			}
			ctx := h.Context()
			return h.Async(func() func(*goja.Runtime) (goja.Value, error) {
				req, err := http.NewRequestWithContext(ctx, method, url, nil)
				if err != nil {
					return func(*goja.Runtime) (goja.Value, error) { return nil, fmt.Errorf("assets binding: %w", err) }
				}
				for _, p := range pairs {
					req.Header.Add(p[0], p[1])
				}
				resp := fetch(ctx, req)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				return func(vm *goja.Runtime) (goja.Value, error) {
					if err != nil {
						return nil, fmt.Errorf("assets binding: %w", err)
					}
					out := vm.NewObject()
					out.Set("status", resp.StatusCode)
					var hs [][]string
					for k, vs := range resp.Header {
						for _, v := range vs {
							hs = append(hs, []string{k, v})
						}
					}
					out.Set("headers", hs)
					out.Set("body", vm.NewArrayBuffer(body))
					return out, nil
				}
			})
		}); err != nil {
			return nil, err
		}
		return factory(goja.Undefined(), native)
	}
}
