package fleetlog

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// testGroup is an owner's log with two followers over loopback HTTP; the
// second follower's appends pass through stall, which may hold one until
// the test ends.
type testGroup struct {
	log   *Log
	disks map[string]*Disk
}

func newTestGroup(t *testing.T, cfg Config, stall func(r *http.Request) bool) *testGroup {
	t.Helper()
	secret := []byte("0123456789abcdef0123456789abcdef")
	store := bucket.NewMem()
	ctx := context.Background()
	release := make(chan struct{})
	g := &testGroup{disks: map[string]*Disk{}}
	for _, name := range []string{"f1", "f2"} {
		d, err := OpenDisk(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		g.disks[name] = d
		mux := http.NewServeMux()
		Routes(mux, d, &fleet.Verifier{Secret: secret}, func() bool { return true }, nil)
		var h http.Handler = mux
		if name == "f2" {
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == PathAppend && stall(r) {
					select {
					case <-release:
					case <-r.Context().Done():
					}
					http.Error(w, "stalled", http.StatusServiceUnavailable)
					return
				}
				mux.ServeHTTP(w, r)
			})
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		lease := core.Lease{Node: name, Session: name + "-s", Advertise: strings.TrimPrefix(srv.URL, "http://"), Expires: time.Now().Add(time.Hour).UnixMilli(), Kind: core.KindNode}
		if _, err := store.Put(ctx, core.LeaseKey(name), core.Encode(lease), bucket.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { close(release) })
	own, err := OpenDisk(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.Node, cfg.Session, cfg.Disk = store, "owner", "owner-s", own
	cfg.Signer = &fleet.Signer{Secret: secret, Node: "owner"}
	cfg.Recruit, cfg.Delay = 20*time.Millisecond, time.Hour
	g.log = NewLog(cfg)
	t.Cleanup(g.log.Close)
	for deadline := time.Now().Add(20 * time.Second); len(g.log.State().Followers) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no group of two: %+v", g.log.State())
		}
	}
	return g
}

// retained is what a follower's disk holds for the owner's session.
func (g *testGroup) retained(t *testing.T, name string) []cell.Segment {
	t.Helper()
	return sealed(t, g.disks[name], "owner-s")
}

// TestLog_hedgedAppend: an append request a follower never answers (a
// stalled connection) is sent again on another, and its answer proves the
// segment: the group keeps both members and each holds the segment once.
func TestLog_hedgedAppend(t *testing.T) {
	var mu sync.Mutex
	stalled := 0
	g := newTestGroup(t, Config{Slow: time.Minute, AppendTimeout: time.Minute}, func(r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		stalled++
		return stalled == 2 // the first append after the catch-up
	})
	ctx := context.Background()
	for i := uint64(1); i <= 3; i++ {
		if !g.log.Append(ctx, cell.Segment{Cell: "C:1", Epoch: 1, Min: i, Max: i, After: i - 1, Data: []byte("x")}) {
			t.Fatalf("append %d: no fleet proof: %+v", i, g.log.State())
		}
	}
	if h := g.log.Hedges(); h < 1 {
		t.Fatalf("hedges = %d; the stalled request was never sent again", h)
	}
	if st := g.log.State(); len(st.Followers) != 2 {
		t.Fatalf("followers %+v; a hedged member must stay", st.Followers)
	}
	for _, f := range []string{"f1", "f2"} {
		got := g.retained(t, f)
		if len(got) != 3 || got[0].Min != 1 || got[2].Max != 3 {
			t.Fatalf("%s retains %d segments (%+v), want 1, 2, 3 once each", f, len(got), got)
		}
	}
}

// TestLog_slowFollowerDropped: a follower that stops answering appends is
// failed after Slow and dropped from the record (the other one answered a
// probe); the waiting append is then proven on the member that stays —
// which fsynced it — and the writes after it go on.
func TestLog_slowFollowerDropped(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	// Slow must exceed what the healthy member may take on a loaded
	// machine (its fsync included), or both would be failed.
	g := newTestGroup(t, Config{Slow: 3 * time.Second, AppendTimeout: time.Minute}, func(r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return calls > 1 // every append after the catch-up
	})
	ctx := context.Background()
	for i := uint64(1); i <= 3; i++ {
		if !g.log.Append(ctx, cell.Segment{Cell: "C:1", Epoch: 1, Min: i, Max: i, After: i - 1, Data: []byte("x")}) {
			t.Fatalf("append %d: no fleet proof: %+v", i, g.log.State())
		}
	}
	st := g.log.State()
	if len(st.Followers) != 1 || st.Followers[0].Node != "f1" {
		t.Fatalf("followers %+v; want f2 dropped, f1 alone", st.Followers)
	}
	if got := g.retained(t, "f1"); len(got) != 3 {
		t.Fatalf("f1 retains %+v, want all three proven segments", got)
	}
}
