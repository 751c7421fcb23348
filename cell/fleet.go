package cell

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Fleet durability (CELLD_DURABILITY=fleet): a replicator with a Fleet
// sends each batch to the node's replication group first, and counts it
// proven once every member fsynced it (FleetDurable); the bucket upload
// follows behind (write-behind): the Fleet writes the batches of all the
// node's cells into shared log packs soon, and the cell's own upload,
// merging every batch proven since the last one into one object, waits
// Fleet.Delay (or until the batches waiting hold CheckpointFrames pages,
// so the WAL can be checkpointed). A batch the group could not prove (no
// follower, a member gone) is uploaded at once, and its proof is the
// bucket's.
//
// The follower batches and the merged uploads end at the same TXIDs, so
// the objects a recovery uploads from a follower's disk nest inside the
// merged ones (restore takes the furthest-reaching object at each step);
// for the same reason compaction merges are off in this mode (they would
// cut across the merged uploads), and snapshots keep the chain short.

// Fleet is where a fleet-mode replicator sends its batches (package
// fleetlog implements it for a node).
type Fleet interface {
	// Send sends one LTX segment to the replication group — segments go
	// out in the order Send is called, so a cell's batches reach each
	// member in order on its connections — and returns the wait for the
	// verdict: whether every member fsynced it (a fleet proof). false: no
	// proof (no group, or it changed); the bucket upload must prove it.
	Send(ctx context.Context, s Segment) (proven func() bool)
	// Uploaded says the bucket holds cell's segments at epoch through
	// txid: members may drop them.
	Uploaded(cell string, epoch, txid uint64)
	// Delay is how long a proven batch may wait for the cell's own upload.
	Delay() time.Duration
	// Urgent is closed when every proven batch should be uploaded now
	// (the group needs the bucket to hold everything before it can
	// shrink); a fresh channel is returned after each.
	Urgent() <-chan struct{}
}

// Segment is one batch as sent to the group: the LTX file of TXIDs
// Min..Max at Epoch, uploaded (by whoever gets to it) as
// LTXKey(Cell, Epoch, Min, Max). After is the last TXID the bucket held
// when it was sent.
type Segment struct {
	Cell     string
	Epoch    uint64
	Min, Max uint64
	After    uint64
	Data     []byte
}

// FleetMaxSegment is the largest segment sent to the group; a larger batch
// (a big snapshot) is proven by its bucket upload.
const FleetMaxSegment = 4 << 20

type queued struct {
	b      *batch
	proven bool
	at     time.Time
}

// FleetDurable is the last TXID proven on followers' disks or in the bucket.
func (r *Replicator) FleetDurable() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(r.fleetDurable, r.durable)
}

// WaitProof returns when txid is proven: fleet true when by the group's
// fsyncs (no ownership re-read needed), false when by the bucket (the
// caller re-reads ownership). Errors as WaitDurable's.
func (r *Replicator) WaitProof(ctx context.Context, txid uint64) (fleet bool, err error) {
	for {
		r.mu.Lock()
		durable, fd, rerr, closed, changed := r.durable, r.fleetDurable, r.err, r.closed, r.changed
		r.mu.Unlock()
		switch {
		case rerr != nil:
			return false, rerr
		case durable >= txid:
			return false, nil
		case fd >= txid:
			return true, nil
		case closed:
			return false, fmt.Errorf("wait for TXID %d: %w", txid, ErrReplicatorClosed)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false, fmt.Errorf("wait for TXID %d (proven %d): %w", txid, max(durable, fd), context.Cause(ctx))
		}
	}
}

// FleetWindow is how many batches of one cell may be on their way to the
// group at once: the next batch is sent without waiting for the answer
// to the one before (pipelined; the group's members keep each cell's
// range contiguous, holding a batch until its predecessor arrived).
const FleetWindow = 4

// flight is a batch on its way to the group.
type flight struct {
	b      *batch
	done   chan struct{}
	proven bool
}

// runFleet is the group stage of a fleet-mode replicator: the oldest
// batches, up to FleetWindow at once, to the group; their answers are
// taken in batch order, each then into the upload queue. A batch's proof
// counts only once every batch before it was proven too (by the group or
// the bucket): the group's proof of a batch never stands in for an
// earlier one.
func (r *Replicator) runFleet() {
	defer r.wg.Done()
	var flights []*flight
	unproven := uint64(0) // the last TXID of a batch the group did not prove
	for {
		r.mu.Lock()
		for len(flights) < FleetWindow && len(r.pending) > 0 && r.err == nil {
			b := r.pending[0]
			r.pending = r.pending[1:]
			if b == r.open {
				r.open = nil
			}
			if b.full {
				r.lastSnap = max(r.lastSnap, b.max)
			}
			r.uploading = true
			f := &flight{b: b, done: make(chan struct{})}
			flights = append(flights, f)
			after := r.durable
			r.mu.Unlock()
			r.filesMu.RLock()
			data, err := encodeBatch(b, r.state.pageSize, r.wal, r.dbf)
			r.filesMu.RUnlock()
			if err != nil {
				r.fail(fmt.Errorf("encode ltx %d-%d: %w", b.min, b.max, err))
				close(f.done)
			} else if len(data) > FleetMaxSegment {
				close(f.done)
			} else {
				wait := r.cfg.Fleet.Send(r.ctx, Segment{Cell: r.cfg.Cell, Epoch: r.cfg.Epoch, Min: b.min, Max: b.max, After: after, Data: data})
				go func() {
					f.proven = wait()
					close(f.done)
				}()
			}
			r.mu.Lock()
		}
		r.mu.Unlock()
		if len(flights) == 0 {
			select {
			case <-r.kick:
				continue
			case <-r.ctx.Done():
				return
			}
		}
		select {
		case <-flights[0].done:
		case <-r.kick:
			continue // more to send meanwhile
		case <-r.ctx.Done():
			for _, f := range flights {
				<-f.done
			}
			return
		}
		// Every answered batch at the head, in order.
		r.mu.Lock()
		for len(flights) > 0 {
			f := flights[0]
			select {
			case <-f.done:
			default:
				goto waiting
			}
			flights = flights[1:]
			proven := f.proven && unproven <= r.durable
			if !proven {
				unproven = max(unproven, f.b.max)
			}
			if proven && f.b.max > r.fleetDurable {
				r.fleetDurable = f.b.max
				r.notify()
			}
			r.upq = append(r.upq, queued{b: f.b, proven: proven, at: time.Now()})
		}
	waiting:
		r.uploading = len(flights) > 0
		r.mu.Unlock()
		select {
		case r.upKick <- struct{}{}:
		default:
		}
	}
}

// runUploads is the write-behind stage: it uploads the queue as one merged
// object once its oldest batch waited Delay, at once when a batch has no
// fleet proof or the replicator is closing.
func (r *Replicator) runUploads() {
	defer r.wg.Done()
	var timer *time.Timer
	force := false
	// Each cell waits up to a quarter more, so a node's cells written
	// together do not all upload at the same moment.
	jitter := time.Duration(rand.Int64N(int64(r.cfg.Fleet.Delay()/4) + 1))
	for {
		urgent := r.cfg.Fleet.Urgent()
		r.mu.Lock()
		var wait time.Duration
		if len(r.upq) > 0 {
			wait = time.Until(r.upq[0].at.Add(r.cfg.Fleet.Delay() + jitter))
			pages := 0
			for _, q := range r.upq {
				pages += len(q.b.pages)
				if !q.proven {
					wait = 0
				}
			}
			if pages >= CheckpointFrames {
				wait = 0 // the WAL waits for these to be uploaded
			}
			if r.flushing || force {
				wait = 0
			}
		}
		var run []queued
		if len(r.upq) > 0 && wait <= 0 {
			run, r.upq = r.upq, nil
			r.upBusy = true
			force = false
		}
		queuedMore := len(r.upq) > 0
		r.mu.Unlock()
		if run == nil {
			var tc <-chan time.Time
			if queuedMore && wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
				} else {
					timer.Reset(wait)
				}
				tc = timer.C
			}
			select {
			case <-r.upKick:
			case <-urgent:
				force = true
			case <-tc:
			case <-r.ctx.Done():
				return
			}
			continue
		}
		m := mergeBatches(run)
		err := r.ship(m)
		r.mu.Lock()
		r.upBusy = false
		if err == nil {
			r.stats.Segments++
			r.chainUploaded(r.segmentOf(m))
			r.advance(m.max)
		}
		r.mu.Unlock()
		if err != nil {
			return // closing, or failed for good
		}
		r.cfg.Fleet.Uploaded(r.cfg.Cell, r.cfg.Epoch, m.max)
	}
}

// mergeBatches is one batch standing for a run of consecutive ones: from
// the last full batch of the run (a snapshot supersedes what came before),
// every later page image wins.
func mergeBatches(run []queued) *batch {
	start := 0
	for i, q := range run {
		if q.b.full {
			start = i
		}
	}
	run = run[start:]
	if len(run) == 1 {
		return run[0].b
	}
	first := run[0].b
	m := &batch{min: first.min, pre: first.pre, full: first.full, inline: first.inline, pages: map[uint32]pageRef{}}
	for _, q := range run {
		for pg, ref := range q.b.pages {
			m.pages[pg] = ref
		}
		m.max, m.post, m.commit = q.b.max, q.b.post, q.b.commit
	}
	for pg := range m.pages {
		if pg > m.commit {
			delete(m.pages, pg) // the database shrank since
		}
	}
	return m
}
