// Package fleet is the coordination shared by `celld serve` and the CLI:
// node leases, cell ownership and epochs, self-fencing, and the fleet's
// format and secret records. Decisions live in the pure core (fleet/core);
// this package is the thin executor that carries its effects out against a
// bucket.Store with a real clock, and hands out per-cell owner contexts
// that are cancelled, with cause ErrNotOwner, the moment a cell is lost or
// the node fences.
package fleet

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
)

// Errors.
var (
	// ErrNotOwner is the cause of an owner context's cancellation.
	ErrNotOwner = errors.New("not the owner of this cell any more")
	// ErrFenced: the node lost its lease and stopped.
	ErrFenced = errors.New("node fenced")
	// ErrUnavailable: an acquisition could not finish now; try again.
	ErrUnavailable = errors.New("cell unavailable")
	// ErrClosed: the node was closed.
	ErrClosed = errors.New("node closed")
)

// ElsewhereError reports a cell owned by another live node.
type ElsewhereError struct {
	Cell, Node, Advertise string
	Expires               time.Time // the owner's published lease expiry
	// Observe is how long this node watches the owner's lease unchanged
	// before counting it dead (its TTL and 1%); 0 when not known.
	Observe time.Duration
}

func (e *ElsewhereError) Error() string {
	return fmt.Sprintf("cell %s is owned by live node %s (%s)", e.Cell, e.Node, e.Advertise)
}

// Config of a node or tool lease.
type Config struct {
	Node      string
	Advertise string
	Version   string
	Kind      string // core.KindNode (default) or core.KindTool
	// Durability is published in the lease: the node's CELLD_DURABILITY.
	Durability string
	// ResumeSession, when set, is the session of this node's previous
	// process, which exited after a preserve drain: the node carries its
	// lease on, and Adopt resumes that process's cells at their epochs.
	ResumeSession string
	TTL           time.Duration
	Margin        time.Duration
	// WaitForPrevious waits for a live session holding the same node name
	// to expire instead of failing at start.
	WaitForPrevious bool
	// OpTimeout bounds each store call; past it a write is ambiguous.
	OpTimeout time.Duration
	Logger    *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// OnRenewal, when set, hears of every lease renewal write (the CAS
	// of nodes/<node>.json) once it settles: its outcome (bucket.Outcome
	// names) and how long it took. Called off the decision loop; it must
	// not block.
	OnRenewal func(outcome string, took time.Duration)
	// Recover, when set (fleet durability), is the takeover recovery gate:
	// before a cell is claimed from a session that did not release it,
	// Recover settles that session's node log (retrying as it sees fit);
	// an error leaves the cell unclaimed (ErrUnavailable).
	Recover func(ctx context.Context, node, session string) error
}

// Node is a running lease holder. All decisions run on one goroutine.
type Node struct {
	cfg     Config
	store   bucket.Store
	m       *core.Machine
	log     *slog.Logger
	events  chan core.Event
	expires atomic.Int64 // confirmed published expiry, unix ms
	session string

	ready      chan struct{}
	readyOnce  sync.Once
	waitingFor string // the session holding our name that we said we wait for (loop goroutine only)
	startErr   error

	fenced     chan struct{}
	fenceCause atomic.Value // string

	done   chan struct{} // loop exited
	stop   context.CancelFunc
	ctx    context.Context
	timers [4]*time.Timer

	mu       sync.Mutex
	owners   map[string]*Owner
	waiters  map[string][]chan core.AcquireResult
	releases map[string][]chan struct{}
	inflight sync.WaitGroup
}

// Owner is this node's ownership of one cell at one epoch.
type Owner struct {
	Cell  string
	Epoch uint64
	etag  string // own.json's as claimed (core.StartCell.ETag)
	ctx   context.Context
	stop  context.CancelCauseFunc
}

// Context is cancelled with cause ErrNotOwner when the cell is lost,
// released or the node fences.
func (o *Owner) Context() context.Context { return o.ctx }

// NewSession returns a random session id.
func NewSession() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Start takes the node's lease and returns once it is held.
func Start(ctx context.Context, store bucket.Store, cfg Config) (*Node, error) {
	if cfg.Node == "" {
		return nil, errors.New("start node: empty node name")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TTL == 0 {
		cfg.TTL = 10 * time.Second
	}
	if cfg.Margin == 0 {
		cfg.Margin = 5 * time.Second
	}
	if cfg.OpTimeout == 0 {
		cfg.OpTimeout = min(cfg.TTL/3, 10*time.Second)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	n := &Node{
		cfg: cfg, store: store, log: cfg.Logger, session: cmp.Or(cfg.ResumeSession, NewSession()),
		events: make(chan core.Event, 256), ready: make(chan struct{}), fenced: make(chan struct{}), done: make(chan struct{}),
		owners: map[string]*Owner{}, waiters: map[string][]chan core.AcquireResult{}, releases: map[string][]chan struct{}{},
	}
	n.m = core.New(core.Config{
		Node: cfg.Node, Session: n.session, Resume: cfg.ResumeSession != "", Advertise: cfg.Advertise, Version: cfg.Version, Kind: cfg.Kind, Durability: cfg.Durability,
		Started: n.nowMS(), TTL: cfg.TTL.Milliseconds(), Margin: cfg.Margin.Milliseconds(), WaitForPrevious: cfg.WaitForPrevious,
		RecoveryGate: cfg.Recover != nil,
	})
	n.ctx, n.stop = context.WithCancel(context.Background())
	go n.loop()
	n.post(core.Start{Now: n.nowMS()})
	select {
	case <-n.ready:
		if n.startErr != nil {
			n.shutdown()
			return nil, n.startErr
		}
		return n, nil
	case <-n.fenced:
		n.shutdown()
		return nil, fmt.Errorf("start node %s: %w: %s", cfg.Node, ErrFenced, n.FenceReason())
	case <-ctx.Done():
		n.shutdown()
		return nil, fmt.Errorf("start node %s: take lease: %w", cfg.Node, context.Cause(ctx))
	}
}

func (n *Node) nowMS() int64 { return n.cfg.Now().UnixMilli() }

// Margin is the skew margin this node adds to a peer's published lease
// expiry before it counts the peer dead.
func (n *Node) Margin() time.Duration { return n.cfg.Margin }

// Observe is how long this node must see a peer's lease unchanged before
// it counts the peer dead whatever the clocks say (the core's rule: a
// TTL and 1%).
func (n *Node) Observe() time.Duration { return n.cfg.TTL + n.cfg.TTL/100 }

// SawLease tells the node that this process read another node's lease
// record l by a read that completed at read: the core's observation of
// that generation (Observe) may start then rather than at the node's own
// first read of it.
func (n *Node) SawLease(l core.Lease, read time.Time) {
	if l.Node == "" || read.IsZero() {
		return
	}
	n.post(core.LeaseSeen{Now: n.nowMS(), Lease: l, Done: read.UnixMilli()})
}

// Session is this process's session id.
func (n *Node) Session() string { return n.session }

// Name is the node name.
func (n *Node) Name() string { return n.cfg.Node }

// Expires is the confirmed published expiry of the lease.
func (n *Node) Expires() time.Time { return time.UnixMilli(n.expires.Load()) }

// Serving reports whether the lease is held now: every routed request
// checks it first.
func (n *Node) Serving() bool {
	select {
	case <-n.fenced:
		return false
	default:
	}
	return n.nowMS() < n.expires.Load()
}

// Fenced is closed when the node fences.
func (n *Node) Fenced() <-chan struct{} { return n.fenced }

// FenceReason is the fence reason, once fenced.
func (n *Node) FenceReason() string {
	s, _ := n.fenceCause.Load().(string)
	return s
}

func (n *Node) post(ev core.Event) {
	select {
	case n.events <- ev:
	case <-n.ctx.Done():
	}
}
