package worker

import (
	"container/heap"
	"fmt"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// timersPerTurn caps how many due timers one loop turn runs before it looks
// at posted work again, so a chain of setTimeout(fn, 0) cannot starve
// incoming requests.
const timersPerTurn = 64

// minInterval keeps setInterval(fn, 0) from spinning the loop.
const minInterval = time.Millisecond

type timer struct {
	id       int64
	when     time.Time
	seq      uint64 // insertion order: equal deadlines fire in the order they were set
	interval time.Duration
	repeat   bool
	fn       goja.Callable
	args     []goja.Value
	index    int
	als      goja.Value // the AsyncLocalStorage frame it was set in
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when.Equal(h[j].when) {
		return h[i].seq < h[j].seq
	}
	return h[i].when.Before(h[j].when)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// post hands f to the isolate's loop. It reports false when the isolate has
// stopped and f will never run.
func (iso *isolate) post(f func()) bool {
	select {
	case iso.tasks <- f:
		return true
	case <-iso.stop:
		return false
	}
}

// run is the isolate's loop: the only goroutine that touches iso.vm.
func (iso *isolate) run() {
	defer close(iso.done)
	defer iso.forgetCallbacks()
	defer iso.closeGoBodies()
	wake := time.NewTimer(time.Hour)
	wake.Stop()
	sleep := time.NewTimer(time.Hour) // a Durable Object's hibernation
	sleep.Stop()
	defer sleep.Stop()
	for {
		select {
		case <-iso.stop: // stop wins over work still queued
			wake.Stop()
			return
		default:
		}
		iso.fireTimers()
		if len(iso.soon) > 0 {
			f := iso.soon[0]
			iso.soon[0] = nil
			iso.soon = iso.soon[1:]
			iso.enterTask()
			f()
			iso.leaveTask()
		}
		iso.afterTurn()
		if len(iso.soon) > 0 {
			// More local work: take posted work too, but do not wait.
			select {
			case f := <-iso.tasks:
				iso.enterTask()
				f()
				iso.leaveTask()
			default:
			}
			continue
		}
		iso.scrubCalls()
		var wakeC <-chan time.Time
		if len(iso.timers) > 0 {
			wake.Reset(time.Until(iso.timers[0].when))
			wakeC = wake.C
		}
		sleepC := iso.hibernateTimer(sleep)
		var alarmC <-chan time.Time
		if iso.obj != nil {
			alarmC = iso.obj.alarmWaitC()
		}
		select {
		case f := <-iso.tasks:
			iso.enterTask()
			f()
			iso.leaveTask()
		case <-alarmC:
			iso.enterTask()
			iso.obj.alarmTimeUp()
			iso.leaveTask()
		case <-wakeC:
		case <-sleepC:
			iso.obj.hibernate()
		case <-iso.stop:
			wake.Stop()
			return
		}
		sleep.Stop()
	}
}

// later queues f to run on the loop as a macrotask of its own (after the
// current one and its microtasks). Call it on the loop.
func (iso *isolate) later(f func()) { iso.soon = append(iso.soon, f) }

// afterTurn runs between macrotasks: it reports unhandled rejections,
// fails requests that can no longer complete, and, once nothing is in
// flight, drops leftover timers. Timers belong to the request that set them
// (as in workerd); an interval that outlives every request would otherwise
// tick forever.
func (iso *isolate) afterTurn() {
	iso.pollAwaited()
	iso.reportRejections()
	if len(iso.waiting) > 0 && len(iso.timers) == 0 && iso.background == 0 && iso.liveWS == 0 && len(iso.tasks) == 0 && len(iso.soon) == 0 {
		// Nothing left can run: no timer, no Go work, no open WebSocket
		// (its next frame is a task), no posted task. A
		// request still waiting for its response waits on a promise nobody
		// will settle; workerd fails it the same way.
		for _, pf := range append([]*pendingFetch(nil), iso.waiting...) {
			if pf.hung != nil {
				pf.hung()
				continue
			}
			iso.log.Error("The script will never generate a response.")
			pf.answer(internalError())
		}
		// What they were awaiting can no longer settle either.
		clear(iso.awaiting)
		iso.awaiting = iso.awaiting[:0]
	}
	// A Durable Object keeps its timers while it lives: it is one long
	// session, not a series of requests.
	if iso.obj == nil && len(iso.waiting) == 0 && iso.background == 0 && iso.liveWS == 0 && len(iso.timers) > 0 {
		iso.log.Debug("dropping timers left by finished requests", "count", len(iso.timers))
		iso.timers = iso.timers[:0]
		clear(iso.timerByID)
	}
	if iso.obj == nil && len(iso.waiting) == 0 && iso.background == 0 && len(iso.goBodies) > 0 {
		// So do the streamed answers of objects the requests called and
		// never read to the end: left open, each would keep its object
		// busy (never idle, never hibernating).
		iso.closeGoBodies()
	}
}

func (iso *isolate) fireTimers() {
	for n := 0; n < timersPerTurn && len(iso.timers) > 0; n++ {
		t := iso.timers[0]
		if t.when.After(time.Now()) {
			return
		}
		if t.repeat {
			t.when = time.Now().Add(t.interval)
			t.seq = iso.nextSeq()
			heap.Fix(&iso.timers, 0)
		} else {
			heap.Pop(&iso.timers)
			delete(iso.timerByID, t.id)
		}
		iso.enterTask()
		iso.als = t.als
		_, err := t.fn(goja.Undefined(), t.args...)
		iso.als = nil
		iso.leaveTask()
		if err != nil {
			iso.reportException("uncaught exception in timer callback", err)
		}
	}
}

func (iso *isolate) nextSeq() uint64 {
	iso.seq++
	return iso.seq
}

// setTimer backs setTimeout and setInterval: (fn, delayMs, repeat, argsArray).
func (iso *isolate) setTimer(call goja.FunctionCall) goja.Value {
	fn, ok := goja.AssertFunction(call.Argument(0))
	if !ok {
		panic(iso.vm.NewTypeError("The callback provided as parameter 1 is not a function."))
	}
	ms := call.Argument(1).ToFloat()
	if !(ms > 0) { // also catches NaN
		ms = 0
	}
	d := time.Duration(ms * float64(time.Millisecond))
	repeat := call.Argument(2).ToBoolean()
	if repeat && d < minInterval {
		d = minInterval
	}
	var args []goja.Value
	if a, ok := call.Argument(3).(*goja.Object); ok {
		n := int(a.Get("length").ToInteger())
		for i := 0; i < n; i++ {
			args = append(args, a.Get(itoa(i)))
		}
	}
	iso.lastTimerID++
	t := &timer{id: iso.lastTimerID, when: time.Now().Add(d), seq: iso.nextSeq(), interval: d, repeat: repeat, fn: fn, args: args, als: iso.als}
	heap.Push(&iso.timers, t)
	iso.timerByID[t.id] = t
	return iso.vm.ToValue(t.id)
}

func (iso *isolate) clearTimer(call goja.FunctionCall) goja.Value {
	id := call.Argument(0).ToInteger()
	if t, ok := iso.timerByID[id]; ok {
		heap.Remove(&iso.timers, t.index)
		delete(iso.timerByID, id)
	}
	return goja.Undefined()
}

// trackRejection is goja's promise rejection tracker: rejections still
// unhandled at the end of a macrotask are logged.
func (iso *isolate) trackRejection(p *goja.Promise, op goja.PromiseRejectionOperation) {
	switch op {
	case goja.PromiseRejectionReject:
		iso.rejected = append(iso.rejected, p)
	case goja.PromiseRejectionHandle:
		for i, q := range iso.rejected {
			if q == p {
				iso.rejected = append(iso.rejected[:i], iso.rejected[i+1:]...)
				break
			}
		}
	}
}

func (iso *isolate) reportRejections() {
	for _, p := range iso.rejected {
		iso.log.Warn("unhandled promise rejection", "error", describeValue(p.Result()), "stack", stackOf(p.Result()))
	}
	iso.rejected = iso.rejected[:0]
}

// taskClock lets the runtime's watchdog interrupt one macrotask that runs
// too long (an endless loop would otherwise wedge the isolate and every
// request routed to it). The mutex makes "still the same task" and
// Interrupt one step, so an interrupt never lands on the next task.
type taskClock struct {
	mu    sync.Mutex
	since time.Time // zero while the loop waits
}

func (iso *isolate) enterTask() {
	iso.clock.mu.Lock()
	iso.clock.since = time.Now()
	iso.scrubbed = false
	if iso.vm != nil { // nil while a Durable Object hibernates
		iso.vm.ClearInterrupt()
	}
	iso.clock.mu.Unlock()
}

func (iso *isolate) leaveTask() {
	iso.clock.mu.Lock()
	iso.clock.since = time.Time{}
	iso.clock.mu.Unlock()
}

// interruptRunning interrupts the task running now, if any (Close of a
// Durable Object that would not finish).
func (iso *isolate) interruptRunning(reason string) {
	iso.clock.mu.Lock()
	defer iso.clock.mu.Unlock()
	if !iso.clock.since.IsZero() && iso.vm != nil {
		iso.vm.Interrupt(reason)
		iso.clock.since = time.Time{}
	}
}

// interruptIfStuck runs on the watchdog goroutine.
func (iso *isolate) interruptIfStuck(limit time.Duration) {
	iso.clock.mu.Lock()
	defer iso.clock.mu.Unlock()
	if !iso.clock.since.IsZero() && iso.vm != nil && time.Since(iso.clock.since) > limit {
		iso.vm.Interrupt(fmt.Sprintf("script exceeded the time limit of %v for one task", limit))
		iso.clock.since = time.Time{} // interrupt once
	}
}
