package core

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Fleet durability (CELLD_DURABILITY=fleet): the rules, pure.
//
// An owner sends every committed segment to the members of its replication
// group (one or two follower nodes) and acknowledges once every member has
// fsynced it; the bucket gets the segment later (write-behind). Three
// records make that safe without any clock:
//
//   - The node log record log/<node>/<session>.json, created (If-None-Match)
//     by each process session before its first fleet acknowledgement,
//     names the group's members. Members change only by CAS on it, and an
//     owner counts only the members of the record it last wrote.
//   - A follower retains each segment on its own disk until the bucket has
//     it, keyed by the owner's session, and refuses appends for a session
//     it sealed, or addressed to another disk than its own (a member is a
//     node and the identity of its disk, so a follower that lost its disk
//     is a new member).
//   - Before a cell is taken from a session that did not release it, the
//     takeover recovery gate (Gate) settles that session's log: absent →
//     created sealed, so the session can never start one; sealed → done;
//     open or recovering → CAS to recovering (members frozen), seal every
//     member, upload the retained segments of one member that answered
//     with its whole range, then every log pack from the record's floor,
//     CAS to sealed.
//   - Log packs (write-behind): every upload window the owner writes the
//     segments its group proved, of all its cells, as one object
//     log/<node>/<session>/<seq>.pack, seq 1, 2, 3, … one at a time (the
//     next only once the last is in the bucket; a retry rewrites the same
//     bytes), and only then tells the members to drop them. Each cell's
//     own prefix gets its segments later, merged over a longer window. A
//     pack is deleted once the cells' prefixes hold every segment in it,
//     and only below the record's PackFloor, which the owner raises by CAS
//     first: the packs at or above the floor are all there, so the gate
//     reads them from the floor up to the first missing one.
//
// Why an acknowledged write survives: it was fsynced by every member of
// the record when it was acknowledged; a member added later was sent every
// segment not yet in the bucket before the CAS that added it; the gate's
// CAS freezes the members; so any one member of the frozen record holds
// every acknowledged segment the bucket lacks — or dropped it only after
// the pack holding it was in the bucket, before the gate sealed it and so
// before the gate reads the packs. Why no stale
// acknowledgement: after the gate sealed a member, the old session can get
// no member's answer for a new segment (the sealed one refuses, and
// dropping it needs a CAS the frozen record refuses), and a bucket proof
// needs the ownership re-read, which names the new owner.

// LogPrefix holds node log records and log packs.
const LogPrefix = "log/"

// LogKey is the node log record of one process session.
func LogKey(node, session string) string { return LogPrefix + node + "/" + session + ".json" }

// PackKey is log pack seq (1, 2, 3, …) of one process session.
func PackKey(node, session string, seq uint64) string {
	return fmt.Sprintf("%s%s/%s/%016d.pack", LogPrefix, node, session, seq)
}

// LogState is a node log record's state.
type LogState string

const (
	LogOpen       LogState = "open"       // the session may acknowledge on fleet proofs
	LogRecovering LogState = "recovering" // a successor is collecting its tails; members frozen
	LogSealed     LogState = "sealed"     // every acknowledged tail is in the bucket
)

// Member is one follower of a replication group: a node and the identity of
// the disk its retained segments live on.
type Member struct {
	Node string `json:"node"`
	Disk string `json:"disk"`
}

// LogRecord is log/<node>/<session>.json.
type LogRecord struct {
	Node    string   `json:"node"`
	Session string   `json:"session"`
	State   LogState `json:"state"`
	Members []Member `json:"members"`
	// By is the session that last moved the record to recovering or
	// sealed (empty while open).
	By string `json:"by,omitempty"`
	// PackFloor is the lowest log pack that may still hold a segment no
	// cell prefix has (0 and 1: the first). Every pack from it up to the
	// newest is in the bucket; those below may have been deleted.
	PackFloor uint64 `json:"pack_floor,omitempty"`
}

// Floor is the first pack a recovery reads.
func (r LogRecord) Floor() uint64 { return max(r.PackFloor, 1) }

// DecodeLogRecord parses a node log record and checks it.
func DecodeLogRecord(b []byte) (LogRecord, error) {
	var r LogRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("decode node log record: %w", err)
	}
	switch r.State {
	case LogOpen, LogRecovering, LogSealed:
	default:
		return r, fmt.Errorf("decode node log record: unknown state %q", r.State)
	}
	if r.Node == "" || r.Session == "" {
		return r, fmt.Errorf("decode node log record: missing node or session")
	}
	return r, nil
}

// FleetAcked is the acknowledgement rule: a segment may be acknowledged on
// a fleet proof when the committed record is open, has members, and every
// member has fsynced it. fsynced reports one member's answer. While a
// write of the record is in flight (pending non-nil), the rule must hold
// for the record being written too: it may land, and then its members are
// the ones a recovery asks.
func FleetAcked(rec LogRecord, pending *LogRecord, fsynced func(Member) bool, mut Mutation) bool {
	if pending != nil && !fleetAcked(*pending, fsynced, mut) {
		return false
	}
	return fleetAcked(rec, fsynced, mut)
}

func fleetAcked(rec LogRecord, fsynced func(Member) bool, mut Mutation) bool {
	if rec.State != LogOpen || len(rec.Members) == 0 {
		return false
	}
	n := 0
	for _, m := range rec.Members {
		if fsynced(m) {
			n++
		}
	}
	if mut == MutAckBeforeAllFsynced {
		return n > 0
	}
	return n == len(rec.Members)
}

// MayDrop is the rule for taking a member out of the group: while another
// member remains, it holds everything the bucket lacks; the last member
// may leave only once the bucket holds every segment acknowledged on a
// fleet proof (flushed), else the record would name nobody who has them.
func MayDrop(rec LogRecord, m Member, flushed bool) bool {
	if !slices.Contains(rec.Members, m) {
		return false
	}
	for _, x := range rec.Members {
		if x != m {
			return true
		}
	}
	return flushed
}

// AppendFits is the follower's contiguity rule for pipelined appends: a
// segment of TXIDs from min may be retained when it starts at most right
// after what the follower retains of its cell epoch (reach) or what the
// bucket held when it was sent (after). One that does not fit waits for
// its predecessor (appends may arrive out of order) and is refused if it
// does not come: a member's range never has a hole, so a member that
// fsynced a segment holds every earlier one the bucket lacked.
func AppendFits(reach, after, min uint64, mut Mutation) bool {
	return mut == MutAckOutOfOrder || min <= max(reach, after)+1
}

// InOrder is the owner's rule for pipelined appends: a segment's fleet
// proof counts for its acknowledgement only once every earlier segment of
// its cell epoch is proven (by the group or the bucket) — the group's
// answer to one append never stands in for an earlier one that has none.
// predecessorsProven reports that.
func InOrder(predecessorsProven bool, mut Mutation) bool {
	return predecessorsProven || mut == MutAckOutOfOrder
}

// AppendRefusal says why a follower refuses an append ("" accepts it).
// disk is the follower's disk identity, to the disk the append is for,
// sealed whether the follower sealed the owner's session.
func AppendRefusal(disk, to string, sealed bool) string {
	switch {
	case to != disk:
		return fmt.Sprintf("append is for disk %s, this node's is %s", to, disk)
	case sealed:
		return "owner session is sealed"
	}
	return ""
}

// GateStep is what the recovery gate asks its executor to do next.
type GateStep uint8

const (
	GateRead   GateStep = iota + 1 // read the record (LogKey)
	GateCreate                     // create Record (If-None-Match)
	GateCAS                        // write Record if the ETag still matches
	GateSeal                       // seal every Members entry and collect+upload its tail
	GatePacks                      // upload every log pack from PackFrom up to the first missing one
	GateDone                       // recovery finished (or was not needed): restore may begin
	GateFail                       // this attempt failed; Detail says why; retry later
)

// GateAction is one step for the executor.
type GateAction struct {
	Step     GateStep
	Key      string
	Record   LogRecord // GateCreate, GateCAS
	ETag     string    // GateCAS
	Members  []Member  // GateSeal
	PackFrom uint64    // GatePacks
	Detail   string    // GateDone (what was found), GateFail
}

// Gate is the takeover recovery gate for one previous session. Feed it
// the outcome of each action; it is single-use (a failed attempt starts a
// new Gate).
type Gate struct {
	node, session string // the previous owner
	by            string // our session
	mut           Mutation
	etag          string
	rec           LogRecord
	rounds        int
	waiting       map[Member]bool
	complete      int
}

// MaxGateRounds bounds read-write rounds of one attempt (contention with
// another recoverer).
const MaxGateRounds = 6

// NewGate starts the gate for the session that owned a cell before us.
func NewGate(node, session, by string, mut Mutation) (*Gate, GateAction) {
	g := &Gate{node: node, session: session, by: by, mut: mut}
	if mut == MutSkipRecoveryGate {
		return g, GateAction{Step: GateDone, Detail: "recovery gate skipped"}
	}
	return g, g.read()
}

func (g *Gate) read() GateAction {
	g.rounds++
	if g.rounds > MaxGateRounds {
		return GateAction{Step: GateFail, Detail: fmt.Sprintf("%s: contended for %d rounds", LogKey(g.node, g.session), MaxGateRounds)}
	}
	return GateAction{Step: GateRead, Key: LogKey(g.node, g.session)}
}

// OnRead takes the read's outcome (Applied, NotFound, or anything else for a
// failed read).
func (g *Gate) OnRead(o Outcome, data []byte, etag string) GateAction {
	switch o {
	case NotFound:
		// Absent: the session never acknowledged on a fleet proof. Create
		// it sealed so that it never can.
		rec := LogRecord{Node: g.node, Session: g.session, State: LogSealed, By: g.by}
		g.rec = rec
		return GateAction{Step: GateCreate, Key: LogKey(g.node, g.session), Record: rec}
	case Applied:
	default:
		return GateAction{Step: GateFail, Detail: "read " + LogKey(g.node, g.session) + ": store unavailable"}
	}
	rec, err := DecodeLogRecord(data)
	if err != nil {
		return GateAction{Step: GateFail, Detail: err.Error()}
	}
	g.rec, g.etag = rec, etag
	switch rec.State {
	case LogSealed:
		return GateAction{Step: GateDone, Detail: "sealed"}
	case LogRecovering:
		if rec.By == g.by {
			return g.seal() // our own CAS, seen by a settle read
		}
	}
	next := rec
	next.State, next.By = LogRecovering, g.by
	g.rec = next
	return GateAction{Step: GateCAS, Key: LogKey(g.node, g.session), Record: next, ETag: etag}
}

// OnWrite takes a create's or CAS's outcome and the new ETag.
func (g *Gate) OnWrite(o Outcome, etag string) GateAction {
	if o != Applied {
		return g.read() // refused or unknown: look again
	}
	g.etag = etag
	switch g.rec.State {
	case LogSealed:
		return GateAction{Step: GateDone, Detail: "sealed"}
	default:
		return g.seal()
	}
}

func (g *Gate) seal() GateAction {
	if len(g.rec.Members) == 0 {
		return g.packs() // no group (left): only the packs hold a tail
	}
	g.waiting, g.complete = map[Member]bool{}, 0
	for _, m := range g.rec.Members {
		g.waiting[m] = true
	}
	return GateAction{Step: GateSeal, Members: slices.Clone(g.rec.Members)}
}

// OnSealed takes one member's outcome: complete when it sealed the session
// and returned its whole retained range, which the executor has uploaded
// to the cells' prefixes. An error, a timeout, a refusal or a range it
// cannot vouch for are all incomplete — never proof that nothing was
// there. It returns a zero action while other members are outstanding.
func (g *Gate) OnSealed(m Member, complete bool) GateAction {
	if !g.waiting[m] {
		return GateAction{}
	}
	delete(g.waiting, m)
	if complete || g.mut == MutErrorAsAbsent {
		g.complete++
	}
	if len(g.waiting) > 0 {
		return GateAction{}
	}
	if g.complete == 0 {
		return GateAction{Step: GateFail, Detail: fmt.Sprintf("no member of %s returned its retained range", LogKey(g.node, g.session))}
	}
	return g.packs()
}

// packs comes after every member answered its seal: a member dropped a
// segment only once the pack holding it was in the bucket, so a read now
// finds that pack.
func (g *Gate) packs() GateAction {
	if g.mut == MutSkipPacks {
		return g.finish()
	}
	return GateAction{Step: GatePacks, Key: LogKey(g.node, g.session), PackFrom: g.rec.Floor()}
}

// OnPacks takes the pack step's outcome: ok when every pack from the floor
// up to the first one the bucket reports missing was read and its
// segments uploaded to the cells' prefixes. A failed read is not a
// missing pack.
func (g *Gate) OnPacks(ok bool) GateAction {
	if !ok {
		return GateAction{Step: GateFail, Detail: fmt.Sprintf("the log packs of %s could not be read and uploaded", LogKey(g.node, g.session))}
	}
	return g.finish()
}

func (g *Gate) finish() GateAction {
	next := g.rec
	next.State, next.By = LogSealed, g.by
	g.rec = next
	return GateAction{Step: GateCAS, Key: LogKey(g.node, g.session), Record: next, ETag: g.etag}
}
