package worker

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// ErrCannotStart is wrapped by CheckStartable's error: the script
// evaluates, but a node could not run what its config names.
var ErrCannotStart = errors.New("worker cannot start")

// CheckStartable checks what New cannot see from evaluating the script:
// that its default export is an object or a class (a handler), and that
// every Durable Object class the config names (classes) is exported and
// constructible as a class. `celld deploy` runs it on the bundle, exactly
// as a node would load it, so a version that cannot serve is refused
// before it is published rather than taking down every node that
// restarts onto it.
func (r *Runtime) CheckStartable(classes []string) error {
	iso := r.isolates[0]
	done := make(chan error, 1)
	if !iso.post(func() { done <- iso.checkStartable(classes) }) {
		return errors.New("check worker: runtime closed")
	}
	return <-done
}

func (iso *isolate) checkStartable(classes []string) error {
	var problems []string
	switch h := iso.handler.(type) {
	case *goja.Object:
		if _, isFn := goja.AssertFunction(h); isFn {
			if _, ok := goja.AssertConstructor(h); !ok {
				problems = append(problems, "the default export is a function but not a class: export an object with handlers (export default { fetch(request, env, ctx) { … } }) or a WorkerEntrypoint class")
			}
		}
	default:
		problems = append(problems, fmt.Sprintf("the default export is %s, not an object with handlers or a class", describeValue(iso.handler)))
	}
	exports, _ := iso.exports.(*goja.Object)
	for _, c := range classes {
		var v goja.Value
		if exports != nil {
			v = exports.Get(c)
		}
		switch {
		case v == nil || goja.IsUndefined(v):
			problems = append(problems, fmt.Sprintf("Durable Object class %s is named in the config but not exported by the main module (export class %s extends DurableObject { … })", c, c))
		default:
			if _, ok := goja.AssertConstructor(v); !ok {
				problems = append(problems, fmt.Sprintf("Durable Object class %s is exported as %s, not a class", c, describeValue(v)))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrCannotStart, strings.Join(problems, "; "))
	}
	return nil
}
