package sim

import (
	"fmt"
	"strings"

	"github.com/celldgo/celld/fleet/core"
)

func short(e core.Event) string {
	switch e := e.(type) {
	case core.Done:
		return fmt.Sprintf("{op %d %s %s}", e.Op, e.Outcome, e.Data)
	case core.TimerFired:
		return fmt.Sprintf("{%s gen %d}", e.Timer, e.Gen)
	case core.Acquire:
		return "{" + e.Cell + "}"
	case core.Release:
		return "{" + e.Cell + "}"
	default:
		return ""
	}
}

func cellOf(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, core.CellsPrefix)
	if !ok {
		return "", false
	}
	cell, _, _ := strings.Cut(rest, "/")
	return cell, true
}

func (w *world) effect(nd *node, session string, ev core.Event, f core.Effect) {
	switch f := f.(type) {
	case core.Read:
		w.read(nd, session, f)
	case core.Write:
		if _, ok := cellOf(f.Key); ok {
			w.checkLeaseHeld(nd, session, "writes "+f.Key)
		}
		w.write(nd, session, f)
	case core.SetTimer:
		at := w.realAt(nd, f.At)
		if !w.healthy {
			at += w.rng.Int64N(30) // scheduling jitter
		}
		w.at(at, func() {
			w.deliver(nd, session, func(now int64) core.Event { return core.TimerFired{Now: now, Timer: f.Timer, Gen: f.Gen} })
		})
	case core.StartCell:
		w.startCell(nd, session, f)
	case core.StopCell:
		if m := w.live[f.Cell]; m != nil {
			delete(m, session)
		}
	case core.Fence:
		w.crash(nd, "SELF-FENCE: "+f.Reason+" "+f.Detail)
	case core.StartFailed:
		w.fail("%s(%s) could not start: %s", nd.name, session, f.Detail)
	case core.Recover:
		// The recovery gate's outcome: settled, or this attempt failed.
		o := core.Applied
		if w.chance(0.2) {
			o = core.Failed
		}
		w.done(nd, session, core.Done{Op: f.Op, Outcome: o}, w.latency()+w.latency())
	case core.Ready, core.Reply, core.Released, core.PredecessorLive:
	}
}

// checkLeaseHeld: no node acts on an expired lease. The store's record for
// the node must name this session with a published expiry still ahead of
// the node's clock.
func (w *world) checkLeaseHeld(nd *node, session, what string) {
	o, ok := w.store[core.LeaseKey(nd.name)]
	if !ok {
		w.fail("%s(%s) %s with no lease record", nd.name, session, what)
		return
	}
	l, err := core.DecodeLease(o.data)
	if err != nil || l.Session != session {
		w.fail("%s(%s) %s but its lease record names %s", nd.name, session, what, l.Session)
		return
	}
	if now := w.clock(nd); now >= l.Expires {
		w.fail("%s(%s) %s on an expired lease (expires %d, clock %d)", nd.name, session, what, l.Expires-t0, now-t0)
	}
}

func (w *world) startCell(nd *node, session string, f core.StartCell) {
	w.acquired++
	w.checkLeaseHeld(nd, session, "starts "+f.Cell)
	key := fmt.Sprintf("%s#%d", f.Cell, f.Epoch)
	if prev, ok := w.epochOf[key]; ok && prev != session {
		w.fail("two writers for %s at epoch %d: %s and %s", f.Cell, f.Epoch, prev, session)
		return
	}
	w.epochOf[key] = session
	if w.live[f.Cell] == nil {
		w.live[f.Cell] = map[string]uint64{}
	}
	for other, e := range w.live[f.Cell] {
		if other != session && w.hasAuthority(other) {
			w.fail("two live owners of %s: %s at epoch %d and %s at epoch %d", f.Cell, other, e, session, f.Epoch)
			return
		}
	}
	w.live[f.Cell][session] = f.Epoch
}

func (w *world) done(nd *node, session string, d core.Done, after int64) {
	w.at(w.now+after, func() {
		w.deliver(nd, session, func(now int64) core.Event { d.Now = now; return d })
	})
}

func (w *world) read(nd *node, session string, r core.Read) {
	arrive := w.latency()
	w.at(w.now+arrive, func() {
		if w.chance(0.04) {
			w.done(nd, session, core.Done{Op: r.Op, Outcome: core.Failed}, w.latency())
			return
		}
		o, ok := w.store[r.Key]
		d := core.Done{Op: r.Op, Outcome: core.NotFound}
		if ok {
			d = core.Done{Op: r.Op, Outcome: core.Applied, Data: o.data, ETag: o.etag}
		}
		back := w.latency()
		if arrive+back > timeout {
			d = core.Done{Op: r.Op, Outcome: core.Failed}
		}
		w.done(nd, session, d, back)
	})
}

func (w *world) write(nd *node, session string, wr core.Write) {
	if w.chance(0.03) { // refused before sending: definitely not applied
		w.done(nd, session, core.Done{Op: wr.Op, Outcome: core.Failed}, w.latency())
		return
	}
	arrive := w.latency()
	if arrive > timeout {
		// The executor gives up at the timeout; the write still lands later.
		w.done(nd, session, core.Done{Op: wr.Op, Outcome: core.Ambiguous}, timeout)
	}
	w.at(w.now+arrive, func() {
		if w.chance(0.03) { // 5xx before applying
			if arrive <= timeout {
				w.done(nd, session, core.Done{Op: wr.Op, Outcome: core.Ambiguous}, w.latency())
			}
			return
		}
		d := w.apply(wr)
		if arrive > timeout {
			return
		}
		back := w.latency()
		if w.chance(0.04) || arrive+back > timeout { // applied, answer lost
			d = core.Done{Op: wr.Op, Outcome: core.Ambiguous}
			back = min(back, timeout-arrive)
		}
		w.done(nd, session, d, back)
	})
}

// apply performs a conditional write on the store and checks that epochs
// never go down.
func (w *world) apply(wr core.Write) core.Done {
	cur, exists := w.store[wr.Key]
	switch {
	case wr.Cond == core.IfAbsent && exists,
		wr.Cond == core.IfMatch && (!exists || cur.etag != wr.ETag):
		return core.Done{Op: wr.Op, Outcome: core.Rejected}
	}
	if cell, ok := cellOf(wr.Key); ok {
		own, err := core.DecodeOwn(wr.Data)
		if err != nil {
			w.fail("bad ownership record written: %v", err)
		} else if own.Epoch < w.maxEpoch[cell] {
			w.fail("epoch of %s went down: %d after %d", cell, own.Epoch, w.maxEpoch[cell])
		} else {
			w.maxEpoch[cell] = own.Epoch
		}
	}
	w.gen++
	etag := fmt.Sprintf("e%d", w.gen)
	w.store[wr.Key] = object{data: wr.Data, etag: etag}
	return core.Done{Op: wr.Op, Outcome: core.Applied, ETag: etag}
}

// hasAuthority: a session's owner contexts are live until its node's clock
// reaches the confirmed expiry of its lease. A frozen process past that
// point still holds a context object, but may not act on it: the executor
// checks the expiry before any action and fences first.
func (w *world) hasAuthority(session string) bool {
	for _, nd := range w.nodes {
		if nd.session == session && !nd.dead && nd.m != nil {
			return w.clock(nd) < nd.m.Expires()
		}
	}
	return false
}
