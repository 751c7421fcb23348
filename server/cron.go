package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/cron"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/worker"
)

// Cron triggers on a node. Each Worker's schedule is one built-in cell,
// cron:<script> (package cron): every node that loads a deployment syncs
// the deployment's triggers.crons into it, and whichever node owns the
// cell runs the schedule. The cell's alarm is its earliest due instant,
// so firing is the alarm path of any cell (alarms.go): a local timer on
// the owner, a durable wake entry, and the waker's wake-up of a cell
// whose owner died. On fire the owner runs the Worker's scheduled()
// handler in a stateless isolate of its live deployment, one run at a
// time, recording each outcome in the cell before the next.

// cronCell connects a cron cell's resident to the node's alarms: the
// alarm it holds when it opens is armed, every request that changes it is
// reported, and firing runs the due triggers. It wraps the kind's handler.
func (o *objects) cronCell(r *resident, h cell.Handler) cell.Handler {
	o.alarmHooks(r, o.cronRun(r))
	var seq uint64
	report := func(db *cell.DB) {
		a, err := db.Alarm()
		if err != nil {
			o.log.Warn("read cron alarm", "cell", r.cell, "err", err)
			return
		}
		if a.Seq != seq || seq == 0 {
			seq = a.Seq
			r.onAlarm(a)
		}
	}
	report(r.hc.DB()) // not yet registered: nothing else runs on it
	return func(db *cell.DB, req []byte) ([]byte, error) {
		out, err := h(db, req)
		report(db)
		return out, err
	}
}

// keepCron: a cron cell with an alarm armed stays resident (one per
// Worker), so its owner fires it on time rather than the waker a tick
// late.
func (r *resident) keepCron() bool {
	set, _ := r.armed()
	return r.class == cron.Kind.Name && set
}

// cronRetryIdle is how soon a cron cell that could not run (no deployment
// loaded here yet) looks again.
const cronRetryIdle = time.Second

// cronRun fires a cron cell: every due run, one after the other, each
// recorded before the next starts.
func (o *objects) cronRun(r *resident) alarmRun {
	var one sync.Mutex // handlers of one script never overlap
	return func(ctx context.Context) (worker.AlarmResult, error) {
		one.Lock()
		defer one.Unlock()
		out, err := r.callBuiltin(ctx, cron.DueRequest(o.now()))
		if err != nil {
			return worker.AlarmResult{}, err
		}
		ticks, err := cron.DecodeTicks(out)
		if err != nil {
			return worker.AlarmResult{}, err
		}
		o.mu.Lock()
		ap := o.app
		o.mu.Unlock()
		var res worker.AlarmResult
		if len(ticks) > 0 && (ap == nil || ap.dep.Manifest.ScriptName != r.id) {
			if ap != nil {
				// The fleet runs another Worker now: this schedule is
				// orphaned. Clear it (its state stays for cron list).
				out, err := r.callBuiltin(ctx, cron.SyncRequest(r.id, "", nil, o.now()))
				if err == nil {
					o.log.Info("cron schedule cleared: its Worker is no longer deployed", "cell", r.cell, "live", ap.dep.Manifest.ScriptName)
				}
				return worker.AlarmResult{State: alarmOf(out)}, err
			}
			next := o.now().Add(cronRetryIdle).UnixMilli()
			return worker.AlarmResult{State: cell.Alarm{Set: true, Deadline: next}}, nil
		}
		for i, tk := range ticks {
			started := time.Now()
			if i == 0 {
				res.Ran, res.Started = true, started
			}
			sr, err := ap.rt.Scheduled(ctx, tk.Cron, tk.Scheduled)
			if err != nil {
				// Cut short (the runtime closed under it: a new
				// deployment, the node stopping): not recorded, so it is
				// due again shortly, here or on the next owner.
				o.log.Info("cron run cut short; it runs again", "cron", tk.Cron, "err", err)
				next := o.now().Add(cronRetryIdle).UnixMilli()
				return worker.AlarmResult{State: cell.Alarm{Set: true, Deadline: next}}, nil
			}
			rec := cron.Result{Tick: tk, Outcome: sr.Outcome, NoRetry: sr.NoRetry,
				Started: sr.Started.UnixMilli(), Done: time.Now().UnixMilli()}
			if sr.Err != nil {
				rec.Error = sr.Err.Error()
			}
			out, err = r.callBuiltin(ctx, cron.RecordRequest([]cron.Result{rec}, o.now()))
			if err != nil {
				return res, err
			}
			res.State = alarmOf(out)
			if sr.Err != nil {
				o.log.Info("cron handler failed", "cron", tk.Cron, "scheduled", time.UnixMilli(tk.Scheduled).UTC(), "retry", tk.Retry, "error", rec.Error)
			}
		}
		if !res.Ran {
			out, err := r.callBuiltin(ctx, cron.ListRequest())
			if err != nil {
				return res, err
			}
			res.State = alarmOf(out)
		}
		return res, nil
	}
}

// alarmOf is the alarm a cron cell's answer names.
func alarmOf(answer []byte) cell.Alarm {
	st, err := cron.DecodeState(answer)
	if err != nil || st.Alarm == 0 {
		return cell.Alarm{}
	}
	return cell.Alarm{Set: true, Deadline: st.Alarm}
}

// syncCrons puts ap's triggers.crons into its cron cell, from every node
// that loads it (idempotent: a kept expression keeps its state). It gives
// up once ap is no longer the fleet's live deployment, so a slow node
// cannot put an older schedule back. A Worker without crons and without
// a cron cell is left alone.
func (o *objects) syncCrons(ctx context.Context, ap *app, head func(context.Context) (string, error)) {
	m := &ap.dep.Manifest
	var crons []string
	if m.Triggers != nil {
		crons = m.Triggers.Crons
	}
	name := cron.CellName(m.ScriptName)
	if len(crons) == 0 {
		if ok, err := cron.Exists(ctx, o.store, m.ScriptName); err == nil && !ok {
			return
		}
	}
	delay := 200 * time.Millisecond
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if etag, err := head(ctx); err == nil && etag != ap.dep.ETag {
			return // a newer deployment is live: its loader syncs
		}
		_, err := o.Call(ctx, name, cron.SyncRequest(m.ScriptName, m.Version, crons, o.now()))
		if err == nil {
			return
		}
		var refused *host.RequestError
		if errors.As(err, &refused) {
			// The cell refuses these crons as they stand (a six-field
			// expression on a node without CELLD_TEST_CRON_SECONDS):
			// retrying cannot help.
			o.log.Error("cron triggers not scheduled", "cell", name, "err", err)
			return
		}
		if attempt%10 == 0 {
			o.log.Warn("sync cron triggers; retrying", "cell", name, "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

// serveScheduled runs the live Worker's scheduled() handler once, by hand
// (not through the schedule, which it leaves alone): cron= names
// controller.cron ("" by default), time= controller.scheduledTime in unix
// ms (default now). The answer is Miniflare's /cdn-cgi/handler/scheduled:
// the outcome as text, 200 for "ok", 500 otherwise; wrangler says "Ran
// scheduled event" for /__scheduled.
func (s *node) serveScheduled(wranglerText bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ap := s.apps.current()
		if ap == nil {
			http.Error(w, "no deployment", http.StatusServiceUnavailable)
			return
		}
		q := r.URL.Query()
		at := time.Now().UnixMilli()
		if t := q.Get("time"); t != "" {
			v, err := strconv.ParseInt(t, 10, 64)
			if err != nil {
				http.Error(w, fmt.Sprintf("time=%q is not a number of milliseconds", t), http.StatusBadRequest)
				return
			}
			at = v
		}
		res, err := ap.rt.Scheduled(r.Context(), q.Get("cron"), at)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		status := http.StatusOK
		if res.Outcome != "ok" {
			status = http.StatusInternalServerError
		}
		body := res.Outcome
		if wranglerText && status == http.StatusOK {
			body = "Ran scheduled event"
		}
		w.Header().Set("Content-Type", "text/plain;charset=UTF-8")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

// liveETag is the ETag of deploy/current.json now.
func liveETag(store bucket.Store) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		obj, err := store.Head(ctx, deploy.CurrentKey)
		if err != nil {
			return "", err
		}
		return obj.ETag, nil
	}
}
