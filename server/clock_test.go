package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/host"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testObjects is a node's cell host with built-in note cells, on clock.
func testObjects(t *testing.T, clock *fakeClock, idle time.Duration) (*objects, bucket.Store) {
	t.Helper()
	ctx := context.Background()
	store := bucket.NewMem()
	if err := fleet.EnsureFormat(ctx, store); err != nil {
		t.Fatal(err)
	}
	fn, err := fleet.Start(ctx, store, fleet.Config{Node: "node-a", Kind: core.KindNode, TTL: 10 * time.Second, Advertise: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fn.Close(context.Background()) })
	o := newObjects(store, fn, filepath.Join(t.TempDir(), "state"), idle, slog.New(slog.DiscardHandler))
	o.builtins = host.NewRegistry(host.Kind{Name: "note", Handler: noteHandler})
	o.now = clock.now
	t.Cleanup(func() {
		o.mu.Lock()
		var rs []*resident
		for _, r := range o.residents {
			rs = append(rs, o.detach(r))
		}
		o.mu.Unlock()
		o.stopAll(rs, "test over")
	})
	return o, store
}

// Idle eviction is decided on the node's clock: nothing is evicted before
// the idle time has passed on it, and the cell is released once it has —
// no test sleeps for it.
func TestObjects_IdleEvictionFollowsTheClock(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	o, store := testObjects(t, clock, time.Hour)
	if out, err := o.Call(ctx, "note:a", []byte("x")); err != nil || string(out) != "1" {
		t.Fatalf("call: %q %v", out, err)
	}
	clock.add(59 * time.Minute)
	o.evictIdle(clock.now())
	if c := o.counts(); c.Occupied != 1 {
		t.Fatalf("evicted before the idle hour passed: %+v", c)
	}
	if cells := o.cells(); len(cells) != 1 || cells[0].IdleMS != (59*time.Minute).Milliseconds() || cells[0].Phase != string(host.PhaseOwned) {
		t.Fatalf("/state cells on the clock: %+v", cells)
	}
	clock.add(time.Minute)
	o.evictIdle(clock.now())
	if c := o.counts(); c.Occupied != 0 || c.Evicting != 0 {
		t.Fatalf("not evicted once idle for an hour: %+v", c)
	}
	ci, err := fleet.LookupCell(ctx, store, "note:a", time.Now().UnixMilli())
	if err != nil || !ci.Own.Released || ci.Own.Epoch != 1 {
		t.Fatalf("own.json after eviction: %+v %v", ci.Own, err)
	}
	// The next call activates it again at epoch 2 with its data.
	if out, err := o.Call(ctx, "note:a", []byte("y")); err != nil || string(out) != "2" {
		t.Fatalf("call after eviction: %q %v", out, err)
	}
}

// A busy cell is never evicted, however long the clock says it was idle
// before its request began.
func TestObjects_BusyCellIsNotEvicted(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	o, _ := testObjects(t, clock, time.Minute)
	if _, err := o.Call(ctx, "note:b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	r := o.residents["note:b"]
	o.mu.Unlock()
	r.inflight.Add(1) // a request running
	clock.add(time.Hour)
	o.evictIdle(clock.now())
	if c := o.counts(); c.Occupied != 1 {
		t.Fatalf("a busy cell was evicted: %+v", c)
	}
	r.done()
	o.evictIdle(clock.now())
	if c := o.counts(); c.Occupied != 1 {
		t.Fatalf("evicted right after its request ended (idle 0 on the clock): %+v", c)
	}
}
