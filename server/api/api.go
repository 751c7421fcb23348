// Package api holds the JSON shapes of a node's operator API (GET /state),
// shared by the server that writes them and the tools that read them
// (celld top). It imports nothing of the node, so readers stay light.
package api

// State is the answer of GET /state on the internal listener. It keeps
// answering throughout a drain. Times are Unix milliseconds.
type State struct {
	Node      string `json:"node"`
	Session   string `json:"session"`
	Version   string `json:"version"`
	Advertise string `json:"advertise"`
	// Deployment is the Worker version this node serves ("script@version";
	// "" before one loads). LoadFailed names a newer version it could not
	// load (it keeps serving Deployment), with the reason in LoadError.
	Deployment string `json:"deployment"`
	LoadFailed string `json:"load_failed,omitempty"`
	LoadError  string `json:"load_error,omitempty"`
	// Health is "ok", "draining" or "fenced".
	Health   string `json:"health"`
	Draining bool   `json:"draining"`
	// Mode is "" when serving, "handoff" during a drain that releases
	// cells, "preserve" during a drain that keeps them.
	Mode string `json:"mode"`

	Counters Counters `json:"counters"`
	// Drain progress: cells resident when the drain began and how many of
	// them have been released since. Zero when not draining.
	DrainStartMS    int64 `json:"drain_started_ms,omitempty"`
	DrainCells      int   `json:"drain_cells"`
	DrainReleased   int   `json:"drain_released"`
	DrainDeadlineMS int64 `json:"drain_deadline_ms,omitempty"`

	Cells []Cell `json:"cells"`
	// CellCount is how many cells are resident (Cells may list fewer: a
	// summary lists the busiest; see StateSummary).
	CellCount int   `json:"cell_count"`
	Waker     Waker `json:"waker"`

	// Requests counts the public Worker requests answered since the node
	// started, Errors those answered 5xx (a rate is the difference of two
	// answers over their NowMS).
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
	// Summary: this is a summary answer (GET /state?summary=1&top=N):
	// counters, and at most N cells, the busiest first.
	Summary bool `json:"summary,omitempty"`
	// Durability is how this node proves writes durable.
	Durability Durability `json:"durability"`

	RSSBytes       uint64 `json:"rss_bytes"`
	HeapBytes      uint64 `json:"heap_bytes"`
	UptimeMS       int64  `json:"uptime_ms"`
	LeaseExpiresMS int64  `json:"lease_expires_ms"`
	NowMS          int64  `json:"now_ms"`
}

// Counters count cells by what is happening to them.
type Counters struct {
	// Occupied: resident cells (owned here, running or idle).
	Occupied int `json:"occupied"`
	// Activating: acquiring ownership, restoring, or starting.
	Activating int `json:"activating"`
	// Evicting: being stopped for idleness, a deployment change or a lost
	// owner (not a drain).
	Evicting int `json:"evicting"`
	// Restoring: the part of activating spent rebuilding from the bucket.
	Restoring int `json:"restoring"`
	// Releasing: being flushed and released during a drain.
	Releasing int `json:"releasing"`
	// Hibernating: the occupied cells whose JS isolate is dropped.
	Hibernating int `json:"hibernating"`
	// OpenCells: resident cells with their SQLite files open (at most
	// CELLD_MAX_OPEN_CELLS, MaxOpenCells); ParkedCells: resident cells
	// whose files are closed until their next event; Parks: how often a
	// cell closed them since the start.
	OpenCells    int   `json:"open_cells"`
	ParkedCells  int   `json:"parked_cells"`
	MaxOpenCells int   `json:"max_open_cells"`
	Parks        int64 `json:"parks"`
	// WebSockets: the sockets the node's Durable Objects hold open (or
	// have accepted, their 101 on its way); ClientWebSockets the client
	// connections the public listener upgraded (CELLD_MAX_WEBSOCKETS caps
	// them).
	WebSockets       int `json:"websockets"`
	ClientWebSockets int `json:"client_websockets"`
	// AlarmsArmed: resident cells with a Durable Object alarm set.
	AlarmsArmed int `json:"alarms_armed"`
	// AlarmsDue: the armed ones whose time has come (firing, or late).
	AlarmsDue int `json:"alarms_due"`
	// WakeupsDue: due wake entries in the bucket the waker saw in its last
	// scan (cells whose owner may be gone); 0 unless this node holds the
	// waker role.
	WakeupsDue int `json:"wakeups_due"`
}

// Waker is the node's view of the waker role (wake/waker.json).
type Waker struct {
	Holder bool `json:"holder"`
	// Pages: LIST pages the last scan read; Woken: cells woken so far.
	Pages int64 `json:"pages"`
	Woken int64 `json:"woken"`
	// Entries: wake entries this node published (PUT) and deleted.
	Published int64 `json:"published"`
	Deleted   int64 `json:"deleted"`
}

// Cell is one cell as /state shows it.
type Cell struct {
	Cell string `json:"cell"`
	// Phase is "activating", "restoring", "owned", "evicting" or
	// "releasing".
	Phase    string `json:"phase"`
	Epoch    uint64 `json:"epoch"`
	IdleMS   int64  `json:"idle_ms"`
	Inflight int    `json:"inflight"`
	// Hibernating: an owned Durable Object that dropped its JS isolate
	// while idle (CELLD_HIBERNATE_S); its next event rebuilds it.
	Hibernating bool `json:"hibernating,omitempty"`
	// WebSockets the object holds open.
	WebSockets int `json:"websockets,omitempty"`
	// Replication is an owned cell's replication to the bucket since it
	// was activated.
	Replication *Replication `json:"replication,omitempty"`
}

// Replication counts what an owned cell's replicator did this epoch.
type Replication struct {
	// CapturedTXID is the last committed transaction; DurableTXID the
	// last one in the bucket. Outputs wait while they differ.
	CapturedTXID uint64 `json:"captured_txid"`
	DurableTXID  uint64 `json:"durable_txid"`
	Segments     int    `json:"segments"`  // LTX segments uploaded
	Merges       int    `json:"merges"`    // merged LTX files uploaded (compaction)
	Snapshots    int    `json:"snapshots"` // full snapshots uploaded
	Bytes        int64  `json:"bytes"`     // LTX bytes uploaded
	Retries      int    `json:"retries"`   // uploads tried again after a failure
}

// Durability is a node's durability mode and, in fleet mode, its
// replication group, node log session and recoveries.
type Durability struct {
	Mode string `json:"mode"` // "bucket" or "fleet"
	// Fleet mode only:
	Disk      string     `json:"disk,omitempty"` // this node's follower disk identity
	Followers []Follower `json:"followers,omitempty"`
	Joining   string     `json:"joining,omitempty"` // a follower being caught up
	// LogRecord is the state of this session's node log record: "" (not
	// created: no fleet acknowledgement yet), "open", "recovering" or
	// "sealed" (a successor took this session over; LogFenced then).
	LogRecord string `json:"log_record,omitempty"`
	LogFenced bool   `json:"log_fenced,omitempty"`
	// RetainedBytes: segments this owner holds that the bucket may lack;
	// FollowerRetainedBytes: what this node's disk retains for other
	// nodes' sessions (FollowerSessions of them).
	RetainedBytes         int64 `json:"retained_bytes"`
	FollowerRetainedBytes int64 `json:"follower_retained_bytes"`
	FollowerSessions      int   `json:"follower_sessions"`
	FleetAcked            int64 `json:"fleet_acked"`    // segments proven on followers
	BucketProofs          int64 `json:"bucket_proofs"`  // segments left to the bucket (no group)
	AppendsHedged         int64 `json:"appends_hedged"` // append requests sent again to a member slow to answer
	RecoveryInProgress    int   `json:"recovery_in_progress"`
	Recovered             int64 `json:"recovered"` // sessions this node recovered
	// Log packs (the write-behind across cells): written by this session,
	// their bytes, those still in the bucket (some cell's prefix lacks a
	// segment in them) and the record's floor.
	Packs     int64  `json:"packs"`
	PackBytes int64  `json:"pack_bytes"`
	LivePacks int    `json:"live_packs"`
	PackFloor uint64 `json:"pack_floor,omitempty"`
}

// Follower is one member of a replication group.
type Follower struct {
	Node string `json:"node"`
	Disk string `json:"disk"`
}
