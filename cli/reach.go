package cli

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cron"
	"github.com/celldgo/celld/d1"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/fleetlog"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/kv"
	"github.com/celldgo/celld/queue"
)

// builtinKinds are the built-in cell kinds the commands reach and
// `celld serve` hosts (tests add their own).
var builtinKinds = []host.Kind{d1.Kind, kv.Kind, cron.Kind, queue.Kind}

// caller delivers an encoded request to a built-in cell (what d1.Client
// and kv.Client call through).
type caller interface {
	Call(ctx context.Context, cell string, req []byte) ([]byte, error)
}

// withCaller runs fn with a caller of the fleet's cells and releases what
// reaching them took (a tool lease) even when fn fails or is interrupted.
func (g *globals) withCaller(ctx context.Context, fn func(caller) error) (err error) {
	c, done, err := g.cellCaller(ctx)
	if err != nil {
		return reachErr(err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if derr := done(dctx); derr != nil && err == nil {
			err = reachErr(derr)
		}
	}()
	return fn(c)
}

// cellCaller returns a Caller that reaches built-in cells the way the fleet
// does: a cell owned by a live node is sent over signed peer HTTP to that
// node; a cell nobody owns (or whose owner's lease is dead) is acquired by
// this command under a short tool lease (epoch + 1), restored from the
// bucket, and served here with the same durability rules (the answer
// leaves only after its commits are in the bucket and ownership is
// re-confirmed). done flushes and releases what was acquired; call it.
func (g *globals) cellCaller(ctx context.Context) (caller, func(context.Context) error, error) {
	s, err := g.openStore()
	if err != nil {
		return nil, nil, err
	}
	r := &reach{store: s, kinds: host.NewRegistry(builtinKinds...), held: map[string]*host.Builtin{}, log: slog.New(slog.DiscardHandler),
		client: &http.Client{}, timeout: cmp.Or(g.Timeout, DefaultCallTimeout)}
	return r, r.done, nil
}

// DefaultCallTimeout bounds one request sent to a live owner (--timeout).
const DefaultCallTimeout = 2 * time.Minute

type reach struct {
	store   bucket.Store
	kinds   *host.Registry
	log     *slog.Logger
	client  *http.Client
	timeout time.Duration // of one request to a live owner

	mu     sync.Mutex
	tool   *fleet.Node
	host   *host.Host // cells under the tool lease
	dir    string
	signer *fleet.Signer
	held   map[string]*host.Builtin // cells acquired under the tool lease
}

// UnreachableOwnerError: a live node owns the cell but cannot be reached
// from here.
type UnreachableOwnerError struct {
	Cell, Node, Advertise string
	Err                   error
}

func (e *UnreachableOwnerError) Error() string {
	return fmt.Sprintf("cell %s is owned by live node %s at %s, which is unreachable from here: %v", e.Cell, e.Node, e.Advertise, e.Err)
}

func (e *UnreachableOwnerError) Unwrap() error { return e.Err }

// Hint says what to do about it.
func (e *UnreachableOwnerError) Hint() string {
	return fmt.Sprintf("run this command from inside the fleet's network, or drain node %s (POST /shutdown on its internal listener) and retry", e.Node)
}

// RequestError is a request failure reported by the cell's handler (on this
// machine or on the owning node): the request was refused as it stands.
type RequestError = host.RequestError

func (r *reach) Call(ctx context.Context, name string, req []byte) ([]byte, error) {
	kind, _, err := r.kinds.Split(name)
	if err != nil {
		return nil, err
	}
	var seen fleet.CellInfo // the first read of the owner's current lease generation
	for attempt := 0; ; attempt++ {
		r.mu.Lock()
		hc := r.held[name]
		r.mu.Unlock()
		if hc != nil {
			return hc.Call(ctx, req)
		}
		ci, err := fleet.LookupCell(ctx, r.store, name, time.Now().UnixMilli())
		if err != nil {
			return nil, err
		}
		if l := ci.Lease; l.Node != seen.Lease.Node || l.Session != seen.Lease.Session || l.Generation != seen.Lease.Generation {
			seen = ci
		}
		if ci.OwnerLive {
			if ci.Advertise == "" {
				// Another command holds it under its tool lease.
				if attempt < 50 {
					if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
						return nil, err
					}
					continue
				}
				return nil, fmt.Errorf("cell %s is held by %s (another celld command); retry when it finishes", name, ci.Own.Node)
			}
			lctx, stop := r.leaseBound(ctx, ci)
			out, retry, err := r.remote(lctx, name, ci.Own.Node, ci.Advertise, req)
			stop()
			if errors.Is(err, errOwnerLeaseExpired) && attempt < 50 {
				// The owner stopped renewing while it held the call (frozen,
				// or dead with the connection open): take over as usual.
				continue
			}
			if errors.Is(err, errCallTimeout) {
				return nil, &UnreachableOwnerError{Cell: name, Node: ci.Own.Node, Advertise: ci.Advertise,
					Err: fmt.Errorf("no answer within --timeout %v, though its lease is renewed", r.timeout)}
			}
			if retry && attempt < 50 {
				if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
					return nil, err
				}
				continue
			}
			return out, err
		}
		hc, err = r.acquire(ctx, name, kind, seen)
		var el *fleet.ElsewhereError
		if errors.As(err, &el) && attempt < 50 {
			// Taken meanwhile, or an owner whose lease just expired is not
			// yet counted dead (the skew margin): look again shortly.
			if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		return hc.Call(ctx, req)
	}
}

var (
	errOwnerLeaseExpired = errors.New("the owner's lease expired while it held the call")
	errCallTimeout       = errors.New("call timed out")
)

// leaseBound returns a context for one call to the live owner ci names:
// it ends (cause errOwnerLeaseExpired) when the owner's lease expires
// without renewal — re-read at each published expiry, so a live owner's
// long call goes on — and at r.timeout (cause errCallTimeout). A command
// never waits minutes on a frozen owner: it gives up with its lease and
// takes the cell over.
func (r *reach) leaseBound(ctx context.Context, ci fleet.CellInfo) (context.Context, func()) {
	lctx, cancel := context.WithCancelCause(ctx)
	tctx, tcancel := context.WithTimeoutCause(lctx, r.timeout, errCallTimeout)
	go func() {
		expires := ci.LeaseExpires
		for {
			wait := time.Until(time.UnixMilli(expires))
			if err := sleepCtx(lctx, max(wait, 0)+50*time.Millisecond); err != nil {
				return
			}
			data, _, err := r.store.Get(lctx, core.LeaseKey(ci.Own.Node))
			if lctx.Err() != nil {
				return
			}
			if err != nil && bucket.OutcomeOf(err) != bucket.NotFound {
				expires = time.Now().Add(500 * time.Millisecond).UnixMilli() // store trouble: look again soon
				continue
			}
			l, derr := core.DecodeLease(data)
			if err != nil || derr != nil || l.Session != ci.Own.Session || l.Expires <= expires {
				cancel(errOwnerLeaseExpired)
				return
			}
			expires = l.Expires
		}
	}()
	return tctx, func() { tcancel(); cancel(nil) }
}

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

// remote sends req to the live owner. retry reports a transient refusal
// (the owner moved, is draining, or is activating elsewhere).
func (r *reach) remote(ctx context.Context, name, node, advertise string, req []byte) (out []byte, retry bool, err error) {
	r.mu.Lock()
	if r.signer == nil {
		secret, err := fleet.PeerSecret(ctx, r.store)
		if err != nil {
			r.mu.Unlock()
			return nil, false, err
		}
		r.signer = &fleet.Signer{Secret: secret, Node: toolName()}
	}
	p := toolPoster{signer: r.signer, client: r.client, cell: name, node: node, advertise: advertise}
	r.mu.Unlock()
	out, err = host.CallPeerCell(ctx, p, node, name, req)
	var pe *host.PeerError
	return out, errors.As(err, &pe) && pe.Retry(), err
}

// toolPoster sends a command's signed requests to the node owning cell.
type toolPoster struct {
	signer                *fleet.Signer
	client                *http.Client
	cell, node, advertise string
}

func (p toolPoster) PostPeer(ctx context.Context, path string, query url.Values, body []byte) (int, []byte, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+p.advertise+path+"?"+query.Encode(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	p.signer.Sign(hreq, body)
	// Go's transport may then resend it on a fresh connection if a reused
	// one was closed before it was read; a copy that was read is refused as
	// a replay (same nonce), so it never runs twice.
	hreq.Header.Set("Idempotency-Key", hreq.Header.Get(fleet.HeaderPeerNonce))
	resp, err := p.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, context.Cause(ctx)
		}
		return 0, nil, &UnreachableOwnerError{Cell: p.cell, Node: p.node, Advertise: p.advertise, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("read the answer of node %s: %w", p.node, err)
	}
	return resp.StatusCode, data, nil
}

var toolNameOnce = sync.OnceValue(func() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "host"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "tool-" + host + "-" + hex.EncodeToString(b[:])
})

func toolName() string { return toolNameOnce() }

// acquire takes the cell under this command's tool lease and restores it.
// seen is the command's first read of the owner's current lease: the tool
// lease watches that generation from then, so an owner that stopped
// renewing (frozen, killed) is counted dead a TTL after this command
// first saw its lease, not after the tool lease's own first read plus
// the skew margin.
func (r *reach) acquire(ctx context.Context, name string, kind host.Kind, seen fleet.CellInfo) (*host.Builtin, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if hc := r.held[name]; hc != nil {
		return hc, nil
	}
	if r.tool == nil {
		dir, err := os.MkdirTemp("", "celld-tool-")
		if err != nil {
			return nil, err
		}
		if err := fleet.EnsureFormat(ctx, r.store); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		tool, err := fleetlog.StartGated(ctx, r.store, fleet.Config{Node: toolName(), Kind: core.KindTool, TTL: 10 * time.Second, Logger: r.log})
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		r.tool, r.dir = tool, dir
		r.host = host.New(r.store, tool, r.log)
	}
	r.tool.SawLease(seen.Lease, seen.LeaseRead)
	path := filepath.Join(r.dir, hex.EncodeToString([]byte(name))+".sqlite")
	c, err := r.host.Open(ctx, name, path, host.OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	b := c.Serve(kind.Handler)
	r.held[name] = b
	return b, nil
}

// done flushes every held cell to the bucket, releases it, and drops the
// tool lease.
func (r *reach) done(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for name, b := range r.held {
		b.Close()
		if err := b.Cell().Stop(ctx, host.PhaseReleasing); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", name, err))
		}
		delete(r.held, name)
	}
	if r.tool != nil {
		if err := r.tool.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("drop tool lease: %w", err))
		}
		r.tool = nil
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
		r.dir = ""
	}
	return errors.Join(errs...)
}

// reachErr maps a failure to reach or run a built-in cell to the command's
// exit: an unreachable live owner and a refused request are the
// operation's failure (1) with a hint; a store problem is the operator's
// (2, via storeErr).
func reachErr(err error) error {
	var ue *UnreachableOwnerError
	var re *RequestError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ue):
		return &Error{Err: err, Code: ExitFailure, Hint: ue.Hint()}
	case errors.As(err, &re):
		return &Error{Err: err, Code: ExitFailure}
	default:
		return storeErr(err)
	}
}
