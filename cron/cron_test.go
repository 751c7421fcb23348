package cron

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
)

func openDB(t *testing.T) *cell.DB {
	t.Helper()
	db, err := cell.Open(filepath.Join(t.TempDir(), "cron.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func call(t *testing.T, db *cell.DB, req []byte) []byte {
	t.Helper()
	out, err := Handle(db, req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func state(t *testing.T, db *cell.DB, req []byte) State {
	t.Helper()
	st, err := DecodeState(call(t, db, req))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func ticks(t *testing.T, db *cell.DB, now time.Time) []Tick {
	t.Helper()
	ts, err := DecodeTicks(call(t, db, DueRequest(now)))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func ms(s string) int64 {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

func tm(s string) time.Time { return time.UnixMilli(ms(s)) }

func run(tk Tick, outcome string, noRetry bool, at time.Time) Result {
	return Result{Tick: tk, Outcome: outcome, NoRetry: noRetry, Started: at.UnixMilli(), Done: at.UnixMilli()}
}

// TestSchedule_AlarmIsEarliestAndRunsOnce: the cell's alarm is the
// earliest occurrence of all expressions, committed with the schedule; a
// recorded run moves its expression to the next occurrence, so the same
// occurrence is never due twice.
func TestSchedule_AlarmIsEarliestAndRunsOnce(t *testing.T) {
	db := openDB(t)
	st := state(t, db, SyncRequest("app", "v1", []string{"0 * * * *", "*/5 * * * *"}, tm("2026-12-01 10:01:00")))
	if st.Alarm != ms("2026-12-01 10:05:00") || len(st.Triggers) != 2 {
		t.Fatalf("after sync: %+v", st)
	}
	if a, _ := db.Alarm(); !a.Set || a.Deadline != st.Alarm {
		t.Fatalf("cell alarm = %+v, want %d", a, st.Alarm)
	}
	if ts := ticks(t, db, tm("2026-12-01 10:04:59")); len(ts) != 0 {
		t.Fatalf("due early: %v", ts)
	}
	ts := ticks(t, db, tm("2026-12-01 10:05:00"))
	if len(ts) != 1 || ts[0].Cron != "*/5 * * * *" || ts[0].Scheduled != ms("2026-12-01 10:05:00") || ts[0].Skipped != 0 {
		t.Fatalf("due = %+v", ts)
	}
	st = state(t, db, RecordRequest([]Result{run(ts[0], "ok", false, tm("2026-12-01 10:05:00"))}, tm("2026-12-01 10:05:00")))
	if st.Alarm != ms("2026-12-01 10:10:00") || st.Triggers[1].Runs != 1 || st.Triggers[1].LastOutcome != "ok" {
		t.Fatalf("after record: %+v", st)
	}
	if ts := ticks(t, db, tm("2026-12-01 10:05:30")); len(ts) != 0 {
		t.Fatalf("the same occurrence due again: %v", ts)
	}
}

// TestSchedule_AfterDowntimeOnceNotABacklog: three hours without a run,
// each expression runs once, for its latest missed occurrence; the rest
// are counted as skipped.
func TestSchedule_AfterDowntimeOnceNotABacklog(t *testing.T) {
	db := openDB(t)
	state(t, db, SyncRequest("app", "v1", []string{"* * * * *", "0 */2 * * *"}, tm("2026-12-01 10:00:30")))
	now := tm("2026-12-01 13:10:20")
	ts := ticks(t, db, now)
	if len(ts) != 2 || ts[0].Cron != "0 */2 * * *" || ts[0].Scheduled != ms("2026-12-01 12:00:00") || ts[0].Skipped != 0 ||
		ts[1].Cron != "* * * * *" || ts[1].Scheduled != ms("2026-12-01 13:10:00") || ts[1].Skipped != 189 {
		t.Fatalf("due after downtime = %+v", ts)
	}
	st := state(t, db, RecordRequest([]Result{run(ts[0], "ok", false, now), run(ts[1], "ok", false, now)}, now))
	if st.Triggers[0].Next != ms("2026-12-01 13:11:00") || st.Triggers[0].Skipped != 189 || st.Triggers[1].Next != ms("2026-12-01 14:00:00") {
		t.Fatalf("after record: %+v", st)
	}
	if ts := ticks(t, db, now); len(ts) != 0 {
		t.Fatalf("a backlog: %v", ts)
	}
}

// TestSchedule_RetryBackoffAndNoRetry: a failed run is retried 4 s, 8 s …
// later, until 6 failed runs; noRetry() stops it; the next occurrence
// replaces a pending retry.
func TestSchedule_RetryBackoffAndNoRetry(t *testing.T) {
	db := openDB(t)
	state(t, db, SyncRequest("app", "v1", []string{"0 * * * *"}, tm("2026-12-01 09:59:00")))
	now := tm("2026-12-01 10:00:00")
	tk := ticks(t, db, now)[0]
	for i := 1; i < MaxFailures; i++ {
		st := state(t, db, RecordRequest([]Result{run(tk, "exception", false, now)}, now))
		want := now.Add(RetryBase << (i - 1))
		if tr := st.Triggers[0]; tr.RetryOf != ms("2026-12-01 10:00:00") || tr.Retry != i || st.Alarm != want.UnixMilli() {
			t.Fatalf("after failure %d: %+v alarm %d, want a retry at %s", i, tr, st.Alarm, want)
		}
		now = want
		ts := ticks(t, db, now)
		if len(ts) != 1 || ts[0].Retry != i || ts[0].Scheduled != ms("2026-12-01 10:00:00") {
			t.Fatalf("retry %d due = %+v", i, ts)
		}
		tk = ts[0]
	}
	st := state(t, db, RecordRequest([]Result{run(tk, "exception", false, now)}, now))
	if tr := st.Triggers[0]; tr.RetryOf != 0 || tr.Failures != MaxFailures || st.Alarm != ms("2026-12-01 11:00:00") {
		t.Fatalf("after %d failures: %+v alarm %d", MaxFailures, tr, st.Alarm)
	}
	// noRetry
	now = tm("2026-12-01 11:00:00")
	tk = ticks(t, db, now)[0]
	if st := state(t, db, RecordRequest([]Result{run(tk, "exception", true, now)}, now)); st.Triggers[0].RetryOf != 0 {
		t.Fatalf("noRetry left a retry: %+v", st.Triggers[0])
	}
	// the next occurrence wins over a later retry
	now = tm("2026-12-01 12:00:00")
	tk = ticks(t, db, now)[0]
	state(t, db, RecordRequest([]Result{run(tk, "exception", false, now)}, now))
	ts := ticks(t, db, tm("2026-12-01 13:00:00"))
	if len(ts) != 1 || ts[0].Retry != 0 || ts[0].Scheduled != ms("2026-12-01 13:00:00") {
		t.Fatalf("due = %+v, want the 13:00 occurrence", ts)
	}
	st = state(t, db, RecordRequest([]Result{run(ts[0], "ok", false, tm("2026-12-01 13:00:00"))}, tm("2026-12-01 13:00:00")))
	if st.Triggers[0].RetryOf != 0 {
		t.Fatalf("the retry survived a newer occurrence: %+v", st.Triggers[0])
	}
}

// TestSchedule_SyncReplaces: a new deployment keeps the state of the
// expressions it keeps, adds new ones at their next occurrence, drops the
// rest; no crons deletes the alarm; bad expressions are refused.
func TestSchedule_SyncReplaces(t *testing.T) {
	db := openDB(t)
	state(t, db, SyncRequest("app", "v1", []string{"* * * * *", "0 0 * * *"}, tm("2026-12-01 10:00:30")))
	now := tm("2026-12-01 10:01:00")
	tk := ticks(t, db, now)[0]
	state(t, db, RecordRequest([]Result{run(tk, "ok", false, now)}, now))
	st := state(t, db, SyncRequest("app", "v2", []string{"*/10 * * * *", "* * * * *"}, tm("2026-12-01 10:01:10")))
	if st.Version != "v2" || len(st.Triggers) != 2 || st.Triggers[0].Cron != "*/10 * * * *" || st.Triggers[0].Next != ms("2026-12-01 10:10:00") ||
		st.Triggers[1].Runs != 1 || st.Triggers[1].Next != ms("2026-12-01 10:02:00") {
		t.Fatalf("after redeploy: %+v", st)
	}
	st = state(t, db, SyncRequest("app", "v3", nil, tm("2026-12-01 10:01:20")))
	if a, _ := db.Alarm(); a.Set || st.Alarm != 0 || len(st.Triggers) != 0 {
		t.Fatalf("no crons: alarm %+v state %+v", a, st)
	}
	if _, err := Handle(db, SyncRequest("app", "v4", []string{"61 * * * *"}, now)); err == nil || !strings.Contains(err.Error(), `"61 * * * *"`) {
		t.Fatalf("bad cron: %v", err)
	}
	if _, err := Handle(db, SyncRequest("other", "v1", []string{"* * * * *"}, now)); err == nil || !strings.Contains(err.Error(), `"app"`) {
		t.Fatalf("another script's sync: %v", err)
	}
}
