package worker

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/cell"
)

// Prepared alarm runs. Starting an alarm's handler can cost a reopen of a
// parked database (cell.Pool) and a rebuild of a hibernated isolate (the
// script evaluated, the object constructed): milliseconds of CPU that,
// paid at the alarm's time, make the handler late, and later still on a
// loaded machine. A host that knows an alarm is coming calls
// PrepareAlarm shortly before it: the object pays those costs at once and
// then waits, on its own loop, for the alarm's time, when the handler
// starts with nothing left to do first.
//
// The rules: the handler never starts before the alarm's time (by the
// object's clock); waiting is not running (getAlarm still reports the
// alarm, and any event may run meanwhile); an alarm changed or deleted
// meanwhile cancels the wait (the host is told the new state, as for any
// change); the database is pinned open while waiting (the pool neither
// asks it to park nor can park it); the object does not hibernate while
// waiting. Nothing is written before the alarm's time, so a drain, a
// failover or an eviction in between finds the alarm exactly as it was.

// alarmWaiter is a prepared run waiting on the loop (loop-confined).
type alarmWaiter struct {
	a         cell.Alarm
	ch        chan<- alarmOutcome
	timer     *time.Timer
	cancelled *atomic.Bool // the caller gave up (its context ended)
}

// PrepareAlarm readies the object for an alarm due within the next
// within (its database opened, its isolate built, the object
// constructed), calls prepared (on the object's loop; may be nil) once it
// is ready, waits until the alarm's time and runs it as Alarm does. An
// alarm due later than within is not waited for: the result is Alarm's
// for an alarm not due (Ran false). A wait cut short by a change of the
// alarm reports Superseded. prepared is called exactly once when the
// result is not an error, and at most once otherwise.
func (o *Object) PrepareAlarm(ctx context.Context, within time.Duration, prepared func()) (AlarmResult, error) {
	o.busy.Add(1)
	defer o.busy.Add(-1)
	if o.closing.Load() {
		return AlarmResult{}, ErrObjectClosed
	}
	if prepared == nil {
		prepared = func() {}
	}
	ch := make(chan alarmOutcome, 1)
	cancelled := new(atomic.Bool)
	defer cancelled.Store(true) // whatever ended the wait, it never runs later
	if !o.iso.post(func() { o.prepareAlarm(ch, within, prepared, cancelled) }) {
		return AlarmResult{}, ErrObjectClosed
	}
	select {
	case res := <-ch:
		return res.res, res.err
	case <-ctx.Done():
		cancelled.Store(true)
		select { // free the database now rather than at the alarm's time
		case o.iso.tasks <- func() { o.dropCancelled(cancelled) }:
		default:
		}
		return AlarmResult{}, fmt.Errorf("alarm: %w", context.Cause(ctx))
	case <-o.stop:
		return AlarmResult{}, ErrObjectStopped
	}
}

// dropCancelled forgets the waiting run if it is the one cancelled.
func (o *Object) dropCancelled(cancelled *atomic.Bool) {
	if w := o.alarm.waiter; w != nil && w.cancelled == cancelled {
		o.dropWaiter()
	}
}

func (o *Object) prepareAlarm(ch chan<- alarmOutcome, within time.Duration, prepared func(), cancelled *atomic.Bool) {
	if cancelled.Load() {
		prepared()
		return
	}
	a, err := o.db.Alarm() // opens a parked database
	if err != nil {
		ch <- alarmOutcome{err: err}
		return
	}
	o.tellAlarm(a)
	o.supersedeWaiter(a)
	wait := time.Duration(a.Deadline-o.now().UnixMilli()) * time.Millisecond
	if !a.Set || wait > within {
		prepared()
		ch <- alarmOutcome{res: AlarmResult{State: a}}
		return
	}
	if wait > 0 && !o.alarm.running {
		// What the handler's start would cost otherwise. A constructor
		// that throws here is run again by the event at the alarm's time,
		// whose failure it then is.
		if o.wake() == nil && o.instance == nil && o.gate == 0 {
			if o.construct() != nil {
				o.instance = nil
			}
		}
		if o.alarm.reported != a.Seq {
			// The constructor changed the alarm: the host has been told.
			prepared()
			ch <- alarmOutcome{res: AlarmResult{State: o.lastAlarm(a), Superseded: true}}
			return
		}
		wait = time.Duration(a.Deadline-o.now().UnixMilli()) * time.Millisecond
	}
	prepared()
	if wait <= 0 {
		o.runAlarm(a, ch)
		return
	}
	if o.closing.Load() {
		ch <- alarmOutcome{err: ErrObjectClosed}
		return
	}
	o.db.Pin(true)
	o.alarm.waiter = &alarmWaiter{a: a, ch: ch, timer: time.NewTimer(wait), cancelled: cancelled}
}

// lastAlarm is the alarm state last told to the host (a, when it is).
func (o *Object) lastAlarm(a cell.Alarm) cell.Alarm {
	if cur, err := o.db.Alarm(); err == nil {
		return cur
	}
	return a
}

// alarmWaitC is the channel of the waiting run's timer (nil: none).
// Call it on the loop.
func (o *Object) alarmWaitC() <-chan time.Time {
	if w := o.alarm.waiter; w != nil {
		return w.timer.C
	}
	return nil
}

// alarmTimeUp runs the waiting run once its time has come by the
// object's clock. Call it on the loop when alarmWaitC fired.
func (o *Object) alarmTimeUp() {
	w := o.alarm.waiter
	if w == nil {
		return
	}
	if left := time.Duration(w.a.Deadline-o.now().UnixMilli()) * time.Millisecond; left > 0 {
		w.timer.Reset(left) // never early: the clock is the object's
		return
	}
	o.dropWaiter()
	if w.cancelled.Load() {
		return
	}
	if o.closing.Load() {
		w.ch <- alarmOutcome{err: ErrObjectClosed}
		return
	}
	a := w.a
	if o.db.InTransaction() || o.alarm.reported != a.Seq {
		// Not the committed state the wait was for: read it again.
		cur, err := o.db.Alarm()
		if err != nil {
			w.ch <- alarmOutcome{err: err}
			return
		}
		if cur.Seq != a.Seq || !cur.Set || cur.Deadline > o.now().UnixMilli() {
			w.ch <- alarmOutcome{res: AlarmResult{State: cur, Superseded: cur.Seq != a.Seq}}
			return
		}
		a = cur
	}
	o.runAlarm(a, w.ch)
}

// supersedeWaiter ends a waiting run: the alarm is now cur (changed, or
// taken over by another call). Call it on the loop.
func (o *Object) supersedeWaiter(cur cell.Alarm) {
	w := o.alarm.waiter
	if w == nil {
		return
	}
	o.dropWaiter()
	w.ch <- alarmOutcome{res: AlarmResult{State: cur, Superseded: true}}
}

// abandonWaiter ends a waiting run because the object closes: the alarm
// stays as stored, for whoever runs the object next. Call it on the loop.
func (o *Object) abandonWaiter() {
	if w := o.alarm.waiter; w != nil {
		o.dropWaiter()
		w.ch <- alarmOutcome{err: ErrObjectClosed}
	}
}

// dropWaiter forgets the waiting run: its timer stopped, the database
// free to park again.
func (o *Object) dropWaiter() {
	if w := o.alarm.waiter; w != nil {
		w.timer.Stop()
		o.alarm.waiter = nil
		o.db.Pin(false)
	}
}
