package core

import (
	"fmt"
	"sort"
)

// Config is one node's identity and tunables.
type Config struct {
	Node      string
	Session   string // random per process start
	Advertise string
	Version   string
	Kind      string // KindNode or KindTool
	Started   int64  // unix ms
	// Durability is published in the lease (Lease.Durability).
	Durability string

	// TTL is the lease lifetime in ms; renewal starts at a third of it.
	// Default 10000 (CELLD_TTL_MS).
	TTL int64
	// Margin is added to another node's published expiry before we call it
	// dead, covering clock skew between nodes. Default 5000 ms
	// (CELLD_SKEW_MARGIN_MS).
	Margin int64
	// Observe is how long a lease record must stay unchanged (same
	// session and generation), measured on this node's own clock from the
	// moment it first saw that generation, before the node counts the
	// owner dead regardless of clock offsets: an owner renews every third
	// of its TTL and stops serving when a renewal has not landed by its
	// expiry, so a generation seen unchanged for a whole TTL has expired
	// on any clock that runs at about the rate of ours. Default TTL + 1%
	// of it (clock rates differ by far less: NTP slews at most 0.05%).
	Observe int64
	// WaitForPrevious makes a node whose name is held by a live session
	// wait for that lease to expire; otherwise it reports StartFailed.
	WaitForPrevious bool
	// RecoveryGate (fleet durability) runs the takeover recovery gate
	// (Recover) before claiming a cell from a session that did not
	// release it.
	RecoveryGate bool
	// Resume says Session is a previous process's session, carried over by
	// a restart after a preserve drain: a lease record of that session is
	// ours to renew, not a predecessor to wait for.
	Resume bool

	// Mutation deliberately breaks one rule. Only the simulator's
	// checker tests set it, to prove that the checker catches each bug.
	Mutation Mutation
}

// Mutation names a deliberate bug (see Config.Mutation).
type Mutation uint8

const (
	MutNone                Mutation = iota
	MutSkipEpochBump                // claim at the previous epoch instead of epoch+1
	MutSkipOwnerLeaseCheck          // take an unreleased cell without reading its owner's lease
	MutAmbiguousAsRejected          // treat an ambiguous release as not applied: keep serving the cell
	MutObserveTooShort              // count an owner dead after seeing its lease unchanged for half a TTL
	MutObserveOwnTTL                // observe another node's lease for this node's TTL, not the one its record states
	MutAckBeforeAllFsynced          // fleet: acknowledge once one member (not every member) fsynced
	MutSkipRecoveryGate             // fleet: take a cell without settling the previous session's log
	MutErrorAsAbsent                // fleet: count a member that did not answer the seal as holding nothing
	MutSkipPacks                    // fleet: the recovery gate collects the members' tails but not the session's log packs
	MutFloorPastUncovered           // fleet: raise the pack floor (and delete) past packs no cell prefix covers yet
	MutAckOutOfOrder                // fleet: pipelined appends — a follower takes a segment past a gap, and the owner acknowledges a segment whose predecessor is unproven
)

// Settle and retry bounds.
const (
	MaxSettleReads = 3   // re-reads that settle one ambiguous write
	MaxClaimRounds = 3   // read-decide-write rounds per Acquire
	MinRetryMS     = 50  // floor of a renewal retry delay
	StartRetryMS   = 500 // retry delay while creating the lease
)

// Machine is one node's decision state. Step is its only way in.
type Machine struct {
	cfg Config

	phase      NodePhase
	fence      string            // reason, once fenced
	expires    int64             // confirmed published expiry (ours)
	etag       string            // of our lease record
	generation uint64            // of our lease record
	lease      leaseOp           // the lease write or read in flight
	cells      map[string]*cell  // cells we own or are acquiring
	ops        map[OpID]opTarget // pending I/O
	nextOp     OpID
	timerGen   [4]uint64
	ready      bool
	seen       map[string]leaseSeen // other nodes' lease records, by node, as first seen
}

// leaseSeen is a lease generation and when this node first saw it (the
// completion of the read that returned it: the write came before that).
type leaseSeen struct {
	session    string
	generation uint64
	at         int64
}

type opTarget struct {
	lease bool
	cell  string
}

// New returns a machine for cfg with defaults filled in.
func New(cfg Config) *Machine {
	if cfg.TTL <= 0 {
		cfg.TTL = 10000
	}
	if cfg.Margin <= 0 {
		cfg.Margin = 5000
	}
	if cfg.Observe < cfg.TTL {
		cfg.Observe = cfg.TTL + cfg.TTL/100
	}
	if cfg.Mutation == MutObserveTooShort {
		cfg.Observe = cfg.TTL / 2
	}
	if cfg.Kind == "" {
		cfg.Kind = KindNode
	}
	return &Machine{cfg: cfg, cells: map[string]*cell{}, ops: map[OpID]opTarget{}, seen: map[string]leaseSeen{}}
}

// Config returns the machine's configuration.
func (m *Machine) Config() Config { return m.cfg }

// Phase is the lease's phase.
func (m *Machine) Phase() NodePhase { return m.phase }

// FenceReason is the reason the node fenced, or "".
func (m *Machine) FenceReason() string { return m.fence }

// Expires is the confirmed published expiry of our lease (0 before Ready).
func (m *Machine) Expires() int64 { return m.expires }

// Serving reports whether the node may act at now: it holds a lease whose
// confirmed expiry has not passed and has not fenced.
func (m *Machine) Serving(now int64) bool {
	return m.ready && m.phase != NodeFenced && now < m.expires
}

// CellState is a cell as the machine sees it.
type CellState struct {
	Cell  string
	Phase CellPhase
	Epoch uint64
}

// Cells lists the cells this node owns or is acquiring, sorted by name.
func (m *Machine) Cells() []CellState {
	out := make([]CellState, 0, len(m.cells))
	for _, name := range m.sortedCells() {
		c := m.cells[name]
		out = append(out, CellState{Cell: name, Phase: c.phase, Epoch: c.epoch})
	}
	return out
}

// Owns reports whether the node owns cell, and at which epoch.
func (m *Machine) Owns(cell string) (uint64, bool) {
	c, ok := m.cells[cell]
	if !ok || (c.phase != CellOwned) {
		return 0, false
	}
	return c.epoch, true
}

func (m *Machine) sortedCells() []string {
	names := make([]string, 0, len(m.cells))
	for n := range m.cells {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Step feeds one event and returns the effects to carry out, in order.
func (m *Machine) Step(ev Event) []Effect {
	var fx effects
	if m.phase == NodeFenced {
		if a, ok := ev.(Acquire); ok {
			fx.reply(a.Cell, AcquireResult{Kind: Unavailable, Detail: "node fenced: " + m.fence})
		}
		return fx.list
	}
	// No action on an expired lease: whatever the event, the watchdog
	// comes first.
	if m.ready && ev.now() >= m.expires {
		m.doFence(&fx, FenceWatchdog, fmt.Sprintf("published expiry %d passed (now %d)", m.expires, ev.now()))
		if a, ok := ev.(Acquire); ok {
			fx.reply(a.Cell, AcquireResult{Kind: Unavailable, Detail: "node fenced: " + m.fence})
		}
		return fx.list
	}
	switch e := ev.(type) {
	case Start:
		m.startLease(&fx, e.Now)
	case TimerFired:
		if e.Gen != m.timerGen[e.Timer] {
			return nil // superseded
		}
		m.onTimer(&fx, e)
	case Done:
		t, ok := m.ops[e.Op]
		if !ok {
			return nil // an answer nobody is waiting for any more
		}
		delete(m.ops, e.Op)
		if t.lease {
			m.onLeaseDone(&fx, e)
		} else {
			m.onCellDone(&fx, t.cell, e)
		}
	case Acquire:
		m.acquire(&fx, e.Now, e.Cell, e.Adopt)
	case Release:
		m.release(&fx, e.Now, e.Cell)
	case LeaseSeen:
		m.noteLease(e.Lease, e.Done)
	case Lost:
		if c, ok := m.cells[e.Cell]; ok && c.phase == CellOwned {
			fx.add(StopCell{Cell: e.Cell, Epoch: c.epoch, Reason: "ownership lost"})
			m.forget(e.Cell)
		}
	}
	return fx.list
}

type effects struct{ list []Effect }

func (f *effects) add(e Effect) { f.list = append(f.list, e) }
func (f *effects) reply(cell string, r AcquireResult) {
	f.add(Reply{Cell: cell, Result: r})
}

func (m *Machine) newOp(t opTarget) OpID {
	m.nextOp++
	m.ops[m.nextOp] = t
	return m.nextOp
}

func (m *Machine) setTimer(fx *effects, t Timer, at int64) {
	m.timerGen[t]++
	fx.add(SetTimer{Timer: t, At: at, Gen: m.timerGen[t]})
}

// doFence is terminal: stop every cell (in name order), answer every
// pending acquire, forget every op, write nothing more.
func (m *Machine) doFence(fx *effects, reason, detail string) {
	m.phase = NodeFenced
	m.fence = reason
	for _, name := range m.sortedCells() {
		c := m.cells[name]
		switch c.phase {
		case CellOwned, CellReleasing:
			if c.phase == CellOwned {
				fx.add(StopCell{Cell: name, Epoch: c.epoch, Reason: reason})
			}
		default:
			fx.reply(name, AcquireResult{Kind: Unavailable, Detail: "node fenced: " + reason})
		}
	}
	m.cells = map[string]*cell{}
	m.ops = map[OpID]opTarget{}
	fx.add(Fence{Reason: reason, Detail: detail})
}
