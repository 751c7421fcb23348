package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
)

// Cell is one owned, open, replicating cell.
type Cell struct {
	h     *Host
	name  string
	owner *fleet.Owner
	db    *cell.DB
	repl  *cell.Replicator
	fleet bool         // the replicator sends to the fleet log (Host.UseFleet)
	log   *slog.Logger // the host's, with the cell and its epoch

	ctx    context.Context // ends with the ownership, or when the gate refuses
	cancel context.CancelCauseFunc

	confirmed atomic.Uint64 // highest TXID whose output gate passed
	roundMu   sync.Mutex
	round     *confirmRound // the ownership re-read in flight, if any

	phase    atomic.Value // Phase
	flushed  bool         // Flush ran; flushErr is its outcome
	flushErr error
}

// Name is the cell's name ("Class:id", "d1:db", "kv:ns").
func (c *Cell) Name() string { return c.name }

// Epoch is the epoch this cell is owned at.
func (c *Cell) Epoch() uint64 { return c.owner.Epoch }

// DB is the cell's database. Run work on it one caller at a time.
func (c *Cell) DB() *cell.DB { return c.db }

// Path is the database file.
func (c *Cell) Path() string { return c.db.Path() }

// Log is the host's logger with the cell's name and epoch ("cell",
// "epoch"): every line about the cell carries both.
func (c *Cell) Log() *slog.Logger { return c.log }

// Phase is where the cell is in its life.
func (c *Cell) Phase() Phase { return c.phase.Load().(Phase) }

// Context ends when the cell must stop: its ownership ended (lost,
// released, the lease fenced) or the output gate refused an output. Its
// cause says which.
func (c *Cell) Context() context.Context { return c.ctx }

// Owned reports that the lease still owns the cell at its epoch (the
// gate may have refused meanwhile; Context says that).
func (c *Cell) Owned() bool { return c.owner.Context().Err() == nil }

// Stats are the replicator's counters.
func (c *Cell) Stats() cell.ReplicatorStats { return c.repl.Stats() }

// Gate is the output gate: an output that could reveal a write (and so
// any output after a commit not yet confirmed, errors included) waits
// until (a) the LTX covering every captured commit is in the bucket and
// (b) own.json still names this lease at this epoch. If the caller's ctx
// ends first, its output is withheld and the cell is fine; if either
// check fails, the output is withheld and the cell's Context ends: stop
// it.
func (c *Cell) Gate(ctx context.Context) error {
	txid := c.repl.Captured()
	if txid <= c.confirmed.Load() {
		return nil // nothing written since the last confirmation
	}
	start := time.Now()
	err := c.waitProof(ctx, txid)
	if err != nil && ctx.Err() != nil {
		c.h.gateWaited("withheld", start)
		return fmt.Errorf("output of %s withheld: %w", c.name, context.Cause(ctx))
	}
	if err != nil {
		c.h.gateWaited("refused", start)
		c.log.Error("output gate refused", "txid", txid, "err", err)
		c.cancel(fmt.Errorf("output gate: %w", err))
		return fmt.Errorf("output of %s withheld: %w", c.name, err)
	}
	c.h.gateWaited("passed", start)
	return nil
}

// waitProof waits until txid is durable: on the group's fsyncs (fleet
// mode; no re-read), or in the bucket and then confirmed by a re-read of
// own.json.
func (c *Cell) waitProof(ctx context.Context, txid uint64) error {
	if c.fleet {
		fleet, err := c.repl.WaitProof(ctx, txid)
		if err != nil {
			return err
		}
		if fleet {
			for cur := c.confirmed.Load(); txid > cur && !c.confirmed.CompareAndSwap(cur, txid); cur = c.confirmed.Load() {
			}
			return nil
		}
		return c.confirm(ctx, txid)
	}
	if err := c.repl.WaitDurable(ctx, txid); err != nil {
		return err
	}
	return c.confirm(ctx, txid)
}

// confirmRound is one re-read of own.json; it covers every commit that was
// durable when it started.
type confirmRound struct {
	covers uint64
	done   chan struct{}
	err    error
}

// confirm makes sure an ownership re-read that started after txid was
// durable has succeeded. Concurrent outputs share rounds (group commit
// for the ownership check), so 64 writers cost one GET, not 64.
func (c *Cell) confirm(ctx context.Context, txid uint64) error {
	for {
		if txid <= c.confirmed.Load() {
			return nil
		}
		c.roundMu.Lock()
		round := c.round
		if round == nil {
			round = &confirmRound{covers: c.repl.Durable(), done: make(chan struct{})}
			c.round = round
			c.roundMu.Unlock()
			// A round serves many callers: it must not end with any one
			// caller's context.
			cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			round.err = c.h.lease.Confirm(cctx, c.name, c.owner.Epoch)
			cancel()
			if round.err == nil {
				for cur := c.confirmed.Load(); round.covers > cur && !c.confirmed.CompareAndSwap(cur, round.covers); cur = c.confirmed.Load() {
				}
			}
			c.roundMu.Lock()
			c.round = nil
			c.roundMu.Unlock()
			close(round.done)
		} else {
			c.roundMu.Unlock()
			select {
			case <-round.done:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		if round.err != nil {
			return round.err
		}
		if txid <= round.covers {
			return nil
		}
		// That round began before our commit was durable: take the next.
	}
}

// ConfirmOwnership re-reads own.json now and fails unless it still names
// this lease at this epoch (for work outside the gate, such as deleting
// history no restore needs).
func (c *Cell) ConfirmOwnership(ctx context.Context) error {
	return c.h.lease.Confirm(ctx, c.name, c.owner.Epoch)
}

// Flush stops replicating once everything committed is in the bucket
// (within ctx). Call it once what runs on the cell has stopped; a later
// Flush, Stop or Preserve reuses its outcome.
func (c *Cell) Flush(ctx context.Context) error {
	if !c.flushed {
		c.flushed = true
		c.flushErr = c.repl.Close(ctx)
	}
	return c.flushErr
}

// Stop ends the epoch: flush, close the database and, if the cell is still
// owned, seal the epoch's history (so its successor restores without a
// listing) and release. phase is the stop's name while it runs
// (PhaseEvicting or PhaseReleasing). Errors are logged; the flush's is
// returned, since it means committed work may be missing from the bucket.
func (c *Cell) Stop(ctx context.Context, phase Phase) error {
	c.phase.Store(phase)
	defer c.phase.Store(PhaseStopped)
	flushErr := c.Flush(ctx)
	if flushErr != nil {
		c.log.Error("flush cell to the bucket", "err", flushErr)
	}
	if err := c.db.Close(); err != nil {
		c.log.Warn("close cell database", "err", err)
	}
	if flushErr != nil && c.fleet && c.Owned() {
		// Fleet-acknowledged writes may be on followers only: releasing
		// would let a successor restore without them. Leave the record
		// for the recovery gate.
		if c.h.lostTail != nil {
			c.h.lostTail(c.name, flushErr)
		}
		c.cancel(fmt.Errorf("%w: %s stopped unflushed", fleet.ErrNotOwner, c.name))
		return flushErr
	}
	if c.Owned() {
		if flushErr == nil {
			if _, err := c.repl.Seal(ctx); err != nil {
				c.log.Warn("seal cell history", "err", err)
			}
		}
		if err := c.h.lease.Release(ctx, c.name); err != nil {
			c.log.Warn("release cell", "err", err)
			return errors.Join(flushErr, err)
		}
	}
	c.cancel(fmt.Errorf("%w: %s stopped", fleet.ErrNotOwner, c.name))
	return flushErr
}

// Preserve flushes and closes the cell without releasing it (a preserve
// drain: the lease's next process resumes it with Host.Resume). It
// reports where the local file stands; ok is false when it cannot be
// resumed from it (not all of it durable, or the ownership lost).
func (c *Cell) Preserve(ctx context.Context) (pos cell.RestoreInfo, ok bool, err error) {
	c.phase.Store(PhaseReleasing)
	defer c.phase.Store(PhaseStopped)
	err = c.Flush(ctx)
	pos, ok = c.repl.Position()
	if cerr := c.db.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return pos, ok && err == nil && c.Owned(), err
}
