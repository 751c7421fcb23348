package server

import (
	"context"
	"sync"
	"time"

	"github.com/celldgo/celld/fleet"
)

// A request for a cell whose owner is gone but not yet counted dead — its
// lease lapsed and the skew margin runs, or its address refuses
// connections while its lease still stands (killed) — waits for this node
// to take the cell over instead of failing at once: the cell is asked for
// again (first when the owner could be counted dead, then every
// takeoverPoll), for at most the owner's remaining lease plus
// the skew margin, and never longer than the node's takeover wait
// (CELLD_TAKEOVER_WAIT_MS). The fleet core decides when the owner is dead
// (its expiry plus the margin, or its lease seen unchanged for a TTL);
// this only keeps the request from failing before then.

// takeoverPoll is how often a waiting request asks for the cell again
// (each ask reads its ownership record and its owner's lease).
const takeoverPoll = 200 * time.Millisecond

// DefaultTakeoverWait bounds the wait when Options.TakeoverWait is 0.
const DefaultTakeoverWait = 15 * time.Second

// downOwners remembers owners whose address refused a connection, each
// with the lease expiry it had then: until that lease is renewed, its
// cells are in takeover.
type downOwners struct {
	mu    sync.Mutex
	nodes map[string]time.Time
}

func (d *downOwners) mark(node string, expires time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nodes == nil || len(d.nodes) > 4096 {
		d.nodes = map[string]time.Time{}
	}
	d.nodes[node] = expires
}

// down reports whether node was found unreachable under the lease that
// expires at expires (a renewed lease clears it).
func (d *downOwners) down(node string, expires time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok := d.nodes[node]
	if ok && expires.After(at) {
		delete(d.nodes, node) // renewed since: alive
		return false
	}
	return ok
}

// inTakeover reports whether a cell found owned elsewhere (else_) is
// waiting to be taken over, and until when a request may wait for it.
func (o *objects) inTakeover(else_ *fleet.ElsewhereError) (bool, time.Time) {
	if o.takeoverWait <= 0 {
		return false, time.Time{}
	}
	now := time.Now() // leases are on the real clock, whatever o.now is
	if now.Before(else_.Expires) && !o.down.down(else_.Node, else_.Expires) {
		return false, time.Time{} // a live owner: forward
	}
	until := else_.Expires.Add(o.fleet.Margin() + takeoverPoll)
	return true, minTime(until, now.Add(o.takeoverWait))
}

// takeoverNext is how long a request waiting since from sleeps before
// it asks for the cell again: until the first moment the fleet core could
// count the owner dead — its expiry plus the margin, or its lease seen
// unchanged for Observe since this wait began — then every takeoverPoll.
// Asking sooner would only load the bucket (each ask reads the
// ownership record and the lease) with answers known in advance.
func (o *objects) takeoverNext(else_ *fleet.ElsewhereError, from time.Time) time.Duration {
	earliest := minTime(else_.Expires.Add(o.fleet.Margin()), from.Add(o.fleet.Observe()))
	return max(time.Until(earliest), takeoverPoll)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
