package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dop251/goja"
)

// ScheduledResult is the outcome of one scheduled event.
type ScheduledResult struct {
	// Outcome is workerd's name for it: "ok", or "exception" when the
	// handler threw, a ctx.waitUntil promise rejected or the Worker has
	// no scheduled() handler.
	Outcome string
	Err     *Exception // what failed the event (Outcome "exception")
	NoRetry bool       // the handler called controller.noRetry()
	Started time.Time  // when the handler was called
}

// Scheduled runs the Worker's scheduled(controller, env, ctx) handler in
// one of the stateless isolates, with controller.cron = cron and
// controller.scheduledTime = scheduledTime (unix ms), and waits until the
// handler and every ctx.waitUntil promise it registered have settled. A
// thrown exception is logged and reported in the result; the error is
// for ctx ending first and a closed Runtime.
func (r *Runtime) Scheduled(ctx context.Context, cron string, scheduledTime int64) (ScheduledResult, error) {
	if r.closed.Load() {
		return ScheduledResult{}, ErrClosed
	}
	i := r.pick()
	iso := r.isolates[i]
	r.load[i].Add(1)
	defer r.load[i].Add(-1)
	ch := make(chan ScheduledResult, 1)
	scope := &eventScope{}
	if !iso.post(func() { iso.startScheduled(cron, scheduledTime, scope, ch) }) {
		return ScheduledResult{}, ErrClosed
	}
	select {
	case res := <-ch:
		return res, nil
	case <-ctx.Done():
		iso.post(scope.clientGone)
		return ScheduledResult{}, fmt.Errorf("scheduled %q: %w", cron, context.Cause(ctx))
	case <-r.stop:
		return ScheduledResult{}, ErrClosed
	}
}

func (iso *isolate) startScheduled(cron string, scheduledTime int64, scope *eventScope, ch chan<- ScheduledResult) {
	defer iso.enter(scope)()
	res := ScheduledResult{Outcome: "ok", Started: time.Now()}
	fail := func(v goja.Value, report bool) {
		res.Outcome = "exception"
		res.Err = iso.thrown(v)
		if report {
			iso.reportException("uncaught exception in scheduled handler", v)
		}
		ch <- res
	}
	dispatch, ok := goja.AssertFunction(iso.internal.Get("dispatchScheduled"))
	if !ok {
		fail(iso.vm.ToValue(errors.New("prelude: internal.dispatchScheduled missing")), true)
		return
	}
	p, err := dispatch(goja.Undefined(), iso.handler, iso.env, iso.vm.ToValue(cron), iso.vm.ToValue(scheduledTime))
	if err != nil {
		fail(iso.vm.ToValue(thrownOr(err)), true)
		return
	}
	iso.await(p, func(ok bool, v goja.Value) {
		o, _ := v.(*goja.Object)
		if o != nil {
			res.NoRetry = o.Get("noRetry") != nil && o.Get("noRetry").ToBoolean()
		}
		if ok {
			ch <- res
			return
		}
		thrownV, reported := v, false
		if o != nil && o.Get("error") != nil {
			// {error, reported}: reported when it was logged already (a
			// rejected waitUntil, the missing handler in workerd's words)
			thrownV, reported = o.Get("error"), o.Get("reported") != nil && o.Get("reported").ToBoolean()
		}
		fail(thrownV, !reported)
	})
}
