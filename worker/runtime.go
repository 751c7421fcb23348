package worker

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/httpcache"
	"github.com/dop251/goja"
)

// Errors.
var (
	// ErrClosed is returned by Fetch once Close has been called.
	ErrClosed = errors.New("worker runtime closed")
	// ErrNoDefaultExport means the script's module has no default export,
	// so there is no fetch handler to call.
	ErrNoDefaultExport = errors.New("script has no default export (expected `export default { fetch(request, env, ctx) { ... } }`)")
)

// Defaults.
const (
	// DefaultWaitUntilLimit bounds how long Close waits for ctx.waitUntil
	// work and requests still in flight.
	DefaultWaitUntilLimit = 30 * time.Second
	// DefaultTaskTimeout is Config.TaskTimeout's default: workerd's CPU
	// limit for a request on the paid plan.
	DefaultTaskTimeout = 30 * time.Second
)

// Request is an HTTP request handed to a Worker. Body is buffered. A nil
// Body means "no body" (request.body is null in the script); a non-nil
// empty Body is an empty stream.
type Request struct {
	Method string
	URL    string // absolute URL, e.g. "http://localhost/path?query"
	Header http.Header
	Body   []byte
	// Stream, when not nil (Body is then nil), is a body the script reads
	// as it arrives (request.body), a chunk at a time. The runtime closes
	// it when the script is done with it; the caller owns what is behind
	// it and must not end it before Fetch returns (and any streamed
	// answer is read).
	Stream io.ReadCloser
}

// Response is what a Worker answered. A body the script gave whole
// (bytes, text, a Blob, ...) is in Body. A ReadableStream body is in
// Stream instead (Body is then nil): the response is handed over as soon
// as the script returns it, and the body follows as the script produces
// it.
type Response struct {
	Status     int
	StatusText string
	Header     http.Header
	Body       []byte

	// Stream, when not nil, is the body the script is still producing.
	// Each Read waits for the next chunk; io.EOF is the body's end and any
	// other error a stream that failed mid-way (end the HTTP response
	// abruptly: the body is incomplete). The reader must be closed, at the
	// end or when nobody wants the rest: Close cancels the stream in the
	// script (reader.cancel()) and frees the isolate of it. Close may be
	// called while a Read waits, and ends it.
	Stream io.ReadCloser

	// WebSocket, with Status 101, is the socket the script answered a
	// WebSocket handshake with: the host attaches its transport (the
	// upgraded connection) to it, or passes it on.
	WebSocket *Socket

	// Uncaught marks the runtime's own 500: the handler threw (or its
	// promise rejected) instead of answering.
	Uncaught bool
	// Exception, with Uncaught, is what was thrown, with its stack (for
	// celld dev's error page; a fleet node never sends it).
	Exception string
	// Unavailable, with Uncaught, is the first ErrUnavailable refusal a
	// Durable Object call of this request met (nil: none): the handler
	// most likely threw because of it, and the host may answer as it
	// would to a refusal of its own (503) rather than with a 500.
	Unavailable error
	// thrown, with Uncaught, is what a service entrypoint's fetch threw,
	// as its caller's fetch() rethrows it (services.go).
	thrown *Exception
}

// ErrUnavailable is what the Durable Object host wraps when it refuses a
// call for a reason that passes if the caller retries (a full node, say).
// The request whose call was refused learns of it (Response.Unavailable).
var ErrUnavailable = errors.New("temporarily unavailable")

// Binding builds the value of one env binding inside one isolate. It runs
// once per isolate, on the isolate's loop, while the isolate is created.
type Binding func(h *Host) (goja.Value, error)

// Config configures a Runtime.
type Config struct {
	// Vars are the Worker's plain environment variables (wrangler "vars"):
	// strings, numbers, booleans and JSON objects. They appear on env as
	// JSON values.
	Vars map[string]any

	// Bindings are env entries built by the caller (KV, D1, ...), keyed
	// by binding name. A binding wins over a var or Durable Object
	// namespace of the same name.
	Bindings map[string]Binding

	// DurableObjects maps a binding name to the Durable Object class its
	// namespace addresses (wrangler durable_objects.bindings). Stubs reach
	// objects through Objects.
	DurableObjects map[string]string

	// Objects resolves the objects namespace stubs address. Without it a
	// stub call fails.
	Objects ObjectHost

	// OutputGate, when set, is called before an outbound fetch() of a
	// Durable Object leaves the process: it returns once every write the
	// object made is durable (and its ownership confirmed), or an error,
	// and then the fetch fails without being sent. An object's writes are
	// never revealed to the outside before they are safe.
	OutputGate func(ctx context.Context, class, id string) error

	// Isolates is the number of isolates, each a JavaScript heap with its
	// own loop goroutine. Default: GOMAXPROCS.
	Isolates int

	// Logger receives console output and uncaught exceptions.
	// Default: slog.Default().
	Logger *slog.Logger

	// TaskTimeout bounds one uninterrupted stretch of JavaScript (a
	// handler's synchronous part, one timer callback, one batch of
	// microtasks). Past it the script is interrupted with an exception, so
	// an endless loop fails its request instead of wedging the isolate.
	// Default: DefaultTaskTimeout.
	TaskTimeout time.Duration

	// Node is the Worker's Node.js compatibility (deploy.NodeCompat of its
	// compatibility date and flags): which node:* modules require serves
	// and whether Buffer and process are globals. Default: none.
	Node NodeMode
	// NodeProcessEnv fills process.env with the string vars (and the
	// others as JSON), as nodejs_compat does from 2025-04-01
	// (deploy.NodeProcessEnv).
	NodeProcessEnv bool

	// Services are the service bindings (wrangler "services") to this
	// script's own entrypoints, by binding name: env.NAME.fetch() and
	// RPC methods run the entrypoint in one of this runtime's isolates
	// (services.go).
	Services map[string]Service
	// ObjectClasses are the script's Durable Object classes (every live
	// class of its migrations): ctx.exports holds a namespace for each.
	ObjectClasses []string

	// TLSClientConfig, when set, is the base of the TLS client config of
	// cloudflare:sockets connections (say, an operator's CA roots); the
	// server name is the host connected to. Default: the system roots.
	TLSClientConfig *tls.Config

	// Cache is the node's store behind the Cache API (caches.default,
	// caches.open). Without it nothing is ever stored.
	Cache *httpcache.Cache

	// HibernateAfter is how long a Durable Object stays idle (no event,
	// timer or pending work; see objects_hibernate.go) before it drops its
	// isolate; its next event builds it again and re-runs the
	// constructor, as after an eviction on Cloudflare. Storage is
	// untouched. Default DefaultHibernateAfter; negative: never.
	HibernateAfter time.Duration
}

// Runtime runs one Script in a set of isolates.
type Runtime struct {
	script *Script
	// callbacks: token -> *isolate of this runtime's callback owners
	// (objects_callback.go).
	callbacks sync.Map
	cfg       Config
	log       *slog.Logger
	prelude   *preludeSet
	varsJSON  []byte
	isolates  []*isolate
	next      atomic.Uint64
	load      []atomic.Int64 // per isolate: Fetch calls in progress

	ctx    context.Context // outgoing object calls; cancelled by Close
	cancel context.CancelFunc

	objMu   sync.Mutex
	objects map[*Object]struct{} // running objects (NewObject)
	sockets map[*Socket]struct{} // open sockets of the stateless Worker's isolates (under objMu)

	stop      chan struct{}
	closeOnce sync.Once
	closed    atomic.Bool
}

// New starts cfg.Isolates isolates running script. It fails if the script
// throws while it is evaluated or has no default export.
func New(script *Script, cfg Config) (*Runtime, error) {
	if script == nil {
		return nil, errors.New("new runtime: nil script")
	}
	prelude, err := compilePrelude()
	if err != nil {
		return nil, err
	}
	n := cfg.Isolates
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	r := &Runtime{
		script:  script,
		cfg:     cfg,
		log:     log.With("script", script.name),
		prelude: prelude,
		load:    make([]atomic.Int64, n),
		stop:    make(chan struct{}),
		objects: map[*Object]struct{}{},
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	if len(cfg.Vars) > 0 {
		if r.varsJSON, err = json.Marshal(cfg.Vars); err != nil {
			return nil, fmt.Errorf("encode vars: %w", err)
		}
	}
	for i := 0; i < n; i++ {
		iso, err := newIsolate(r, i, r.stop, r.log.With("isolate", i), nil)
		if err != nil {
			r.cancel()
			close(r.stop)
			for _, started := range r.isolates {
				<-started.done
			}
			return nil, err
		}
		r.isolates = append(r.isolates, iso)
		go iso.run()
	}
	limit := cfg.TaskTimeout
	if limit <= 0 {
		limit = DefaultTaskTimeout
	}
	go r.watchdog(limit)
	return r, nil
}

// watchdog interrupts any isolate stuck in one task for longer than limit.
func (r *Runtime) watchdog(limit time.Duration) {
	tick := time.NewTicker(min(limit/4, 250*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
			for _, iso := range r.isolates {
				iso.interruptIfStuck(limit)
			}
			r.objMu.Lock()
			for o := range r.objects {
				o.iso.interruptIfStuck(limit)
			}
			r.objMu.Unlock()
		}
	}
}

// pick chooses the isolate with the fewest Fetch calls in progress,
// starting the scan at a rotating index so ties spread evenly. An isolate
// serves several requests at once (like workerd) while they wait on timers
// or I/O; picking the least loaded keeps CPU-bound requests apart.
func (r *Runtime) pick() int {
	n := len(r.isolates)
	start := int(r.next.Add(1) % uint64(n))
	best, bestLoad := start, r.load[start].Load()
	for k := 1; k < n && bestLoad > 0; k++ {
		i := (start + k) % n
		if l := r.load[i].Load(); l < bestLoad {
			best, bestLoad = i, l
		}
	}
	return best
}

// Fetch runs the script's fetch handler for req and returns its response.
// An exception thrown by the script is logged and becomes a 500 response;
// the error result is reserved for ctx ending first and a closed Runtime.
// Work handed to ctx.waitUntil goes on after Fetch returns.
func (r *Runtime) Fetch(ctx context.Context, req *Request) (*Response, error) {
	return r.fetchOn(ctx, -1, req, nil)
}

// fetchOn is Fetch on isolate i (-1: the least loaded), for the default
// export or, with ep, one of the script's entrypoints (services.go).
func (r *Runtime) fetchOn(ctx context.Context, i int, req *Request, ep *entrypoint) (*Response, error) {
	if r.closed.Load() {
		return nil, ErrClosed
	}
	href, ok := requestHref(req.URL)
	if !ok {
		return nil, fmt.Errorf("fetch: invalid request URL %q", req.URL)
	}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if i < 0 {
		i = r.pick()
	}
	iso := r.isolates[i]
	r.load[i].Add(1)
	defer r.load[i].Add(-1)
	ch := make(chan fetchResult, 1)
	var jsReq goja.Value // set on the loop, read only there
	scope := &eventScope{requestID: RequestID(ctx)}
	if !iso.post(func() { jsReq = iso.startFetch(req, href, ch, scope, ep) }) {
		return nil, ErrClosed
	}
	select {
	case res := <-ch:
		return res.resp, res.err
	case <-ctx.Done():
		// The handler may go on (it can be waiting on anything); its
		// request.signal tells it nobody is listening any more, and its
		// Durable Object calls in flight end (unless it asked for
		// waitUntil work).
		iso.post(func() {
			iso.abortRequest(jsReq)
			scope.clientGone()
		})
		return nil, fmt.Errorf("fetch %s: %w", req.URL, context.Cause(ctx))
	case <-r.stop:
		return nil, ErrClosed
	}
}

// Close stops accepting requests, waits (at most until ctx ends, and at
// most DefaultWaitUntilLimit) for requests in flight and ctx.waitUntil work,
// then stops every isolate. Durable Objects still running are closed the
// same way (see Object.Close); NewObject fails from then on.
func (r *Runtime) Close(ctx context.Context) error {
	var err error
	r.closeOnce.Do(func() {
		r.closed.Store(true)
		deadline := time.Now().Add(DefaultWaitUntilLimit)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		r.closeWorkerSockets(ctx, deadline) // websocket_natives.go
		for _, iso := range r.isolates {
			if !iso.waitIdle(deadline) {
				err = fmt.Errorf("close runtime: isolate %d still busy at deadline", iso.id)
				break
			}
		}
		dctx, cancel := context.WithDeadline(ctx, deadline)
		r.objMu.Lock()
		objs := make([]*Object, 0, len(r.objects))
		for o := range r.objects {
			objs = append(objs, o)
		}
		r.objMu.Unlock()
		var wg sync.WaitGroup
		for _, o := range objs {
			wg.Go(func() {
				if cerr := o.Close(dctx); cerr != nil {
					r.log.Warn("close runtime", "error", cerr)
				}
			})
		}
		wg.Wait()
		cancel()
		r.cancel()
		close(r.stop)
		for _, iso := range r.isolates {
			<-iso.done
		}
	})
	return err
}

// addObject registers a running object; it fails once Close has begun.
func (r *Runtime) addObject(o *Object) bool {
	r.objMu.Lock()
	defer r.objMu.Unlock()
	if r.closed.Load() {
		return false
	}
	r.objects[o] = struct{}{}
	return true
}

func (r *Runtime) removeObject(o *Object) {
	r.objMu.Lock()
	delete(r.objects, o)
	r.objMu.Unlock()
}
