package server

import (
	"context"
	"time"

	"github.com/celldgo/celld/cell"
)

// With CELLD_LTX_RETENTION_SECS set, a cell's LTX history below its newest
// snapshot is deleted when the cell stops (objects.stopOne) and also, for
// cells that stay resident for long, periodically: a cell that never
// stops still sheds the epochs no restore needs, and, within its current
// epoch, every object another one covers (cell.PruneEpoch).

// retainEvery is how often resident cells are pruned: half the retention,
// at least a minute, at most an hour. A variable for tests.
var retainEvery = func(retention time.Duration) time.Duration {
	return min(max(retention/2, time.Minute), time.Hour)
}

func (o *objects) retainLoop(ctx context.Context, every time.Duration) {
	if o.retention <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			o.retainResident(ctx)
		}
	}
}

// retainResident prunes every resident cell, one at a time (the listing
// and deletes of a pass are background work, never a burst).
func (o *objects) retainResident(ctx context.Context) {
	o.mu.Lock()
	rs := make([]*resident, 0, len(o.residents))
	for _, r := range o.residents {
		rs = append(rs, r)
	}
	o.mu.Unlock()
	for _, r := range rs {
		if ctx.Err() != nil || o.drain.active.Load() {
			return
		}
		if !r.hc.Owned() {
			continue
		}
		// A cell resident for long writes its history into one epoch:
		// prune what is covered there too.
		o.retain(ctx, r, true)
	}
}

// retain deletes r's LTX history no restore needs: the older epochs
// (cell.Retire) and, with current, what is covered in its own epoch
// (cell.PruneEpoch). Failures are logged; the next pass tries again.
func (o *objects) retain(ctx context.Context, r *resident, current bool) {
	confirm := r.hc.ConfirmOwnership
	report := func(what string, n int, err error) {
		switch {
		case err != nil:
			r.hc.Log().Warn(what, "err", err)
		case n > 0:
			r.hc.Log().Debug(what, "objects", n)
		}
	}
	n, err := cell.Retire(ctx, o.store, r.cell, o.retention, o.now(), confirm)
	report("retire old LTX history", n, err)
	if current {
		n, err = cell.PruneEpoch(ctx, o.store, r.cell, r.hc.Epoch(), o.retention, o.now(), confirm)
		report("prune LTX history of the current epoch", n, err)
	}
}
