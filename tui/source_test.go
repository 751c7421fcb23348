package tui

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/server/api"
)

// stateServer answers GET /state with st on 127.0.0.1.
func stateServer(t testing.TB, st api.State) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/state" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(st)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// closedAddr is a 127.0.0.1 address nothing listens on.
func closedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func putLease(t testing.TB, s bucket.Store, l core.Lease) {
	t.Helper()
	if _, err := s.Put(context.Background(), core.LeaseKey(l.Node), core.Encode(l), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
}

func TestBucketSource_Poll(t *testing.T) {
	now := time.UnixMilli(t0)
	store := bucket.NewMem()
	live := stateServer(t, api.State{Node: "a", Session: "a-s", Health: "ok", Counters: api.Counters{Occupied: 2}})
	dead := closedAddr(t)
	toolAddr := stateServer(t, api.State{Node: "tool"})
	stale := closedAddr(t)
	tracked := stateServer(t, api.State{Node: "c", Health: "draining", Draining: true})

	putLease(t, store, core.Lease{Node: "a", Session: "a-s", Advertise: live, Expires: t0 + 9_000, Kind: core.KindNode})
	putLease(t, store, core.Lease{Node: "b", Session: "b-s", Advertise: dead, Expires: t0 + 9_000, Kind: core.KindNode})
	putLease(t, store, core.Lease{Node: "cli-1", Session: "t-s", Advertise: toolAddr, Expires: t0 + 9_000, Kind: core.KindTool})
	putLease(t, store, core.Lease{Node: "old", Session: "o-s", Advertise: stale, Expires: t0 - 60_000, Kind: core.KindNode})

	src := &BucketSource{Store: store, Client: StateClient{HTTP: &http.Client{Timeout: time.Second}}, Now: func() time.Time { return now }}
	obs := src.Poll(context.Background(), PollRequest{Tracked: []string{tracked}})
	if !obs.Listed || obs.ListErr != nil || obs.AtMS != t0 {
		t.Fatalf("listed=%v err=%q at=%d, want listed at %d", obs.Listed, obs.ListErr, obs.AtMS, t0)
	}
	got := map[string]NodeObservation{}
	for _, o := range obs.Nodes {
		got[o.Addr] = o
	}
	if len(got) != 4 {
		t.Errorf("reported %d nodes (%v), want a, b, the expired one and the tracked one: no tool lease", len(got), obs.Nodes)
	}
	if o := got[stale]; o.Lease == nil || o.State != nil || o.Err != "lease expired: not asked" {
		t.Errorf("a lease expired when listed: %+v, want reported with its lease and not asked", o)
	}
	if a := got[live]; a.State == nil || a.State.Counters.Occupied != 2 || a.Node != "a" || a.Lease == nil || a.Lease.ExpiresMS != t0+9_000 {
		t.Errorf("live node: %+v", a)
	}
	if b := got[dead]; b.State != nil || !strings.Contains(b.Err, "connection refused") || b.Lease == nil {
		t.Errorf("dead node: state %v, err %q, lease %v; want no state, connection refused, its lease", b.State, b.Err, b.Lease)
	}
	if c := got[tracked]; c.State == nil || !c.State.Draining || c.Lease != nil {
		t.Errorf("tracked node without lease: %+v, want polled, no lease", c)
	}

	// Once known, an expired lease is kept, so the node shows as
	// unreachable rather than vanishing.
	obs = src.Poll(context.Background(), PollRequest{Tracked: []string{stale}})
	found := false
	for _, o := range obs.Nodes {
		found = found || o.Addr == stale && o.Lease != nil
	}
	if !found {
		t.Error("a tracked node's expired lease was dropped")
	}
}

func TestBucketSource_ListFails(t *testing.T) {
	store := bucket.NewMem()
	store.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "list" {
			return bucket.Fault{Status: http.StatusServiceUnavailable}
		}
		return bucket.Fault{}
	})
	addr := stateServer(t, api.State{Node: "a", Health: "ok"})
	obs := (&BucketSource{Store: store}).Poll(context.Background(), PollRequest{Tracked: []string{addr}})
	if obs.Listed || obs.ListErr == nil {
		t.Fatalf("listed=%v err=%q, want a listing error", obs.Listed, obs.ListErr)
	}
	if len(obs.Nodes) != 1 || obs.Nodes[0].State == nil {
		t.Errorf("tracked node not polled while the bucket is down: %+v", obs.Nodes)
	}
}

func TestStateClient_Fetch(t *testing.T) {
	t.Run("not 200", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "nope", http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		_, err := StateClient{}.Fetch(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
		if err == nil || !strings.Contains(err.Error(), "503") {
			t.Errorf("err = %v, want the 503", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		start := time.Now()
		_, err := StateClient{HTTP: &http.Client{Timeout: 100 * time.Millisecond}}.Fetch(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
		if err == nil {
			t.Fatal("a node that never answers gave no error")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("fetch took %s, want about the 100ms timeout", d)
		}
	})
	t.Run("not JSON", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>")) }))
		defer srv.Close()
		_, err := StateClient{}.Fetch(context.Background(), strings.TrimPrefix(srv.URL, "http://"))
		if err == nil || !strings.HasPrefix(err.Error(), "decode state") {
			t.Errorf("err = %v, want decode state: …", err)
		}
	})
}

func TestAddrSource_Poll(t *testing.T) {
	up := stateServer(t, api.State{Node: "x", Health: "ok"})
	down := closedAddr(t)
	obs := (&AddrSource{Addrs: []string{down, up}}).Poll(context.Background(), PollRequest{})
	if !obs.Static || obs.Listed {
		t.Errorf("static=%v listed=%v, want a static observation", obs.Static, obs.Listed)
	}
	if len(obs.Nodes) != 2 {
		t.Fatalf("nodes = %d, want 2", len(obs.Nodes))
	}
	for _, o := range obs.Nodes {
		if (o.Addr == up) != (o.State != nil) {
			t.Errorf("%s: state %v err %q", o.Addr, o.State, o.Err)
		}
	}
}
