package sim

import (
	"fmt"
	"slices"

	"github.com/celldgo/celld/fleet/core"
)

// The replication group: an owner recruits a follower (catching it up on
// every segment the bucket may lack, then naming it in the record by CAS),
// drops a failed member once core.MayDrop allows (after probing the members
// that stay), and writes its node log record.

func (w *dworld) recruit(nd *dnode) {
	p := nd.p
	if p.fenced || p.busy || p.joining != nil || len(p.rec.Members) >= 2 {
		return
	}
	var cands []*dnode
	for _, o := range w.nodes {
		if o != nd && !o.dead && !slices.ContainsFunc(p.rec.Members, func(m core.Member) bool { return m.Node == o.name }) {
			cands = append(cands, o)
		}
	}
	if len(cands) == 0 {
		return
	}
	to := cands[w.rng.IntN(len(cands))]
	var disk string
	w.rpc(nd, p.session, to, func() bool { disk = to.disk; return true }, func(ok bool) {
		if !ok || p.joining != nil || p.busy || p.fenced {
			return
		}
		m := core.Member{Node: to.name, Disk: disk}
		p.joinSeq++
		p.joining, p.joinNeed = &m, map[seg]bool{}
		// Catch up: every segment the bucket may lack, of every cell.
		for _, cell := range w.cells {
			c := p.cells[cell]
			if c == nil {
				continue
			}
			var segs []seg
			for t := c.inBucket() + 1; t < c.next; t++ {
				s := seg{cell, c.epoch, t}
				segs, p.joinNeed[s] = append(segs, s), true
			}
			if len(segs) > 0 {
				w.appendTo(nd, p, m, segs, c.inBucket(), p.joinSeq)
			}
		}
		if len(p.joinNeed) == 0 {
			// Nothing to catch up: still prove the joiner's disk is the
			// one it named (an empty append) before the record names it.
			w.appendTo(nd, p, m, nil, 0, p.joinSeq)
		}
	})
}

// join adds the caught-up joiner to the record (creating it first).
func (w *dworld) join(nd *dnode, p *owner) {
	if p.busy || p.fenced || p.joining == nil {
		return
	}
	m := *p.joining
	p.joining = nil
	if slices.Contains(p.rec.Members, m) {
		return
	}
	next := core.LogRecord{Node: nd.name, Session: p.session, State: core.LogOpen, Members: append(members(p), m), PackFloor: p.rec.PackFloor}
	w.writeRecord(nd, p, next, nil)
}

func (w *dworld) dropMember(nd *dnode, p *owner, m core.Member) {
	if !slices.Contains(p.rec.Members, m) {
		delete(p.failed, m)
		return
	}
	p.failed[m] = true
	if !core.MayDrop(p.rec, m, w.flushed(p)) {
		return // retried after the next upload
	}
	if p.busy {
		w.at(w.now+50, func() { w.on(nd, p.session, func() { w.dropMember(nd, p, m) }) })
		return
	}
	next := p.rec
	next.Members = slices.DeleteFunc(members(p), func(x core.Member) bool { return x == m })
	if len(next.Members) == 0 {
		w.writeRecord(nd, p, next, nil)
		return
	}
	// The members that stay must still be what the record names (a disk
	// lost meanwhile would leave the record naming nobody who holds the
	// tail): probe them first, as an empty append.
	p.busy = true
	w.nextW++
	id := w.nextW
	w.inflight[id] = next
	left := len(next.Members)
	good := true
	for _, k := range next.Members {
		to := w.byName(k.Node)
		w.rpc(nd, p.session, to, func() bool { return w.follow(to, p.session, k.Disk, nil, 0) }, func(ok bool) {
			good = good && ok
			if left--; left > 0 {
				return
			}
			delete(w.inflight, id)
			p.busy = false
			if good && core.MayDrop(p.rec, m, w.flushed(p)) {
				w.writeRecord(nd, p, next, nil)
			}
		})
	}
}

// writeRecord creates or CASes the owner's record; a refused or unknown
// write is settled by a read, and a record that left open fences the
// owner's fleet proofs for good. applied, if set, runs once the write is
// known to have applied.
func (w *dworld) writeRecord(nd *dnode, p *owner, next core.LogRecord, applied func()) {
	p.busy, p.pending = true, &next
	key := core.LogKey(nd.name, p.session)
	create, etag := !p.exists, p.etag
	var newTag string
	w.nextW++
	id := w.nextW
	w.inflight[id] = next
	w.at(w.now+4000, func() { delete(w.inflight, id) }) // past any store latency: a failed call never lands
	w.store(nd, p.session, func() core.Outcome {
		delete(w.inflight, id)
		cur, ok := w.logs[key]
		if create && ok || !create && (!ok || cur.etag != etag) {
			return core.Rejected
		}
		w.gen++
		newTag = fmt.Sprintf("g%d", w.gen)
		w.logs[key] = logObj{next, newTag}
		return core.Applied
	}, func(o core.Outcome) {
		w.tracef("%s record write %+v: %s", p.session, next, o)
		if o != core.Ambiguous {
			p.pending = nil // applied or not: no longer in flight
		}
		if o == core.Applied {
			p.busy, p.rec, p.etag, p.exists = false, next, newTag, true
			if applied != nil {
				applied()
			}
			w.reevaluate(p)
			return
		}
		if o == core.Failed {
			p.busy = false
			return
		}
		w.store(nd, p.session, func() core.Outcome { return core.Applied }, func(core.Outcome) {
			p.busy, p.pending = false, nil
			cur, ok := w.logs[key] // the settle read
			if !ok {
				return
			}
			p.rec, p.etag, p.exists = cur.rec, cur.etag, true
			if cur.rec.State != core.LogOpen {
				p.fenced = true
			}
			w.reevaluate(p)
		})
	})
}
