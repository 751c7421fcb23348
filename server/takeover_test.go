package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/worker"
)

// ghostOwner makes a node that owns the counter cell named name and then
// dies at once — its lease stays, unrenewed, for ttl, and its advertised
// address refuses connections (a kill -9) — and returns when that lease
// expires.
func ghostOwner(t *testing.T, store bucket.Store, name string, ttl time.Duration) time.Time {
	t.Helper()
	ctx := context.Background()
	n, err := fleet.Start(ctx, store, fleet.Config{Node: "ghost-" + name, Advertise: "127.0.0.1:1", Kind: core.KindNode, TTL: ttl, Durability: durabilityMode(""),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Acquire(ctx, "Counter:"+worker.ObjectIDFromName("Counter", name)); err != nil {
		t.Fatal(err)
	}
	expires := n.Expires()
	n.Abandon()
	return expires
}

// TestTakeover_RequestWaitsForIt: a request for a cell whose owner was
// killed (lease standing, address refusing) waits until this node takes
// the cell over — the owner's expiry plus the skew margin — and is then
// answered 200, instead of failing at once; with the wait off it is
// answered 503 at once.
func TestTakeover_RequestWaitsForIt(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, "../examples/counter", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	const margin = 500 * time.Millisecond
	waits := startNodeWith(t, store, "node-b", func(o *Options) { o.SkewMargin = margin })
	noWait := startNodeWith(t, store, "node-c", func(o *Options) { o.SkewMargin = margin; o.TakeoverWait = -1 })
	get := func(url string) (int, string, time.Duration) {
		start := time.Now()
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b)), time.Since(start)
	}

	ghostOwner(t, store, "refused", 3*time.Second)
	if code, body, took := get(noWait.public + "/?name=refused"); code != http.StatusServiceUnavailable || took > 2*time.Second {
		t.Fatalf("with no takeover wait: %d %q after %v, want 503 at once", code, body, took)
	}

	expires := ghostOwner(t, store, "waited", 1500*time.Millisecond)
	code, body, took := get(waits.public + "/?name=waited")
	done := time.Now()
	if code != 200 || body != "1" {
		t.Fatalf("request during the takeover: %d %q after %v, want 200 \"1\"", code, body, took)
	}
	if done.Before(expires) {
		t.Fatalf("answered at %v, before the owner's lease expired (%v): the cell was taken from a live lease", done, expires)
	}
	if late := done.Sub(expires); late > margin+2*time.Second {
		t.Fatalf("answered %v after the owner's expiry, want within the margin (%v) and a poll", late, margin)
	}
	t.Logf("a request that arrived %v before the dead owner's expiry was answered %v after it (margin %v)", took-done.Sub(expires), done.Sub(expires).Round(time.Millisecond), margin)
}
