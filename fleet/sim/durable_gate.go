package sim

import (
	"fmt"

	"github.com/celldgo/celld/fleet/core"
)

// takeover: nd takes cell from an owner that is dead or frozen (its lease
// would have expired), or that released it: the gate on the previous
// session first, then the ownership CAS (on the record as read), then the
// restore.
func (w *dworld) takeover(nd *dnode, cell string) {
	p := nd.p
	if p.cells[cell] != nil {
		return
	}
	prev, had := w.owns[cell]
	if had && !prev.released && prev.session != p.session {
		if o := w.byName(prev.node); o.session == prev.session && !o.dead && o.paused <= w.now {
			return // a live owner: forwarded, never displaced
		}
	}
	w.tracef("%s takes %s over from %+v", p.session, cell, prev)
	claim := func() {
		w.store(nd, p.session, func() core.Outcome {
			if cur, ok := w.owns[cell]; ok != had || cur.ver != prev.ver {
				return core.Rejected
			}
			w.owns[cell] = ownRec{node: nd.name, session: p.session, epoch: prev.epoch + 1, ver: prev.ver + 1}
			return core.Applied
		}, func(o core.Outcome) {
			if o != core.Applied || p.cells[cell] != nil {
				return // refused, failed or unknown: a later request tries again
			}
			w.restore(nd, p, cell, prev.epoch+1)
		})
	}
	if !had || prev.released || prev.session == p.session {
		claim()
		return
	}
	w.gate(nd, p, prev.node, prev.session, func(ok bool) {
		if ok {
			claim()
		}
	})
}

// restore rebuilds the cell from the bucket (newest epoch with data,
// chained to the base it restored from) and checks every acknowledged
// write is in it.
func (w *dworld) restore(nd *dnode, p *owner, cell string, epoch uint64) {
	var lineage []seg
	w.store(nd, p.session, func() core.Outcome {
		// A gap matters to a restore by the cell's owner; a stale one (its
		// claim was superseded) is discarded, and a failed gate may leave
		// a member's tail above packs it has not uploaded yet.
		cur := w.owns[cell]
		lineage = w.restoredLineage(cell, cur.session == p.session && cur.epoch == epoch)
		return core.Applied
	}, func(o core.Outcome) {
		if o != core.Applied {
			return // the activation fails; the record stays ours, unreleased
		}
		if cur := w.owns[cell]; cur.session != p.session || cur.epoch != epoch {
			return
		}
		w.res.Takeovers++
		w.bases[cellEpoch{cell, epoch}] = lineage
		set := map[seg]bool{}
		for _, s := range lineage {
			set[s] = true
		}
		r := restoreRec{epoch: epoch, lineage: set}
		w.restores[cell] = append(w.restores[cell], r)
		for _, s := range w.acks {
			if s.cell == cell {
				w.check(s, r, cell)
			}
		}
		w.tracef("%s restores %s at epoch %d: %d writes", p.session, cell, epoch, len(lineage))
		n := uint64(len(lineage))
		p.cells[cell] = &ocell{epoch: epoch, baseLen: n, next: n + 1, acked: n, uploaded: n,
			fsynced: map[uint64]map[core.Member]bool{}, proven: map[uint64]bool{}, ackedOut: map[uint64]bool{}}
	})
}

// restoredLineage is what a restore reads: the newest epoch with data,
// its base, and its run of TXIDs from right after the base.
func (w *dworld) restoredLineage(cell string, current bool) []seg {
	var best uint64
	for e, ts := range w.objs[cell] {
		if len(ts) > 0 && e > best {
			best = e
		}
	}
	if best == 0 {
		return nil
	}
	base := w.bases[cellEpoch{cell, best}]
	out := append([]seg(nil), base...)
	ts := w.objs[cell][best]
	for t := uint64(len(base)) + 1; ts[t]; t++ {
		out = append(out, seg{cell, best, t})
	}
	for t := range ts {
		if t > uint64(len(out)) && current {
			w.fail("restore of %s: epoch %d has txid %d past a gap at %d", cell, best, t, len(out)+1)
			break
		}
	}
	return out
}

// gate runs the core's recovery gate for session (of node) against the
// simulated bucket and followers.
func (w *dworld) gate(nd *dnode, p *owner, node, session string, done func(bool)) {
	g, a := core.NewGate(node, session, p.session, w.o.Mutation)
	var step func(a core.GateAction)
	step = func(a core.GateAction) {
		if a.Step != 0 {
			w.tracef("%s gate on %s: %+v", p.session, session, a)
		}
		switch a.Step {
		case 0:
		case core.GateDone:
			done(true)
		case core.GateFail:
			w.tracef("%s: recovery of %s failed: %s", p.session, session, a.Detail)
			done(false)
		case core.GateRead:
			var cur logObj
			var found bool
			w.store(nd, p.session, func() core.Outcome {
				cur, found = w.logs[a.Key]
				return core.Applied
			}, func(o core.Outcome) {
				switch {
				case o != core.Applied:
					step(g.OnRead(core.Failed, nil, ""))
				case !found:
					step(g.OnRead(core.NotFound, nil, ""))
				default:
					step(g.OnRead(core.Applied, core.Encode(cur.rec), cur.etag))
				}
			})
		case core.GateCreate, core.GateCAS:
			var tag string
			w.store(nd, p.session, func() core.Outcome {
				cur, ok := w.logs[a.Key]
				if a.Step == core.GateCreate && ok || a.Step == core.GateCAS && (!ok || cur.etag != a.ETag) {
					return core.Rejected
				}
				w.gen++
				tag = fmt.Sprintf("g%d", w.gen)
				w.logs[a.Key] = logObj{a.Record, tag}
				return core.Applied
			}, func(o core.Outcome) { step(g.OnWrite(o, tag)) })
		case core.GatePacks:
			w.gatePacks(nd, p, session, a.PackFrom, func(ok bool) { step(g.OnPacks(ok)) })
		case core.GateSeal:
			for _, m := range a.Members {
				to := w.byName(m.Node)
				var tail []seg
				w.rpc(nd, p.session, to, func() bool {
					if to.disk != m.Disk {
						return false // not the disk the member was: it cannot vouch for anything
					}
					to.sealed[session] = true
					for s := range to.retained[session] {
						tail = append(tail, s)
					}
					return true
				}, func(ok bool) {
					if !ok {
						step(g.OnSealed(m, false))
						return
					}
					w.store(nd, p.session, func() core.Outcome {
						for _, s := range tail {
							w.putObjs(s.cell, s.epoch, s.txid, s.txid)
						}
						return core.Applied
					}, func(o core.Outcome) {
						if len(tail) > 0 && o == core.Applied {
							w.res.Recovered++
						}
						step(g.OnSealed(m, o == core.Applied))
					})
				})
			}
		}
	}
	step(a)
}

// quiesce heals everything, then crashes each cell's owner (disks kept)
// and has another node take the cell over: every acknowledged write must
// come back, and recovery must not be blocked.
func (w *dworld) quiesce() {
	w.healthy = true
	for _, nd := range w.nodes {
		nd.paused, nd.isolated = 0, 0
	}
	w.drain(w.now + 4000)
	for _, cell := range w.cells {
		prev, ok := w.owns[cell]
		if !ok {
			continue
		}
		if o := w.byName(prev.node); o.session == prev.session && !o.released(cell) {
			w.crash(o)
			w.drain(w.now + 2000)
		}
		for try := 0; ; try++ {
			if cur := w.owns[cell]; cur.ver != prev.ver {
				break
			}
			if try == 10 {
				w.fail("liveness: %s could not be taken over after %d tries (recovery blocked)", cell, try)
				return
			}
			nd := w.nodes[try%len(w.nodes)]
			if !nd.dead {
				w.takeover(nd, cell)
			}
			w.drain(w.now + 2000)
		}
		if w.violation != "" {
			return
		}
	}
}

func (nd *dnode) released(cell string) bool {
	return nd.p == nil || nd.p.cells[cell] == nil
}
