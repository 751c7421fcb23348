package server

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/cron"
	"github.com/celldgo/celld/metrics"
	"github.com/celldgo/celld/queue"
	"github.com/celldgo/celld/server/api"
	"github.com/celldgo/celld/wake"
	"github.com/celldgo/celld/worker"
)

// Alarms on a node. A resident Durable Object tells its resident every
// committed change of its alarm (worker.ObjectOptions.OnAlarm); the
// resident arms a local timer (the hot path: no bucket round trip to fire)
// and hands the installation to the wake publisher, whose entry in the
// bucket must be out before the output gate releases anything that
// revealed it. A cell whose owner is gone is woken by the node holding
// the waker role (wake.Waker), through the normal acquire and restore.

// alarmResidentWindow: a cell whose alarm is due within this window is not
// evicted for idleness; one further away may be, and the waker wakes it.
const alarmResidentWindow = time.Hour

// residentAlarm is a resident's alarm timer and wake hints.
//
// The seam is not Durable-Object specific: whatever runs on a cell (a
// built-in kind such as a future cron cell) can arm an alarm by
// committing cell.DB.SetAlarm on the cell's goroutine and passing the
// result to resident.onAlarm, and gets the timer, the wake entry, the
// output-gate wait and the waker's wake-up by setting run (see
// alarmHooks) to what firing means for it.
type residentAlarm struct {
	hints *wake.Cell // nil without a publisher
	// fire runs the alarm due at due (objects.fireAlarm), prepared from
	// from on when from is set (alarmprep.go).
	fire func(due int64, from time.Time)
	run  alarmRun // fires the cell's alarm once, if due
	// prepare, when set, readies the cell for an alarm due within the
	// given time and runs it then (worker.Object.PrepareAlarm).
	prepare func(ctx context.Context, within time.Duration, ready func()) (worker.AlarmResult, error)
	prep    *alarmPrep // the node's preparation policy (nil: none)

	mu      sync.Mutex
	timer   *time.Timer
	set     bool
	due     int64 // unix ms
	ready   bool  // the resident is registered: the timer may fire
	stopped bool
}

// alarmRun fires a cell's alarm if it is due (the cell reads its alarm
// from its own database), and reports what happened.
type alarmRun func(ctx context.Context) (worker.AlarmResult, error)

// alarmHooks connects r's alarm to this node: wake entries, and run as
// what the timer calls.
func (o *objects) alarmHooks(r *resident, run alarmRun) {
	if o.wake != nil {
		r.alarm.hints = o.wake.Cell(r.cell, r.hc.Epoch())
	}
	r.alarm.run = run
	r.alarm.fire = func(due int64, from time.Time) { o.fireAlarm(r, due, from) }
}

// objectOptions are the hooks a resident Durable Object runs with; its
// alarm runs as an event of the object (worker.Object.Alarm).
func (o *objects) objectOptions(r *resident) worker.ObjectOptions {
	o.alarmHooks(r, func(ctx context.Context) (worker.AlarmResult, error) {
		if r.obj == nil {
			return worker.AlarmResult{}, worker.ErrObjectClosed
		}
		return r.obj.Alarm(ctx)
	})
	r.alarm.prep = o.prep
	r.alarm.prepare = func(ctx context.Context, within time.Duration, ready func()) (worker.AlarmResult, error) {
		if r.obj == nil {
			return worker.AlarmResult{}, worker.ErrObjectClosed
		}
		return r.obj.PrepareAlarm(ctx, within, ready)
	}
	return worker.ObjectOptions{OnAlarm: r.onAlarm, Epoch: r.hc.Epoch()}
}

// onAlarm runs on the object's loop after a committed alarm change.
func (r *resident) onAlarm(a cell.Alarm) {
	if r.alarm.hints != nil {
		r.alarm.hints.Report(wake.Alarm{Set: a.Set, Deadline: a.Deadline, Seq: a.Seq})
	}
	r.arm(a.Set, a.Deadline)
}

// arm sets the local timer to fire at due (unix ms), or stops it.
func (r *resident) arm(set bool, due int64) {
	ra := &r.alarm
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if ra.stopped {
		return
	}
	if ra.timer != nil {
		ra.timer.Stop()
		ra.timer = nil
	}
	ra.set, ra.due = set, due
	if !set || !ra.ready {
		return
	}
	ra.startLocked(due, ra.prepare != nil && ra.prep != nil)
}

// startLocked starts the timer of the alarm due at due: a lead time early
// when it is to be prepared. Call with ra.mu held.
func (ra *residentAlarm) startLocked(due int64, prepare bool) {
	at := time.UnixMilli(due)
	var from time.Time
	if prepare {
		at = at.Add(-ra.prep.lead())
		from = at
		if now := time.Now(); from.Before(now) {
			from = now
		}
	}
	ra.timer = time.AfterFunc(time.Until(at), func() { ra.fire(due, from) }) // f runs on a goroutine of its own
}

// armPlain sets the timer of the alarm due at due, if that is still the
// alarm held, to fire at its time unprepared.
func (r *resident) armPlain(due int64) {
	r.rearm(due, time.Time{}, time.Until(time.UnixMilli(due)))
}

// armRetry sets the timer of the alarm due at due, if that is still the
// alarm held, to try preparing it again after wait (its preparation
// still counted from from).
func (r *resident) armRetry(due int64, from time.Time, wait time.Duration) {
	r.rearm(due, from, wait)
}

// rearm replaces the timer of the alarm due at due, if that is still the
// alarm held, with one that fires after wait (a preparation counted from
// from; zero: unprepared).
func (r *resident) rearm(due int64, from time.Time, wait time.Duration) {
	ra := &r.alarm
	ra.mu.Lock()
	defer ra.mu.Unlock()
	if ra.stopped || !ra.set || ra.due != due || !ra.ready {
		return
	}
	if ra.timer != nil {
		ra.timer.Stop()
	}
	ra.timer = time.AfterFunc(wait, func() { ra.fire(due, from) }) // f runs on a goroutine of its own
}

// alarmReady lets the timer run once the resident is registered (an
// alarm reported while the cell activated is armed now).
func (r *resident) alarmReady() {
	r.alarm.mu.Lock()
	r.alarm.ready = true
	set, due := r.alarm.set, r.alarm.due
	r.alarm.mu.Unlock()
	if set {
		r.arm(true, due)
	}
}

// armed reports the alarm the resident holds.
func (r *resident) armed() (bool, int64) {
	r.alarm.mu.Lock()
	defer r.alarm.mu.Unlock()
	return r.alarm.set, r.alarm.due
}

// stopAlarm stops the timer and the hints (the cell stops). Its entries
// stay in the bucket for the successor or the waker.
func (r *resident) stopAlarm() {
	r.alarm.mu.Lock()
	r.alarm.stopped = true
	if r.alarm.timer != nil {
		r.alarm.timer.Stop()
	}
	r.alarm.mu.Unlock()
	if r.alarm.hints != nil {
		r.alarm.hints.Close()
	}
	if r.queue != nil {
		r.stopQueue()
	}
}

// wakeMark and wakeWait are the output gate's part: wait for the wake
// entries of every installation reported so far.
func (r *resident) wakeMark() uint64 {
	if r.alarm.hints == nil {
		return 0
	}
	return r.alarm.hints.Mark()
}

func (r *resident) wakeWait(ctx context.Context, mark uint64) error {
	if r.alarm.hints == nil || mark == 0 {
		return nil
	}
	return r.alarm.hints.Wait(ctx, mark)
}

func (r *resident) wakeConfirmed(mark uint64) {
	if r.alarm.hints != nil && mark > 0 {
		r.alarm.hints.Confirmed(mark)
	}
}

// keepForAlarm: an alarm due soon keeps the cell from idle eviction.
func (r *resident) keepForAlarm(now time.Time) bool {
	set, due := r.armed()
	return set && time.UnixMilli(due).Sub(now) < alarmResidentWindow
}

// fireAlarm runs r's alarm (due at due) if r is still the resident of its
// cell: an event like any other, whose outputs (its writes) pass the
// gate. With from set, the timer went off early for the object to get
// ready first (alarmprep.go).
func (o *objects) fireAlarm(r *resident, due int64, from time.Time) {
	o.mu.Lock()
	cur := o.residents[r.cell]
	o.mu.Unlock()
	if cur != r || r.alarm.run == nil {
		return
	}
	var ticket *prepTicket
	if !from.IsZero() && r.alarm.prepare != nil {
		left := time.Until(time.UnixMilli(due))
		if left > 0 && !o.drain.active.Load() {
			ticket = o.prep.acquire(from, time.UnixMilli(due))
		}
		if ticket == nil {
			if left > prepRetryFloor && !o.drain.active.Load() {
				r.armRetry(due, from, left/2) // no room: try again halfway
			} else {
				r.armPlain(due) // draining, or due: at its time
			}
			return
		}
		defer ticket.release()
	}
	r.inflight.Add(1)
	defer r.done()
	ctx, cancel := context.WithTimeout(r.hc.Context(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	var res worker.AlarmResult
	var err error
	if ticket != nil {
		within := time.Until(time.UnixMilli(due)) + prepWaitSlack
		res, err = r.alarm.prepare(ctx, within, ticket.ready)
		ticket.release() // the run started (or never will): its room is free
		if err == nil && !res.Ran {
			if !res.Superseded && res.State.Set {
				r.armPlain(res.State.Deadline) // not due by the object's clock yet
			}
			return // superseded: the new state is armed already (onAlarm)
		}
	} else {
		res, err = r.alarm.run(ctx)
	}
	if err == nil && res.Ran {
		o.alarmsFired.Add(1)
		at := res.Due
		if at == 0 {
			at = due
		}
		if at > 0 {
			o.noteLateness(res.Started.Sub(time.UnixMilli(at)), ticket.inTime())
		}
	}
	gerr := r.gate(ctx)
	if err == nil && res.Ran {
		var threw error
		if res.Err != nil {
			threw = res.Err
		}
		o.metrics.Request(metrics.KindAlarm, metrics.Outcome(errors.Join(threw, gerr)), time.Since(start))
		o.metrics.AlarmFired(res.Err != nil && res.State.Set && res.State.Retry > 0)
	}
	if gerr != nil {
		r.hc.Log().Warn("alarm outcome not confirmed", "err", gerr)
		return
	}
	switch {
	case err != nil:
		r.hc.Log().Debug("alarm not run", "err", err)
	case res.Err != nil:
		r.hc.Log().Info("alarm handler threw", "error", res.Err.Error(), "retry", res.State.Retry)
	}
	if err == nil && !res.Ran && !res.Superseded && res.State.Set {
		r.arm(true, res.State.Deadline) // early (clock): arm again
	}
}

// lateness keeps the most recent alarm latenesses (from the alarm's time
// to its handler's start), for benchmarks and diagnosis, each marked
// with whether the cell was prepared in time (alarmprep.go).
type lateness struct {
	mu  sync.Mutex
	buf []latenessEntry
	n   int
}

type latenessEntry struct {
	d        time.Duration
	prepared bool
}

const latenessKept = 1 << 16

func (o *objects) noteLateness(d time.Duration, prepared bool) {
	l := &o.late
	e := latenessEntry{d, prepared}
	l.mu.Lock()
	if len(l.buf) < latenessKept {
		l.buf = append(l.buf, e)
	} else {
		l.buf[l.n%latenessKept] = e
	}
	l.n++
	l.mu.Unlock()
}

// latenesses returns the latenesses kept, and those of the alarms whose
// cell was prepared in time.
func (o *objects) latenesses() (all, prepared []time.Duration) {
	o.late.mu.Lock()
	defer o.late.mu.Unlock()
	for _, e := range o.late.buf {
		all = append(all, e.d)
		if e.prepared {
			prepared = append(prepared, e.d)
		}
	}
	return all, prepared
}

// wakeCell is the waker's way in: activate a Durable Object cell here
// (acquire at epoch+1, restore); its object then fires what is due.
func (o *objects) wakeCell(ctx context.Context, name string) error {
	class, id, ok := wake.ClassID(name)
	if _, builtin := o.builtins.Kind(class); !ok || (builtin && class != cron.Kind.Name && class != queue.Kind.Name) || strings.Contains(class, "/") {
		return nil // of the built-in cells only cron and queue ones hold alarms
	}
	_, err := o.local(ctx, class, id)
	return err
}

// skipWake: a draining node wakes nothing; a cell resident here fires by
// itself.
func (o *objects) skipWake(name string) bool {
	if o.drain.active.Load() {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, resident := o.residents[name]
	_, activating := o.activating[name]
	return resident || activating
}

// alarmState fills /state's alarm figures.
func (o *objects) alarmState(st *api.State) {
	armed, due := o.alarmCounts()
	st.Counters.AlarmsArmed, st.Counters.AlarmsDue = int(armed), int(due)
	if o.waker != nil {
		ws := o.waker.Stats()
		if ws.Holder {
			st.Counters.WakeupsDue = int(ws.Due)
		}
		st.Waker = api.Waker{Holder: ws.Holder, Pages: ws.Pages, Woken: ws.Woken}
	}
	if o.wake != nil {
		c := o.wake.Counts()
		st.Waker.Published, st.Waker.Deleted = c.Puts, c.Deletes+o.waker.Stats().Deleted
	}
}

// alarmCounts counts the resident cells with an alarm set, and those due.
func (o *objects) alarmCounts() (armed, due int64) {
	now := o.now()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.residents {
		if set, at := r.armed(); set {
			armed++
			if !time.UnixMilli(at).After(now) {
				due++
			}
		}
	}
	return armed, due
}
