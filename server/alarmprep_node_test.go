package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
)

// On a node whose cells park (open-cell bound 4) and hibernate (50 ms),
// alarms are prepared ahead: each fires once, never before its time, and
// the node counts the preparations. The lead is made long (a measured
// peak of 600 ms) so that a slow machine's late timers still leave time
// to prepare.
func TestAlarmsPreparedOnParkedHibernatedCells(t *testing.T) {
	const bound, cells = 4, 8
	fs, err := bucket.NewFile(filepath.Join(t.TempDir(), "bucket"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), fs, "../cmd/celld/testdata/alarms", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	var nd *node
	testNodeHook = func(x *node) {
		nd = x
		p := x.objects.prep
		p.mu.Lock()
		p.peak, p.peakAt = 600*time.Millisecond, time.Now()
		p.mu.Unlock()
	}
	defer func() { testNodeHook = nil }()
	base := runTestNode(t, Options{Store: fs, Node: "prep", StateDir: filepath.Join(t.TempDir(), "state"), MaxOpenCells: bound, Hibernate: 50 * time.Millisecond})
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	if lead := nd.objects.prep.lead(); lead < 800*time.Millisecond {
		t.Fatalf("lead %v", lead)
	}
	for i := range cells {
		get(fmt.Sprintf("/status?name=p%d", i))
	}
	time.Sleep(200 * time.Millisecond) // idle: the objects hibernate
	dues := make([]int64, cells)
	for i := range cells {
		dues[i] = time.Now().Add(1500 * time.Millisecond).UnixMilli()
		get(fmt.Sprintf("/arm?name=p%d&at=%d", i, dues[i]))
	}
	deadline := time.Now().Add(20 * time.Second)
	for i := range cells {
		for {
			var st struct {
				Fires []struct {
					At int64 `json:"at"`
				} `json:"fires"`
				Pending any `json:"pending"`
			}
			if err := json.Unmarshal([]byte(get(fmt.Sprintf("/status?name=p%d", i))), &st); err != nil {
				t.Fatal(err)
			}
			if len(st.Fires) == 1 && st.Pending == nil {
				if st.Fires[0].At < dues[i] {
					t.Errorf("p%d: alarm ran at %d, before its time %d", i, st.Fires[0].At, dues[i])
				}
				break
			}
			if len(st.Fires) > 1 || time.Now().After(deadline) {
				t.Fatalf("p%d: fires %v, pending %v", i, st.Fires, st.Pending)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ps := nd.objects.prep.stats()
	all, prepared := nd.objects.latenesses()
	if ps.Prepared < 1 || len(prepared) < 1 || len(all) != cells {
		t.Errorf("preparation %+v, %d of %d alarms prepared in time; want some prepared", ps, len(prepared), len(all))
	}
	if ps.Preparing != 0 || ps.Wait != 0 {
		t.Errorf("preparation %+v after every alarm fired: rooms not given back", ps)
	}
}
