package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/celldgo/celld/internal/miniotest"
)

// cronRow is testdata/cron's GET / answer: one row per scheduled() run.
type cronRow struct {
	Cron      string `json:"cron"`
	Scheduled int64  `json:"scheduled"`
	Started   int64  `json:"started"`
}

type cronListed struct {
	Triggers []struct {
		Cron          string `json:"cron"`
		LastScheduled int64  `json:"last_scheduled"`
		Runs          int64  `json:"runs"`
		Failures      int64  `json:"failures"`
		Skipped       int64  `json:"skipped"`
	} `json:"triggers"`
}

// cronEnv: the test-only seconds field (testdata/cron fires every 2 s),
// a fast waker, a skew margin making a takeover take ~5 s: longer than two
// periods, so the outage after the kill usually has occurrences to skip
// (a peer may also count the killed node dead once its lease looked
// unchanged for the TTL, sooner on a loaded machine whose renewals lag:
// the test checks the skip only when the outage passed two occurrences). The test
// watches the schedule with `celld cron list`, which reads the cron cell
// from the bucket: in fleet mode (the default) a cell's own upload waits
// CELLD_FLEET_TRANSFER_MS (30 s; the followers and log packs hold its
// writes meanwhile), so the nodes upload every 200 ms here.
var cronEnv = []string{"CELLD_TEST_CRON_SECONDS=1", "CELLD_WAKER_TICK_MS=300", "CELLD_SKEW_MARGIN_MS=3000", "CELLD_FLEET_TRANSFER_MS=200"}

const cronPeriod = 2000 // ms

func celldEnv(srv *miniotest.Server) []string {
	return append(append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey), cronEnv...)
}

// cronList runs `celld cron list --json` on the bucket.
func cronList(t *testing.T, bin string, srv *miniotest.Server, bucketName string) cronListed {
	t.Helper()
	l, ok := cronListed{}, false
	if l, ok = tryCronList(t, bin, srv, bucketName); !ok {
		t.Fatalf("cron list: no trigger: %+v", l)
	}
	return l
}

// tryCronList is cronList, false while the bucket shows no trigger yet:
// the cron cell's owner writes its schedule, which reaches the bucket
// with the cell's own upload (in fleet mode up to CELLD_FLEET_TRANSFER_MS
// and a quarter more after the write).
func tryCronList(t *testing.T, bin string, srv *miniotest.Server, bucketName string) (cronListed, bool) {
	t.Helper()
	cmd := exec.Command(bin, "cron", "list", "--json", "--bucket", "s3://"+bucketName, "--endpoint", srv.Endpoint)
	cmd.Env = celldEnv(srv)
	out, err := cmd.Output()
	var l cronListed
	if err != nil || json.Unmarshal(out, &l) != nil || len(l.Triggers) > 1 {
		t.Fatalf("cron list: %v\n%s", err, out)
	}
	return l, len(l.Triggers) == 1
}

// TestFleet_CronOncePerOccurrence: testdata/cron (every 2 s) on three
// `celld serve` nodes on MinIO. No occurrence ever runs twice across the
// fleet — while the cron cell's owner is killed with SIGKILL (state
// deleted), and while its successor drains — and after each outage the
// schedule resumes with one run for the latest missed occurrence, the
// others counted as skipped, never a backlog.
func TestFleet_CronOncePerOccurrence(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	bin := buildCelld(t)
	srv := miniotest.Shared(t)
	bucketName := srv.NewBucket(t)
	nodes := map[string]*fleetNode{}
	nodes["a"] = startFleetNode(t, bin, srv, bucketName, "a", t.TempDir(), cronEnv...)
	dir, _ := filepath.Abs("testdata/cron")
	deploy := exec.Command(bin, "deploy", dir, "--bucket", "s3://"+bucketName, "--endpoint", srv.Endpoint)
	deploy.Env = celldEnv(srv)
	if out, err := deploy.CombinedOutput(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	nodes["b"] = startFleetNode(t, bin, srv, bucketName, "b", t.TempDir(), cronEnv...)
	nodes["c"] = startFleetNode(t, bin, srv, bucketName, "c", t.TempDir(), cronEnv...)
	c := freshClient(15 * time.Second)

	rows := func(via *fleetNode) []cronRow {
		t.Helper()
		for attempt := 0; ; attempt++ {
			r := fetch(c, via.public+"/")
			var out []cronRow
			if r.err == nil && r.status == 200 && json.Unmarshal([]byte(r.body), &out) == nil {
				return out
			}
			if attempt == 20 {
				t.Fatalf("runs via %s: %v", via.name, r)
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	owner := func(alive ...string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			for _, n := range alive {
				if owned, err := nodes[n].owned(); err == nil {
					if _, ok := owned["cron:crons"]; ok {
						return n
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("nobody owns cron:crons")
		return ""
	}
	// settled waits until the bucket shows a run recorded for an
	// occurrence after the one given, with the next occurrence far enough
	// (> 700 ms) away that stopping a node now cuts no run short.
	settled := func(after int64) int64 {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			l, ok := tryCronList(t, bin, srv, bucketName)
			if !ok {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			last := l.Triggers[0].LastScheduled
			now := time.Now().UnixMilli()
			if last > after && now-last < cronPeriod-700 && now > last+100 {
				return last
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("no run recorded after %d in 20 s", after)
		return 0
	}

	first := owner("a", "b", "c")
	killedAfter := settled(settled(0)) // two occurrences ran
	nodes[first].kill9(t)
	killedAt := time.Now()
	alive := slices.DeleteFunc([]string{"a", "b", "c"}, func(n string) bool { return n == first })
	t.Logf("killed %s, the owner, after the run of %d", first, killedAfter)

	second := owner(alive...)
	resumedAfter := settled(killedAfter)
	t.Logf("%s took over %v after the kill; a run after it: %d", second, time.Since(killedAt).Round(time.Millisecond), resumedAfter)
	drainedAfter := settled(settled(resumedAfter))
	nodes[second].cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-nodes[second].done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not exit after SIGTERM", second)
	}
	last := slices.DeleteFunc(alive, func(n string) bool { return n == second })[0]
	owner(last)
	end := settled(settled(drainedAfter))

	runs := rows(nodes[last])
	var sched []int64
	seen := map[int64]int{}
	for _, r := range runs {
		if r.Cron != "*/2 * * * * *" || r.Scheduled%cronPeriod != 0 || r.Started < r.Scheduled {
			t.Errorf("bad run %+v", r)
		}
		seen[r.Scheduled]++
		sched = append(sched, r.Scheduled)
	}
	for s, n := range seen {
		if n > 1 {
			t.Errorf("occurrence %d ran %d times", s, n)
		}
	}
	slices.Sort(sched)
	sched = slices.Compact(sched)
	// Between outages every occurrence ran: the gaps are the two outages,
	// each bridged by one run of its latest missed occurrence.
	gaps := 0
	for i := 1; i < len(sched); i++ {
		if sched[i] > end {
			break
		}
		if d := sched[i] - sched[i-1]; d != cronPeriod {
			gaps++
			in := func(a, b int64) bool { return sched[i-1] >= a && sched[i-1] <= b }
			if !in(killedAfter, killedAfter) && !in(drainedAfter, drainedAfter) {
				t.Errorf("occurrences %d..%d missing outside an outage", sched[i-1], sched[i])
			}
		}
	}
	l := cronList(t, bin, srv, bucketName)
	// A run whose D1 write failed (its database's owner was the node
	// killed) fails and is retried: it leaves no row.
	if tr := l.Triggers[0]; tr.Runs-tr.Failures != int64(len(runs)) {
		t.Errorf("cron list counts %d runs (%d failed), the Worker saw %d", tr.Runs, tr.Failures, len(runs))
	}
	total := (sched[len(sched)-1]-sched[0])/cronPeriod + 1
	if got := int64(len(sched)) + l.Triggers[0].Skipped; got != total {
		t.Errorf("%d runs + %d skipped = %d, want the %d occurrences from %d to %d", len(sched), l.Triggers[0].Skipped, got, total, sched[0], sched[len(sched)-1])
	}
	// The first run after the kill: when it started a waker tick (300 ms)
	// or more after the second occurrence following the last run before
	// the kill, both were missed, and one of them must be skipped.
	var resumed int64
	for _, r := range runs {
		if r.Scheduled > killedAfter && (resumed == 0 || r.Started < resumed) {
			resumed = r.Started
		}
	}
	if resumed >= killedAfter+2*cronPeriod+300 && (gaps == 0 || l.Triggers[0].Skipped == 0) {
		t.Errorf("the kill's outage (the first run after it started at %d) skipped nothing: %d gaps, %d skipped", resumed, gaps, l.Triggers[0].Skipped)
	} else if resumed < killedAfter+2*cronPeriod+300 {
		t.Logf("the takeover was quick (the first run after the kill started at %d): no occurrence had to be skipped", resumed)
	}
	t.Logf("%d runs, %d occurrences skipped across %d outage gap(s); resumed after the kill at %d, after the drain at %d", len(runs), l.Triggers[0].Skipped, gaps, resumedAfter, end)
	if t.Failed() {
		t.Logf("runs: %+v\ncron list: %+v", runs, l)
	}
}
