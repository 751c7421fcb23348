package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/celldgo/celld/internal/miniotest"
)

// alarmStatus is testdata/alarms' /status answer.
type alarmStatus struct {
	Fires []struct {
		At    int64 `json:"at"`
		Retry int   `json:"retry"`
	} `json:"fires"`
	Pending *int64 `json:"pending"`
}

func deployAlarms(t *testing.T, bin string, srv *miniotest.Server, bucketName string) {
	t.Helper()
	dir, _ := filepath.Abs("testdata/alarms")
	cmd := exec.Command(bin, "deploy", dir, "--bucket", "s3://"+bucketName, "--endpoint", srv.Endpoint)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
}

// TestFleet_AlarmsFireOnceAfterOwnerKilled: alarms set on cells owned by
// node A, then A is killed with SIGKILL and its state directory deleted
// before they are due. Every alarm fires exactly once, on B (the only
// node left), within alarm time + takeover (lease TTL + the fleet's skew
// margin) + one waker tick, plus slack for acquiring and restoring.
func TestFleet_AlarmsFireOnceAfterOwnerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	bin := buildCelld(t)
	srv := miniotest.Shared(t)
	bucketName := srv.NewBucket(t)
	const tick = 500 * time.Millisecond
	tickEnv := fmt.Sprintf("CELLD_WAKER_TICK_MS=%d", tick.Milliseconds())
	a := startFleetNode(t, bin, srv, bucketName, "a", t.TempDir(), tickEnv)
	deployAlarms(t, bin, srv, bucketName)
	b := startFleetNode(t, bin, srv, bucketName, "b", t.TempDir(), tickEnv)

	const cells = 12
	due := time.Now().Add(4 * time.Second).UnixMilli()
	c := freshClient(10 * time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for i := range cells {
		for {
			r := fetch(c, fmt.Sprintf("%s/arm?name=t%d&at=%d", a.public, i, due))
			if r.err == nil && r.status == 200 && strings.Contains(r.body, fmt.Sprint(due)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("arm t%d: %v", i, r)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	owned, err := a.owned()
	if err != nil {
		t.Fatal(err)
	}
	if len(owned) < cells {
		t.Fatalf("a owns %d cells, want %d", len(owned), cells)
	}
	if time.Now().UnixMilli() >= due-500 {
		t.Fatalf("arming took too long; the alarms are already due")
	}
	killed := time.Now()
	a.kill9(t)

	// Takeover: A's lease runs out (TTL) and the skew margin passes.
	takeover := fleetTTL + fleetMargin
	start := time.UnixMilli(due)
	if killed.Add(takeover).After(start) {
		start = killed.Add(takeover)
	}
	latest := start.Add(tick + 3*time.Second) // slack: acquire + restore on a busy machine
	time.Sleep(time.Until(latest))
	var mu sync.Mutex
	read := func(i int) alarmStatus {
		r := fetch(c, fmt.Sprintf("%s/status?name=t%d", b.public, i))
		var st alarmStatus
		if r.err != nil || r.status != 200 || json.Unmarshal([]byte(r.body), &st) != nil {
			t.Fatalf("status t%d: %v", i, r)
		}
		return st
	}
	for i := range cells {
		st := read(i)
		mu.Lock()
		if len(st.Fires) != 1 {
			t.Errorf("t%d fired %d times by %s, want once: %+v\n%s", i, len(st.Fires), latest.Format(time.StampMilli), st, b.stderr)
		} else if at := st.Fires[0].At; at < due || at > latest.UnixMilli() {
			t.Errorf("t%d fired at %d; due %d, bound %d", i, at, due, latest.UnixMilli())
		} else {
			t.Logf("t%d fired %d ms after it was due", i, at-due)
		}
		if st.Pending != nil {
			t.Errorf("t%d still has an alarm pending", i)
		}
		mu.Unlock()
	}
	// Once, not at least once: nothing fires again later.
	time.Sleep(2 * tick)
	for i := range cells {
		if st := read(i); len(st.Fires) != 1 {
			t.Errorf("t%d fired %d times after a further wait, want once", i, len(st.Fires))
		}
	}
}

// TestFleet_AlarmDueDuringDrainRunsOnSuccessor: node A owns cells with
// alarms a few seconds ahead and drains (SIGTERM) before they are due: it
// releases the cells and resigns the waker role, B's waker claims the
// role and wakes the released cells, and each alarm runs exactly once, on
// B, on time.
func TestFleet_AlarmDueDuringDrainRunsOnSuccessor(t *testing.T) {
	if testing.Short() {
		t.Skip("process test")
	}
	bin := buildCelld(t)
	srv := miniotest.Shared(t)
	bucketName := srv.NewBucket(t)
	const tick = 500 * time.Millisecond
	tickEnv := fmt.Sprintf("CELLD_WAKER_TICK_MS=%d", tick.Milliseconds())
	a := startFleetNode(t, bin, srv, bucketName, "a", t.TempDir(), tickEnv)
	deployAlarms(t, bin, srv, bucketName)
	b := startFleetNode(t, bin, srv, bucketName, "b", t.TempDir(), tickEnv)
	const cells = 6
	due := time.Now().Add(6 * time.Second).UnixMilli()
	c := freshClient(10 * time.Second)
	deadline := time.Now().Add(20 * time.Second)
	for i := range cells {
		for {
			r := fetch(c, fmt.Sprintf("%s/arm?name=d%d&at=%d", a.public, i, due))
			if r.err == nil && r.status == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("arm d%d: %v", i, r)
			}
			time.Sleep(200 * time.Millisecond) // the deployment is not loaded yet
		}
	}
	if time.Now().UnixMilli() >= due-500 {
		t.Fatal("arming took too long; the alarms are already due")
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("A did not exit after SIGTERM\n%s", a.stderr)
	}
	// Released cells need no lease wait: B's waker claims the resigned
	// role at its next tick and wakes them at the tick after.
	latest := time.UnixMilli(due).Add(3*tick + 3*time.Second)
	time.Sleep(time.Until(latest))
	for i := range cells {
		r := fetch(c, fmt.Sprintf("%s/status?name=d%d", b.public, i))
		var st alarmStatus
		if r.err != nil || r.status != 200 || json.Unmarshal([]byte(r.body), &st) != nil {
			t.Fatalf("status d%d: %v", i, r)
		}
		if len(st.Fires) != 1 || st.Pending != nil {
			t.Errorf("d%d: %+v, want one run and nothing pending\n%s", i, st, b.stderr)
			continue
		}
		t.Logf("d%d ran %d ms after it was due", i, st.Fires[0].At-due)
	}
}

// TestDev_AlarmsFire: celld dev fires a Durable Object's alarm locally.
func TestDev_AlarmsFire(t *testing.T) {
	bin := buildCelld(t)
	dir := t.TempDir()
	copyDir(t, "testdata/alarms", dir)
	addr := freePort(t)
	base := "http://" + addr
	p := startDev(t, bin, dir, addr)
	defer p.stop(t)
	due := time.Now().Add(time.Second).UnixMilli()
	if got := get(t, fmt.Sprintf("%s/arm?name=x&at=%d", base, due)); !strings.Contains(got, fmt.Sprint(due)) {
		t.Fatalf("arm: %q", got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var st alarmStatus
		body := get(t, base+"/status?name=x")
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatalf("status %q: %v", body, err)
		}
		if len(st.Fires) == 1 && st.Pending == nil {
			if at := st.Fires[0].At; at < due {
				t.Fatalf("fired at %d, before it was due (%d)", at, due)
			}
			return
		}
		if len(st.Fires) > 1 || time.Now().After(deadline) {
			t.Fatalf("status %+v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
