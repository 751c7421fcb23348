// Package host runs a hosted cell's whole life under a fleet lease — a
// node's (celld serve) or a tool's (celld d1, celld kv): acquire the cell
// (epoch + 1), restore its SQLite file from the bucket, open it, replicate
// every commit under the epoch's prefix, hold every output in the output
// gate until what it could reveal is durable and the ownership is
// re-confirmed, and at the end flush, seal the epoch and release.
//
// This is where celld's two promises are kept for a cell: one writer per
// epoch (the cell is only ever written under an ownership fleet granted,
// and an output leaves only after a re-read of own.json shows the epoch
// is still ours) and nothing acknowledged before it is durable (Gate
// waits for the replicator's upload of every captured commit).
//
// What it deliberately does not decide: which cells stay resident, when an
// idle one is evicted, how many may be resident, in which order a drain
// releases them — that residency policy is the node's (package server).
// It runs no JavaScript: what runs on the cell's database (a Durable
// Object, a built-in handler) is the caller's.
package host

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
)

// Phase is where a cell is in its life, by a stable name that /state
// shows verbatim.
type Phase string

// The phases, in the order a cell passes them. Evicting and Releasing are
// both the stop (flush, seal, release); a node names it after why it
// stops: Releasing when a drain hands the cell on, Evicting otherwise.
const (
	PhaseActivating Phase = "activating" // acquiring ownership (epoch + 1)
	PhaseRestoring  Phase = "restoring"  // rebuilding the file from the bucket
	PhaseOwned      Phase = "owned"      // serving; outputs pass the gate
	PhaseEvicting   Phase = "evicting"   // stopping: flush, seal, release
	PhaseReleasing  Phase = "releasing"  // stopping in a drain
	PhaseStopped    Phase = "stopped"    // closed; released unless preserved or lost
)

// Lease is the ownership side of a fleet lease (a *fleet.Node, of kind
// node or tool).
type Lease interface {
	Acquire(ctx context.Context, cell string) (*fleet.Owner, error)
	Adopt(ctx context.Context, cell string, epoch uint64) (*fleet.Owner, error)
	Release(ctx context.Context, cell string) error
	Confirm(ctx context.Context, cell string, epoch uint64) error
}

var _ Lease = (*fleet.Node)(nil)

// Host opens cells under one lease.
type Host struct {
	store     bucket.Store
	lease     Lease
	log       *slog.Logger
	restoring atomic.Int32 // cells rebuilding from the bucket now

	// OnGateWait, when set, hears of every output that waited in a
	// cell's output gate: "passed", "withheld" (its caller went away) or
	// "refused" (the write or the ownership could not be confirmed), and
	// for how long. Set it before the first Open; it must not block.
	OnGateWait func(outcome string, took time.Duration)

	// Fleet durability (UseFleet): batches go to the replication group
	// first; a gate passes on the group's fsyncs with no ownership
	// re-read (the takeover recovery gate fences the old session
	// instead). lostTail hears of a cell stopped with fleet-acknowledged
	// writes the bucket may not have: it must not be released.
	fleet    Fleet
	lostTail func(cell string, err error)

	// pool bounds the databases open at once (UsePool); nil: no bound.
	pool *cell.Pool
}

// UsePool counts the databases of cells opened from now on against p:
// over its bound, idle ones close their files until their next storage
// call (cell.Pool). What runs on a cell asks for the parks on the cell's
// goroutine: a built-in's Serve does it; a Durable Object's runtime does
// for its database (cell.DB.OnParkRequest).
func (h *Host) UsePool(p *cell.Pool) { h.pool = p }

// Pool is the pool UsePool set, or nil.
func (h *Host) Pool() *cell.Pool { return h.pool }

// Fleet is a node's fleet durability as the host uses it.
type Fleet interface {
	cell.Fleet
	// Active reports that fleet proofs are possible for a cell opened
	// now (the node has, or can recruit, a follower). A cell opened on a
	// node alone replicates as in bucket mode for its whole activation:
	// every write proven by its upload, compaction merges on, nothing
	// sent to a group.
	Active() bool
}

// UseFleet turns fleet durability on for cells opened from now on.
// lostTail is called when a stop could not flush such a cell to the
// bucket (the cell is then left unreleased, for the takeover recovery
// gate of this session's successor); the node must stop the session.
func (h *Host) UseFleet(f Fleet, lostTail func(cell string, err error)) {
	h.fleet, h.lostTail = f, lostTail
}

func (h *Host) gateWaited(outcome string, start time.Time) {
	if h.OnGateWait != nil {
		h.OnGateWait(outcome, time.Since(start))
	}
}

// New returns a host for cells in store owned under lease. A nil log
// discards.
func New(store bucket.Store, lease Lease, log *slog.Logger) *Host {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Host{store: store, lease: lease, log: log}
}

// Restoring is the number of cells restoring from the bucket now.
func (h *Host) Restoring() int { return int(h.restoring.Load()) }

// OpenOptions tune Open.
type OpenOptions struct {
	// Prefetch begins the restore (reading the head record and applying
	// the chain it names) while ownership is being acquired. It is wasted
	// work when a live peer owns the cell, so a caller that recently
	// found the cell elsewhere leaves it off.
	Prefetch bool
}

// Open acquires name (epoch + 1), restores its database at path from the
// bucket, opens it and starts replicating. A cell owned by a live peer is
// a *fleet.ElsewhereError. On any failure after the acquisition the cell
// is released again.
func (h *Host) Open(ctx context.Context, name, path string, opt OpenOptions) (*Cell, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	var pending *cell.PendingRestore
	if opt.Prefetch {
		pending = cell.PrepareRestore(ctx, h.store, name, path)
	}
	owner, err := h.lease.Acquire(ctx, name)
	if err != nil {
		if pending != nil {
			pending.Cancel()
		}
		return nil, err
	}
	// The bucket is the truth: rebuild the file from the newest epoch's
	// chain before anything runs on it.
	h.restoring.Add(1)
	var info cell.RestoreInfo
	if pending != nil {
		info, err = pending.Restore(ctx, owner.Epoch, h.log)
	} else {
		info, err = cell.Restore(ctx, h.store, name, path)
	}
	h.restoring.Add(-1)
	if err != nil {
		return nil, h.abandon(name, fmt.Errorf("restore: %w", err))
	}
	return h.start(name, path, owner, info)
}

// Resume takes name back at the epoch this lease's previous process left
// it owned at (a preserve drain), from the local file at path, which
// stands at from: no restore.
func (h *Host) Resume(ctx context.Context, name, path string, from cell.RestoreInfo) (*Cell, error) {
	owner, err := h.lease.Adopt(ctx, name, from.Epoch)
	if err != nil {
		return nil, err
	}
	return h.start(name, path, owner, from)
}

// start opens the restored file and its replicator, which continues the
// chain at the owner's epoch.
func (h *Host) start(name, path string, owner *fleet.Owner, from cell.RestoreInfo) (*Cell, error) {
	db, err := cell.Open(path)
	if err != nil {
		return nil, h.abandon(name, fmt.Errorf("open %s: %w", path, err))
	}
	db.JoinPool(h.pool)
	var fl cell.Fleet
	if h.fleet != nil && h.fleet.Active() {
		fl = h.fleet
	}
	repl, err := cell.NewReplicator(db, cell.ReplicatorConfig{Store: h.store, Cell: name, Epoch: owner.Epoch, From: from, Logger: h.log, Fleet: fl})
	if err != nil {
		db.Close()
		return nil, h.abandon(name, fmt.Errorf("replicate: %w", err))
	}
	c := &Cell{h: h, name: name, owner: owner, db: db, repl: repl, fleet: fl != nil, log: h.log.With("cell", name, "epoch", owner.Epoch)}
	c.ctx, c.cancel = context.WithCancelCause(owner.Context())
	c.confirmed.Store(from.TXID)
	c.phase.Store(PhaseOwned)
	return c, nil
}

// abandon releases a cell acquired for an activation that failed.
func (h *Host) abandon(name string, err error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.lease.Release(ctx, name)
	return err
}
