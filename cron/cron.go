// Package cron is the cron:<script> built-in cell: one per Worker, it
// holds the Worker's cron triggers (triggers.crons) with, for each
// expression, the next occurrence not yet run, the last run and its
// outcome, and a pending retry. The cell's alarm (cell.DB.SetAlarm) is
// always the earliest of those instants, committed in the same
// transaction as the schedule, so the node hosting the cell gets the
// timer, the durable wake entry and the waker's wake-up of any alarm: a
// cron fires once per occurrence across the fleet, on whichever node owns
// the cell, even after its owner died.
//
// This package runs no JavaScript: the node asks the cell which
// occurrences are due (opDue), runs the Worker's scheduled() handler for
// each, one after the other, and records the outcomes (opRecord). Every
// instant travels in the request (the node's clock), so the handler is a
// pure function of the database and the request.
//
// Rules (upstream celld's, Cloudflare's where it has one):
//   - After downtime (the cell's owner gone, the fleet down) an expression
//     runs once, for its latest missed occurrence, and the older ones are
//     skipped (counted in Skipped), never a backlog.
//   - A failed run (the handler threw, a waitUntil rejected) is retried
//     after 4 s, doubling, until it has failed 6 times, unless the handler
//     called controller.noRetry(). The expression's next occurrence, when
//     it comes first, replaces a pending retry. The retry state is in the
//     cell's database: an ownership move keeps it.
//   - A new deployment replaces the schedule (opSync): an expression kept
//     keeps its state, a new one starts at its next occurrence after the
//     deployment, one removed is forgotten.
package cron

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/cron/spec"
	"github.com/celldgo/celld/host"
)

// Kind registers the cron cells: cron:<script name>.
var Kind = host.Kind{Name: "cron", Handler: Handle}

// CellName is the cron cell of a Worker.
func CellName(script string) string { return "cron:" + script }

// Retry policy of a failed scheduled() run.
const (
	RetryBase   = 4 * time.Second
	MaxFailures = 6 // runs of one occurrence, the first included
)

// RetryDelay is the wait after the n-th failed run of an occurrence (n >= 1).
func RetryDelay(n int) time.Duration { return RetryBase << min(max(n-1, 0), 16) }

// Trigger is one expression's state.
type Trigger struct {
	Cron string `json:"cron"`
	Next int64  `json:"next"` // unix ms: the next occurrence not yet run
	// The last run.
	LastScheduled int64  `json:"last_scheduled,omitempty"` // its occurrence
	LastStarted   int64  `json:"last_started,omitempty"`
	LastDone      int64  `json:"last_done,omitempty"`
	LastOutcome   string `json:"last_outcome,omitempty"` // "ok", "exception", …
	LastError     string `json:"last_error,omitempty"`
	Runs          int64  `json:"runs"`
	Failures      int64  `json:"failures"`
	Skipped       int64  `json:"skipped"` // occurrences passed over after downtime
	// A pending retry: the occurrence RetryOf runs again at RetryAt, its
	// Retry-th retry.
	RetryOf int64 `json:"retry_of,omitempty"`
	RetryAt int64 `json:"retry_at,omitempty"`
	Retry   int   `json:"retry,omitempty"`
}

// due is when t next needs to run.
func (t *Trigger) due() int64 {
	if t.RetryOf != 0 && t.RetryAt < t.Next {
		return t.RetryAt
	}
	return t.Next
}

// State is the cell's whole schedule.
type State struct {
	Script   string    `json:"script"`
	Version  string    `json:"version"` // the deployment that set it
	Synced   int64     `json:"synced"`  // unix ms of that sync
	Triggers []Trigger `json:"triggers"`
	// Alarm is the cell's alarm (unix ms; 0: none): the earliest due.
	Alarm int64 `json:"alarm"`
}

// Tick is one run to make: expression Cron for occurrence Scheduled.
type Tick struct {
	Cron      string `json:"cron"`
	Scheduled int64  `json:"scheduled"`
	Retry     int    `json:"retry"`   // 0: first run of the occurrence
	Skipped   int    `json:"skipped"` // older occurrences this one stands for
}

// Result is what a run of a Tick did.
type Result struct {
	Tick
	Outcome string `json:"outcome"` // "ok" or what failed it
	Error   string `json:"error,omitempty"`
	NoRetry bool   `json:"no_retry,omitempty"`
	Started int64  `json:"started"`
	Done    int64  `json:"done"`
}

// Request ops.
const (
	opSync   = "sync"   // script, version, crons, now -> State
	opList   = "list"   // -> State
	opDue    = "due"    // now -> ticks
	opRecord = "record" // results, now -> State
)

type request struct {
	Op      string   `json:"op"`
	Script  string   `json:"script,omitempty"`
	Version string   `json:"version,omitempty"`
	Crons   []string `json:"crons,omitempty"`
	Now     int64    `json:"now,omitempty"`
	Results []Result `json:"results,omitempty"`
}

// Requests, encoded for a cell.Caller.

// SyncRequest replaces the schedule with a deployment's crons at now.
func SyncRequest(script, version string, crons []string, now time.Time) []byte {
	return encode(request{Op: opSync, Script: script, Version: version, Crons: crons, Now: now.UnixMilli()})
}

// ListRequest reads the schedule.
func ListRequest() []byte { return encode(request{Op: opList}) }

// DueRequest asks which runs are due at now.
func DueRequest(now time.Time) []byte { return encode(request{Op: opDue, Now: now.UnixMilli()}) }

// RecordRequest records the outcomes of runs.
func RecordRequest(results []Result, now time.Time) []byte {
	return encode(request{Op: opRecord, Results: results, Now: now.UnixMilli()})
}

func encode(r request) []byte {
	b, _ := json.Marshal(r) // strings and numbers always encode
	return b
}

// DecodeState decodes a sync, list or record answer.
func DecodeState(b []byte) (State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return State{}, fmt.Errorf("decode cron state: %w", err)
	}
	return s, nil
}

// DecodeTicks decodes a due answer.
func DecodeTicks(b []byte) ([]Tick, error) {
	var t []Tick
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("decode cron ticks: %w", err)
	}
	return t, nil
}

// ErrRequest is wrapped by the error of a request the cell refuses.
var ErrRequest = errors.New("cron cell request")

const stateKey = "cron/state"

var _ cell.Handler = Handle

// Handle is the cron cell's cell.Handler.
func Handle(db *cell.DB, req []byte) ([]byte, error) {
	var r request
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, fmt.Errorf("%w: decode: %w", ErrRequest, err)
	}
	st, err := load(db)
	if err != nil {
		return nil, err
	}
	now := time.UnixMilli(r.Now)
	switch r.Op {
	case opList:
		return json.Marshal(st)
	case opDue:
		return json.Marshal(st.dueAt(now))
	case opSync:
		if err := st.sync(r.Script, r.Version, r.Crons, now); err != nil {
			return nil, err
		}
	case opRecord:
		st.record(r.Results, now)
	default:
		return nil, fmt.Errorf("%w: unknown op %q", ErrRequest, r.Op)
	}
	if err := save(db, &st); err != nil {
		return nil, err
	}
	return json.Marshal(st)
}

func load(db *cell.DB) (State, error) {
	var st State
	b, ok, err := db.Get(stateKey)
	if err != nil {
		return State{}, fmt.Errorf("read cron state: %w", err)
	}
	if ok {
		if err := json.Unmarshal(b, &st); err != nil {
			return State{}, fmt.Errorf("decode cron state: %w", err)
		}
	}
	return st, nil
}

// save commits the schedule and the alarm that fires its earliest due
// instant, in one transaction.
func save(db *cell.DB, st *State) error {
	st.Alarm = 0
	for i := range st.Triggers {
		if d := st.Triggers[i].due(); st.Alarm == 0 || d < st.Alarm {
			st.Alarm = d
		}
	}
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode cron state: %w", err)
	}
	return db.Transaction(func() error {
		if err := db.Put(stateKey, b); err != nil {
			return fmt.Errorf("write cron state: %w", err)
		}
		a, err := db.Alarm()
		if err != nil {
			return err
		}
		switch {
		case st.Alarm == 0:
			_, err = db.DeleteAlarm()
		case !a.Set || a.Deadline != st.Alarm:
			_, err = db.SetAlarm(st.Alarm)
		}
		return err
	})
}

// sync replaces the schedule with crons.
func (st *State) sync(script, version string, crons []string, now time.Time) error {
	if errs := spec.CheckTriggers(crons); len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrRequest, errors.Join(errs...))
	}
	if st.Script != "" && st.Script != script {
		return fmt.Errorf("%w: this cell holds the crons of %q, not %q", ErrRequest, st.Script, script)
	}
	old := map[string]Trigger{}
	for _, t := range st.Triggers {
		old[t.Cron] = t
	}
	st.Script, st.Version, st.Synced = script, version, now.UnixMilli()
	st.Triggers = st.Triggers[:0]
	for _, c := range crons {
		if t, kept := old[c]; kept {
			st.Triggers = append(st.Triggers, t)
			continue
		}
		s, _ := spec.ParseTrigger(c) // checked above
		n, _ := s.Next(now)
		st.Triggers = append(st.Triggers, Trigger{Cron: c, Next: n.UnixMilli()})
	}
	return nil
}

// dueAt lists the runs due at now, oldest first: for each expression its
// latest occurrence passed (standing for the older ones missed), or else
// its pending retry.
func (st *State) dueAt(now time.Time) []Tick {
	ticks := []Tick{}
	for _, t := range st.Triggers {
		switch {
		case t.Next != 0 && t.Next <= now.UnixMilli():
			s, err := spec.ParseTrigger(t.Cron)
			if err != nil {
				continue // a cell synced under another parser's rules
			}
			occ, skipped := s.Latest(time.UnixMilli(t.Next), now)
			ticks = append(ticks, Tick{Cron: t.Cron, Scheduled: occ.UnixMilli(), Skipped: skipped})
		case t.RetryOf != 0 && t.RetryAt <= now.UnixMilli():
			ticks = append(ticks, Tick{Cron: t.Cron, Scheduled: t.RetryOf, Retry: t.Retry})
		}
	}
	slices.SortStableFunc(ticks, func(a, b Tick) int { return cmp.Compare(a.Scheduled, b.Scheduled) })
	return ticks
}

// record applies the outcomes of runs.
func (st *State) record(results []Result, now time.Time) {
	for _, r := range results {
		i := slices.IndexFunc(st.Triggers, func(t Trigger) bool { return t.Cron == r.Cron })
		if i < 0 {
			continue // removed by a deployment meanwhile
		}
		t := &st.Triggers[i]
		t.LastScheduled, t.LastStarted, t.LastDone = r.Scheduled, r.Started, r.Done
		t.LastOutcome, t.LastError = r.Outcome, r.Error
		t.Runs++
		if r.Retry == 0 {
			t.Skipped += int64(r.Skipped)
			if s, err := spec.ParseTrigger(t.Cron); err == nil {
				if n, ok := s.Next(time.UnixMilli(r.Scheduled)); ok {
					t.Next = n.UnixMilli()
				}
			}
		} else if r.Scheduled != t.RetryOf {
			continue // a newer occurrence replaced this retry meanwhile
		}
		t.RetryOf, t.RetryAt, t.Retry = 0, 0, 0
		if r.Outcome == "ok" {
			continue
		}
		t.Failures++
		if failed := r.Retry + 1; !r.NoRetry && failed < MaxFailures {
			t.RetryOf, t.RetryAt, t.Retry = r.Scheduled, now.Add(RetryDelay(failed)).UnixMilli(), failed
		}
	}
}
