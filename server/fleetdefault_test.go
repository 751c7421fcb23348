package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/diagnose"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/server/api"
)

// requestLog counts a store's requests by operation and key prefix (its
// first path element, e.g. "PUT cells/").
type requestLog struct {
	bucket.Store
	mu sync.Mutex
	n  map[string]int
}

func (s *requestLog) add(op, key string) {
	prefix, _, _ := strings.Cut(key, "/")
	s.mu.Lock()
	s.n[op+" "+prefix+"/"]++
	s.mu.Unlock()
}

func (s *requestLog) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.n)
}

func (s *requestLog) Get(ctx context.Context, key string) ([]byte, bucket.Object, error) {
	s.add("GET", key)
	return s.Store.Get(ctx, key)
}

func (s *requestLog) GetRange(ctx context.Context, key string, r bucket.Range) ([]byte, bucket.Object, error) {
	s.add("GET", key)
	return s.Store.GetRange(ctx, key, r)
}

func (s *requestLog) Head(ctx context.Context, key string) (bucket.Object, error) {
	s.add("HEAD", key)
	return s.Store.Head(ctx, key)
}

func (s *requestLog) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	s.add("PUT", key)
	return s.Store.Put(ctx, key, data, cond)
}

func (s *requestLog) Delete(ctx context.Context, key string) error {
	s.add("DELETE", key)
	return s.Store.Delete(ctx, key)
}

func (s *requestLog) List(ctx context.Context, prefix, startAfter string, limit int) (bucket.Page, error) {
	s.add("LIST", prefix)
	return s.Store.List(ctx, prefix, startAfter, limit)
}

// clockDriven are the requests a node makes on its clock whatever it
// serves (its lease renewals, the deployment poll), the same in both
// modes but not in number from run to run.
var clockDriven = map[string]bool{"PUT nodes/": true, "HEAD deploy/": true, "GET deploy/": true}

// TestDurability_DefaultAloneIsBucketMode: a node with CELLD_DURABILITY
// unset runs fleet mode (the default) and, alone, proves every write in
// the bucket exactly as a bucket-mode node does: the same bucket requests
// of every kind for the same writes and idle time (no lease listings
// looking for followers, no log record, no packs) — only the requests
// that follow the clock (clockDriven) are left out of the comparison.
func TestDurability_DefaultAloneIsBucketMode(t *testing.T) {
	run := func(mode string) (map[string]int, api.Durability) {
		store := &requestLog{Store: bucket.NewMem(), n: map[string]int{}}
		if _, err := deploy.Deploy(context.Background(), store, "../examples/counter", deploy.Options{Capabilities: deploy.Served()}); err != nil {
			t.Fatal(err)
		}
		n := startNodeWith(t, store, "node-a", func(o *Options) { o.Durability = mode })
		// What the start does (the waker's first tick, …) settles first.
		before := store.counts()
		for deadline := time.Now().Add(20 * time.Second); ; {
			time.Sleep(300 * time.Millisecond)
			now := store.counts()
			for k := range clockDriven {
				delete(now, k)
				delete(before, k)
			}
			if maps.Equal(now, before) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%q: the node's bucket requests never settled after its start", mode)
			}
			before = now
		}
		for i := 1; i <= 20; i++ {
			if status, body := fetchText(t, n.public+"/?name=c"); status != 200 || body != fmt.Sprintf("%d\n", i) {
				t.Fatalf("%q: write %d: %d %q", mode, i, status, body)
			}
		}
		// Idle long enough for a recruit loop (every second) to list
		// leases a few times.
		time.Sleep(3500 * time.Millisecond)
		after := store.counts()
		diff := map[string]int{}
		for k, v := range after {
			if d := v - before[k]; d != 0 && !clockDriven[k] {
				diff[k] = d
			}
		}
		resp, err := http.Get(n.internal + "/state")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st api.State
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return diff, st.Durability
	}
	bucketMode, bd := run(DurabilityBucket)
	def, dd := run("")
	if bd.Mode != DurabilityBucket || dd.Mode != DurabilityFleet {
		t.Fatalf("modes: %q and %q, want bucket and fleet (the default)", bd.Mode, dd.Mode)
	}
	if dd.FleetAcked != 0 || dd.BucketProofs != 0 || dd.LogRecord != "" || len(dd.Followers) != 0 {
		t.Fatalf("a lone default-mode node: %+v; want no group, no log record, nothing sent to a fleet log", dd)
	}
	if bucketMode["PUT cells/"] < 20 {
		t.Fatalf("bucket mode uploaded %d cells/ objects for 20 writes, want at least 20: %v", bucketMode["PUT cells/"], bucketMode)
	}
	if !maps.Equal(bucketMode, def) {
		keys := slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, int) bool) {
			for k, v := range bucketMode {
				yield(k, v)
			}
			for k, v := range def {
				yield(k, v)
			}
		})))
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-14s bucket %4d  default %4d\n", k, bucketMode[k], def[k])
		}
		t.Fatalf("a lone node's bucket requests differ between bucket mode and the default (fleet):\n%s", b.String())
	}
}

// TestCheckModes: a node refuses to start beside a live node of the other
// mode, naming both; a lease without a mode is a bucket-mode node's (it
// predates fleet durability), and a node's own unset mode is the default,
// fleet.
func TestCheckModes(t *testing.T) {
	store := bucket.NewMem()
	ctx := context.Background()
	put := func(node, mode string) {
		l := core.Lease{Node: node, Kind: core.KindNode, Session: node + "-1", Expires: time.Now().Add(time.Minute).UnixMilli(), Advertise: "127.0.0.1:1", Durability: mode}
		if _, err := store.Put(ctx, core.LeaseKey(node), core.Encode(l), bucket.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	put("old", "")
	err := checkModes(ctx, store, "me", durabilityMode(""))
	var env *diagnose.EnvError
	if !errors.As(err, &env) || !strings.Contains(env.Err.Error(), "CELLD_DURABILITY=fleet on node me") || !strings.Contains(env.Err.Error(), "CELLD_DURABILITY=bucket (node old)") {
		t.Fatalf("default mode beside a lease without a mode: %v; want a refusal naming fleet (ours) and bucket (node old)", err)
	}
	if err := checkModes(ctx, store, "me", DurabilityBucket); err != nil {
		t.Fatalf("bucket beside a lease without a mode: %v; want no refusal", err)
	}
	put("old", DurabilityFleet)
	if err := checkModes(ctx, store, "me", durabilityMode("")); err != nil {
		t.Fatalf("default mode beside a fleet lease: %v; want no refusal", err)
	}
}
