package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dop251/goja"
)

// Service bindings to the script's own entrypoints (wrangler "services"
// naming this Worker, and ctx.exports): env.NAME is a stub like a Durable
// Object's (95_svc.js builds it on 95_stubs.js), and its events reach
// the runtime itself instead of Config.Objects. A fetch runs the
// entrypoint's fetch handler as a request of its own; an RPC call
// constructs the entrypoint class anew (ctx.props from the binding) and
// runs the method, its arguments and result in the wire format as for a
// Durable Object. A call made in a Worker isolate runs in that same
// isolate (as workerd runs a loopback call); one made in a Durable
// Object's isolate runs in the least loaded Worker isolate.

// Service is one service binding: the entrypoint (an export's name; ""
// for the default export) and the props its ctx.props holds.
type Service struct {
	Entrypoint string
	Props      map[string]any
}

// ErrNoEntrypoint is wrapped when a service binding names an export the
// script does not have.
var ErrNoEntrypoint = errors.New("no such entrypoint")

// serviceClass marks the class argument of a service stub's events: it
// is followed by the entrypoint, a NUL and the props as JSON. No Durable
// Object class can start with a NUL.
const serviceClass = "\x00svc\x00"

// entrypoint is a service event's target: the export and its props
// (JSON).
type entrypoint struct {
	name  string
	props string
}

func parseServiceClass(class string) (*entrypoint, bool) {
	rest, ok := strings.CutPrefix(class, serviceClass)
	if !ok {
		return nil, false
	}
	name, props, _ := strings.Cut(rest, "\x00")
	return &entrypoint{name: name, props: props}, true
}

// serviceHandle delivers a service stub's events.
type serviceHandle struct {
	from *isolate // the caller's isolate
	ep   *entrypoint
}

var _ ObjectHandle = serviceHandle{}

// target is the isolate an event runs in. A call on an RpcTarget an
// entrypoint returned ("\x00t\x00<isolate>:<n>\x00…") goes to the isolate
// that holds it.
func (h serviceHandle) target(method string) (int, error) {
	r := h.from.rt
	if ref, ok := strings.CutPrefix(method, "\x00t\x00"); ok {
		is, _, _ := strings.Cut(ref, ":")
		i, err := strconv.Atoi(is)
		if err != nil || i < 0 || i >= len(r.isolates) {
			return 0, errors.New("celld: this RPC stub's target is no longer available")
		}
		return i, nil
	}
	if h.from.obj == nil && h.from.id >= 0 && h.from.id < len(r.isolates) && r.isolates[h.from.id] == h.from {
		return h.from.id, nil
	}
	return r.pick(), nil
}

func (h serviceHandle) Fetch(ctx context.Context, req *Request) (*Response, error) {
	i, err := h.target("")
	if err != nil {
		return nil, err
	}
	resp, err := h.from.rt.fetchOn(ctx, i, req, h.ep)
	if err == nil && resp.thrown != nil {
		// The entrypoint threw: the caller's fetch() rejects with it.
		return nil, resp.thrown
	}
	return resp, err
}

func (h serviceHandle) Call(ctx context.Context, method string, args []byte) ([]byte, error) {
	i, err := h.target(method)
	if err != nil {
		return nil, err
	}
	r := h.from.rt
	iso := r.isolates[i]
	r.load[i].Add(1)
	defer r.load[i].Add(-1)
	ch := make(chan callResult, 1)
	if !iso.post(func() { iso.startEntrypointCall(h.ep, method, args, ch) }) {
		return nil, ErrClosed
	}
	select {
	case res := <-ch:
		return res.data, res.err
	case <-ctx.Done():
		return nil, fmt.Errorf("call %s: %w", method, context.Cause(ctx))
	case <-r.stop:
		return nil, ErrClosed
	}
}

// entrypointTarget is the handler a service fetch runs (the export) and
// the ctx.props it sees.
func (iso *isolate) entrypointTarget(ep *entrypoint) (goja.Value, goja.Value, error) {
	handler := iso.handler
	if ep.name != "" {
		exports, _ := iso.exports.(*goja.Object)
		if exports == nil {
			return nil, nil, fmt.Errorf("service entrypoint %s: %w", ep.name, ErrNoEntrypoint)
		}
		handler = exports.Get(ep.name)
		if handler == nil || goja.IsUndefined(handler) {
			return nil, nil, fmt.Errorf("service entrypoint %s: %w", ep.name, ErrNoEntrypoint)
		}
	}
	props, err := iso.parseJSON(ep.props)
	if err != nil {
		return nil, nil, fmt.Errorf("service entrypoint %s props: %w", ep.name, err)
	}
	return handler, props, nil
}

func (iso *isolate) parseJSON(s string) (goja.Value, error) {
	if s == "" {
		return iso.vm.NewObject(), nil
	}
	parse, _ := goja.AssertFunction(iso.vm.Get("JSON").ToObject(iso.vm).Get("parse"))
	return parse(goja.Undefined(), iso.vm.ToValue(s))
}

// startEntrypointCall runs an RPC method of an entrypoint on the loop
// (internal.entrypointCall, 95_svc.js) and sends its serialized result,
// or the exception it threw, to ch.
func (iso *isolate) startEntrypointCall(ep *entrypoint, method string, args []byte, ch chan<- callResult) {
	pf := &pendingFetch{}
	iso.waiting = append(iso.waiting, pf)
	scope := &eventScope{}
	defer iso.enter(scope)()
	fail := func(ex *Exception) {
		if pf.answered {
			return
		}
		pf.answered = true
		iso.unwatch(pf)
		ch <- callResult{err: ex}
	}
	pf.hung = func() { fail(&Exception{Name: "Error", Message: "The script will never generate a response."}) }
	pf.answer = func(*Response) { pf.hung() }
	handler, props, err := iso.entrypointTarget(ep)
	if err != nil {
		fail(&Exception{Name: "Error", Message: err.Error()})
		return
	}
	f, ok := goja.AssertFunction(iso.internal.Get("entrypointCall"))
	if !ok {
		fail(&Exception{Name: "Error", Message: "celld: prelude lacks entrypointCall"})
		return
	}
	what := "exception in entrypoint method " + method
	res, err := f(goja.Undefined(), handler, iso.env, props, iso.vm.ToValue(method),
		iso.vm.ToValue(iso.vm.NewArrayBuffer(args)), iso.vm.ToValue(iso.id))
	if err != nil {
		ex, stack := iso.errException(err)
		iso.log.Error(what, "error", ex.Error(), "stack", stack)
		fail(ex)
		return
	}
	iso.await(res, func(ok bool, v goja.Value) {
		var data []byte
		if ok {
			if ex := iso.vm.Try(func() { data = iso.codec.serialize(v) }); ex != nil {
				ok, v = false, ex.Value()
			}
		}
		if !ok {
			ex, stack := iso.thrownException(v)
			iso.log.Error(what, "error", ex.Error(), "stack", stack)
			fail(ex)
			return
		}
		if pf.answered {
			return
		}
		pf.answered = true
		iso.unwatch(pf)
		ch <- callResult{data: data}
	})
}

// buildServices adds the service bindings to env, and tells the prelude
// the Durable Object classes ctx.exports holds namespaces for.
func (iso *isolate) buildServices(env *goja.Object) error {
	cfg := &iso.rt.cfg
	if len(cfg.ObjectClasses) > 0 {
		classes := make([]any, len(cfg.ObjectClasses))
		for i, c := range cfg.ObjectClasses {
			classes[i] = c
		}
		if err := iso.internal.Set("objectClasses", iso.vm.NewArray(classes...)); err != nil {
			return fmt.Errorf("build ctx.exports: %w", err)
		}
	}
	if len(cfg.Services) == 0 {
		return nil
	}
	mk, ok := goja.AssertFunction(iso.internal.Get("makeService"))
	if !ok {
		return errors.New("prelude: internal.makeService missing")
	}
	names := make([]string, 0, len(cfg.Services))
	for name := range cfg.Services {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := cfg.Services[name]
		props := []byte("{}")
		if len(s.Props) > 0 {
			var err error
			if props, err = json.Marshal(s.Props); err != nil {
				return fmt.Errorf("build service binding %s: encode props: %w", name, err)
			}
		}
		v, err := mk(goja.Undefined(), iso.vm.ToValue(s.Entrypoint), iso.vm.ToValue(string(props)))
		if err == nil {
			err = env.Set(name, v)
		}
		if err != nil {
			return fmt.Errorf("build service binding %s: %w", name, err)
		}
	}
	return nil
}

// CheckEntrypoints checks that every entrypoint a service binding names
// is exported by the script (as a class, or the default export).
// `celld deploy` runs it beside CheckStartable.
func (r *Runtime) CheckEntrypoints(names []string) error {
	iso := r.isolates[0]
	done := make(chan error, 1)
	if !iso.post(func() {
		var problems []string
		exports, _ := iso.exports.(*goja.Object)
		for _, n := range names {
			if n == "" {
				continue
			}
			var v goja.Value
			if exports != nil {
				v = exports.Get(n)
			}
			if v == nil || goja.IsUndefined(v) {
				problems = append(problems, fmt.Sprintf("service entrypoint %s is named in the config but not exported by the main module (export class %s extends WorkerEntrypoint { … })", n, n))
			}
		}
		if len(problems) > 0 {
			done <- fmt.Errorf("%w: %s", ErrCannotStart, strings.Join(problems, "; "))
			return
		}
		done <- nil
	}) {
		return errors.New("check worker: runtime closed")
	}
	return <-done
}
