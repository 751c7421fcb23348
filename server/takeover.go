package server

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// A request for a cell whose owner is gone but not yet counted dead — its
// lease lapsed and the skew margin runs, or its address refuses
// connections while its lease still stands (killed) — waits for this node
// to take the cell over instead of failing at once: the cell is asked for
// again, for at most the owner's remaining lease plus
// the skew margin, and never longer than the node's takeover wait
// (CELLD_TAKEOVER_WAIT_MS). The fleet core decides when the owner is dead
// (its expiry plus the margin, or its lease seen unchanged for a TTL);
// this only keeps the request from failing before then (takeoverWait
// says when to ask).

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

// takeoverWait is one request's wait for a takeover. Until the first
// moment the fleet core could count the owner dead — its expiry plus the
// margin, or its lease seen unchanged for Observe since this wait began —
// the request asks for the cell again only if its ownership record
// changed (released in a drain, or taken by another node): a full ask
// reads the record and the lease, and 50 waiting cells asking every poll
// slowed the very store the takeover needs. From then on it asks every
// takeoverPoll.
type takeoverWait struct {
	o        *objects
	cell     string
	until    time.Time // give up then
	earliest time.Time // the owner may be counted dead from then
	own      []byte    // the ownership record when the wait began
}

func (o *objects) newTakeoverWait(ctx context.Context, cell string, else_ *fleet.ElsewhereError, until time.Time) *takeoverWait {
	now := time.Now()
	observe := else_.Observe
	if observe <= 0 {
		observe = o.fleet.Observe()
	}
	w := &takeoverWait{o: o, cell: cell, until: until,
		earliest: minTime(else_.Expires.Add(o.fleet.Margin()), now.Add(observe))}
	w.own, _ = w.readOwn(ctx)
	return w
}

func (w *takeoverWait) readOwn(ctx context.Context) ([]byte, error) {
	rctx, cancel := context.WithTimeout(ctx, takeoverPoll*5)
	defer cancel()
	data, _, err := w.o.store.Get(rctx, core.OwnKey(w.cell))
	return data, err
}

// askNow reports whether the request should ask for the cell now.
func (w *takeoverWait) askNow(ctx context.Context) bool {
	if !time.Now().Before(w.earliest) {
		return true
	}
	data, err := w.readOwn(ctx)
	switch {
	case bucket.OutcomeOf(err) == bucket.NotFound:
		return true
	case err != nil:
		return false
	}
	return !bytes.Equal(data, w.own)
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
