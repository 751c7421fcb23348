package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/dop251/goja"
)

// Durable Object alarms. The alarm itself lives in the cell's database
// (cell.Alarm); the object reads and writes it on its loop and tells its
// host every new installation through ObjectOptions.OnAlarm, so the host
// can arm a timer, publish a durable wake-up hint and hold outputs until
// that hint is in the bucket. The host fires the alarm by calling Alarm,
// which runs alarm(alarmInfo) as an event like any other (same input and
// output gates); the retry bookkeeping is done here, in the database.

// Alarm retry policy (Cloudflare's): a failed alarm() runs again after
// 2 s, doubling, up to AlarmMaxRetries retries.
const (
	AlarmRetryBase  = 2 * time.Second
	AlarmMaxRetries = 6
)

// AlarmRetryDelay is the wait before the run after retry failed runs
// (retry >= 1): 2 s, 4 s, 8 s ...
func AlarmRetryDelay(retry int) time.Duration {
	if retry < 1 {
		retry = 1
	}
	return AlarmRetryBase << min(retry-1, 16)
}

// ObjectOptions are optional hooks of one object.
type ObjectOptions struct {
	// OnAlarm, when set, is called with the alarm state after every
	// committed change of it (and once when the object starts). It runs on
	// the object's loop and must not block.
	OnAlarm func(cell.Alarm)
	// Now is the clock alarms are compared with (default time.Now).
	Now func() time.Time
	// Epoch is the cell's epoch, logged with its name ("cell", "epoch")
	// on every line about the object; 0 leaves it out.
	Epoch uint64
}

// AlarmResult is what one Alarm call did.
type AlarmResult struct {
	Ran     bool       // alarm() ran (false: no alarm was due)
	Started time.Time  // when alarm() was called (Ran)
	Due     int64      // unix ms the run was scheduled at (Ran)
	Err     *Exception // what alarm() threw (Ran is true)
	State   cell.Alarm // the alarm state afterwards
	// Superseded: a prepared run (PrepareAlarm) did not happen because
	// the alarm changed or another call took it over meanwhile; the
	// host has been told the new state (OnAlarm).
	Superseded bool
}

// ErrAlarmRunning: an alarm() is already running in the object.
var ErrAlarmRunning = errors.New("durable object: alarm() already running")

// alarmState is the loop-confined part of the object's alarm.
type alarmState struct {
	running  bool
	runSeq   uint64 // installation being run
	reported uint64 // last Seq given to OnAlarm
	told     bool
	// outcome of a run that settled while another event's transaction
	// was open: recorded once it ends.
	deferred *deferredOutcome
	waiter   *alarmWaiter // a prepared run waiting for its time
}

type deferredOutcome struct {
	a  cell.Alarm
	ex *Exception
}

func (o *Object) now() time.Time {
	if o.opts.Now != nil {
		return o.opts.Now()
	}
	return time.Now()
}

// alarmChanged tells the host the committed alarm state when it changed.
// Inside a transaction it waits for the transaction's end.
func (o *Object) alarmChanged() {
	if o.db.InTransaction() {
		return
	}
	if d := o.alarm.deferred; d != nil {
		o.alarm.deferred = nil
		o.afterAlarm(d.a, d.ex)
	}
	a, err := o.db.Alarm()
	if err != nil {
		o.iso.log.Warn("read alarm", "error", err)
		return
	}
	o.tellAlarm(a)
}

func (o *Object) tellAlarm(a cell.Alarm) {
	if o.alarm.told && a.Seq == o.alarm.reported {
		return
	}
	o.alarm.told, o.alarm.reported = true, a.Seq
	o.supersedeWaiter(a)
	if o.opts.OnAlarm != nil {
		o.opts.OnAlarm(a)
	}
}

// hasAlarmHandler reports whether the class defines alarm().
func (o *Object) hasAlarmHandler() bool {
	c, ok := o.ctor.(*goja.Object)
	if !ok {
		return false
	}
	proto, ok := c.Get("prototype").(*goja.Object)
	if !ok {
		return false
	}
	_, ok = goja.AssertFunction(proto.Get("alarm"))
	return ok
}

// Alarm runs the object's alarm() if its alarm is due: with {retryCount,
// isRetry}, under the same gates as any event. A run that throws is
// scheduled again with Cloudflare's backoff, up to AlarmMaxRetries
// retries; writes it made are kept. An alarm changed while alarm() ran
// (set again, deleted) stands as the handler left it.
func (o *Object) Alarm(ctx context.Context) (AlarmResult, error) {
	o.busy.Add(1)
	defer o.busy.Add(-1)
	if o.closing.Load() {
		return AlarmResult{}, ErrObjectClosed
	}
	ch := make(chan alarmOutcome, 1)
	if !o.iso.post(func() { o.startAlarm(ch) }) {
		return AlarmResult{}, ErrObjectClosed
	}
	select {
	case res := <-ch:
		return res.res, res.err
	case <-ctx.Done():
		return AlarmResult{}, fmt.Errorf("alarm: %w", context.Cause(ctx))
	case <-o.stop:
		return AlarmResult{}, ErrObjectStopped
	}
}

type alarmOutcome struct {
	res AlarmResult
	err error
}

func (o *Object) startAlarm(ch chan<- alarmOutcome) {
	a, err := o.db.Alarm()
	if err != nil {
		ch <- alarmOutcome{err: err}
		return
	}
	o.tellAlarm(a)
	// A prepared run waiting for this installation is this call's now.
	o.supersedeWaiter(a)
	if !a.Set || a.Deadline > o.now().UnixMilli() {
		ch <- alarmOutcome{res: AlarmResult{State: a}}
		return
	}
	o.runAlarm(a, ch)
}

// runAlarm runs alarm(alarmInfo) for installation a, which is due.
func (o *Object) runAlarm(a cell.Alarm, ch chan<- alarmOutcome) {
	if o.alarm.running {
		ch <- alarmOutcome{res: AlarmResult{State: a}, err: ErrAlarmRunning}
		return
	}
	if ex := o.wake(); ex != nil {
		ch <- alarmOutcome{res: AlarmResult{Ran: true, Due: a.Deadline, Err: ex, State: a}}
		return
	}
	o.alarm.running, o.alarm.runSeq = true, a.Seq
	ev, finish := o.newEvent()
	settled := false
	var started time.Time
	settle := func(ex *Exception) {
		if settled {
			return
		}
		settled = true
		o.alarm.running = false
		st := o.afterAlarm(a, ex)
		if started.IsZero() {
			started = time.Now()
		}
		ch <- alarmOutcome{res: AlarmResult{Ran: true, Started: started, Due: a.Deadline, Err: ex, State: st}}
	}
	ev.fail = func(ex *Exception) {
		if finish() {
			settle(ex)
		}
	}
	iso := o.iso
	ev.run = func() {
		const what = "exception in Durable Object alarm handler"
		started = time.Now()
		info := iso.vm.NewObject()
		_ = info.Set("retryCount", a.Retry)
		_ = info.Set("isRetry", a.Retry > 0)
		_ = info.Set("scheduledTime", a.Deadline)
		res, ok := o.invoke(ev, what, "objectAlarm", o.instance, info)
		if !ok {
			return
		}
		iso.await(res, func(ok bool, v goja.Value) {
			if !ok {
				ex, stack := o.thrownException(v)
				o.logException(what, ex, stack)
				ev.fail(ex)
				return
			}
			if finish() {
				settle(nil)
			}
		})
	}
	o.admit(ev, "", false)
}

// afterAlarm records the outcome of a run of installation a: consumed,
// or due again after a backoff, unless alarm() changed the alarm itself.
func (o *Object) afterAlarm(a cell.Alarm, ex *Exception) cell.Alarm {
	cur, err := o.db.Alarm()
	if err != nil {
		o.iso.log.Warn("read alarm", "error", err)
		return a
	}
	if cur.Seq != a.Seq {
		o.alarmChanged()
		return cur
	}
	if o.db.InTransaction() {
		// Another event's transaction is open: the outcome must not join
		// it (a rollback would undo it); it is recorded when it ends.
		o.alarm.deferred = &deferredOutcome{a: a, ex: ex}
		return cur
	}
	var next cell.Alarm
	switch {
	case ex == nil:
		next, err = o.db.DeleteAlarm()
	case a.Retry < AlarmMaxRetries:
		next, err = o.db.RetryAlarm(o.now().Add(AlarmRetryDelay(a.Retry+1)).UnixMilli(), a.Retry+1)
	default:
		o.iso.log.Warn("Durable Object alarm gave up after retries", "retries", a.Retry)
		next, err = o.db.DeleteAlarm()
	}
	if err != nil {
		o.iso.log.Error("record alarm outcome", "error", err)
		return cur
	}
	o.tellAlarm(next)
	return next
}

// The natives of the alarm API (prelude/96_state.js).
func registerAlarmNatives(set func(string, storageFunc)) {
	set("getAlarm", func(o *Object, _ goja.FunctionCall) goja.Value {
		a, err := o.db.Alarm()
		if err != nil {
			o.throw(err)
		}
		if !a.Set || (o.alarm.running && a.Seq == o.alarm.runSeq) {
			return goja.Null()
		}
		return o.iso.vm.ToValue(a.Deadline)
	})
	// setAlarm(ms): the prelude has turned a Date or number into ms.
	set("setAlarm", func(o *Object, call goja.FunctionCall) goja.Value {
		if !o.hasAlarmHandler() {
			panic(o.iso.vm.NewTypeError("Your Durable Object class must have an alarm() handler in order to call setAlarm()"))
		}
		if _, err := o.db.SetAlarm(call.Argument(0).ToInteger()); err != nil {
			o.throw(err)
		}
		o.alarmChanged()
		return goja.Undefined()
	})
	set("deleteAlarm", func(o *Object, _ goja.FunctionCall) goja.Value {
		if _, err := o.db.DeleteAlarm(); err != nil {
			o.throw(err)
		}
		o.alarmChanged()
		return goja.Undefined()
	})
}
