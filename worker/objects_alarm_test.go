package worker_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/worker"
)

const alarmScript = `
const { DurableObject } = require("cloudflare:workers");
class Flaky extends DurableObject {
  async arm(at) { await this.ctx.storage.setAlarm(at); }
  async alarm(info) {
    const runs = (await this.ctx.storage.get("runs")) ?? [];
    runs.push(info.retryCount);
    await this.ctx.storage.put("runs", runs);
    throw new Error("always fails");
  }
  async runs() { return (await this.ctx.storage.get("runs")) ?? []; }
}
module.exports = { Flaky, default: { fetch() { return new Response("x"); } } };
`

// A handler that always throws runs once and then is retried six times,
// 2 s after the first failure and doubling, each run seeing its retry
// count; after the sixth retry the alarm is gone. The object's clock is
// driven by the test, and the host's part (a timer) by calling Alarm.
func TestAlarm_RetriesWithBackoffThenGivesUp(t *testing.T) {
	rt := newRuntime(t, alarmScript, worker.Config{})
	db, err := cell.Open(filepath.Join(t.TempDir(), "a.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var mu sync.Mutex
	clock := time.UnixMilli(1_800_000_000_000)
	var reports []cell.Alarm
	obj, err := rt.NewObjectWith("Flaky", worker.ObjectIDFromName("Flaky", "f"), db, worker.ObjectOptions{
		Now:     func() time.Time { mu.Lock(); defer mu.Unlock(); return clock },
		OnAlarm: func(a cell.Alarm) { mu.Lock(); reports = append(reports, a); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { obj.Close(context.Background()) })
	ctx := context.Background()
	args, _ := worker.Serialize([]any{float64(clock.UnixMilli() + 1000)})
	if _, err := obj.Call(ctx, "arm", args); err != nil {
		t.Fatal(err)
	}
	// Not due yet: nothing runs.
	if res, err := obj.Alarm(ctx); err != nil || res.Ran || !res.State.Set {
		t.Fatalf("early Alarm = %+v, %v", res, err)
	}
	due := clock.UnixMilli() + 1000
	for run := 0; run <= worker.AlarmMaxRetries; run++ {
		mu.Lock()
		clock = time.UnixMilli(due)
		mu.Unlock()
		res, err := obj.Alarm(ctx)
		if err != nil || !res.Ran || res.Err == nil || res.Err.Message != "always fails" {
			t.Fatalf("run %d: %+v, %v", run, res, err)
		}
		if run == worker.AlarmMaxRetries {
			if res.State.Set {
				t.Fatalf("after %d retries the alarm is still set: %+v", run, res.State)
			}
			break
		}
		wantDelay := (2 * time.Second) << run
		if !res.State.Set || res.State.Retry != run+1 || res.State.Deadline != due+wantDelay.Milliseconds() {
			t.Fatalf("run %d: next state %+v, want retry %d at +%v", run, res.State, run+1, wantDelay)
		}
		due = res.State.Deadline
	}
	noArgs, _ := worker.Serialize([]any{})
	out, err := obj.Call(ctx, "runs", noArgs)
	if err != nil {
		t.Fatal(err)
	}
	v, err := worker.Deserialize(out)
	runs, _ := v.([]any)
	if err != nil || len(runs) != 7 || runs[0] != 0.0 || runs[6] != 6.0 {
		t.Fatalf("runs saw retry counts %v, want 0..6", runs)
	}
	mu.Lock()
	defer mu.Unlock()
	if last := reports[len(reports)-1]; last.Set || len(reports) < 8 {
		t.Fatalf("host was told %d states, the last %+v", len(reports), last)
	}
}
