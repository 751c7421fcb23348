package sim

import "github.com/celldgo/celld/fleet/core"

// Log packs: the write-behind across cells. An owner writes every segment
// the bucket lacks, of all its cells, as one pack (seq 1, 2, 3, …, one at
// a time, a retry rewriting the same content), and only once it is in the
// bucket tells the members to drop those segments. The cells' prefixes get
// them later (uploadTick); a pack whose segments the prefixes all hold is
// deleted, after the record's floor was raised past it.

// packTick starts the next pack.
func (w *dworld) packTick(nd *dnode) {
	p := nd.p
	if p.packing != nil || p.fenced || !p.exists {
		return
	}
	var content []seg
	for _, cell := range w.cells {
		c := p.cells[cell]
		if c == nil {
			continue
		}
		for t := c.inBucket() + 1; t < c.next; t++ {
			content = append(content, seg{cell, c.epoch, t})
		}
	}
	if len(content) == 0 {
		return
	}
	p.packing = content
	w.writePack(nd, p, p.nextPack, content)
}

func (w *dworld) writePack(nd *dnode, p *owner, seq uint64, content []seg) {
	w.store(nd, p.session, func() core.Outcome {
		if w.packs[p.session] == nil {
			w.packs[p.session] = map[uint64][]seg{}
		}
		w.packs[p.session][seq] = content
		return core.Applied
	}, func(o core.Outcome) {
		if o != core.Applied {
			w.at(w.now+50+w.rng.Int64N(200), func() { w.on(nd, p.session, func() { w.writePack(nd, p, seq, content) }) })
			return
		}
		w.tracef("%s pack %d in the bucket: %v", p.session, seq, content)
		p.packing = nil
		p.livePacks[seq] = content
		p.nextPack = seq + 1
		through := map[cellEpoch]uint64{}
		for _, s := range content {
			k := cellEpoch{s.cell, s.epoch}
			through[k] = max(through[k], s.txid)
			if c := p.cells[s.cell]; c != nil && c.epoch == s.epoch {
				c.packed = max(c.packed, s.txid)
			}
		}
		// Only now may the members drop them.
		for _, m := range members(p) {
			to := w.byName(m.Node)
			w.rpc(nd, p.session, to, func() bool {
				for s := range to.retained[p.session] {
					if s.txid <= through[cellEpoch{s.cell, s.epoch}] {
						delete(to.retained[p.session], s)
					}
				}
				return true
			}, func(bool) {})
		}
		for _, m := range members(p) {
			if p.failed[m] {
				w.dropMember(nd, p, m)
			}
		}
	})
}

// floorTick raises the record's pack floor past the packs the cells'
// prefixes cover, then deletes them.
func (w *dworld) floorTick(nd *dnode) {
	p := nd.p
	if p.busy || p.fenced || !p.exists {
		return
	}
	floor := p.nextPack
	for seq, content := range p.livePacks {
		if seq >= floor {
			continue
		}
		for _, s := range content {
			if p.covered[cellEpoch{s.cell, s.epoch}] < s.txid {
				floor = seq
				break
			}
		}
	}
	if w.o.Mutation == core.MutFloorPastUncovered {
		floor = p.nextPack
	}
	if floor <= p.rec.Floor() {
		return
	}
	next := p.rec
	next.PackFloor = floor
	w.writeRecord(nd, p, next, func() {
		var del []uint64
		for seq := range p.livePacks {
			if seq < floor {
				del = append(del, seq)
				delete(p.livePacks, seq)
			}
		}
		w.store(nd, p.session, func() core.Outcome {
			for _, seq := range del {
				delete(w.packs[p.session], seq)
			}
			return core.Applied
		}, func(core.Outcome) {})
	})
}

// gatePacks is the gate's pack step: read each pack from seq up to the
// first missing one, uploading its segments to the cells' prefixes.
func (w *dworld) gatePacks(nd *dnode, p *owner, session string, seq uint64, done func(ok bool)) {
	var content []seg
	var found bool
	w.store(nd, p.session, func() core.Outcome {
		content, found = w.packs[session][seq]
		return core.Applied
	}, func(o core.Outcome) {
		switch {
		case o != core.Applied:
			done(false) // a failed read is not a missing pack
		case !found:
			done(true)
		default:
			w.store(nd, p.session, func() core.Outcome {
				for _, s := range content {
					w.putObjs(s.cell, s.epoch, s.txid, s.txid)
				}
				return core.Applied
			}, func(o core.Outcome) {
				if o != core.Applied {
					done(false)
					return
				}
				w.res.FromPacks++
				w.gatePacks(nd, p, session, seq+1, done)
			})
		}
	})
}
