package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/cron"
)

// TestCronList: before any node synced the schedule the live crons are
// shown as not scheduled; afterwards each expression's next occurrence,
// last run, outcome and pending retry, from the bucket alone.
func TestCronList(t *testing.T) {
	dir := newKVDir(t)
	proj := filepath.Join(dir, "proj")
	os.Mkdir(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "index.js"), []byte(`export default { async scheduled() {}, fetch() { return new Response("x") } }`), 0o644)
	os.WriteFile(filepath.Join(proj, "wrangler.jsonc"), []byte(`{"name":"sched","main":"index.js","compatibility_date":"2026-04-01","triggers":{"crons":["*/5 * * * *","0 18 * * 6L"]}}`), 0o644)
	if _, errOut, err := runKV(t, dir, "deploy", proj); err != nil {
		t.Fatalf("deploy: %v\n%s", err, errOut)
	}
	out, _, err := runKV(t, dir, "cron", "list")
	if err != nil || !strings.Contains(out, "sched: 2 cron trigger(s) not scheduled yet") || !strings.Contains(out, "  0 18 * * 6L") {
		t.Fatalf("before sync: %v\n%s", err, out)
	}

	// What a node does: sync the deployment's crons, run one, record it.
	g := &globals{Bucket: "file://" + filepath.Join(dir, "bucket")}
	c, done, err := g.cellCaller(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 10, 1, 0, 0, time.UTC)
	if _, err := c.Call(ctx, cron.CellName("sched"), cron.SyncRequest("sched", "v1", []string{"*/5 * * * *", "0 18 * * 6L"}, at)); err != nil {
		t.Fatal(err)
	}
	b, err := c.Call(ctx, cron.CellName("sched"), cron.DueRequest(at.Add(4*time.Minute)))
	ticks, _ := cron.DecodeTicks(b)
	if err != nil || len(ticks) != 1 {
		t.Fatalf("due: %v %+v", err, ticks)
	}
	res := cron.Result{Tick: ticks[0], Outcome: "exception", Error: "Error: boom", Started: at.Add(4 * time.Minute).UnixMilli(), Done: at.Add(4*time.Minute + 12*time.Millisecond).UnixMilli()}
	if _, err := c.Call(ctx, cron.CellName("sched"), cron.RecordRequest([]cron.Result{res}, at.Add(4*time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := done(ctx); err != nil {
		t.Fatal(err)
	}

	out, _, err = runKV(t, dir, "cron", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"sched: schedule of version v1, synced 2026-12-01 10:01:00Z; alarm 2026-12-01 10:05:04Z",
		"*/5 * * * *  2026-12-01 10:10:00Z  2026-12-01 10:05:00Z  2026-12-01 10:05:00Z  exception (12ms): Error: boom  1     1       0        #1 of 2026-12-01 10:05:00Z at 2026-12-01 10:05:04Z",
		"0 18 * * 6L  2026-12-25 18:00:00Z  -",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("cron list lacks %q:\n%s", want, out)
		}
	}
	out, _, err = runKV(t, dir, "cron", "list", "--json")
	var l cronList
	if err != nil || json.Unmarshal([]byte(out), &l) != nil || !l.Scheduled || len(l.Triggers) != 2 || l.Triggers[0].RetryOf == 0 || l.LiveCrons[1] != "0 18 * * 6L" {
		t.Fatalf("--json: %v %+v\n%s", err, l, out)
	}
	if _, _, err := runKV(t, dir, "cron", "list", "--name", "nope"); err != nil {
		t.Fatalf("--name of a Worker without crons: %v", err)
	}
}
