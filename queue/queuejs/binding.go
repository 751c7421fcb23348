// Package queuejs is the JavaScript side of Cloudflare Queues: the env
// value of a queues.producers binding (a WorkerQueue) over a cell.Caller,
// and the MessageBatch a consumer's queue() handler receives (Deliver).
// It is the only queue code that knows goja and package worker; package
// queue stays free of the JS engine.
package queuejs

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/dop251/goja"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/queue"
	"github.com/celldgo/celld/worker"
)

//go:embed binding.js
var bindingSource string

var bindingProgram = goja.MustCompile("queue/queuejs/binding.js", bindingSource, true)

// factories runs binding.js in h's isolate (once per isolate would do;
// the factories are small).
func factories(h *worker.Host) (makeQueue, makeBatch goja.Callable, err error) {
	v, err := h.VM().RunProgram(bindingProgram)
	if err != nil {
		return nil, nil, fmt.Errorf("queue binding: %w", err)
	}
	f, ok := goja.AssertFunction(v)
	if !ok {
		return nil, nil, errors.New("queue binding: binding.js is not a function")
	}
	obj, err := f(goja.Undefined())
	if err != nil {
		return nil, nil, fmt.Errorf("queue binding: %w", err)
	}
	o := obj.ToObject(h.VM())
	makeQueue, _ = goja.AssertFunction(o.Get("makeQueue"))
	makeBatch, _ = goja.AssertFunction(o.Get("makeBatch"))
	return makeQueue, makeBatch, nil
}

// JSONDefaultSince is the first compatibility date whose default content
// type is "json" (queues_json_messages); before it, "v8".
const JSONDefaultSince = "2024-03-18"

// DefaultContentType is the content type a send without one uses.
func DefaultContentType(m *deploy.Manifest) string {
	for _, f := range m.CompatibilityFlags {
		switch f {
		case "queues_json_messages":
			return queue.ContentJSON
		case "no_queues_json_messages":
			return queue.ContentV8
		}
	}
	if m.CompatibilityDate != "" && m.CompatibilityDate < JSONDefaultSince {
		return queue.ContentV8
	}
	return queue.ContentJSON
}

// Bindings are the env values of a deployment's queue producers.
func Bindings(m *deploy.Manifest, c cell.Caller) map[string]worker.Binding {
	out := map[string]worker.Binding{}
	if m.Queues == nil {
		return out
	}
	ct := DefaultContentType(m)
	for _, p := range m.Queues.Producers {
		var delay int64
		if p.DeliveryDelay != nil {
			delay = int64(*p.DeliveryDelay)
		}
		out[p.Binding] = Binding(c, p.Queue, ct, delay)
	}
	return out
}

// Binding is the env value of a producer binding of queue name: sends go
// through c to the queue's cell, queue:<name>, and resolve once durable.
func Binding(c cell.Caller, name, defaultType string, deliveryDelay int64) worker.Binding {
	client := queue.NewClient(c, name)
	return func(h *worker.Host) (goja.Value, error) {
		makeQueue, _, err := factories(h)
		if err != nil {
			return nil, err
		}
		vm := h.VM()
		n := vm.NewObject()
		p := producer{h: h, client: client, delay: deliveryDelay}
		for name, fn := range map[string]func(goja.FunctionCall) goja.Value{
			"send":    p.send,
			"metrics": p.metrics,
			"serialize": func(call goja.FunctionCall) goja.Value {
				return vm.ToValue(vm.NewArrayBuffer(h.Serialize(call.Argument(0))))
			},
			"deserialize": func(call goja.FunctionCall) goja.Value { return h.Deserialize(bytesOf(vm, call.Argument(0))) },
		} {
			if err := n.Set(name, fn); err != nil {
				return nil, fmt.Errorf("queue binding: %w", err)
			}
		}
		return makeQueue(goja.Undefined(), n, vm.ToValue(defaultType))
	}
}

type producer struct {
	h      *worker.Host
	client *queue.Client
	delay  int64
}

func bytesOf(vm *goja.Runtime, v goja.Value) []byte {
	switch x := v.Export().(type) {
	case string:
		return []byte(x)
	case goja.ArrayBuffer:
		return x.Bytes()
	}
	var b []byte
	if err := vm.ExportTo(v, &b); err != nil {
		panic(vm.NewTypeError("queue: %v", err))
	}
	return b
}

func optionalInt(v goja.Value) *int64 {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	i := v.ToInteger()
	return &i
}

// send(list of [data, contentType, delay?], batchDelay?) -> [count, bytes, oldest]
func (p producer) send(call goja.FunctionCall) goja.Value {
	vm := p.h.VM()
	list := call.Argument(0).ToObject(vm)
	n := int(list.Get("length").ToInteger())
	batchDelay := optionalInt(call.Argument(1))
	msgs := make([]queue.Message, n)
	for i := range msgs {
		item := list.Get(fmt.Sprint(i)).ToObject(vm)
		msgs[i] = queue.Message{Body: bytesOf(vm, item.Get("0")), ContentType: item.Get("1").String()}
		d := optionalInt(item.Get("2"))
		if d == nil {
			d = batchDelay
		}
		if d == nil && p.delay > 0 {
			d = &p.delay
		}
		msgs[i].DelaySeconds = d
	}
	refused := p.h.Refusals()
	return p.h.AsyncContext(func(ctx context.Context) func(*goja.Runtime) (goja.Value, error) {
		m, err := p.client.Send(ctx, msgs)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				refused(unavailable(err))
				return nil, sendError(vm, err)
			}
			return vm.NewArray(m.BacklogCount, m.BacklogBytes, m.OldestMessageTimestamp), nil
		}
	})
}

// unavailable marks a refusal of the queue's owner that a retry can
// overcome (overloaded, moving, draining: a peer's 421 or 503) as
// worker.ErrUnavailable, so a script that lets the send's error escape
// is answered 503 with Retry-After.
func unavailable(err error) error {
	var pe *host.PeerError
	if errors.As(err, &pe) && pe.Retry() {
		return fmt.Errorf("%w: %w", worker.ErrUnavailable, err)
	}
	return err
}

// sendError is a refused send as workerd reports it: a limit its broker
// enforces is "Unknown Internal Error (15000)" (the reason is not shown
// to the script; docs/compatibility.md), anything else a plain Error
// with the failure's text.
func sendError(vm *goja.Runtime, err error) error {
	if errors.Is(err, queue.ErrLimit) {
		return worker.ErrorOf(vm, errors.New("Unknown Internal Error (15000)"))
	}
	return worker.ErrorOf(vm, err)
}

func (p producer) metrics(goja.FunctionCall) goja.Value {
	return p.h.AsyncContext(func(ctx context.Context) func(*goja.Runtime) (goja.Value, error) {
		in, err := p.client.Info(ctx)
		return func(vm *goja.Runtime) (goja.Value, error) {
			if err != nil {
				return nil, worker.ErrorOf(vm, err)
			}
			return vm.NewArray(in.Messages, in.Bytes, in.Oldest), nil
		}
	})
}

// settlements keeps the first settlement of each message of a batch.
type settlements struct {
	mu   sync.Mutex
	outs []*queue.Outcome // nil: not settled explicitly
	all  bool             // ackAll or retryAll was called: every unsettled message took it
}

func (s *settlements) settle(i int, retry bool, delay *int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 {
		if s.all {
			return
		}
		s.all = true
		for j, o := range s.outs {
			if o == nil {
				s.outs[j] = &queue.Outcome{Retry: retry, Delay: delay}
			}
		}
		return
	}
	if i < len(s.outs) && s.outs[i] == nil {
		s.outs[i] = &queue.Outcome{Retry: retry, Delay: delay}
	}
}

// Deliver runs rt's queue() handler on batch b of queue name and returns
// every message's outcome: what the handler said (the first call per
// message wins, ackAll/retryAll cover the messages not settled before),
// else acked when the handler returned and retried when it threw. err is
// the handler's exception (or why it did not run).
func Deliver(ctx context.Context, rt *worker.Runtime, name string, b queue.Batch) ([]queue.Outcome, error) {
	s := &settlements{outs: make([]*queue.Outcome, len(b.Messages))}
	err := rt.Event(ctx, "queue", func(h *worker.Host) (goja.Value, error) {
		_, makeBatch, err := factories(h)
		if err != nil {
			return nil, err
		}
		vm := h.VM()
		n := vm.NewObject()
		n.Set("settle", func(call goja.FunctionCall) goja.Value {
			s.settle(int(call.Argument(0).ToInteger()), call.Argument(1).ToBoolean(), optionalInt(call.Argument(2)))
			return goja.Undefined()
		})
		n.Set("deserialize", func(call goja.FunctionCall) goja.Value { return h.Deserialize(bytesOf(vm, call.Argument(0))) })
		msgs := make([]any, len(b.Messages))
		for i, m := range b.Messages {
			msgs[i] = vm.NewArray(m.ID, m.Timestamp, vm.NewArrayBuffer(m.Body), m.ContentType, m.Attempts)
		}
		arr := vm.NewArray(msgs...)
		metrics := vm.NewArray(b.Metrics.BacklogCount, b.Metrics.BacklogBytes, b.Metrics.OldestMessageTimestamp)
		return makeBatch(goja.Undefined(), n, vm.ToValue(name), arr, metrics)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	outs := make([]queue.Outcome, len(b.Messages))
	for i, m := range b.Messages {
		if o := s.outs[i]; o != nil {
			outs[i] = *o
		} else {
			outs[i] = queue.Outcome{Retry: err != nil}
		}
		outs[i].ID = m.ID
	}
	return outs, err
}
