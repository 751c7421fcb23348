package core

import "fmt"

// leaseStep says what the lease op in flight is for.
type leaseStep uint8

const (
	leaseIdle      leaseStep = iota
	leaseCreate              // create-if-absent, or CAS over a dead predecessor
	leaseReadPrev            // read the record that refused our create
	leaseSettleNew           // re-read after an ambiguous create
	leaseRenew               // CAS renewal
	leaseCheck               // read after a rejected or ambiguous renewal
)

type leaseOp struct {
	step     leaseStep
	op       OpID
	issuedAt int64  // node clock when the op was issued
	expires  int64  // expiry the write publishes
	gen      uint64 // generation the write publishes
	reads    int    // settle reads so far for the current ambiguous write
	needRead bool   // the renew timer must re-read instead of writing
}

func (m *Machine) leaseRecord(expires int64, gen uint64) []byte {
	return Encode(Lease{
		Node: m.cfg.Node, Session: m.cfg.Session, Advertise: m.cfg.Advertise,
		Expires: expires, Generation: gen, Version: m.cfg.Version,
		Started: m.cfg.Started, Kind: m.cfg.Kind, TTL: m.cfg.TTL, Durability: m.cfg.Durability,
	})
}

func (m *Machine) leaseWrite(fx *effects, now int64, step leaseStep, cond CondKind, etag string, gen uint64) {
	exp := now + m.cfg.TTL
	op := m.newOp(opTarget{lease: true})
	m.lease = leaseOp{step: step, op: op, issuedAt: now, expires: exp, gen: gen, reads: m.lease.reads}
	fx.add(Write{Op: op, Key: LeaseKey(m.cfg.Node), Data: m.leaseRecord(exp, gen), Cond: cond, ETag: etag})
}

func (m *Machine) leaseRead(fx *effects, now int64, step leaseStep) {
	op := m.newOp(opTarget{lease: true})
	l := m.lease
	l.step, l.op, l.issuedAt, l.needRead = step, op, now, false
	m.lease = l
	fx.add(Read{Op: op, Key: LeaseKey(m.cfg.Node)})
}

func (m *Machine) startLease(fx *effects, now int64) {
	if m.ready {
		return
	}
	m.phase = NodeStarting
	m.lease.reads = 0
	m.leaseWrite(fx, now, leaseCreate, IfAbsent, "", 1)
}

// confirm records a lease write we know is in the bucket and schedules the
// next renewal (a third of the TTL after it was issued) and the watchdog.
func (m *Machine) confirm(fx *effects, now int64, etag string, expires int64, gen uint64) {
	m.etag, m.generation = etag, gen
	if expires > m.expires {
		m.expires = expires
	}
	m.phase = NodeActive
	m.lease = leaseOp{}
	if !m.ready {
		m.ready = true
		fx.add(Ready{Expires: m.expires})
	}
	m.setTimer(fx, TimerRenew, max(now, m.expires-2*m.cfg.TTL/3))
	m.setTimer(fx, TimerWatchdog, m.expires)
}

// retryDelay shrinks as the published expiry nears, so a failing renewal
// gets several tries before the watchdog, never a fixed full interval.
func (m *Machine) retryDelay(now int64) int64 {
	d := (m.expires - now) / 4
	return min(max(d, MinRetryMS), m.cfg.TTL/3)
}

func (m *Machine) retryRenewal(fx *effects, now int64, needRead bool) {
	m.phase = NodeRenewing
	m.lease.step, m.lease.op, m.lease.needRead = leaseIdle, 0, needRead
	m.setTimer(fx, TimerRenew, now+m.retryDelay(now))
}

func (m *Machine) onTimer(fx *effects, e TimerFired) {
	switch e.Timer {
	case TimerStart:
		m.startLease(fx, e.Now)
	case TimerRenew:
		if !m.ready || m.lease.op != 0 {
			return
		}
		m.phase = NodeRenewing
		if m.lease.needRead {
			m.leaseRead(fx, e.Now, leaseCheck)
			return
		}
		m.lease.reads = 0
		m.leaseWrite(fx, e.Now, leaseRenew, IfMatch, m.etag, m.generation+1)
	case TimerWatchdog:
		// Step fences before dispatching when the expiry has passed. A
		// renewal that extended the expiry set a newer timer, so this one
		// fired early by this node's clock (a wall clock stepped back, a
		// timer rounded down): arm it again, or nothing would fence the
		// node should no other event come.
		if m.ready {
			m.setTimer(fx, TimerWatchdog, m.expires)
		}
	}
}

func (m *Machine) onLeaseDone(fx *effects, e Done) {
	l := m.lease
	m.lease.op = 0
	switch l.step {
	case leaseCreate:
		switch e.Outcome {
		case Applied:
			m.confirm(fx, e.Now, e.ETag, l.expires, l.gen)
		case Rejected:
			m.leaseRead(fx, e.Now, leaseReadPrev)
		case Ambiguous:
			m.lease.reads = 1
			m.leaseRead(fx, e.Now, leaseSettleNew)
		default:
			m.setTimer(fx, TimerStart, e.Now+StartRetryMS)
		}
	case leaseReadPrev:
		m.judgePrevious(fx, e, l)
	case leaseSettleNew:
		switch e.Outcome {
		case Applied:
			if rec, err := DecodeLease(e.Data); err == nil && rec.Session == m.cfg.Session && rec.Generation == l.gen {
				m.confirm(fx, e.Now, e.ETag, rec.Expires, rec.Generation)
				return
			}
			m.judgePrevious(fx, e, l)
		case NotFound:
			m.startLease(fx, e.Now) // not applied, and known absent
		default:
			if l.reads < MaxSettleReads {
				m.lease.reads++
				m.leaseRead(fx, e.Now, leaseSettleNew)
				return
			}
			m.setTimer(fx, TimerStart, e.Now+StartRetryMS)
		}
	case leaseRenew:
		switch e.Outcome {
		case Applied:
			m.confirm(fx, e.Now, e.ETag, l.expires, l.gen)
		case Rejected:
			m.leaseRead(fx, e.Now, leaseCheck) // someone else wrote our record
		case Ambiguous:
			m.lease.reads = 1
			m.leaseRead(fx, e.Now, leaseCheck)
		default:
			m.retryRenewal(fx, e.Now, false)
		}
	case leaseCheck:
		m.checkOwnRecord(fx, e, l)
	}
}

// judgePrevious decides what to do about a lease record that refused our
// create: a dead predecessor is replaced, a live one is waited for or
// reported.
func (m *Machine) judgePrevious(fx *effects, e Done, l leaseOp) {
	switch e.Outcome {
	case NotFound:
		m.startLease(fx, e.Now)
		return
	case Applied:
	default:
		m.setTimer(fx, TimerStart, e.Now+StartRetryMS)
		return
	}
	prev, err := DecodeLease(e.Data)
	if err != nil {
		fx.add(StartFailed{Detail: fmt.Sprintf("lease record %s is unreadable (%v); remove it by hand", LeaseKey(m.cfg.Node), err)})
		return
	}
	if prev.Session == m.cfg.Session && m.cfg.Resume {
		// Our own session, resumed by a restart after a preserve drain:
		// the previous process has exited; carry the record on.
		m.lease.reads = 0
		m.leaseWrite(fx, e.Now, leaseCreate, IfMatch, e.ETag, prev.Generation+1)
		return
	}
	// Judge by the clock when the read was issued: the record was at least
	// this fresh then.
	if l.issuedAt > prev.Expires+m.cfg.Margin || m.observedDead(prev, l.issuedAt, e.Now) {
		m.lease.reads = 0
		m.leaseWrite(fx, e.Now, leaseCreate, IfMatch, e.ETag, 1)
		return
	}
	if m.cfg.WaitForPrevious {
		fx.add(PredecessorLive{Lease: prev})
		// Look again when either rule could first count it dead.
		m.setTimer(fx, TimerStart, min(prev.Expires+m.cfg.Margin, m.seen[prev.Node].at+m.observeFor(prev))+1)
		return
	}
	fx.add(StartFailed{Detail: fmt.Sprintf("node name %q is held by a live session %s (kind %s, advertise %q) until %d",
		m.cfg.Node, prev.Session, prev.Kind, prev.Advertise, prev.Expires)})
}

// checkOwnRecord settles a rejected or ambiguous renewal from a fresh read
// of our own record.
func (m *Machine) checkOwnRecord(fx *effects, e Done, l leaseOp) {
	switch e.Outcome {
	case NotFound:
		m.doFence(fx, FenceMissing, fmt.Sprintf("%s is gone", LeaseKey(m.cfg.Node)))
		return
	case Applied:
	default:
		if l.reads < MaxSettleReads {
			m.lease.reads = l.reads + 1
			m.retryRenewal(fx, e.Now, true)
			return
		}
		// Three re-reads failed: fall back to a renewal on the last ETag we
		// know. It cannot double-apply: if the earlier write landed, this
		// CAS is refused and we read again.
		m.retryRenewal(fx, e.Now, false)
		return
	}
	rec, err := DecodeLease(e.Data)
	if err != nil || rec.Session != m.cfg.Session {
		who := "an unreadable record"
		if err == nil {
			who = fmt.Sprintf("session %s of node %s", rec.Session, rec.Node)
		}
		m.doFence(fx, FenceMismatch, fmt.Sprintf("%s now holds %s", LeaseKey(m.cfg.Node), who))
		return
	}
	if rec.Generation >= m.generation+1 {
		// Our renewal landed (or a later one did).
		m.confirm(fx, e.Now, e.ETag, rec.Expires, rec.Generation)
		return
	}
	// Still our record, renewal not applied: renew again on its ETag.
	m.etag, m.generation = e.ETag, rec.Generation
	m.retryRenewal(fx, e.Now, false)
}
