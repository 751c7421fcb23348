package server

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Prepared alarms. A resident Durable Object's alarm timer goes off a
// lead time before the alarm, and the object gets ready then (its parked
// database reopened, its hibernated isolate rebuilt, the object
// constructed: worker.Object.PrepareAlarm) and waits on its own loop for
// the alarm's time, when the handler starts with nothing left to do. The
// handler never starts early; only the costs that would have made it
// late are paid early.
//
// Bounds: at most maxPreparing preparations run at once (8 per core: a
// preparation mostly waits for a core, and the bound is against a burst
// of alarms due at once) and at most maxWaiting objects wait prepared
// (each holds its database open and pinned, so maxWaiting is a quarter
// of the open-cell bound); an alarm that finds no room tries again
// halfway to its time, and fires at its time the plain way when there is
// still none close to it. The lead is
// adaptive: twice the recent peak of what a preparation took (from the
// time it was meant to start, so a late timer counts), within
// [prepMinLead, prepMaxLead]. A draining node prepares nothing.

const (
	prepMinLead = 10 * time.Millisecond
	prepMaxLead = time.Second
	// prepInitialPeak is the preparation cost assumed before any was
	// measured.
	prepInitialPeak = 25 * time.Millisecond
	// prepHalfLife is how fast a peak cost is forgotten.
	prepHalfLife = 10 * time.Second
	// prepWaitSlack is how much later than the host's clock says the
	// object may find the alarm and still wait for it.
	prepWaitSlack = 50 * time.Millisecond
	// prepRetryFloor: an alarm this close that found no room to prepare
	// fires at its time unprepared.
	prepRetryFloor = 5 * time.Millisecond
)

// alarmPrepOff turns preparation off on the nodes started from now on
// (benchmarks compare).
var alarmPrepOff bool

// alarmPrep is a node's policy for preparing alarms (see above).
type alarmPrep struct {
	maxPreparing int
	maxWaiting   int

	mu        sync.Mutex
	preparing int
	waiting   int // prepared or preparing: tickets out
	peak      time.Duration
	peakAt    time.Time

	prepared, skipped atomic.Int64 // tickets readied; alarms fired unprepared for want of room
	late              atomic.Int64 // tickets readied only after their alarm's time
}

// newAlarmPrep bounds preparations for a node whose open-cell bound is
// maxOpen (0: none known).
func newAlarmPrep(maxOpen int) *alarmPrep {
	waiting := 256
	if maxOpen > 0 {
		waiting = max(1, maxOpen/4)
	}
	return &alarmPrep{maxPreparing: max(8, 8*runtime.GOMAXPROCS(0)), maxWaiting: waiting, peak: prepInitialPeak}
}

// lead is how long before an alarm its preparation starts.
func (p *alarmPrep) lead() time.Duration {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return min(prepMaxLead, max(prepMinLead, 2*p.decayedLocked(time.Now())+2*time.Millisecond))
}

func (p *alarmPrep) decayedLocked(now time.Time) time.Duration {
	if p.peakAt.IsZero() || now.Before(p.peakAt) {
		return p.peak
	}
	f := math.Exp2(-float64(now.Sub(p.peakAt)) / float64(prepHalfLife))
	return time.Duration(float64(p.peak) * f)
}

// note records what one preparation took.
func (p *alarmPrep) note(cost time.Duration) {
	now := time.Now()
	p.mu.Lock()
	if d := p.decayedLocked(now); cost < d {
		p.peak = d
	} else {
		p.peak = cost
	}
	p.peakAt = now
	p.mu.Unlock()
}

// prepTicket is one preparation's room in the bounds.
type prepTicket struct {
	p        *alarmPrep
	from     time.Time // when the preparation was meant to start
	due      time.Time // the alarm's time
	readied  bool      // under p.mu
	released bool
	inTimeOK bool // readied before the alarm's time
}

// inTime reports whether t was readied before its alarm's time (false
// for nil: not prepared).
func (t *prepTicket) inTime() bool {
	if t == nil {
		return false
	}
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	return t.inTimeOK
}

// acquire takes room for one preparation meant to start at from, for an
// alarm due at due, or reports nil when there is none.
func (p *alarmPrep) acquire(from, due time.Time) *prepTicket {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.preparing >= p.maxPreparing || p.waiting >= p.maxWaiting {
		p.skipped.Add(1)
		return nil
	}
	p.preparing++
	p.waiting++
	return &prepTicket{p: p, from: from, due: due}
}

// ready: the object is prepared (it waits now, or runs at once).
func (t *prepTicket) ready() {
	now := time.Now()
	cost := now.Sub(t.from)
	t.p.mu.Lock()
	if t.readied || t.released {
		t.p.mu.Unlock()
		return
	}
	t.readied = true
	t.inTimeOK = !now.After(t.due)
	t.p.preparing--
	t.p.mu.Unlock()
	t.p.prepared.Add(1)
	if now.After(t.due) {
		t.p.late.Add(1)
	}
	t.p.note(cost)
}

// release gives the room back (the run started, or never will).
func (t *prepTicket) release() {
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	if t.released {
		return
	}
	t.released = true
	t.p.waiting--
	if !t.readied {
		t.p.preparing--
	}
}

// prepStats are the counters of a node's alarm preparation.
type prepStats struct {
	Prepared, Skipped, Late int64
	Lead                    time.Duration
	Preparing, Wait         int
}

func (p *alarmPrep) stats() prepStats {
	lead := p.lead()
	p.mu.Lock()
	defer p.mu.Unlock()
	return prepStats{Prepared: p.prepared.Load(), Skipped: p.skipped.Load(), Late: p.late.Load(), Lead: lead, Preparing: p.preparing, Wait: p.waiting}
}
