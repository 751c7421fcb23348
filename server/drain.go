package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/server/api"
	"github.com/celldgo/celld/worker"
)

// Graceful drain (SIGTERM, SIGINT, POST /shutdown): health answers 503, new
// requests get 503 with Connection: close, in-flight requests finish, and
// every resident cell is released — flushed to the bucket, own.json set to
// released — with at most Options.Releases releases in flight, a cell
// serving a request once that request ends. Peers take released cells over
// at once: a released record needs no lease wait. A draining node never
// acquires a cell.

// drainState is the drain's progress, read by /state.
type drainState struct {
	active   atomic.Bool
	preserve bool // set before active
	started  time.Time
	deadline time.Time
	cells    atomic.Int64 // resident or activating when the drain began
	released atomic.Int64
	sem      chan struct{} // one slot per release in flight (CELLD_RELEASES)
}

// fromPeerKey marks the context of a request a peer or a command sent.
type fromPeerKey struct{}

func withFromPeer(ctx context.Context) context.Context {
	return context.WithValue(ctx, fromPeerKey{}, true)
}

func fromPeer(ctx context.Context) bool { v, _ := ctx.Value(fromPeerKey{}).(bool); return v }

// handOff answers a peer's request for a cell resident on this draining
// node: the cell is released now (or, if a request is running in it, as
// soon as that ends) and the peer is told to resolve it again, so that it
// takes the cell over instead of keeping it busy here.
func (o *objects) handOff(ctx context.Context, r *resident) error {
	for {
		changed := o.changes()
		o.mu.Lock()
		if o.residents[r.cell] != r {
			stop := o.stopping[r.cell]
			o.mu.Unlock()
			if stop != nil {
				select {
				case <-stop:
				case <-ctx.Done():
					return context.Cause(ctx)
				}
			}
			return o.drainRoute(ctx, r.cell)
		}
		if r.inflight.Load() == 0 && r.busy() == 0 {
			o.detach(r)
			o.releasing[r.cell] = true
			o.mu.Unlock()
			o.drain.sem <- struct{}{}
			o.stopOne(r, "drain (wanted by a peer)")
			<-o.drain.sem
			o.drain.released.Add(1)
			return o.drainRoute(ctx, r.cell)
		}
		o.mu.Unlock()
		if err := o.waitChange(ctx, changed); err != nil {
			return err
		}
	}
}

// drainGrace is how long a drained node keeps answering peers before it
// closes its internal listener.
const drainGrace = 250 * time.Millisecond

// errDraining: the node is draining and acquires no cell.
var errDraining = fmt.Errorf("%w: node is draining and acquires no cells", worker.ErrObjectClosed)

// drainRoute answers a request for a cell this draining node does not hold:
// a live owner elsewhere is named (the call is forwarded there), anything
// else is errDraining.
func (o *objects) drainRoute(ctx context.Context, name string) error {
	ci, err := fleet.LookupCell(ctx, o.store, name, o.now().UnixMilli())
	if err == nil && ci.OwnerLive && ci.Advertise != "" && ci.Own.Session != o.fleet.Session() {
		return &fleet.ElsewhereError{Cell: name, Node: ci.Own.Node, Advertise: ci.Advertise, Expires: time.UnixMilli(ci.LeaseExpires)}
	}
	return errDraining
}

// counts returns the cell counters.
func (o *objects) counts() api.Counters {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := api.Counters{Occupied: len(o.residents), Activating: len(o.activating), Restoring: o.host.Restoring()}
	c.Releasing = len(o.releasing)
	c.ClientWebSockets = o.ws.Open()
	c.Evicting = len(o.stopping) - c.Releasing
	if p := o.host.Pool(); p != nil {
		st := p.Stats()
		c.OpenCells, c.ParkedCells, c.MaxOpenCells, c.Parks = st.Open, st.Parked, st.Max, st.Parks
	}
	for _, r := range o.residents {
		if r.obj != nil && r.obj.Hibernating() {
			c.Hibernating++
		}
		c.WebSockets += r.sockets()
	}
	return c
}

// cells lists the cells for /state.
func (o *objects) cells() []api.Cell {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]api.Cell, 0, len(o.residents)+len(o.activating)+len(o.stopping))
	now := o.now()
	for _, r := range o.residents {
		st := r.hc.Stats()
		out = append(out, api.Cell{Cell: r.cell, Phase: string(r.hc.Phase()), Epoch: r.hc.Epoch(),
			IdleMS: now.Sub(time.Unix(0, r.lastUsed.Load())).Milliseconds(), Inflight: int(r.inflight.Load()),
			Hibernating: r.obj != nil && r.obj.Hibernating(), WebSockets: r.sockets(),
			Replication: &api.Replication{CapturedTXID: st.Captured, DurableTXID: st.Durable, Segments: st.Segments,
				Merges: st.Merges, Snapshots: st.Snapshots, Bytes: st.Bytes, Retries: st.Retries}})
	}
	for name := range o.activating {
		out = append(out, api.Cell{Cell: name, Phase: string(host.PhaseActivating)})
	}
	for name := range o.stopping {
		phase := host.PhaseEvicting
		if o.releasing[name] {
			phase = host.PhaseReleasing
		}
		out = append(out, api.Cell{Cell: name, Phase: string(phase)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cell < out[j].Cell })
	return out
}

// beginDrain marks the node draining; it reports false if it already was.
func (o *objects) beginDrain(preserve bool, timeout time.Duration, releases int) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.drain.active.Load() {
		return false
	}
	o.drain.preserve = preserve
	o.drain.sem = make(chan struct{}, releases)
	o.drain.started = o.now()
	o.drain.deadline = o.drain.started.Add(timeout)
	o.drain.cells.Store(int64(len(o.residents) + len(o.activating)))
	o.drain.active.Store(true)
	o.metrics.DrainStarted()
	if o.waker != nil {
		// A draining node wakes nothing: hand the waker role on now, so a
		// peer picks up the alarms of the cells this drain releases.
		go o.waker.Resign(context.Background())
	}
	return true
}

// takeIdle detaches up to n residents serving nothing, marking them
// released-by-drain.
func (o *objects) takeIdle(n int) []*resident {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*resident
	for _, r := range o.residents {
		if len(out) >= n {
			break
		}
		if r.inflight.Load() == 0 && r.busy() == 0 {
			out = append(out, o.detach(r))
			o.releasing[r.cell] = true
		}
	}
	return out
}

// releaseAll is the handoff drain: it releases every resident cell with at
// most limit releases in flight, and returns when none is left or the
// deadline passes.
func (o *objects) releaseAll(deadline time.Time) error {
	sem := o.drain.sem
	for {
		changed := o.changes()
		c := o.counts()
		if c.Occupied == 0 && c.Activating == 0 && c.Releasing == 0 {
			return nil
		}
		if !o.now().Before(deadline) {
			return fmt.Errorf("drain deadline passed with %d resident, %d activating, %d releasing", c.Occupied, c.Activating, c.Releasing)
		}
		if free := cap(sem) - len(sem); free > 0 {
			for _, r := range o.takeIdle(free) {
				sem <- struct{}{}
				go func() {
					defer func() { <-sem }()
					o.stopOne(r, "drain")
					o.drain.released.Add(1)
				}()
			}
		}
		o.waitChange(context.Background(), changed)
	}
}

// quiesce is the preserve drain: it waits until no cell is activating or
// being evicted and no request is running in a cell, keeping ownership.
// Everything committed is flushed to the bucket, but the cells stay owned.
func (o *objects) quiesce(deadline time.Time) error {
	for {
		changed := o.changes()
		c := o.counts()
		busy := 0
		o.mu.Lock()
		for _, r := range o.residents {
			if r.inflight.Load() > 0 || r.busy() > 0 {
				busy++
			}
		}
		o.mu.Unlock()
		if c.Activating == 0 && c.Evicting == 0 && busy == 0 {
			return nil
		}
		if !o.now().Before(deadline) {
			return fmt.Errorf("drain deadline passed with %d activating, %d evicting, %d busy", c.Activating, c.Evicting, busy)
		}
		o.waitChange(context.Background(), changed)
	}
}

// state is the answer of GET /state.
func (n *node) state() api.State {
	o := n.objects
	fn := n.fleet
	st := api.State{
		Node: n.opts.Node, Session: fn.Session(), Version: n.opts.Version, Advertise: n.advertise,
		Health: "ok", Counters: o.counts(), Cells: o.cells(),
		UptimeMS: time.Since(n.started).Milliseconds(), LeaseExpiresMS: fn.Expires().UnixMilli(), NowMS: o.now().UnixMilli(),
	}
	st.CellCount = len(st.Cells)
	st.Requests, st.Errors = n.requests.total.Load(), n.requests.errors.Load()
	o.alarmState(&st)
	st.Durability = n.durability.state()
	st.Deployment, st.LoadFailed, st.LoadError = n.apps.loaded()
	if o.drain.active.Load() {
		st.Draining, st.Health, st.Mode = true, "draining", "handoff"
		if o.drain.preserve {
			st.Mode = "preserve"
		}
		st.DrainStartMS = o.drain.started.UnixMilli()
		st.DrainDeadlineMS = o.drain.deadline.UnixMilli()
		st.DrainCells = int(o.drain.cells.Load())
		st.DrainReleased = int(o.drain.released.Load())
	}
	if !fn.Serving() {
		st.Health = "fenced"
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st.HeapBytes = ms.HeapAlloc
	st.RSSBytes = rss()
	return st
}

// rss is the process's resident set size (Linux; 0 elsewhere).
func rss() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// shutdownRequest is a POST /shutdown: a drain asked for over the operator
// API.
type shutdownRequest struct{ preserve bool }

// serveShutdown starts a drain (POST /shutdown[?handoff=preserve]).
func (n *node) serveShutdown(w http.ResponseWriter, r *http.Request) {
	mode := r.URL.Query().Get("handoff")
	if mode != "" && mode != "preserve" && mode != "release" {
		http.Error(w, fmt.Sprintf("handoff=%q: want preserve, or nothing for a releasing drain", mode), http.StatusBadRequest)
		return
	}
	// The drain is visible (health, /state, refusals) before this answers.
	n.objects.beginDrain(mode == "preserve", n.opts.DrainTimeout, n.opts.Releases)
	select {
	case n.shutdown <- shutdownRequest{preserve: mode == "preserve"}:
	default: // a drain is already under way
	}
	m := "handoff"
	if mode == "preserve" {
		m = "preserve"
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"draining": true, "mode": m})
}

// drainAndStop runs the drain, then stops the listeners and drops the
// lease. It never waits past the drain deadline plus a few bounded steps.
func (n *node) drainAndStop(pub, internal *http.Server, preserve bool) error {
	o := n.objects
	timeout := n.opts.DrainTimeout
	// POST /shutdown has begun it already; the first to begin sets the
	// mode.
	o.beginDrain(preserve, timeout, n.opts.Releases)
	preserve = o.drain.preserve
	deadline := o.drain.deadline
	pub.SetKeepAlivesEnabled(false)
	mode := "handoff"
	if preserve {
		mode = "preserve"
	}
	n.log.Info("draining", "node", n.opts.Node, "mode", mode, "cells", o.drain.cells.Load(), "releases", n.opts.Releases, "timeout", timeout)
	var err error
	if preserve {
		err = o.quiesce(deadline)
		if err == nil {
			err = o.preserveAll(n.opts.Node, n.fleet.Session(), n.advertise)
		}
	} else {
		err = o.releaseAll(deadline)
		if err == nil {
			n.durability.drained(context.Background())
		}
	}
	if err != nil {
		n.log.Warn("drain incomplete", "err", err)
	}
	n.log.Info("drained", "node", n.opts.Node, "mode", mode, "released", o.drain.released.Load(), "took", time.Since(o.drain.started).Round(time.Millisecond))
	o.ws.shutdownAll(later(deadline, time.Now().Add(100*time.Millisecond))) // websocket.go
	// In-flight requests that touch no cell get what is left of the
	// deadline (at least a moment).
	sctx, cancel := context.WithDeadline(context.Background(), later(deadline, time.Now().Add(100*time.Millisecond)))
	pub.Shutdown(sctx)
	cancel()
	if ap := n.apps.current(); ap != nil && !preserve {
		// waitUntil work may finish within the deadline; the exit never
		// waits past it.
		closed := make(chan struct{})
		go func() { ap.close(n.apps); close(closed) }()
		select {
		case <-closed:
		case <-time.After(max(time.Until(deadline), 200*time.Millisecond)):
			n.log.Warn("Worker runtime still busy at the drain deadline; exiting anyway")
		}
	}
	if preserve && err == nil {
		// Keep the lease and the cells: the restart carries them on.
		n.fleet.Abandon()
		return nil
	}
	// For a moment more, peers that still route here get a clean
	// "resolve again" (503 Celld-Undelivered) on a connection closed after
	// the answer, rather than a connection cut while they write on it.
	if !preserve && time.Until(deadline) > drainGrace {
		time.Sleep(drainGrace)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	closeInternal := func() {
		// Peer calls still being answered finish; idle peer connections
		// are closed.
		ictx, icancel := context.WithTimeout(context.Background(), time.Second)
		internal.Shutdown(ictx)
		icancel()
	}
	if err != nil {
		// Cells may still be owned here: keep answering for them until
		// the lease is gone.
		closeInternal()
		return n.fleet.Close(cctx)
	}
	// Every cell is released, so nothing a peer sends from now on can run
	// here. The lease goes first: a peer whose call is cut by the closing
	// listener finds it gone and knows the call never ran (see
	// remote.send).
	cerr := n.fleet.Close(cctx)
	closeInternal()
	return cerr
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// leaseGone reports that node's lease record is deleted (a drain's last
// step) while the lease we resolved it under had not yet expired: the node
// left cleanly rather than crashing or being cut off, since a crashed node
// leaves its record until another node replaces it.
func (o *objects) leaseGone(ctx context.Context, node string, resolvedExpiry time.Time) bool {
	if !o.now().Before(resolvedExpiry) {
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, _, err := o.store.Get(rctx, core.LeaseKey(node))
	return bucket.OutcomeOf(err) == bucket.NotFound
}
