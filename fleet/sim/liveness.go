package sim

import (
	"github.com/celldgo/celld/fleet/core"
)

// quiesce heals the world (no faults, no crashes, no new pauses), restarts dead
// nodes, lets every stale lease expire, then asks for every requested cell
// until it settles, and checks that each ends owned by exactly one live
// node.
func (w *world) quiesce() {
	w.healthy = true
	w.tracef("quiescence")
	// A process frozen before quiescence stays frozen until its pause
	// ends (the events it missed are queued for then); healing starts
	// from the end of the last pause.
	from := w.now
	for _, nd := range w.nodes {
		from = max(from, nd.pausedUntil)
	}
	// Long enough for either rule to count a stale lease dead: the
	// margin past its expiry, or a whole observation window.
	t := w.maxTTL()
	w.drain(from + 2*(t+min(w.o.Margin, t+t/100)+min(w.o.SkewMS, t)))
	for _, nd := range w.nodes {
		if nd.dead {
			w.fail("%s still down at quiescence", nd.name)
			return
		}
	}
	for _, cell := range w.cells {
		if !w.asked[cell] {
			continue
		}
		for try := 0; try < 40 && w.violation == ""; try++ {
			if w.ownedByLive(cell) {
				break
			}
			nd := w.nodes[try%len(w.nodes)]
			w.deliver(nd, nd.session, func(now int64) core.Event { return core.Acquire{Now: now, Cell: cell} })
			w.drain(w.now + 1000)
		}
	}
	w.drain(w.now + 1000)
	if w.violation != "" {
		return
	}
	for _, cell := range w.cells {
		if !w.asked[cell] {
			continue
		}
		if n := len(w.live[cell]); n != 1 || !w.ownedByLive(cell) {
			w.fail("liveness: %s has %d live owner(s) at quiescence (%v), want exactly one on a live node", cell, n, w.live[cell])
			return
		}
	}
}

func (w *world) ownedByLive(cell string) bool {
	for session := range w.live[cell] {
		for _, nd := range w.nodes {
			if nd.session == session && !nd.dead && nd.m != nil && nd.m.Serving(w.clock(nd)) {
				if _, ok := nd.m.Owns(cell); ok {
					return true
				}
			}
		}
	}
	return false
}
