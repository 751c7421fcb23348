package core

// OpID tags an I/O effect; its Done event carries the same id. A Done whose
// op is no longer pending is ignored.
type OpID uint64

// Outcome of an I/O effect, as the executor observed it.
type Outcome uint8

const (
	Applied   Outcome = iota // write applied; read found the object
	Rejected                 // write precondition refused
	NotFound                 // read: no such object
	Failed                   // definitely not applied / read failed
	Ambiguous                // write may or may not have been applied
)

var outcomeNames = [...]string{"applied", "rejected", "not_found", "failed", "ambiguous"}

func (o Outcome) String() string { return outcomeNames[o] }

// CondKind of a conditional write.
type CondKind uint8

const (
	Unconditional CondKind = iota
	IfAbsent
	IfMatch
)

// Events. Every event carries Now: the node's clock in unix milliseconds.
type Event interface{ now() int64 }

// Start begins the node: create its lease.
type Start struct{ Now int64 }

// TimerFired is a timer set by a SetTimer effect.
type TimerFired struct {
	Now   int64
	Timer Timer
	Gen   uint64
}

// Done answers a Read or Write effect.
type Done struct {
	Now     int64
	Op      OpID
	Outcome Outcome
	Data    []byte // read: the object's bytes
	ETag    string // read: the object's ETag; applied write: the new ETag
}

// Acquire asks for a cell. It is answered by a Reply effect.
type Acquire struct {
	Now  int64
	Cell string
	// Adopt, when non-zero, resumes a cell this session already owns at
	// that epoch (a node restarting after a preserve drain, with its
	// session and local state): if the record names this session at
	// exactly that epoch and is not released, the cell is owned again at
	// the same epoch without a write; otherwise the acquisition fails.
	Adopt uint64
}

// Release hands a cell back (drain, eviction). Idempotent.
type Release struct {
	Now  int64
	Cell string
}

// Lost reports that the executor found a cell no longer ours (an ownership
// re-check saw another epoch). The cell stops at once.
type Lost struct {
	Now  int64
	Cell string
}

// LeaseSeen reports another node's lease record as this process read it
// outside the machine, by a read that completed at Done (this node's
// clock): observation of that generation may start then (see
// Config.Observe).
type LeaseSeen struct {
	Now   int64
	Lease Lease
	Done  int64
}

func (e LeaseSeen) now() int64  { return e.Now }
func (e Start) now() int64      { return e.Now }
func (e TimerFired) now() int64 { return e.Now }
func (e Done) now() int64       { return e.Now }
func (e Acquire) now() int64    { return e.Now }
func (e Release) now() int64    { return e.Now }
func (e Lost) now() int64       { return e.Now }

// Effects.
type Effect interface{ effect() }

// Read fetches Key; answered by Done (Applied with Data/ETag, NotFound, Failed).
type Read struct {
	Op  OpID
	Key string
}

// Write puts Data under Key if the condition holds.
type Write struct {
	Op   OpID
	Key  string
	Data []byte
	Cond CondKind
	ETag string // for IfMatch
}

// Timer names a timer; at most one of each is live (a newer SetTimer with a
// larger Gen supersedes it).
type Timer uint8

const (
	TimerRenew    Timer = iota + 1 // renew the lease
	TimerWatchdog                  // the published expiry passes
	TimerStart                     // retry creating the lease
)

var timerNames = [...]string{"", "renew", "watchdog", "start"}

func (t Timer) String() string { return timerNames[t] }

// SetTimer asks for TimerFired{Timer, Gen} at At (node clock, ms).
type SetTimer struct {
	Timer Timer
	At    int64
	Gen   uint64
}

// Ready: the node holds its lease for the first time and may serve.
type Ready struct{ Expires int64 }

// StartCell: the node owns Cell at Epoch; start its owner context.
type StartCell struct {
	Cell  string
	Epoch uint64
	// ETag is own.json's as this node wrote (or found) it: while the
	// record still has it, it still names this session at Epoch.
	ETag string
}

// StopCell: cancel the cell's owner context now (before any release write).
type StopCell struct {
	Cell   string
	Epoch  uint64
	Reason string
}

// Fence: the node lost its lease. Stop everything, write nothing, exit 3.
type Fence struct {
	Reason string // node_lease_watchdog_fence, …
	Detail string
}

// Reply answers an Acquire.
type Reply struct {
	Cell   string
	Result AcquireResult
}

// Released: the release write of Cell has settled (applied, refused or
// unknown — all harmless); the cell is forgotten.
type Released struct{ Cell string }

// StartFailed: the node cannot take its lease (its name is held by a live
// session and the config says not to wait).
type StartFailed struct{ Detail string }

// PredecessorLive: the node's name is held by a lease of another session
// that has not expired, and the node waits for it (WaitForPrevious). The
// executor says so once, and may find out whether the holder is a second
// process running now (refuse to start) or a predecessor that died.
type PredecessorLive struct{ Lease Lease }

func (Read) effect()            {}
func (Write) effect()           {}
func (SetTimer) effect()        {}
func (Ready) effect()           {}
func (StartCell) effect()       {}
func (StopCell) effect()        {}
func (Fence) effect()           {}
func (Reply) effect()           {}
func (StartFailed) effect()     {}
func (PredecessorLive) effect() {}
func (Released) effect()        {}
func (Recover) effect()         {}

// Recover (fleet durability, Config.RecoveryGate): before claiming a cell
// that Session (of Node) owned and did not release, run the takeover
// recovery gate on that session's node log. Answered by Done: Applied when
// the log is settled (sealed, or absent and now created sealed), anything
// else when this attempt failed (Data: why); the claim is then not made.
type Recover struct {
	Op      OpID
	Cell    string
	Node    string
	Session string
}

// ResultKind says how an Acquire ended.
type ResultKind uint8

const (
	Owned       ResultKind = iota + 1 // we own the cell at Epoch
	Elsewhere                         // a live node owns it: forward to Node at Advertise
	Unavailable                       // try again later (store trouble, contention, not serving)
)

var resultNames = [...]string{"", "owned", "elsewhere", "unavailable"}

func (k ResultKind) String() string { return resultNames[k] }

// AcquireResult is the answer to an Acquire.
type AcquireResult struct {
	Kind      ResultKind
	Epoch     uint64 // Owned
	Node      string // Elsewhere
	Advertise string // Elsewhere
	Expires   int64  // Elsewhere: the owner's published lease expiry (unix ms)
	Observe   int64  // Elsewhere: ms this node watches that lease unchanged before counting its owner dead
	Detail    string // Unavailable: why
}

// Fence reasons (stable: they appear in logs, /state and diagnose).
const (
	FenceWatchdog = "node_lease_watchdog_fence"
	FenceMissing  = "node_lease_record_missing_fence"
	FenceMismatch = "node_lease_record_mismatch_fence"
)

// NodePhase is the lease's lifecycle phase (stable snake_case names).
type NodePhase uint8

const (
	NodeStarting NodePhase = iota // creating the lease
	NodeActive                    // lease held, renewal idle
	NodeRenewing                  // a renewal (or its settlement) in flight
	NodeFenced                    // terminal
)

var nodePhaseNames = [...]string{"starting", "active", "renewing", "fenced"}

func (p NodePhase) String() string { return nodePhaseNames[p] }

// CellPhase is a cell's lifecycle phase on this node.
type CellPhase uint8

const (
	CellReadingOwner  CellPhase = iota + 1 // reading own.json
	CellCheckingLease                      // reading the recorded owner's lease
	CellClaiming                           // create / CAS of own.json in flight
	CellSettling                           // re-reading own.json after an ambiguous claim
	CellOwned                              // ours at Epoch
	CellReleasing                          // release CAS in flight
	CellRecovering                         // the takeover recovery gate runs on the previous session
)

var cellPhaseNames = [...]string{"", "reading_owner", "checking_owner_lease", "claiming", "settling", "owned", "releasing", "recovering"}

func (p CellPhase) String() string { return cellPhaseNames[p] }
