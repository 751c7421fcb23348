package core

import "fmt"

type cell struct {
	phase    CellPhase
	epoch    uint64 // owned: our epoch; claiming: the epoch we write
	etag     string // owned: ETag of our own.json
	prev     Own    // the record we decided on
	prevETag string // its ETag ("" when there was none)
	issuedAt int64  // node clock when the owner-lease read was issued
	rounds   int    // read-decide-write rounds
	reads    int    // settle reads for the current ambiguous claim
	op       OpID
	adopt    uint64 // the epoch to resume (Acquire.Adopt), 0: a normal claim
}

func (m *Machine) cellRead(fx *effects, name string, c *cell, key string) {
	c.op = m.newOp(opTarget{cell: name})
	fx.add(Read{Op: c.op, Key: key})
}

func (m *Machine) acquire(fx *effects, now int64, name string, adopt uint64) {
	if !m.Serving(now) {
		fx.reply(name, AcquireResult{Kind: Unavailable, Detail: "node does not hold its lease"})
		return
	}
	if c, ok := m.cells[name]; ok {
		switch c.phase {
		case CellOwned:
			fx.reply(name, AcquireResult{Kind: Owned, Epoch: c.epoch})
		case CellReleasing:
			fx.reply(name, AcquireResult{Kind: Unavailable, Detail: "cell is being released"})
		}
		return // an acquisition in flight answers when it ends
	}
	c := &cell{phase: CellReadingOwner, adopt: adopt}
	m.cells[name] = c
	m.cellRead(fx, name, c, OwnKey(name))
}

func (m *Machine) giveUp(fx *effects, name, detail string) {
	m.forget(name)
	fx.reply(name, AcquireResult{Kind: Unavailable, Detail: detail})
}

func (m *Machine) forget(name string) {
	for op, t := range m.ops {
		if !t.lease && t.cell == name {
			delete(m.ops, op)
		}
	}
	delete(m.cells, name)
}

// decide looks at an ownership record we just read (found=false: none) and
// claims the cell, checks its owner's lease, or gives up.
func (m *Machine) decide(fx *effects, now int64, name string, c *cell, found bool, data []byte, etag string) {
	if c.rounds >= MaxClaimRounds {
		m.giveUp(fx, name, fmt.Sprintf("contended: %d claim rounds lost", c.rounds))
		return
	}
	c.rounds++
	if !found && c.adopt != 0 {
		m.giveUp(fx, name, fmt.Sprintf("cannot resume at epoch %d: no ownership record", c.adopt))
		return
	}
	if !found {
		c.prev, c.prevETag = Own{}, ""
		m.claim(fx, name, c, 1)
		return
	}
	own, err := DecodeOwn(data)
	if err != nil {
		m.giveUp(fx, name, fmt.Sprintf("%s: %v", OwnKey(name), err))
		return
	}
	c.prev, c.prevETag = own, etag
	if c.adopt != 0 {
		// Resuming: only a record that still names this session at the
		// adopted epoch is ours; nobody else can have written it since.
		if own.Session == m.cfg.Session && own.Epoch == c.adopt && !own.Released {
			c.epoch = own.Epoch
			m.owned(fx, name, c, etag)
			return
		}
		m.giveUp(fx, name, fmt.Sprintf("cannot resume at epoch %d: the record names %s at epoch %d (released %v)", c.adopt, own.Node, own.Epoch, own.Released))
		return
	}
	if own.Released || own.Session == m.cfg.Session || m.cfg.Mutation == MutSkipOwnerLeaseCheck {
		m.claim(fx, name, c, own.Epoch+1)
		return
	}
	c.phase, c.issuedAt = CellCheckingLease, now
	m.cellRead(fx, name, c, LeaseKey(own.Node))
}

func (m *Machine) claim(fx *effects, name string, c *cell, epoch uint64) {
	if m.cfg.Mutation == MutSkipEpochBump && epoch > 1 {
		epoch--
	}
	c.phase, c.epoch, c.reads = CellClaiming, epoch, 0
	c.op = m.newOp(opTarget{cell: name})
	w := Write{Op: c.op, Key: OwnKey(name), Data: Encode(Own{Node: m.cfg.Node, Session: m.cfg.Session, Epoch: epoch})}
	if c.prevETag == "" {
		w.Cond = IfAbsent
	} else {
		w.Cond, w.ETag = IfMatch, c.prevETag
	}
	fx.add(w)
}

func (m *Machine) owned(fx *effects, name string, c *cell, etag string) {
	c.phase, c.etag = CellOwned, etag
	fx.add(StartCell{Cell: name, Epoch: c.epoch, ETag: etag})
	fx.reply(name, AcquireResult{Kind: Owned, Epoch: c.epoch})
}

func (m *Machine) onCellDone(fx *effects, name string, e Done) {
	c := m.cells[name]
	c.op = 0
	switch c.phase {
	case CellReadingOwner:
		switch e.Outcome {
		case NotFound:
			m.decide(fx, e.Now, name, c, false, nil, "")
		case Applied:
			m.decide(fx, e.Now, name, c, true, e.Data, e.ETag)
		default:
			m.giveUp(fx, name, "read ownership record: store unavailable")
		}
	case CellCheckingLease:
		m.judgeOwner(fx, e, name, c)
	case CellRecovering:
		if e.Outcome != Applied {
			m.giveUp(fx, name, fmt.Sprintf("recovery of session %s of node %s pending: %s", c.prev.Session, c.prev.Node, e.Data))
			return
		}
		// Claim on the record as read: if it changed meanwhile, the CAS
		// is refused and we look again.
		m.claim(fx, name, c, c.prev.Epoch+1)
	case CellClaiming:
		switch e.Outcome {
		case Applied:
			m.owned(fx, name, c, e.ETag)
		case Rejected:
			c.phase = CellReadingOwner // another claimant won: look again
			m.cellRead(fx, name, c, OwnKey(name))
		case Ambiguous:
			c.phase, c.reads = CellSettling, 1
			m.cellRead(fx, name, c, OwnKey(name))
		default:
			m.giveUp(fx, name, "write ownership record: store unavailable")
		}
	case CellSettling:
		switch e.Outcome {
		case Applied:
			if own, err := DecodeOwn(e.Data); err == nil && own.Session == m.cfg.Session && own.Epoch == c.epoch && !own.Released {
				m.owned(fx, name, c, e.ETag) // our claim landed
				return
			}
			m.decide(fx, e.Now, name, c, true, e.Data, e.ETag)
		case NotFound:
			m.decide(fx, e.Now, name, c, false, nil, "")
		default:
			if c.reads < MaxSettleReads {
				c.reads++
				m.cellRead(fx, name, c, OwnKey(name))
				return
			}
			// The record may name us; a later Acquire reads it and claims
			// the next epoch, so nothing is stuck.
			m.giveUp(fx, name, "could not settle an ambiguous ownership write")
		}
	case CellReleasing:
		if e.Outcome == Ambiguous && m.cfg.Mutation == MutAmbiguousAsRejected {
			c.phase = CellOwned
			fx.add(StartCell{Cell: name, Epoch: c.epoch, ETag: c.etag})
			return
		}
		m.forget(name) // applied, refused or unknown: all harmless
		fx.add(Released{Cell: name})
	}
}

// judgeOwner decides from the recorded owner's lease whether that owner is
// alive. Expiry is judged by our clock when the read was issued, plus the
// skew margin: the record was at least that fresh then. Independently of
// any clock offset, an owner whose lease generation this node has seen
// unchanged for Observe is dead (observedDead).
func (m *Machine) judgeOwner(fx *effects, e Done, name string, c *cell) {
	switch e.Outcome {
	case NotFound:
		m.takeOver(fx, name, c) // owner's lease is gone
		return
	case Applied:
	default:
		m.giveUp(fx, name, "read owner lease: store unavailable")
		return
	}
	l, err := DecodeLease(e.Data)
	if err != nil {
		m.giveUp(fx, name, fmt.Sprintf("owner lease %s: %v", LeaseKey(c.prev.Node), err))
		return
	}
	if l.Session != c.prev.Session || c.issuedAt > l.Expires+m.cfg.Margin || m.observedDead(l, c.issuedAt, e.Now) {
		m.takeOver(fx, name, c)
		return
	}
	m.forget(name)
	fx.reply(name, AcquireResult{Kind: Elsewhere, Node: l.Node, Advertise: l.Advertise, Expires: l.Expires, Observe: m.observeFor(l)})
}

// takeOver claims a cell from a dead owner that did not release it; with
// the recovery gate on, the previous session's node log is settled first.
func (m *Machine) takeOver(fx *effects, name string, c *cell) {
	if !m.cfg.RecoveryGate {
		m.claim(fx, name, c, c.prev.Epoch+1)
		return
	}
	c.phase = CellRecovering
	c.op = m.newOp(opTarget{cell: name})
	fx.add(Recover{Op: c.op, Cell: name, Node: c.prev.Node, Session: c.prev.Session})
}

func (m *Machine) release(fx *effects, now int64, name string) {
	c, ok := m.cells[name]
	if !ok || c.phase != CellOwned {
		return
	}
	fx.add(StopCell{Cell: name, Epoch: c.epoch, Reason: "released"})
	c.phase = CellReleasing
	c.op = m.newOp(opTarget{cell: name})
	fx.add(Write{Op: c.op, Key: OwnKey(name), Cond: IfMatch, ETag: c.etag,
		Data: Encode(Own{Node: m.cfg.Node, Session: m.cfg.Session, Epoch: c.epoch, Released: true})})
}

// observedDead records the lease generation l, read by a read issued at
// issued and completed at done, and reports whether this node has seen that
// same generation unchanged for at least Observe by its own clock: from the
// completion of the first read that returned it (its write came before)
// to the issue of this one (it was still current after that).
func (m *Machine) observedDead(l Lease, issued, done int64) bool {
	s, ok := m.seen[l.Node]
	if !ok || s.session != l.Session || s.generation != l.Generation {
		m.seen[l.Node] = leaseSeen{session: l.Session, generation: l.Generation, at: done}
		return false
	}
	return issued-s.at >= m.observeFor(l)
}

// observeFor is how long a lease generation must stay unchanged before
// this node counts its owner dead: the owner's own TTL and 1% (it stops
// serving when a renewal has not landed by issue + its TTL, on its
// clock), or this node's Observe for a record that does not say.
func (m *Machine) observeFor(l Lease) int64 {
	if l.TTL <= 0 || m.cfg.Mutation == MutObserveOwnTTL {
		return m.cfg.Observe
	}
	if m.cfg.Mutation == MutObserveTooShort {
		return l.TTL / 2
	}
	return l.TTL + l.TTL/100
}

// noteLease records a lease generation this process read outside the
// machine (a command's lookup before it asks for the cell), completed at
// done: observation of that generation starts then, not at the machine's
// own first read.
func (m *Machine) noteLease(l Lease, done int64) {
	if s, ok := m.seen[l.Node]; ok && s.session == l.Session && s.generation == l.Generation && s.at <= done {
		return
	}
	m.seen[l.Node] = leaseSeen{session: l.Session, generation: l.Generation, at: done}
}
