package sim

import (
	"container/heap"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/celldgo/celld/fleet/core"
)

// The fleet-durability simulator: owners that acknowledge on followers'
// fsyncs and upload behind, followers that retain segments on disk, the
// node log records, and the takeover recovery gate — driven through seeded
// schedules of crashes (with and without disk loss), freezes (a frozen
// owner wakes and carries on as if nothing happened: no clock saves it),
// partitions, lost messages and bucket faults. The rules it exercises are
// the core's (core.FleetAcked, core.AppendRefusal, core.Gate); ownership
// itself is modelled as an atomic compare-and-swap (the lease simulator
// covers it).
//
// Safety, checked on every acknowledgement and every restore: every
// acknowledged write of a cell is in the state every later epoch of that
// cell restored ("no acknowledged write lost", and, for an acknowledgement
// after the restore, "no stale acknowledgement"). Disk loss is bounded by
// what the design claims to survive: a follower's disk is only wiped while
// another intact member of each open group it belongs to remains.

// DurableOptions for one run.
type DurableOptions struct {
	Seed     uint64
	Mutation core.Mutation
	Trace    io.Writer
	Workload int64 // simulated ms of random actions, default 6000
}

// DurableResult of one run.
type DurableResult struct {
	Seed       uint64
	Nodes      int
	Acked      int // acknowledged writes
	FleetAcked int // of which on fleet proofs
	Takeovers  int
	Recovered  int // gates that collected a tail
	FromPacks  int // log packs a gate uploaded
	Hedges     int // appends sent again to a member slow to answer
	GapWaits   int // appends a follower held until their predecessor arrived
	Violation  string
}

const peerTimeout = 800

// Pipelined appends: an append a member has not answered after hedgeAfter
// is sent again (the first answer counts); a follower holds a segment
// that would leave a gap for up to gapWait, waiting for its predecessor.
const (
	hedgeAfter = 40
	gapWait    = 200
)

type seg struct {
	cell  string
	epoch uint64
	txid  uint64
}

type cellEpoch struct {
	cell  string
	epoch uint64
}

type dnode struct {
	name     string
	session  string
	sessions int
	disk     string
	disks    int
	dead     bool
	paused   int64 // real time it wakes
	isolated int64 // real time its partition heals
	// the follower's disk: per owner session
	retained map[string]map[seg]bool
	hi       map[string]map[cellEpoch]uint64
	sealed   map[string]bool
	p        *owner // the process's owner role; nil while dead
}

type owner struct {
	session  string
	rec      core.LogRecord // as last written or read
	etag     string
	exists   bool
	busy     bool            // a record write (or its probe) in flight
	pending  *core.LogRecord // the record being written
	fenced   bool            // the record left open: no more fleet proofs
	joining  *core.Member
	failed   map[core.Member]bool // members to drop once allowed
	joinNeed map[seg]bool
	// joinSeq numbers recruitments: only answers to the current one's
	// appends prove (or fail) the joiner, as fleetlog's recruit waits on
	// its own requests. An answer to an earlier recruitment's append can
	// arrive late (an owner frozen meanwhile) from a disk lost since.
	joinSeq   int
	cells     map[string]*ocell
	nextRound int
	// log packs (write-behind across cells)
	nextPack  uint64           // the seq of the next pack (1 first)
	packing   []seg            // the pack being written (fixed content), nil when none
	livePacks map[uint64][]seg // packs in the bucket, not deleted
	covered   map[cellEpoch]uint64
}

type ocell struct {
	epoch     uint64
	baseLen   uint64
	next      uint64
	fsynced   map[uint64]map[core.Member]bool
	proven    map[uint64]bool
	acked     uint64          // every write through this one acknowledged
	ackedOut  map[uint64]bool // acknowledged beyond acked (MutAckOutOfOrder only)
	uploaded  uint64
	packed    uint64 // through this TXID in a pack (or uploaded)
	uploading bool
	stopped   bool
}

type ownRec struct {
	node, session string
	epoch         uint64
	released      bool
	ver           int
}

type logObj struct {
	rec  core.LogRecord
	etag string
}

type dworld struct {
	o       DurableOptions
	rng     *rand.Rand
	now     int64
	q       queue
	seq     uint64
	healthy bool
	nodes   []*dnode
	cells   []string
	gen     int

	logs     map[string]logObj
	inflight map[uint64]core.LogRecord // record writes issued, not yet applied or dropped
	nextW    uint64
	objs     map[string]map[uint64]map[uint64]bool // cell → epoch → txids in the bucket
	packs    map[string]map[uint64][]seg           // session → seq → a log pack's segments
	owns     map[string]ownRec
	bases    map[cellEpoch][]seg // lineage each epoch restored (ground truth)

	acks      []seg
	restores  map[string][]restoreRec
	res       DurableResult
	violation string
}

type restoreRec struct {
	epoch   uint64
	lineage map[seg]bool
}

// RunDurable simulates one schedule.
func RunDurable(o DurableOptions) DurableResult {
	if o.Workload <= 0 {
		o.Workload = 6000
	}
	w := &dworld{o: o, rng: rand.New(rand.NewPCG(o.Seed, o.Seed^0x51ed2701)), now: t0,
		logs: map[string]logObj{}, packs: map[string]map[uint64][]seg{}, inflight: map[uint64]core.LogRecord{}, objs: map[string]map[uint64]map[uint64]bool{}, owns: map[string]ownRec{},
		bases: map[cellEpoch][]seg{}, restores: map[string][]restoreRec{}}
	n := 3 + w.rng.IntN(2)
	for i := range n {
		nd := &dnode{name: fmt.Sprintf("n%d", i)}
		w.newDisk(nd)
		w.boot(nd)
		w.nodes = append(w.nodes, nd)
	}
	for i := range 1 + w.rng.IntN(2) {
		w.cells = append(w.cells, fmt.Sprintf("C%d", i))
	}
	for t := w.now + 10; t < t0+o.Workload; t += 5 + w.rng.Int64N(60) {
		w.at(t, w.randomAction)
	}
	w.drain(t0 + o.Workload)
	if w.violation == "" {
		w.quiesce()
	}
	w.res.Seed, w.res.Nodes, w.res.Violation = o.Seed, n, w.violation
	return w.res
}

func (w *dworld) at(t int64, fn func()) {
	w.seq++
	heap.Push(&w.q, item{at: max(t, w.now), seq: w.seq, fn: fn})
}

func (w *dworld) drain(until int64) {
	for w.q.Len() > 0 && w.violation == "" {
		if w.q[0].at > until {
			w.now = until
			return
		}
		it := heap.Pop(&w.q).(item)
		w.now = it.at
		it.fn()
	}
	w.now = max(w.now, until)
}

func (w *dworld) tracef(format string, args ...any) {
	if w.o.Trace != nil {
		fmt.Fprintf(w.o.Trace, "%6d %s\n", w.now-t0, fmt.Sprintf(format, args...))
	}
}

func (w *dworld) fail(format string, args ...any) {
	if w.violation == "" {
		w.violation = fmt.Sprintf("t=%dms: %s", w.now-t0, fmt.Sprintf(format, args...))
		w.tracef("VIOLATION %s", w.violation)
	}
}

func (w *dworld) chance(p float64) bool { return !w.healthy && w.rng.Float64() < p }

func (w *dworld) lat() int64 {
	if !w.healthy && w.rng.IntN(40) == 0 {
		return 300 + w.rng.Int64N(1500)
	}
	return 1 + w.rng.Int64N(15)
}

func (w *dworld) newDisk(nd *dnode) {
	nd.disks++
	nd.disk = fmt.Sprintf("%s.d%d", nd.name, nd.disks)
	nd.retained, nd.hi, nd.sealed = map[string]map[seg]bool{}, map[string]map[cellEpoch]uint64{}, map[string]bool{}
}

func (w *dworld) boot(nd *dnode) {
	nd.sessions++
	nd.session = fmt.Sprintf("%s.s%d", nd.name, nd.sessions)
	nd.dead, nd.paused = false, 0
	nd.p = &owner{session: nd.session, cells: map[string]*ocell{}, failed: map[core.Member]bool{}, nextPack: 1,
		livePacks: map[uint64][]seg{}, covered: map[cellEpoch]uint64{}}
	w.tracef("%s boots as %s (disk %s)", nd.name, nd.session, nd.disk)
}

// on runs fn on nd's process session (dropped if it is gone; held while
// the process is frozen).
func (w *dworld) on(nd *dnode, session string, fn func()) {
	if nd.dead || nd.session != session {
		return
	}
	if nd.paused > w.now {
		w.at(nd.paused, func() { w.on(nd, session, fn) })
		return
	}
	fn()
}

// rpc sends a request from one process to another node's follower role;
// handle runs there and returns whether it accepted; reply runs back at
// the caller exactly once, false on refusal, loss or timeout.
func (w *dworld) rpc(from *dnode, session string, to *dnode, handle func() bool, reply func(ok bool)) {
	w.rpcAsync(from, session, to, func(respond func(bool)) { respond(handle()) }, reply)
}

// rpcAsync is rpc with a handler that answers later (respond, at most
// once, on the follower's same process session).
func (w *dworld) rpcAsync(from *dnode, session string, to *dnode, handle func(respond func(bool)), reply func(ok bool)) {
	answered := false
	answer := func(ok bool) {
		w.on(from, session, func() {
			if !answered {
				answered = true
				reply(ok)
			}
		})
	}
	w.at(w.now+peerTimeout, func() { answer(false) })
	cut := func() bool { return from.isolated > w.now || to.isolated > w.now || w.chance(0.03) }
	if cut() {
		return
	}
	w.at(w.now+w.lat(), func() {
		toSession := to.session
		w.on(to, toSession, func() {
			handle(func(ok bool) {
				if to.dead || to.session != toSession || cut() {
					return
				}
				w.at(w.now+w.lat(), func() { answer(ok) })
			})
		})
	})
}

// store runs a bucket operation after a latency; apply decides it and
// returns its outcome; done gets it back (Failed when the call failed,
// Ambiguous when it applied but the answer was lost).
func (w *dworld) store(nd *dnode, session string, apply func() core.Outcome, done func(core.Outcome)) {
	if w.chance(0.03) {
		w.at(w.now+w.lat(), func() { w.on(nd, session, func() { done(core.Failed) }) })
		return
	}
	w.at(w.now+w.lat(), func() {
		o := apply()
		if w.chance(0.02) && o != core.Rejected {
			o = core.Ambiguous
		}
		w.at(w.now+w.lat(), func() { w.on(nd, session, func() { done(o) }) })
	})
}

func (w *dworld) randomAction() {
	nd := w.nodes[w.rng.IntN(len(w.nodes))]
	cell := w.cells[w.rng.IntN(len(w.cells))]
	if nd.dead || nd.paused > w.now {
		return
	}
	r := w.rng.IntN(1000)
	switch {
	case r < 500:
		w.write(nd, cell)
	case r < 620:
		w.recruit(nd)
	case r < 680:
		w.uploadTick(nd)
	case r < 740:
		w.packTick(nd)
	case r < 760:
		w.floorTick(nd)
	case r < 850:
		w.takeover(nd, cell)
	case r < 880:
		w.release(nd, cell)
	case r < 920:
		w.crash(nd)
	case r < 950:
		d := 200 + w.rng.Int64N(2500)
		nd.paused = w.now + d
		w.tracef("%s frozen for %dms", nd.session, d)
		// Awake, it notices its lease passed and fences a little later:
		// until then it carries on regardless.
		s := nd.session
		w.at(nd.paused+w.rng.Int64N(1500), func() {
			if nd.session == s && !nd.dead {
				w.crash(nd)
			}
		})
	default:
		nd.isolated = w.now + 100 + w.rng.Int64N(1500)
		w.tracef("%s partitioned from its peers", nd.name)
	}
}

// crash kills nd's process, sometimes with its disk, and restarts it.
func (w *dworld) crash(nd *dnode) {
	if nd.dead {
		return
	}
	nd.dead, nd.p = true, nil
	lose := w.rng.IntN(3) == 0 && w.mayLoseDisk(nd)
	w.tracef("%s crashes (disk lost: %v)", nd.session, lose)
	if lose {
		w.newDisk(nd)
	}
	w.at(w.now+100+w.rng.Int64N(1500), func() { w.boot(nd) })
}

// mayLoseDisk: the design survives losing a member's disk only while
// another intact member of every open group it is in remains.
func (w *dworld) mayLoseDisk(nd *dnode) bool {
	groups := []core.LogRecord{}
	for _, l := range w.logs {
		groups = append(groups, l.rec)
	}
	for _, r := range w.inflight {
		groups = append(groups, r) // a write that may still land
	}
	for _, o := range w.nodes {
		if o.p != nil && o.p.joining != nil {
			groups = append(groups, core.LogRecord{Members: []core.Member{*o.p.joining}})
		}
	}
	for _, rec := range groups {
		if rec.State == core.LogSealed {
			continue
		}
		in, others := false, 0
		for _, m := range rec.Members {
			if m.Node == nd.name && m.Disk == nd.disk {
				in = true
			} else if w.intact(m) {
				others++
			}
		}
		if in && others == 0 {
			return false
		}
	}
	return true
}

func (w *dworld) intact(m core.Member) bool {
	for _, nd := range w.nodes {
		if nd.name == m.Node {
			return nd.disk == m.Disk
		}
	}
	return false
}

func (w *dworld) byName(name string) *dnode {
	for _, nd := range w.nodes {
		if nd.name == name {
			return nd
		}
	}
	return nil
}

func (w *dworld) check(s seg, restore restoreRec, cell string) {
	if restore.epoch > s.epoch && !restore.lineage[s] {
		w.fail("acknowledged write %s epoch %d txid %d is not in what epoch %d restored", cell, s.epoch, s.txid, restore.epoch)
	}
}

func (w *dworld) ack(p *owner, cell string, c *ocell, t uint64, fleet bool) {
	s := seg{cell, c.epoch, t}
	w.acks = append(w.acks, s)
	w.res.Acked++
	if fleet {
		w.res.FleetAcked++
	}
	w.tracef("%s acks %s e%d t%d (fleet %v)", p.session, cell, c.epoch, t, fleet)
	for _, r := range w.restores[cell] {
		if r.epoch > s.epoch && !r.lineage[s] {
			w.fail("stale acknowledgement: %s acked %s epoch %d txid %d after epoch %d restored without it", p.session, cell, s.epoch, t, r.epoch)
		}
	}
}

func members(p *owner) []core.Member { return slices.Clone(p.rec.Members) }

// evaluate acknowledges every write whose proof is complete, in order
// (core.InOrder: a write's fleet proof counts once every earlier one is
// proven).
func (w *dworld) evaluate(p *owner, cell string, c *ocell) {
	inOrder := true
	for t := c.acked + 1; t < c.next; t++ {
		fleet := false
		if !c.proven[t] {
			fs := c.fsynced[t]
			fleet = !p.fenced && p.exists && core.FleetAcked(p.rec, p.pending, func(m core.Member) bool { return fs[m] }, w.o.Mutation)
			if !fleet {
				inOrder = false
				continue
			}
		}
		if c.ackedOut[t] {
			continue
		}
		if !core.InOrder(inOrder, w.o.Mutation) {
			return
		}
		if inOrder {
			c.acked = t
		} else {
			c.ackedOut[t] = true // acknowledged past an unproven one (the broken rule)
		}
		w.ack(p, cell, c, t, fleet)
		if w.violation != "" {
			return
		}
	}
}

func (w *dworld) write(nd *dnode, cell string) {
	p := nd.p
	c := p.cells[cell]
	if c == nil || c.stopped {
		return
	}
	t := c.next
	c.next++
	c.fsynced[t] = map[core.Member]bool{}
	targets := members(p)
	if p.joining != nil {
		targets = append(targets, *p.joining)
		p.joinNeed[seg{cell, c.epoch, t}] = true
	}
	for _, m := range targets {
		w.appendTo(nd, p, m, []seg{{cell, c.epoch, t}}, c.inBucket(), p.joinSeq)
	}
	if len(targets) == 0 {
		w.uploadTick(nd) // no group: bucket proofs now
	}
}

// appendTo sends segments to member m; after is what the bucket holds of
// their cell (the follower's range may start right after it). An append
// not answered after hedgeAfter is sent again (idempotent at the
// follower); the first acceptance counts, a refusal only once every copy
// was refused or lost.
func (w *dworld) appendTo(nd *dnode, p *owner, m core.Member, segs []seg, after uint64, join int) {
	to := w.byName(m.Node)
	copies, failed, settled := 1, 0, false
	handle := func(respond func(bool)) {
		w.followWait(to, p.session, m.Disk, segs, after, w.now+gapWait, respond)
	}
	onReply := func(ok bool) {
		if settled {
			return
		}
		if !ok {
			if failed++; failed < copies {
				return // the other copy may still be accepted
			}
		}
		settled = true
		w.appended(nd, p, m, segs, ok, join)
	}
	w.rpcAsync(nd, p.session, to, handle, onReply)
	w.at(w.now+hedgeAfter, func() {
		w.on(nd, p.session, func() {
			if !settled && copies == 1 && failed == 0 {
				copies++
				w.res.Hedges++
				w.tracef("%s hedges an append to %s", p.session, m.Node)
				w.rpcAsync(nd, p.session, to, handle, onReply)
			}
		})
	})
}

// appended takes a member's answer to an append.
func (w *dworld) appended(nd *dnode, p *owner, m core.Member, segs []seg, ok bool, join int) {
	joiner := p.joining != nil && *p.joining == m && join == p.joinSeq
	for _, s := range segs {
		c := p.cells[s.cell]
		if c == nil || c.epoch != s.epoch {
			continue
		}
		if ok {
			c.fsynced[s.txid][m] = true
			if joiner {
				delete(p.joinNeed, s)
			}
		}
	}
	if !ok {
		if joiner {
			p.joining = nil
		}
		w.dropMember(nd, p, m)
	}
	if ok && joiner && len(p.joinNeed) == 0 {
		w.join(nd, p)
	}
	for _, cell := range w.cells {
		if c := p.cells[cell]; c != nil {
			w.evaluate(p, cell, c)
		}
	}
}

// followWait is a follower taking an append that may have arrived before
// its predecessor: it holds it (until deadline) while it would leave a
// gap, then answers.
func (w *dworld) followWait(nd *dnode, owner, disk string, segs []seg, after uint64, deadline int64, respond func(bool)) {
	switch w.followOnce(nd, owner, disk, segs, after) {
	case followed:
		respond(true)
	case refused:
		respond(false)
	case gap:
		if w.now >= deadline {
			respond(false) // a gap: this range could never be vouched for
			return
		}
		w.res.GapWaits++
		s := nd.session
		w.at(w.now+5, func() {
			w.on(nd, s, func() { w.followWait(nd, owner, disk, segs, after, deadline, respond) })
		})
	}
}

type followOutcome uint8

const (
	followed followOutcome = iota
	refused
	gap
)

// follow is a follower taking an append at once (a gap is refused).
func (w *dworld) follow(nd *dnode, owner, disk string, segs []seg, after uint64) bool {
	return w.followOnce(nd, owner, disk, segs, after) == followed
}

// followOnce keeps each cell's range contiguous (core.AppendFits): the
// whole append fits, and is retained (fsynced), or none of it is.
func (w *dworld) followOnce(nd *dnode, owner, disk string, segs []seg, after uint64) followOutcome {
	if core.AppendRefusal(nd.disk, disk, nd.sealed[owner]) != "" {
		return refused
	}
	if nd.retained[owner] == nil {
		nd.retained[owner], nd.hi[owner] = map[seg]bool{}, map[cellEpoch]uint64{}
	}
	reach := map[cellEpoch]uint64{}
	for _, s := range segs {
		k := cellEpoch{s.cell, s.epoch}
		r, ok := reach[k]
		if !ok {
			r = nd.hi[owner][k]
		}
		if !core.AppendFits(r, after, s.txid, w.o.Mutation) {
			return gap
		}
		reach[k] = max(r, after, s.txid)
	}
	for _, s := range segs {
		k := cellEpoch{s.cell, s.epoch}
		nd.retained[owner][s] = true
		nd.hi[owner][k] = max(nd.hi[owner][k], after, s.txid)
	}
	return followed
}

// flushed: the bucket holds every write this session acknowledged (in
// the cells' prefixes or in log packs).
func (w *dworld) flushed(p *owner) bool {
	for _, c := range p.cells {
		if c.inBucket() < c.acked {
			return false
		}
	}
	return true
}

// inBucket: the bucket holds the cell's writes through this TXID.
func (c *ocell) inBucket() uint64 { return max(c.uploaded, c.packed) }

func (w *dworld) reevaluate(p *owner) {
	for _, cell := range w.cells {
		if c := p.cells[cell]; c != nil {
			w.evaluate(p, cell, c)
		}
	}
}

// uploadTick uploads each owned cell's segments the bucket lacks, then
// re-reads ownership: a bucket proof.
func (w *dworld) uploadTick(nd *dnode) {
	p := nd.p
	for _, cell := range w.cells {
		c := p.cells[cell]
		if c == nil || c.uploading || c.uploaded+1 >= c.next {
			continue
		}
		c.uploading = true
		lo, hi := c.uploaded+1, c.next-1
		w.store(nd, p.session, func() core.Outcome {
			w.putObjs(cell, c.epoch, lo, hi)
			return core.Applied
		}, func(o core.Outcome) {
			c.uploading = false
			if o != core.Applied {
				return
			}
			c.uploaded = max(c.uploaded, hi)
			k := cellEpoch{cell, c.epoch}
			p.covered[k] = max(p.covered[k], hi)
			for _, m := range members(p) {
				if p.failed[m] {
					w.dropMember(nd, p, m)
				}
			}
			for _, m := range members(p) {
				to := w.byName(m.Node)
				w.rpc(nd, p.session, to, func() bool {
					for s := range to.retained[p.session] {
						if s.cell == cell && s.epoch == c.epoch && s.txid <= hi {
							delete(to.retained[p.session], s)
						}
					}
					return true
				}, func(bool) {})
			}
			var own ownRec
			w.store(nd, p.session, func() core.Outcome { own = w.owns[cell]; return core.Applied }, func(o core.Outcome) {
				if o == core.Applied && own.session == p.session && own.epoch == c.epoch {
					for t := lo; t <= hi; t++ {
						c.proven[t] = true
					}
					w.evaluate(p, cell, c)
				}
			})
		})
	}
}

func (w *dworld) putObjs(cell string, epoch, lo, hi uint64) {
	if w.objs[cell] == nil {
		w.objs[cell] = map[uint64]map[uint64]bool{}
	}
	if w.objs[cell][epoch] == nil {
		w.objs[cell][epoch] = map[uint64]bool{}
	}
	for t := lo; t <= hi; t++ {
		w.objs[cell][epoch][t] = true
	}
}

func (w *dworld) release(nd *dnode, cell string) {
	p := nd.p
	c := p.cells[cell]
	if c == nil || c.stopped || c.uploaded+1 < c.next {
		return // only a flushed cell is released
	}
	c.stopped = true
	if o := w.owns[cell]; o.session == p.session && o.epoch == c.epoch {
		o.released, o.ver = true, o.ver+1
		w.owns[cell] = o
	}
	delete(p.cells, cell)
}
