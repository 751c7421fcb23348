package tui

import (
	"github.com/celldgo/celld/server/api"
)

// Status is what top concludes about a node from its answers and its lease.
type Status string

// Node statuses, shown verbatim in the HEALTH column and in --json.
const (
	StatusOK       Status = "ok"       // answering and serving
	StatusDraining Status = "draining" // answering, releasing or keeping its cells before exit
	StatusFenced   Status = "fenced"   // answering, but it lost its lease and serves nothing
	// StatusUnreachable: it stopped answering (refused, timeout, bad
	// answer) but may still be a member: its lease is there, or top cannot
	// tell. It is kept and polled again.
	StatusUnreachable Status = "unreachable"
	// StatusGone: it does not answer and it is no longer a member: its
	// lease record was deleted (as a node does when it exits after a
	// drain), or, with --node, it was draining before it went quiet. It is
	// kept on screen and no longer polled.
	StatusGone Status = "gone"
	// StatusDead: it does not answer and its lease record is still in the
	// bucket, expired: it stopped without a drain (crashed, killed, cut
	// off). Its cells are taken over on their next request. It is kept on
	// screen and polled no more until a fresh lease names its address.
	StatusDead Status = "dead"
)

// Answering reports whether the node answered the last poll.
func (s Status) Answering() bool {
	return s == StatusOK || s == StatusDraining || s == StatusFenced
}

// Snapshot is the fleet as top shows it: every node seen since top started,
// merged poll after poll by Merge. It is also the --json output.
type Snapshot struct {
	// NowMS is the local clock of the last poll; every relative time in a
	// view is computed against it or against a node's own NowMS, never
	// against the clock at render time.
	NowMS int64 `json:"now_ms"`
	// Polls counts merged observations.
	Polls int `json:"polls"`
	// Error is why the last poll could not list the leases, if it could not.
	Error  string    `json:"error,omitempty"`
	Nodes  []NodeRow `json:"nodes"`
	Totals Totals    `json:"totals"`
}

// NodeRow is one node in the snapshot.
type NodeRow struct {
	Addr   string `json:"addr"` // the internal address polled; the row's identity
	Node   string `json:"node"`
	Status Status `json:"status"`
	// Err is why the node did not answer the last poll.
	Err string `json:"error,omitempty"`
	// Note explains a gone node ("exited after drain", "lease deleted").
	Note string `json:"note,omitempty"`
	// State is the node's last answer, kept after it stops answering so
	// the detail pane can still show what it held.
	State *api.State `json:"state,omitempty"`
	// LastAnswerMS is the local poll time of the last answer (0: never).
	LastAnswerMS int64 `json:"last_answer_ms,omitempty"`
	// HasLease: a lease record for this node was in the bucket at the last
	// listing (always false with --node, where no bucket is read).
	HasLease bool `json:"has_lease"`
	// LeaseExpiresMS is the expiry in the lease record (0: none seen).
	LeaseExpiresMS int64 `json:"lease_expires_ms,omitempty"`
	// LeaseLeftMS is how long the lease has left, by the node's own clock
	// when it answered, else by the lease record against the poll time.
	// Negative: expired. Meaningless without HasLease or State.
	LeaseLeftMS int64 `json:"lease_left_ms"`
	// SeenDraining: this session of the node was seen draining, so its
	// disappearance is the end of a drain, not a failure.
	SeenDraining bool `json:"seen_draining"`
	// ReqPerSec and ErrPerSec are the node's public requests and 5xx
	// answers per second between its last two answers (same session);
	// HasRate is false until there are two.
	ReqPerSec float64 `json:"req_per_sec"`
	ErrPerSec float64 `json:"err_per_sec"`
	HasRate   bool    `json:"has_rate"`
}

// Totals sum the nodes that answered the last poll.
type Totals struct {
	Nodes       int          `json:"nodes"`
	OK          int          `json:"ok"`
	Draining    int          `json:"draining"`
	Fenced      int          `json:"fenced"`
	Unreachable int          `json:"unreachable"`
	Gone        int          `json:"gone"`
	Dead        int          `json:"dead"`
	ReqPerSec   float64      `json:"req_per_sec"`
	ErrPerSec   float64      `json:"err_per_sec"`
	Counters    api.Counters `json:"counters"`
	Cells       int          `json:"cells"`
	RSSBytes    uint64       `json:"rss_bytes"`
	// DrainCells and DrainReleased sum the drain progress of the nodes
	// draining now.
	DrainCells    int `json:"drain_cells"`
	DrainReleased int `json:"drain_released"`
	// Fleet durability: nodes in each mode, and takeover recoveries in
	// progress.
	FleetMode  int `json:"fleet_mode"`
	BucketMode int `json:"bucket_mode"`
	Recovering int `json:"recovering"`
}

// Answered counts the nodes that answered the last poll.
func (s Snapshot) Answered() int { return s.Totals.OK + s.Totals.Draining + s.Totals.Fenced }

// Row returns the row for addr.
func (s Snapshot) Row(addr string) (NodeRow, bool) {
	for _, r := range s.Nodes {
		if r.Addr == addr {
			return r, true
		}
	}
	return NodeRow{}, false
}

// Tracked returns the addresses still worth polling: every node neither
// gone nor dead.
func (s Snapshot) Tracked() []string {
	out := []string{}
	for _, r := range s.Nodes {
		if r.Status != StatusGone && r.Status != StatusDead {
			out = append(out, r.Addr)
		}
	}
	return out
}

// Merge folds one observation into the previous snapshot and returns the
// new one; prev is not modified. It is pure: every time comes from the
// observation, so the same inputs always give the same snapshot.
//
// Rules: a node that answers takes its status from its health; a node that
// does not answer is unreachable while it may still be a member, and gone
// when it is not (its lease record was deleted, or with --node it had been
// draining). Rows are never dropped.
func Merge(prev Snapshot, obs Observation) Snapshot {
	rows := map[string]NodeRow{}
	for _, r := range prev.Nodes {
		rows[r.Addr] = r
	}
	for _, o := range obs.Nodes {
		old, known := rows[o.Addr]
		rows[o.Addr] = mergeNode(old, known, o, obs)
	}
	next := Snapshot{NowMS: obs.AtMS, Polls: prev.Polls + 1, Nodes: make([]NodeRow, 0, len(rows))}
	if obs.ListErr != nil {
		next.Error = obs.ListErr.Error()
	}
	for _, r := range rows {
		next.Nodes = append(next.Nodes, r)
	}
	sortRows(next.Nodes, SortNode, false)
	next.Totals = total(next.Nodes)
	return next
}

func mergeNode(r NodeRow, known bool, o NodeObservation, obs Observation) NodeRow {
	if !known {
		r = NodeRow{Addr: o.Addr}
	}
	if o.Node != "" {
		r.Node = o.Node
	}
	switch {
	case o.Lease != nil:
		r.HasLease, r.LeaseExpiresMS = true, o.Lease.ExpiresMS
	case obs.Listed:
		r.HasLease, r.LeaseExpiresMS = false, 0
	}
	// Not listed this time: the last record read is the best guess.
	r.LeaseLeftMS = r.LeaseExpiresMS - obs.AtMS

	if o.State != nil {
		st := *o.State
		if r.State != nil && r.State.Session != st.Session {
			r.SeenDraining = false // a new process on the same address
		}
		r.HasRate = false
		if prev := r.State; prev != nil && prev.Session == st.Session && st.NowMS > prev.NowMS &&
			st.Requests >= prev.Requests && st.Errors >= prev.Errors && r.Status.Answering() {
			sec := float64(st.NowMS-prev.NowMS) / 1000
			r.ReqPerSec = float64(st.Requests-prev.Requests) / sec
			r.ErrPerSec = float64(st.Errors-prev.Errors) / sec
			r.HasRate = true
		}
		r.State = &st
		r.LastAnswerMS = obs.AtMS
		r.Err, r.Note = "", ""
		if st.Node != "" {
			r.Node = st.Node
		}
		switch {
		case st.Health == "fenced":
			r.Status = StatusFenced
		case st.Draining || st.Health == "draining":
			r.Status = StatusDraining
			r.SeenDraining = true
		default:
			r.Status = StatusOK
		}
		if st.LeaseExpiresMS > 0 && st.NowMS > 0 {
			r.LeaseLeftMS = st.LeaseExpiresMS - st.NowMS
		}
		return r
	}

	r.Err = o.Err
	r.HasRate = false
	switch {
	case r.HasLease && r.LeaseExpiresMS <= obs.AtMS:
		r.Status = StatusDead
		r.Note = "lease expired " + fmtMS(obs.AtMS-r.LeaseExpiresMS) + " ago without a drain: its cells move on their next request"
	case obs.Listed && !r.HasLease:
		r.Status = StatusGone
		r.Note = "lease deleted"
		if r.SeenDraining {
			r.Note = "exited after drain"
		}
	case obs.Static && r.SeenDraining:
		r.Status = StatusGone
		r.Note = "exited after drain"
	default:
		r.Status = StatusUnreachable
	}
	return r
}

func total(rows []NodeRow) Totals {
	var t Totals
	t.Nodes = len(rows)
	for _, r := range rows {
		switch r.Status {
		case StatusOK:
			t.OK++
		case StatusDraining:
			t.Draining++
		case StatusFenced:
			t.Fenced++
		case StatusUnreachable:
			t.Unreachable++
		case StatusGone:
			t.Gone++
		case StatusDead:
			t.Dead++
		}
		if !r.Status.Answering() || r.State == nil {
			continue
		}
		c := r.State.Counters
		t.Counters.Occupied += c.Occupied
		t.Counters.Activating += c.Activating
		t.Counters.Evicting += c.Evicting
		t.Counters.Restoring += c.Restoring
		t.Counters.Releasing += c.Releasing
		t.Counters.AlarmsArmed += c.AlarmsArmed
		t.Counters.AlarmsDue += c.AlarmsDue
		t.Counters.WakeupsDue += c.WakeupsDue
		t.Counters.WebSockets += c.WebSockets
		t.Cells += cellCount(r.State)
		if r.HasRate {
			t.ReqPerSec += r.ReqPerSec
			t.ErrPerSec += r.ErrPerSec
		}
		t.RSSBytes += r.State.RSSBytes
		switch r.State.Durability.Mode {
		case "fleet":
			t.FleetMode++
		case "bucket":
			t.BucketMode++
		}
		t.Recovering += r.State.Durability.RecoveryInProgress
		if r.Status == StatusDraining {
			t.DrainCells += r.State.DrainCells
			t.DrainReleased += r.State.DrainReleased
		}
	}
	return t
}

// cellCount is how many cells a node holds: its count, or for a node that
// predates it, the length of its list.
func cellCount(s *api.State) int {
	return max(s.CellCount, len(s.Cells))
}
