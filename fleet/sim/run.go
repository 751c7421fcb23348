package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"

	"github.com/celldgo/celld/fleet/core"
)

// Run simulates one schedule.
func Run(o Options) Result {
	if o.Workload <= 0 {
		o.Workload = 60000
	}
	if o.SkewMS <= 0 {
		o.SkewMS = maxSkewMS
	}
	if o.Margin <= 0 {
		o.Margin = margin
	}
	w := &world{
		o: o, rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)), now: t0,
		store: map[string]object{}, asked: map[string]bool{},
		live: map[string]map[string]uint64{}, epochOf: map[string]string{}, maxEpoch: map[string]uint64{},
	}
	n := 2 + w.rng.IntN(4)
	for i := range n {
		nd := &node{name: fmt.Sprintf("n%d", i), skew: w.rng.Int64N(2*o.SkewMS+1) - o.SkewMS, drift: w.rng.Int64N(401) - 200, dead: true, ttl: ttl}
		if o.MixedTTL {
			nd.ttl = mixedTTLs[w.rng.IntN(len(mixedTTLs))]
		}
		w.nodes = append(w.nodes, nd)
		w.at(w.now+w.rng.Int64N(500), func() { w.boot(nd) })
	}
	for i := range 2 + w.rng.IntN(3) {
		w.cells = append(w.cells, fmt.Sprintf("Counter:%02d", i))
	}
	// Workload: random requests, releases and crashes.
	for t := w.now + 200; t < t0+o.Workload; t += 50 + w.rng.Int64N(700) {
		w.at(t, w.randomAction)
	}
	w.drain(t0 + o.Workload)
	if w.violation == "" {
		w.quiesce()
	}
	return Result{Seed: o.Seed, Nodes: n, Steps: w.steps, Acquired: w.acquired, Violation: w.violation}
}

// drain runs queued items up to real time until (or all, if until is 0).
func (w *world) drain(until int64) {
	for w.q.Len() > 0 && w.violation == "" {
		if until > 0 && w.q[0].at > until {
			w.now = until
			return
		}
		it := heap.Pop(&w.q).(item)
		w.now = it.at
		it.fn()
	}
}

func (w *world) randomAction() {
	nd := w.nodes[w.rng.IntN(len(w.nodes))]
	cell := w.cells[w.rng.IntN(len(w.cells))]
	switch r := w.rng.IntN(100); {
	case r < 65:
		w.asked[cell] = true
		w.deliver(nd, nd.session, func(now int64) core.Event { return core.Acquire{Now: now, Cell: cell} })
	case r < 90:
		w.deliver(nd, nd.session, func(now int64) core.Event { return core.Release{Now: now, Cell: cell} })
	case r < 95:
		w.crash(nd, "crash")
	default:
		// A pause: the process freezes; its events queue up and arrive late.
		if !nd.dead {
			w.tracef("%s(%s) paused", nd.name, nd.session)
		}
		w.pause(nd, 1000+w.rng.Int64N(int64(w.maxTTL()+min(w.o.Margin, 2*w.maxTTL()))*2))
	}
}

func (w *world) boot(nd *node) {
	nd.sessions++
	nd.session = fmt.Sprintf("%s.s%d", nd.name, nd.sessions)
	nd.dead = false
	nd.m = core.New(core.Config{
		Node: nd.name, Session: nd.session, Advertise: nd.name + ":8081", Version: "sim",
		Started: w.clock(nd), TTL: nd.ttl, Margin: w.o.Margin, WaitForPrevious: true, Mutation: w.o.Mutation,
		RecoveryGate: w.o.RecoveryGate,
	})
	w.tracef("%s boots as %s", nd.name, nd.session)
	w.deliver(nd, nd.session, func(now int64) core.Event { return core.Start{Now: now} })
}

// crash kills the process: its contexts end, its in-flight writes may still
// land, and a supervisor restarts it later.
func (w *world) crash(nd *node, why string) {
	if nd.dead {
		return
	}
	w.tracef("%s(%s) %s", nd.name, nd.session, why)
	w.endContexts(nd.session)
	nd.dead, nd.m = true, nil
	w.at(w.now+500+w.rng.Int64N(3000), func() { w.boot(nd) })
}

// pause freezes a node for d ms: every event for it is held back and
// delivered, in order, when it wakes — with its clock then far ahead.
func (w *world) pause(nd *node, d int64) {
	if !nd.dead && w.now+d > nd.pausedUntil {
		nd.pausedUntil = w.now + d
	}
}

func (w *world) endContexts(session string) {
	for _, cell := range w.cells {
		if _, ok := w.live[cell][session]; ok {
			delete(w.live[cell], session)
		}
	}
}

// deliver runs one event on a node's current session (dropped if that
// session is gone) and carries out the effects.
func (w *world) deliver(nd *node, session string, ev func(now int64) core.Event) {
	if nd.dead || nd.session != session || nd.m == nil {
		return
	}
	if nd.pausedUntil > w.now {
		w.at(nd.pausedUntil, func() { w.deliver(nd, session, ev) })
		return
	}
	w.steps++
	e := ev(w.clock(nd))
	fx := nd.m.Step(e)
	w.tracef("%s(%s) <- %T%+v -> %s", nd.name, session, e, short(e), fxString(fx))
	for _, f := range fx {
		w.effect(nd, session, e, f)
		if w.violation != "" {
			return
		}
	}
}

// mixedTTLs are the lease TTLs Options.MixedTTL draws from.
var mixedTTLs = []int64{3000, 10000, 30000}

// maxTTL is the longest lease TTL of any node in this run.
func (w *world) maxTTL() int64 {
	m := int64(ttl)
	for _, nd := range w.nodes {
		m = max(m, nd.ttl)
	}
	return m
}
