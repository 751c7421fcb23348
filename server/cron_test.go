package server

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cron"
	"github.com/celldgo/celld/cron/spec"
	"github.com/celldgo/celld/deploy"
)

type cronRun struct {
	Cron      string `json:"cron"`
	Scheduled int64  `json:"scheduled"`
	Started   int64  `json:"started"`
}

func cronRuns(t *testing.T, base string) []cronRun {
	t.Helper()
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var runs []cronRun
	if err := json.NewDecoder(resp.Body).Decode(&runs); err != nil {
		t.Fatal(err)
	}
	return runs
}

func httpDo(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// deployCron deploys testdata/cron with its crons replaced by crons.
func deployCron(t testing.TB, store bucket.Store, crons string) {
	t.Helper()
	dir := t.TempDir()
	src := "../cmd/celld/testdata/cron"
	for _, f := range []string{"index.js", "wrangler.jsonc"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "wrangler.jsonc" {
			b = []byte(strings.Replace(string(b), `["*/2 * * * * *"]`, crons, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
}

// TestCron_FiresOnceAndRedeployReplaces: a node runs the schedule of the
// live Worker, each occurrence once, scheduledTime being the occurrence;
// a new deployment replaces the schedule; the manual routes run
// scheduled() with Miniflare's and wrangler's answers and leave the
// schedule alone.
func TestCron_FiresOnceAndRedeployReplaces(t *testing.T) {
	t.Setenv(spec.TestSecondsEnv, "1")
	store, err := bucket.NewFile(filepath.Join(t.TempDir(), "bucket"))
	if err != nil {
		t.Fatal(err)
	}
	deployCron(t, store, `["* * * * * *"]`)
	internal, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := runTestNode(t, Options{Store: store, Node: "cron", InternalListener: internal, Poll: 100 * time.Millisecond,
		Dev: &DevOptions{TestScheduled: true}})

	deadline := time.Now().Add(15 * time.Second)
	var runs []cronRun
	for time.Now().Before(deadline) {
		if runs = cronRuns(t, base); len(runs) >= 3 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(runs) < 3 {
		t.Fatalf("runs after 15 s: %+v", runs)
	}
	seen := map[int64]bool{}
	for _, r := range runs {
		if r.Cron != "* * * * * *" || r.Scheduled%1000 != 0 || r.Started < r.Scheduled || seen[r.Scheduled] {
			t.Fatalf("bad or repeated run %+v in %+v", r, runs)
		}
		seen[r.Scheduled] = true
	}

	// By hand: Miniflare's route answers the outcome; wrangler's says so.
	if st, body := httpDo(t, "GET", base+"/cdn-cgi/handler/scheduled?cron=throw&time=5"); st != 500 || body != "exception" {
		t.Errorf("/cdn-cgi/handler/scheduled?cron=throw = %d %q", st, body)
	}
	if st, body := httpDo(t, "GET", base+"/__scheduled?cron=manual"); st != 200 || body != "Ran scheduled event" {
		t.Errorf("/__scheduled = %d %q", st, body)
	}
	if st, body := httpDo(t, "POST", "http://"+internal.Addr().String()+"/__scheduled?cron=internal&time=7"); st != 200 || body != "ok" {
		t.Errorf("internal /__scheduled = %d %q", st, body)
	}
	if st, _ := httpDo(t, "GET", base+"/cdn-cgi/handler/scheduled?time=soon"); st != 400 {
		t.Errorf("a bad time= = %d, want 400", st)
	}
	manual := map[string]int64{}
	for _, r := range cronRuns(t, base) {
		if r.Cron != "* * * * * *" {
			manual[r.Cron] = r.Scheduled
		}
	}
	if manual["throw"] != 5 || manual["internal"] != 7 || manual["manual"] == 0 {
		t.Errorf("manual runs = %v", manual)
	}

	// A new deployment replaces the schedule.
	deployCron(t, store, `["*/2 * * * * *"]`)
	switched := time.Now()
	deadline = time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		n := 0
		for _, r := range cronRuns(t, base) {
			if r.Cron == "*/2 * * * * *" {
				n++
			}
		}
		if n >= 2 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	var old, fresh int
	for _, r := range cronRuns(t, base) {
		switch r.Cron {
		case "* * * * * *":
			if r.Started > switched.Add(2*time.Second).UnixMilli() {
				old++
			}
		case "*/2 * * * * *":
			fresh++
			if r.Scheduled%2000 != 0 {
				t.Errorf("run %+v", r)
			}
		}
	}
	if fresh < 2 || old > 0 {
		t.Fatalf("after redeploy: %d runs of the new cron, %d of the old one after the switch", fresh, old)
	}
	st, err := cron.Read(context.Background(), store, "crons")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Triggers) != 1 || st.Triggers[0].Cron != "*/2 * * * * *" || st.Triggers[0].LastOutcome != "ok" || st.Triggers[0].Runs < 2 {
		t.Fatalf("cron.Read = %+v", st)
	}
}
