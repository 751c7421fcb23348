// Package server is the node: it checks the bucket, takes its lease,
// loads the live deployment, serves Worker traffic on the public listener
// and peers and operators on the internal one, routes each Durable
// Object or built-in cell to its owner (here, through the cell host, or a
// live peer), decides residency (idle eviction, the resident cap, drain
// order), drains on SIGTERM or POST /shutdown, and fences (exit 3) when
// the lease is lost. A cell's own life — acquire, restore, replicate, the
// output gate, release — is package host's.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/diagnose"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/httpcache"
	"github.com/celldgo/celld/metrics"
	"github.com/celldgo/celld/wake"
)

// Options configure a node.
type Options struct {
	Store          bucket.Store
	Node           string
	Listen         string
	InternalListen string
	Advertise      string
	Version        string
	TTL            time.Duration
	Logger         *slog.Logger
	// WaitForPrevious waits for a live session holding the same node name
	// to expire (a supervisor restart); otherwise start fails at once
	// (celld dev refusing a second instance).
	WaitForPrevious bool
	// Poll is how often deploy/current.json is checked. Default 1s.
	Poll time.Duration
	// OnReady is called once the node serves, with its listener addresses.
	OnReady func(public, internal string)
	// StateDir holds one SQLite file per resident cell (CELLD_WATCH).
	// Default ".celld/state".
	StateDir string
	// IdleEvict stops a cell idle this long (CELLD_IDLE_EVICT_S). Default 5m.
	IdleEvict time.Duration
	// QueueLease is how long a queue batch is leased to its handler
	// (CELLD_QUEUE_LEASE_MS). Default 5m.
	QueueLease time.Duration
	// MaxResident refuses new activations beyond this many resident cells
	// (CELLD_MAX_RESIDENT_CELLS); 0 is no limit.
	MaxResident int
	// LTXRetention deletes LTX history below the newest snapshot once this
	// old (CELLD_LTX_RETENTION_SECS); 0 keeps everything.
	LTXRetention time.Duration
	// Releases bounds the cell releases in flight during a drain
	// (CELLD_RELEASES). Default 128.
	Releases int
	// DrainTimeout bounds a drain (CELLD_SHUTDOWN_DRAIN_MS). Default 25s.
	DrainTimeout time.Duration
	// Clock is what the node's residency decisions read (idle eviction,
	// the cache of cells owned elsewhere, drain deadlines, retention
	// ages). Default time.Now; tests set one. Leases keep the real clock.
	Clock func() time.Time
	// Builtins are the built-in cell kinds (d1:, kv:) the node hosts.
	// Default: DefaultBuiltins().
	Builtins []host.Kind
	// Hibernate: a Durable Object idle this long drops its isolate and
	// stays resident; its next event re-runs the constructor. Default
	// worker.DefaultHibernateAfter; negative: never.
	Hibernate time.Duration
	// MaxCellBytes bounds the database an LTX object read from the bucket
	// may claim (CELLD_MAX_CELL_MB); a restore refuses one past it. 0:
	// cell.DefaultMaxCellBytes.
	MaxCellBytes int64
	// Listener and InternalListener, when set, are already bound to Listen
	// and InternalListen (the CLI binds them first, to refuse a taken
	// address before anything else); Run closes them.
	Listener, InternalListener net.Listener
	// SkewMargin is how long past a peer's published lease expiry this
	// node waits before counting it dead (CELLD_SKEW_MARGIN_MS). Default
	// 5s. A lease seen unchanged for TTL + 1% counts as dead sooner.
	SkewMargin time.Duration
	// AssetCacheDir and AssetCacheBytes place and bound the node's static
	// asset cache (CELLD_ASSET_CACHE_DIR, CELLD_ASSET_CACHE_BYTES).
	AssetCacheDir   string
	AssetCacheBytes int64
	// CacheBytes bounds the node's in-memory Cache API store
	// (CELLD_CACHE_BYTES). Default httpcache.DefaultMaxBytes.
	CacheBytes int64
	// Dev holds what celld dev adds to a node; nil for a fleet node.
	Dev *DevOptions
	// WakerTick is how often the node holding the waker role scans the due
	// wake entries (CELLD_WAKER_TICK_MS). Default wake.DefaultTick.
	WakerTick time.Duration
	// AccessLog logs one line per public request once it is answered
	// (CELLD_ACCESS_LOG; always on in celld dev): method, path, status,
	// duration_ms, bytes, request_id, with "source"="access".
	AccessLog bool
	// MaxWebSockets refuses a WebSocket handshake (503) beyond this many
	// open client sockets (CELLD_MAX_WEBSOCKETS); 0 is no limit.
	MaxWebSockets int
	// MaxRequestBody caps one request's body, enforced while it streams
	// (413) (CELLD_MAX_BODY_MB). Default DefaultMaxRequestBody.
	MaxRequestBody int64
	// TakeoverWait bounds how long a request for a cell whose owner is
	// gone (lease lapsed, or unreachable) waits for this node to take it
	// over, instead of failing at once (CELLD_TAKEOVER_WAIT_MS); within
	// it, a request waits at most the owner's remaining lease plus the
	// skew margin. 0: DefaultTakeoverWait; negative: no wait.
	TakeoverWait time.Duration
	// MaxConns caps each listener's connections (CELLD_MAX_CONNS): at the
	// cap a new connection displaces the longest idle one, and when all
	// are busy a few more answer only health and /state. 0:
	// DefaultMaxConns().
	MaxConns int
	// MaxOpenCells bounds the resident cells whose SQLite files are open
	// at once (CELLD_MAX_OPEN_CELLS); beyond it the least recently used
	// idle ones close them until their next event (cell.Pool). 0:
	// DefaultMaxOpenCells(MaxConns).
	MaxOpenCells int
	// BodyMemory bounds the request-body bytes in flight on the node, both
	// listeners together (CELLD_BODY_MEMORY_MB); a request that finds no
	// room within 10 s is refused (503). Default DefaultBodyMemory, and
	// never below MaxRequestBody.
	BodyMemory int64
	// Durability is "bucket" (default) or "fleet" (CELLD_DURABILITY;
	// fleet.go), with FleetUpload and FleetTransfer
	// (CELLD_FLEET_UPLOAD_MS, _TRANSFER_MS), RecoveryRetry and
	// RecoveryRetries (CELLD_RECOVERY_RETRY_MS, _RETRIES).
	Durability      string
	FleetUpload     time.Duration
	FleetTransfer   time.Duration
	RecoveryRetry   time.Duration
	RecoveryRetries int
}

// DevOptions are celld dev's additions to a node.
type DevOptions struct {
	// OnLoadError hears once of a deployment that failed to load; the
	// previous one keeps serving.
	OnLoadError func(version string, err error)
	// HTMLErrors answers a browser (Accept: text/html) whose request made
	// the Worker throw with an HTML page instead of the plain 500.
	HTMLErrors bool
	// TestScheduled adds wrangler dev --test-scheduled's /__scheduled
	// route (/cdn-cgi/handler/scheduled is always there in dev).
	TestScheduled bool
}

// testNodeHook, set only by tests and benchmarks of this package, sees
// every node Run makes.
var testNodeHook func(*node)

// node is a running server.
type node struct {
	opts    Options
	log     *slog.Logger
	metrics *metrics.Metrics
	fleet   *fleet.Node
	apps    *apps
	objects *objects

	advertise      string
	pubCap, intCap *connCap // the listeners' connection caps
	started        time.Time
	shutdown       chan shutdownRequest // POST /shutdown

	requests   requestCounter   // public Worker requests and their 5xx, for /state
	durability *fleetDurability // nil in bucket mode
}

// FenceFleetTail is the fence reason of a node that stopped a cell with
// fleet-acknowledged writes it could not flush to the bucket.
const FenceFleetTail = "fleet_tail_unflushed_fence"

// ErrFenced is returned by Run when the node fenced itself.
var ErrFenced = errors.New("SELF-FENCE")

// FenceError carries the fence reason.
type FenceError struct{ Reason string }

func (e *FenceError) Error() string { return "SELF-FENCE: " + e.Reason }
func (e *FenceError) Unwrap() error { return ErrFenced }

// StoreFaultError: the storage test found the store broken.
type StoreFaultError struct{ Fault string }

func (e *StoreFaultError) Error() string {
	return "storage test failed: " + e.Fault + "; the node refuses to run on this store"
}

// Run serves until ctx ends (graceful: release cells, delete the lease) or
// the node fences (a *FenceError).
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	// The node's own registry; its gauges read the node once it exists.
	var cur atomic.Pointer[node]
	m := metrics.New(func() metrics.Snapshot { return cur.Load().metricsSnapshot() })
	o.Store = m.Wrap(o.Store)
	// Bind both listeners before anything touches the bucket: an address
	// that is taken or malformed fails here, having written nothing. From
	// now on they answer — health 503 {"phase":"starting"} — while the
	// storage test runs and the node waits for its lease.
	pub, err := listen(o.Listener, o.Listen, "CELLD_ADDR / --listen")
	if err != nil {
		return err
	}
	defer pub.Close()
	internal, err := listen(o.InternalListener, o.InternalListen, "CELLD_INTERNAL_ADDR / --internal-listen")
	if err != nil {
		return err
	}
	defer internal.Close()
	var pubH, intH switchHandler
	pubH.set(startingHandler(o.Node, nil))
	intH.set(startingHandler(o.Node, m))
	pubCap, intCap := newConnCap(pub, o.MaxConns), newConnCap(internal, o.MaxConns)
	pubSrv, intSrv := newHTTPServer(&pubH, pubCap), newHTTPServer(&intH, intCap)
	go pubSrv.Serve(pubCap)
	go intSrv.Serve(intCap)
	defer pubSrv.Close()
	defer intSrv.Close()

	rep, err := diagnose.Run(ctx, o.Store, diagnose.Options{})
	if err != nil {
		return err
	}
	for _, c := range rep.Checks {
		switch c.Status {
		case diagnose.StatusFail:
			return &StoreFaultError{Fault: c.Name + ": " + c.Fault}
		case diagnose.StatusWarn:
			log.Warn("storage test inconclusive; starting anyway", "check", c.Name, "detail", c.Fault)
		}
	}
	if err := fleet.EnsureFormat(ctx, o.Store); err != nil {
		return err
	}
	if err := wake.EnsureFormat(ctx, o.Store); err != nil {
		return err
	}
	secret, err := fleet.PeerSecret(ctx, o.Store)
	if err != nil {
		return err
	}
	advertise := o.Advertise
	if advertise == "" {
		advertise = internal.Addr().String()
	}
	if o.StateDir == "" {
		o.StateDir = filepath.Join(".celld", "state")
	}
	fd, err := newFleetDurability(o, secret, log)
	if err != nil {
		return err
	}
	if fd != nil {
		// Followers' seal requests are answered from now on: a node
		// restarting with others lets them recover from its disk first.
		startMux := http.NewServeMux()
		fd.routes(startMux, secret)
		startMux.Handle("/", startingHandler(o.Node, m))
		intH.set(startMux)
		defer fd.close()
	}
	// A preserve drain left this node's session and cells for us.
	preserved, err := takeResume(o.StateDir, o.Node)
	if err != nil {
		log.Warn("resume file unreadable; starting fresh", "err", err)
		preserved = nil
	}
	fcfg := fleet.Config{Node: o.Node, Advertise: advertise, Version: o.Version, TTL: o.TTL, Margin: o.SkewMargin,
		WaitForPrevious: o.WaitForPrevious, Logger: log, OnRenewal: m.LeaseRenewal, Durability: durabilityMode(o.Durability)}
	if preserved != nil {
		fcfg.ResumeSession = preserved.Session
	}
	if fd != nil {
		fcfg.Recover = fd.rec.Recover
	}
	fn, err := fleet.Start(ctx, o.Store, fcfg)
	if err != nil {
		return err
	}
	if err := checkModes(ctx, o.Store, o.Node, fcfg.Durability); err != nil {
		fn.Close(context.WithoutCancel(ctx))
		return err
	}
	if o.IdleEvict <= 0 {
		o.IdleEvict = 5 * time.Minute
	}
	if o.MaxCellBytes > 0 {
		cell.MaxCellBytes = o.MaxCellBytes
	}
	objs := newObjects(o.Store, fn, o.StateDir, o.IdleEvict, log)
	objs.metrics = m
	objs.host.OnGateWait = m.GateWait
	objs.peer = newPeer(secret, o.Node, objs)
	objs.takeoverWait = o.TakeoverWait
	if o.TakeoverWait == 0 {
		objs.takeoverWait = DefaultTakeoverWait
	}
	if o.MaxRequestBody > 0 {
		objs.peer.maxBody = o.MaxRequestBody
	}
	if o.BodyMemory <= 0 {
		o.BodyMemory = DefaultBodyMemory
	}
	objs.peer.bodies = newBodyBudget(max(o.BodyMemory, objs.peer.maxBody))
	objs.max = o.MaxResident
	if o.MaxOpenCells <= 0 {
		o.MaxOpenCells = DefaultMaxOpenCells(o.MaxConns)
	}
	objs.host.UsePool(cell.NewPool(o.MaxOpenCells))
	if !alarmPrepOff {
		objs.prep = newAlarmPrep(o.MaxOpenCells)
	}
	objs.queueLease = queueLease
	if o.QueueLease > 0 {
		objs.queueLease = o.QueueLease
	}
	objs.retention = o.LTXRetention
	objs.hibernate = o.Hibernate
	objs.ws.max = o.MaxWebSockets
	objs.wake = wake.NewPublisher(o.Store, log)
	objs.waker = wake.NewWaker(wake.WakerConfig{Store: o.Store, Node: o.Node, Session: fn.Session(), Tick: o.WakerTick,
		Wake: objs.wakeCell, Skip: objs.skipWake, Log: log})
	if o.Builtins == nil {
		o.Builtins = DefaultBuiltins()
	}
	objs.builtins = host.NewRegistry(o.Builtins...)
	if fd != nil {
		fd.started(fn, objs, log, preserved != nil)
	}
	if o.Clock != nil {
		objs.now = o.Clock
	}
	if o.Releases <= 0 {
		o.Releases = 128
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 25 * time.Second
	}
	n := &node{opts: o, log: log, metrics: m, fleet: fn, apps: &apps{store: o.Store, log: log, objects: objs, syncCtx: ctx, cache: httpcache.New(o.CacheBytes)}, objects: objs,
		advertise: advertise, shutdown: make(chan shutdownRequest, 1), pubCap: pubCap, intCap: intCap, durability: fd}
	if n.apps.assetCache, err = newAssetCache(n.apps, o); err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		fn.Close(cctx)
		return err
	}
	if o.Dev != nil {
		n.apps.onLoadError = o.Dev.OnLoadError
	}
	cur.Store(n)
	if testNodeHook != nil {
		testNodeHook(n)
	}
	if err := n.apps.refresh(ctx); err != nil && ctx.Err() == nil && errors.Is(err, bucket.ErrUnavailable) {
		// The bucket went away right after the lease was taken: serve
		// (503 until a deployment loads), let the watch loop retry, and
		// fence if the lease cannot be kept — as at any other moment.
		log.Warn("deployment not loaded yet; retrying", "err", err)
	} else if err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cerr := fn.Close(cctx)
		if ctx.Err() != nil {
			// Stopped (SIGTERM, SIGINT) while starting: nothing was
			// served, the lease is dropped; a clean exit.
			log.Info("stopped while starting", "node", o.Node)
			return cerr
		}
		return err
	}
	if preserved != nil {
		objs.resume(ctx, preserved)
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	go n.apps.watch(wctx, o.Poll)
	go objs.evictLoop(wctx)
	go objs.waker.Run(wctx)
	go objs.retainLoop(wctx, retainEvery(o.LTXRetention))
	n.started = time.Now()
	log.Info("node serving", "node", o.Node, "session", fn.Session(), "listen", pub.Addr().String(), "internal", internal.Addr().String(), "advertise", advertise)

	pubMux := http.NewServeMux()
	pubMux.Handle("/", n.publicWrap(http.HandlerFunc(n.serveWorker)))
	pubMux.HandleFunc("GET /__celld/health", func(w http.ResponseWriter, r *http.Request) {
		if !fn.Serving() || objs.drain.active.Load() {
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "draining": objs.drain.active.Load()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	intMux := http.NewServeMux()
	objs.peer.routes(intMux)
	var lostTail chan error
	if fd != nil {
		fd.routes(intMux, secret)
		lostTail = fd.lost
	}
	intMux.HandleFunc("GET /state", n.serveState)
	intMux.HandleFunc("POST /shutdown", n.serveShutdown)
	intMux.Handle("GET /metrics", m.Handler())
	// Trigger the Worker's scheduled() by hand: the internal listener
	// only on a fleet node; celld dev also on its public one (cron.go).
	intMux.HandleFunc("POST /__scheduled", n.serveScheduled(false))
	if o.Dev != nil {
		pubMux.Handle("/cdn-cgi/handler/scheduled", n.publicWrap(n.serveScheduled(false)))
		if o.Dev.TestScheduled {
			pubMux.Handle("/__scheduled", n.publicWrap(n.serveScheduled(true)))
		}
	}
	pubH.set(pubMux)
	intH.set(n.internalWrap(intMux))
	if o.OnReady != nil {
		o.OnReady(pub.Addr().String(), internal.Addr().String())
	}

	select {
	case <-fn.Fenced():
		// Write nothing more; exit at once.
		m.SelfFence(fn.FenceReason())
		return &FenceError{Reason: fn.FenceReason()}
	case err := <-lostTail:
		// A cell's fleet-acknowledged tail may be on followers only: end
		// the session without releasing anything more, so that its
		// successor's recovery gate collects the tails.
		log.Error("SELF-FENCE: "+FenceFleetTail, "node", o.Node, "err", err)
		fn.Abandon()
		return &FenceError{Reason: FenceFleetTail}
	case <-ctx.Done():
		log.Info("shutting down", "node", o.Node, "cause", "signal")
		return n.drainAndStop(pubSrv, intSrv, false)
	case req := <-n.shutdown:
		log.Info("shutting down", "node", o.Node, "cause", "POST /shutdown")
		return n.drainAndStop(pubSrv, intSrv, req.preserve)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
