package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/cron"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/metrics"
	"github.com/celldgo/celld/queue"
	"github.com/celldgo/celld/wake"
	"github.com/celldgo/celld/worker"
)

// objects hosts Durable Object cells on this node: it activates a cell
// through the cell host (epoch + 1, restore, replicate, output gate),
// starts the object on the live deployment's runtime, and stops it when
// idle, when ownership ends, or when the deployment changes. The policy
// of which cells stay resident is here; a cell's life is package host's.
type objects struct {
	store    bucket.Store
	fleet    *fleet.Node
	host     *host.Host
	stateDir string
	idle     time.Duration
	max      int // resident cells allowed (0: no limit)
	// retention, when > 0, deletes LTX history no restore needs (epochs
	// below the newest snapshot) once it is this old, when a cell stops.
	retention time.Duration
	// hibernate is worker.Config.HibernateAfter for Durable Objects: idle
	// this long, an object drops its isolate but stays resident (0: the
	// worker default; negative: never).
	hibernate time.Duration
	log       *slog.Logger
	metrics   *metrics.Metrics // nil: none (tests that build objects alone)
	// now is the clock every decision here reads (idle eviction, the
	// remote cache, drain deadlines): time.Now unless a test sets one.
	now func() time.Time

	peer *peer // set once the peer secret is known
	// builtins are the built-in cell kinds hosted here ("d1", "kv").
	builtins *host.Registry

	mu         sync.Mutex
	remotes    map[string]remoteEntry // cells owned by live peers, briefly cached
	app        *app
	residents  map[string]*resident
	activating map[string]*activation
	stopping   map[string]chan struct{}
	releasing  map[string]bool // the stopping cells a drain is releasing

	drain drainState

	queueLease  time.Duration   // queues.go
	wake        *wake.Publisher // wake entries of alarms (nil: none)
	waker       *wake.Waker
	alarmsFired atomic.Int64
	late        lateness       // alarms.go
	prep        *alarmPrep     // alarm preparation (alarmprep.go); nil: none
	unavailable unavailableLog // unavailable.go
	ws          wsCount        // client WebSockets (websocket.go)
	// takeoverWait bounds how long a request waits for a cell whose owner
	// is gone to be taken over here (takeover.go); 0: no wait.
	takeoverWait time.Duration
	down         downOwners // owners found unreachable (takeover.go)

	changeMu sync.Mutex
	changed  chan struct{} // closed (and replaced) when a resident's load or the resident set changes
}

var _ worker.ObjectHost = (*objects)(nil)

// ErrFull: the node holds CELLD_MAX_RESIDENT_CELLS cells and refuses to
// activate another (503 to an HTTP caller, even when a Worker's call met
// it and the Worker threw: it is a worker.ErrUnavailable).
var ErrFull error = fullError{}

type fullError struct{}

func (fullError) Error() string        { return "node is full" }
func (fullError) Is(target error) bool { return target == worker.ErrUnavailable }

type resident struct {
	cell, class, id string
	app             *app
	obj             *worker.Object // nil for a built-in cell
	bi              *host.Builtin  // set for a built-in cell
	hc              *host.Cell
	o               *objects
	lastUsed        atomic.Int64 // unix nanos, on o.now
	inflight        atomic.Int32 //

	alarm residentAlarm // alarms.go
	queue *queueState   // a queue cell's delivery (queues.go); nil otherwise
}

type activation struct {
	done chan struct{}
	r    *resident
	err  error
}

func newObjects(store bucket.Store, f *fleet.Node, stateDir string, idle time.Duration, log *slog.Logger) *objects {
	return &objects{store: store, fleet: f, host: host.New(store, f, log), stateDir: stateDir, idle: idle, log: log, now: time.Now, changed: make(chan struct{}),
		residents: map[string]*resident{}, activating: map[string]*activation{}, stopping: map[string]chan struct{}{}, releasing: map[string]bool{},
		remotes: map[string]remoteEntry{}}
}

// bindings configures the runtime of dep: its namespace bindings resolve
// stubs through this host.
func (o *objects) configure(cfg *worker.Config, dep *deploy.Deployment) {
	ns := map[string]string{}
	for _, b := range dep.Manifest.DurableObjects.Bindings {
		ns[b.Name] = b.ClassName
	}
	cfg.DurableObjects = ns
	cfg.Objects = o
	cfg.OutputGate = o.outputGate
	cfg.HibernateAfter = o.hibernate
}

// use makes ap the deployment new activations run on.
func (o *objects) use(ap *app) {
	o.mu.Lock()
	o.app = ap
	o.mu.Unlock()
	if ap != nil {
		go o.activateConsumers(ap) // queues.go
	}
}

// retire stops every object running on ap (they reactivate, at a new
// epoch, on the next deployment when next addressed).
func (o *objects) retire(ap *app) {
	o.mu.Lock()
	var victims []*resident
	for _, r := range o.residents {
		if r.app == ap {
			victims = append(victims, o.detach(r))
		}
	}
	o.mu.Unlock()
	o.stopAll(victims, "deployment replaced")
}

// remoteEntry remembers a live peer owning a cell, so that repeated
// calls skip reading own.json and the owner's lease.
type remoteEntry struct {
	h       remote
	expires time.Time
}

// remoteTTL bounds how long a peer's ownership is trusted without a re-read;
// a wrong guess costs one 421 and a retry.
const remoteTTL = 2 * time.Second

// Object returns a handle on the object (class, id): resident here,
// activated here, or owned by a live peer and reached over signed HTTP.
func (o *objects) Object(ctx context.Context, class, id string) (worker.ObjectHandle, error) {
	name := class + ":" + id
	o.mu.Lock()
	if e, ok := o.remotes[name]; ok && o.now().Before(e.expires) {
		o.mu.Unlock()
		return e.h, nil
	}
	o.mu.Unlock()
	h, err := o.local(ctx, class, id)
	var else_ *fleet.ElsewhereError
	// An owner that is gone but not yet counted dead: wait for the
	// takeover (bounded) rather than fail (takeover.go).
	var w *takeoverWait
	for errors.As(err, &else_) && o.peer != nil {
		waiting, until := o.inTakeover(else_)
		if !waiting {
			break // a live owner: forward, without reading its record
		}
		if w == nil {
			w = o.newTakeoverWait(ctx, name, else_, until)
		}
		if !time.Now().Before(w.until) {
			break
		}
		if serr := sleepCtx(ctx, takeoverPoll); serr != nil {
			return nil, serr
		}
		if !w.askNow(ctx) {
			continue
		}
		h, err = o.local(ctx, class, id)
	}
	if errors.As(err, &else_) && o.peer != nil {
		r := remote{p: o.peer, node: else_.Node, advertise: else_.Advertise, class: class, id: id, leaseExpires: else_.Expires}
		o.mu.Lock()
		until := o.now().Add(remoteTTL)
		if else_.Expires.Before(until) {
			until = else_.Expires
		}
		o.remotes[name] = remoteEntry{h: r, expires: until}
		o.mu.Unlock()
		return r, nil
	}
	return h, err
}

func (o *objects) forgetRemote(name string) {
	o.mu.Lock()
	delete(o.remotes, name)
	o.mu.Unlock()
}

// local returns the object resident here, activating it if nobody else
// owns it; a cell owned by a live peer is an *fleet.ElsewhereError.
func (o *objects) local(ctx context.Context, class, id string) (worker.ObjectHandle, error) {
	name := class + ":" + id
	for {
		o.mu.Lock()
		if r := o.residents[name]; r != nil && (r.bi != nil || r.app == o.app) && r.hc.Context().Err() == nil {
			o.mu.Unlock()
			if o.drain.active.Load() && fromPeer(ctx) {
				return nil, o.handOff(ctx, r)
			}
			return handle{r}, nil
		}
		if a := o.activating[name]; a != nil {
			o.mu.Unlock()
			select {
			case <-a.done:
				if a.err != nil {
					return nil, a.err
				}
				return handle{a.r}, nil
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		if stop := o.stopping[name]; stop != nil {
			o.mu.Unlock()
			select {
			case <-stop:
				continue
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		if old := o.residents[name]; old != nil {
			victim := o.detach(old) // an object of a retired deployment or a lost owner
			o.mu.Unlock()
			o.stopAll([]*resident{victim}, "replaced")
			continue
		}
		if o.drain.active.Load() {
			// A draining node never acquires a cell: a new request for a
			// just-released cell would undo the handoff.
			o.mu.Unlock()
			return nil, o.drainRoute(ctx, name)
		}
		if o.max > 0 && len(o.residents)+len(o.activating) >= o.max {
			n := len(o.residents)
			o.mu.Unlock()
			o.metrics.Activation("full", 0)
			return nil, fmt.Errorf("activate %s: %w (%d resident, CELLD_MAX_RESIDENT_CELLS=%d)", name, ErrFull, n, o.max)
		}
		ap := o.app
		a := &activation{done: make(chan struct{})}
		o.activating[name] = a
		o.mu.Unlock()

		start := time.Now()
		a.r, a.err = o.activate(ctx, ap, name, class, id)
		o.metrics.Activation(activationOutcome(ctx, a.err), time.Since(start))
		o.mu.Lock()
		delete(o.activating, name)
		if a.err == nil {
			o.residents[name] = a.r
		}
		o.mu.Unlock()
		close(a.done)
		o.signal()
		if a.err != nil {
			return nil, a.err
		}
		go o.watch(a.r)
		a.r.alarmReady()
		if a.r.queue != nil {
			go o.queueKick(a.r)
		}
		return handle{a.r}, nil
	}
}

func (o *objects) activate(ctx context.Context, ap *app, name, class, id string) (*resident, error) {
	k, builtin := o.builtins.Kind(class)
	if ap == nil && !builtin {
		return nil, errors.New("no deployment")
	}
	// The restore from the head record overlaps the ownership write; that
	// work is wasted when a live peer owns the cell, so a cell recently
	// found elsewhere skips it.
	o.mu.Lock()
	_, elsewhere := o.remotes[name]
	o.mu.Unlock()
	path := filepath.Join(o.stateDir, class, id+".sqlite")
	hc, err := o.host.Open(ctx, name, path, host.OpenOptions{Prefetch: !elsewhere})
	if err != nil {
		var elsewhere *fleet.ElsewhereError
		if ctx.Err() != nil || errors.As(err, &elsewhere) {
			// Cancelled, or owned by a live peer (the caller forwards).
			return nil, fmt.Errorf("activate %s: %w", name, err)
		}
		// The cell cannot be served right now (its history does not
		// restore, the store refuses, the claim lost a race): the caller's
		// request is answered 503, and this is logged once per change.
		o.logUnavailable(name, err)
		return nil, fmt.Errorf("activate %s: %w: %w", name, worker.ErrUnavailable, err)
	}
	r, err := o.start(ap, k.Handler, class, id, hc)
	if err != nil {
		return nil, fmt.Errorf("activate %s: %w", name, err)
	}
	o.served(name, hc.Epoch())
	hc.Log().Debug("cell activated")
	return r, nil
}

// start makes a resident of an open cell: its object (a Durable Object
// on ap, or the built-in handler h) is started on the cell's database. On
// failure the cell is stopped (and released).
func (o *objects) start(ap *app, h cell.Handler, class, id string, hc *host.Cell) (*resident, error) {
	r := &resident{cell: hc.Name(), class: class, id: id, hc: hc, o: o}
	if h != nil {
		if class == cron.Kind.Name {
			h = o.cronCell(r, h)
		}
		r.bi = hc.Serve(h)
		if class == queue.Kind.Name {
			o.startQueue(r)
		}
	} else {
		obj, err := ap.rt.NewObjectWith(class, id, hc.DB(), o.objectOptions(r))
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			hc.Stop(ctx, host.PhaseEvicting)
			return nil, err
		}
		r.app, r.obj = ap, obj
	}
	r.touch()
	return r, nil
}

// watch stops a resident when its ownership ends (lost, fenced) or the
// object dies by itself.
func (o *objects) watch(r *resident) {
	var why string
	lost := false
	select {
	case <-r.hc.Context().Done():
		why, lost = context.Cause(r.hc.Context()).Error(), true
	case <-r.objectDone():
		why = "object stopped"
	}
	// A cell still resident when its context ends was not stopped by
	// this node: its ownership was lost or its output gate refused.
	if o.stopResident(r, why) && lost {
		o.metrics.CellFenced()
	}
}

// detach removes r from the resident set and marks it stopping. Call
// with o.mu held.
func (o *objects) detach(r *resident) *resident {
	delete(o.residents, r.cell)
	o.stopping[r.cell] = make(chan struct{})
	return r
}

// stopAll stops objects, closes their databases and releases their cells,
// a bounded number at a time.
func (o *objects) stopAll(rs []*resident, why string) {
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			o.stopOne(r, why)
		}()
	}
	wg.Wait()
}

// stopOne stops a detached resident: the object, then everything
// committed to the bucket, then the database, then ownership.
func (o *objects) stopOne(r *resident, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.closeObject(ctx); err != nil {
		r.hc.Log().Warn("stop object", "err", err)
	}
	r.stopAlarm()
	// Everything committed goes to the bucket before the cell is
	// released, so the next owner restores all of it.
	r.hc.Flush(ctx) // its error is Stop's to report
	if o.retention > 0 && r.hc.Owned() {
		o.retain(ctx, r, false)
	}
	phase := host.PhaseEvicting
	o.mu.Lock()
	if o.releasing[r.cell] {
		phase = host.PhaseReleasing
	}
	o.mu.Unlock()
	r.hc.Stop(ctx, phase)
	r.hc.Log().Debug("cell stopped", "why", why)
	o.mu.Lock()
	if ch := o.stopping[r.cell]; ch != nil {
		close(ch)
		delete(o.stopping, r.cell)
	}
	delete(o.releasing, r.cell)
	o.mu.Unlock()
	o.signal()
}

// evictIdle stops objects idle longer than the idle timeout at now.
func (o *objects) evictIdle(now time.Time) {
	o.mu.Lock()
	var victims []*resident
	for _, r := range o.residents {
		if r.inflight.Load() == 0 && r.busy() == 0 && r.sockets() == 0 && now.Sub(time.Unix(0, r.lastUsed.Load())) >= o.idle && !r.keepForAlarm(now) &&
			!r.keepCron() {
			victims = append(victims, o.detach(r))
		}
	}
	o.mu.Unlock()
	if len(victims) > 0 {
		o.stopAll(victims, "idle")
	}
}

func (o *objects) evictLoop(ctx context.Context) {
	t := time.NewTicker(max(o.idle/4, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			o.evictIdle(o.now())
		}
	}
}

// handle delivers events to a resident and holds every output in the
// output gate.
type handle struct{ r *resident }

func (h handle) Fetch(ctx context.Context, req *worker.Request) (*worker.Response, error) {
	h.r.inflight.Add(1)
	done := h.r.done
	start := time.Now()
	resp, err := h.r.obj.Fetch(ctx, req)
	gerr := h.r.gate(ctx)
	switch {
	case gerr != nil:
		h.r.o.metrics.Request(metrics.KindObjectFetch, metrics.StatusClass(http.StatusServiceUnavailable), time.Since(start))
	case err != nil:
		h.r.o.metrics.Request(metrics.KindObjectFetch, metrics.Outcome(err), time.Since(start))
	default:
		h.r.o.metrics.Request(metrics.KindObjectFetch, metrics.StatusClass(resp.Status), time.Since(start))
	}
	if gerr != nil {
		if resp != nil && resp.Stream != nil {
			resp.Stream.Close()
		}
		done()
		return &worker.Response{Status: http.StatusServiceUnavailable, StatusText: "Service Unavailable",
			Header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}, Body: []byte("celld: the write could not be confirmed durable; retry\n")}, nil
	}
	if err != nil || resp.Stream == nil {
		done()
		return resp, err
	}
	// The object is in use until its streamed body ends (no idle eviction
	// under it), and every chunk passes the gate on its way out.
	resp.Stream = &gatedStream{rc: resp.Stream, r: h.r, ctx: ctx, done: done}
	return resp, nil
}

// gatedStream is a Durable Object's streamed body behind the output gate:
// a chunk the object produced after a write leaves only once that write
// is durable and the cell still ours. A refused chunk ends the body with
// an error, so the client sees a broken response, never a partial one
// that looks whole.
type gatedStream struct {
	rc   io.ReadCloser
	r    *resident
	ctx  context.Context
	once sync.Once
	done func()
}

func (g *gatedStream) Read(p []byte) (int, error) {
	n, err := g.rc.Read(p)
	if n > 0 {
		if gerr := g.r.gate(g.ctx); gerr != nil {
			return 0, gerr
		}
	}
	return n, err
}

func (g *gatedStream) Close() error {
	err := g.rc.Close()
	g.once.Do(g.done)
	return err
}

func (h handle) Call(ctx context.Context, method string, args []byte) ([]byte, error) {
	h.r.inflight.Add(1)
	defer h.r.done()
	start := time.Now()
	res, err := h.r.obj.Call(ctx, method, args)
	gerr := h.r.gate(ctx)
	h.r.o.metrics.Request(metrics.KindRPC, metrics.Outcome(errors.Join(err, gerr)), time.Since(start))
	if gerr != nil {
		return nil, gerr
	}
	return res, err
}

// gate holds an output of r until what it could reveal is durable and
// the cell still ours (host.Cell.Gate); a refusal ends the cell's
// context, and watch stops it.
// The wake entries of the alarm installations reported so far must be in
// the bucket too (alarms.go).
func (r *resident) gate(ctx context.Context) error {
	mark := r.wakeMark()
	if err := r.wakeWait(ctx, mark); err != nil {
		return fmt.Errorf("output of %s withheld: %w", r.cell, err)
	}
	if err := r.hc.Gate(ctx); err != nil {
		return err
	}
	r.wakeConfirmed(mark)
	return nil
}

// stopResident stops r if it is still resident, and reports whether it
// was.
func (o *objects) stopResident(r *resident, why string) bool {
	o.mu.Lock()
	if o.residents[r.cell] != r {
		o.mu.Unlock()
		return false
	}
	v := o.detach(r)
	o.mu.Unlock()
	o.stopAll([]*resident{v}, why)
	return true
}

// touch marks r used now.
func (r *resident) touch() { r.lastUsed.Store(r.o.now().UnixNano()) }

// done ends a request on r: r is used now, one request fewer runs in it,
// and whoever waits for the residents' load to change is told.
func (r *resident) done() {
	r.touch()
	r.inflight.Add(-1)
	r.o.signal()
}

// signal tells every waitChange that the residents changed.
func (o *objects) signal() {
	o.changeMu.Lock()
	close(o.changed)
	o.changed = make(chan struct{})
	o.changeMu.Unlock()
}

// changes is the channel the next signal closes. Take it before checking
// the condition waited for, then waitChange on it.
func (o *objects) changes() <-chan struct{} {
	o.changeMu.Lock()
	defer o.changeMu.Unlock()
	return o.changed
}

// changeFallback bounds a wait for a signal: what no signal announces (an
// object's own background work ending: Busy) is seen by then.
const changeFallback = 10 * time.Millisecond

// waitChange waits until ch (from changes) is closed, changeFallback
// passes or ctx ends.
func (o *objects) waitChange(ctx context.Context, ch <-chan struct{}) error {
	t := time.NewTimer(changeFallback)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}
