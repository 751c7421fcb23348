package worker

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// Hibernation. A resident Durable Object costs mostly its isolate: the
// VM, the built-ins, the prelude files it used, the script's module and
// the instance. An object that has been idle for a while drops all of it
// and keeps only what lives outside JavaScript (its database, its name,
// its place in the runtime); its next event builds the isolate again and
// constructs the object anew, as Cloudflare does after evicting an idle
// object from memory. What the object kept in memory is gone, exactly as
// there; what it stored is not; a blockConcurrencyWhile in the
// constructor again runs before the event.
//
// "Idle" is strict, so that nothing can still run in the old VM: no event
// in flight or queued, no timer, no ctx.waitUntil or Go work (fetch,
// another object) pending, no promise Go awaits, no transaction open,
// blockConcurrencyWhile not holding the gate, no WebSocket accepted with
// accept() open. Sockets accepted with ctx.acceptWebSocket stay open in
// Go while the isolate is gone (objects_websocket.go). An armed alarm does
// not keep the isolate: its timer is the host's, and Alarm wakes the
// object like any other event.

// DefaultHibernateAfter is Config.HibernateAfter's default.
const DefaultHibernateAfter = 10 * time.Second

// A hibernating object whose database refused to park (its replicator
// still uploading, a snapshot in flight) tries again after
// firstParkRetry, then at doubling intervals up to lastParkRetry, and
// then leaves it to the pool (which asks when it is over its bound).
const (
	firstParkRetry = time.Second
	lastParkRetry  = 32 * time.Second
)

// hibernating counts the objects of the process that are hibernating.
var hibernating atomic.Int64

// HibernatingObjects is how many Durable Objects of the process are
// hibernating now (resident, without an isolate).
func HibernatingObjects() int { return int(hibernating.Load()) }

// Hibernating reports whether the object has dropped its isolate (until
// its next event).
func (o *Object) Hibernating() bool { return o.asleep.Load() }

// Hibernations counts the times the object dropped its isolate.
func (o *Object) Hibernations() int64 { return o.hibernations.Load() }

// boot gives the object an isolate: the script evaluated, the class
// looked up, the storage natives made. The instance is constructed by the
// first event.
func (o *Object) boot() error {
	iso := o.iso
	if err := iso.boot(); err != nil {
		iso.dropJS()
		return err
	}
	var ctor goja.Value
	if exp, ok := iso.exports.(*goja.Object); ok {
		ctor = exp.Get(o.class)
	}
	if _, ok := goja.AssertConstructor(ctor); !ok {
		iso.dropJS()
		return fmt.Errorf("the script does not export a class named %s", o.class)
	}
	o.ctor = ctor
	o.store = o.storageNatives()
	return nil
}

// wake rebuilds the isolate of a hibernating object; the event that
// called it then constructs the object. Call it on the loop.
func (o *Object) wake() *Exception {
	if !o.asleep.Load() {
		return nil
	}
	o.parkRetry = 0
	if err := o.boot(); err != nil {
		o.iso.log.Error("Durable Object could not wake from hibernation", "error", err)
		return &Exception{Name: "Error", Message: "celld: Durable Object could not be restarted: " + err.Error()}
	}
	o.setAsleep(false)
	o.iso.log.Debug("Durable Object woke from hibernation")
	return nil
}

// quiet reports whether nothing is running or pending in the object's
// isolate as far as the loop can see: the condition to start counting
// towards hibernation. Call it on the loop, between tasks.
func (o *Object) quiet() bool {
	iso := o.iso
	return iso.vm != nil && len(iso.soon) == 0 &&
		len(iso.waiting) == 0 && iso.background == 0 && len(iso.timers) == 0 &&
		len(iso.awaiting) == 0 && len(iso.rejected) == 0 &&
		o.gate == 0 && len(o.queued) == 0 && !o.draining &&
		len(o.txns) == 0 && o.syncTxns == 0 && iso.liveWS == 0 && o.unattachedSockets() == 0
}

// idle is quiet, and no event is on its way in or still handing its
// answer back (those are counted off the loop, so the loop may not have
// seen them finish: hibernate checks again when the threshold passed).
// busy is read before the queue: an event counts itself busy before it
// posts its task, so either it is seen busy or its task is seen queued.
func (o *Object) idle() bool {
	return o.quiet() && o.busy.Load() == 0 && len(o.iso.tasks) == 0 && !o.closing.Load()
}

// hibernate drops the isolate if the object is still idle, and parks its
// database (or, when it cannot, gives back what SQLite caches for speed).
// Call it on the loop, between tasks.
func (o *Object) hibernate() {
	if o.asleep.Load() {
		o.retryPark()
		return
	}
	if !o.idle() {
		return
	}
	o.ctor, o.instance, o.store = nil, nil, nil
	o.iso.dropJS()
	// A SQL cursor left half read dies with the isolate that held it.
	o.db.CloseCursors()
	// Its database connection goes too (a pool's park: the files closed,
	// SQLite's memory freed); the next event opens it again. Without a
	// pool, or while the replicator still has work, SQLite's caches are
	// released instead.
	if !o.db.Park() {
		o.db.ReleaseMemory()
		o.parkRetry = firstParkRetry
	}
	o.setAsleep(true)
	o.hibernations.Add(1)
	o.iso.log.Debug("Durable Object hibernated")
}

// retryPark tries again to park the database of a hibernating object.
// Call it on the loop, between tasks.
func (o *Object) retryPark() {
	switch {
	case o.parkRetry == 0:
	case o.db.Parked() || o.db.Park():
		o.parkRetry = 0
	case o.parkRetry >= lastParkRetry:
		o.parkRetry = 0
	default:
		o.parkRetry *= 2
	}
}

func (o *Object) setAsleep(v bool) {
	if o.asleep.Swap(v) != v {
		if v {
			hibernating.Add(1)
		} else {
			hibernating.Add(-1)
		}
	}
}

// hibernateTimer arms t for the object's idle threshold when the object
// is quiet, and returns its channel (nil otherwise). The loop calls it
// each time it is about to wait, so the threshold counts from the end of
// the last task; when it passes and an event is still on its way
// (hibernate refused), the loop goes round and counts again. A
// hibernating object whose database is still open gets t armed for its
// next try at parking.
func (iso *isolate) hibernateTimer(t *time.Timer) <-chan time.Time {
	o := iso.obj
	if o == nil || o.hibernateAfter <= 0 || o.closing.Load() {
		return nil
	}
	switch {
	case o.asleep.Load() && o.parkRetry > 0:
		t.Reset(o.parkRetry)
	case o.quiet():
		t.Reset(o.hibernateAfter)
	default:
		return nil
	}
	return t.C
}
