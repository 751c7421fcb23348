package fleetlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// Recoverer runs the takeover recovery gate (core.Gate) for a node: the
// fleet executor calls Recover before claiming a cell from a session that
// did not release it.
type Recoverer struct {
	Store   bucket.Store
	Session string // ours: the recoverer the records name
	Signer  *fleet.Signer
	// RetryEvery and Retries: a failed attempt is tried again after
	// RetryEvery (CELLD_RECOVERY_RETRY_MS, default 1 s), up to Retries
	// attempts in all (CELLD_RECOVERY_RETRIES, default 240).
	RetryEvery time.Duration
	Retries    int
	Logger     *slog.Logger

	client  *http.Client
	once    sync.Once
	running atomic.Int32 // recoveries in progress
	mu      sync.Mutex
	flights map[string]*flight // one recovery per session at a time
	done    atomic.Int64       // gates that found work to do and finished
}

type flight struct {
	wait chan struct{}
	err  error
}

// InProgress is the number of sessions being recovered now.
func (r *Recoverer) InProgress() int { return int(r.running.Load()) }

// Recovered counts sessions this node recovered (collected and sealed).
func (r *Recoverer) Recovered() int64 { return r.done.Load() }

// Recover settles session's node log, retrying; concurrent calls for the
// same session share one run.
func (r *Recoverer) Recover(ctx context.Context, node, session string) error {
	r.once.Do(func() {
		r.client = &http.Client{Timeout: 5 * time.Minute}
		r.flights = map[string]*flight{}
		if r.RetryEvery <= 0 {
			r.RetryEvery = time.Second
		}
		if r.Retries <= 0 {
			r.Retries = 240
		}
		if r.Logger == nil {
			r.Logger = slog.New(slog.DiscardHandler)
		}
	})
	r.mu.Lock()
	if f := r.flights[session]; f != nil {
		r.mu.Unlock()
		select {
		case <-f.wait:
			return f.err
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	f := &flight{wait: make(chan struct{})}
	r.flights[session] = f
	r.mu.Unlock()
	r.running.Add(1)
	defer func() {
		r.running.Add(-1)
		r.mu.Lock()
		delete(r.flights, session)
		r.mu.Unlock()
		close(f.wait)
	}()
	var err error
	for try := 1; try <= r.Retries; try++ {
		if err = r.attempt(ctx, node, session); err == nil {
			return nil
		}
		r.Logger.Warn("takeover recovery attempt failed", "node", node, "session", session, "attempt", try, "of", r.Retries, "err", err)
		select {
		case <-time.After(r.RetryEvery):
		case <-ctx.Done():
			f.err = fmt.Errorf("recover session %s of node %s: %w", session, node, context.Cause(ctx))
			return f.err
		}
	}
	f.err = fmt.Errorf("recover session %s of node %s: %d attempts failed, last: %w", session, node, r.Retries, err)
	return f.err
}

// attempt is one run of the gate.
func (r *Recoverer) attempt(ctx context.Context, node, session string) error {
	g, a := core.NewGate(node, session, r.Session, core.MutNone)
	collected := false
	var members []core.Member
	for {
		switch a.Step {
		case core.GateDone:
			if collected {
				r.done.Add(1)
				r.Logger.Info("takeover recovery sealed a session", "node", node, "session", session)
			}
			if len(members) > 0 {
				go r.forget(session, members) // the record is sealed: the tails are in the bucket
			}
			return nil
		case core.GateFail:
			return errors.New(a.Detail)
		case core.GateRead:
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			data, obj, err := r.Store.Get(cctx, a.Key)
			cancel()
			o := core.Applied
			switch bucket.OutcomeOf(err) {
			case bucket.Applied:
			case bucket.NotFound:
				o = core.NotFound
			default:
				o = core.Failed
			}
			a = g.OnRead(o, data, obj.ETag)
		case core.GateCreate, core.GateCAS:
			cond := bucket.IfMatch(a.ETag)
			if a.Step == core.GateCreate {
				cond = bucket.IfAbsent()
			}
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			obj, err := r.Store.Put(cctx, a.Key, core.Encode(a.Record), cond)
			cancel()
			o := core.Failed
			switch bucket.OutcomeOf(err) {
			case bucket.Applied:
				o = core.Applied
			case bucket.Rejected:
				o = core.Rejected
			case bucket.Ambiguous:
				o = core.Ambiguous
			}
			a = g.OnWrite(o, obj.ETag)
		case core.GatePacks:
			packs, segs, err := recoverPacks(ctx, r.Store, node, session, a.PackFrom)
			if err != nil {
				r.Logger.Warn("recovery: log packs not read and uploaded", "node", node, "session", session, "from", a.PackFrom, "err", err)
			} else if packs > 0 {
				collected = true
				r.Logger.Info("recovery: log packs uploaded", "node", node, "session", session, "from", a.PackFrom, "packs", packs, "segments", segs)
			}
			a = g.OnPacks(err == nil)
		case core.GateSeal:
			collected, members = true, a.Members
			type res struct {
				m  core.Member
				ok bool
			}
			ch := make(chan res, len(a.Members))
			for _, m := range a.Members {
				go func() {
					err := r.sealMember(ctx, session, m)
					if err != nil {
						// Never proof of absence: the gate only counts it
						// as not vouching for anything.
						r.Logger.Warn("recovery: member did not return its retained range", "member", m.Node, "session", session, "err", err)
					}
					ch <- res{m, err == nil}
				}()
			}
			var next core.GateAction
			for range a.Members {
				x := <-ch
				if na := g.OnSealed(x.m, x.ok); na.Step != 0 {
					next = na
				}
			}
			a = next
		default:
			return fmt.Errorf("recovery gate: unexpected step %d", a.Step)
		}
	}
}

// sealMember seals session on member m and uploads every segment it
// returns to its cell's epoch prefix.
func (r *Recoverer) sealMember(ctx context.Context, session string, m core.Member) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	data, _, err := r.Store.Get(cctx, core.LeaseKey(m.Node))
	cancel()
	if err != nil {
		return fmt.Errorf("find member %s: %w", m.Node, err)
	}
	l, err := core.DecodeLease(data)
	if err != nil {
		return err
	}
	q := url.Values{"session": {session}, "disk": {m.Disk}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+l.Advertise+PathSeal+"?"+q.Encode(), bytes.NewReader(nil))
	if err != nil {
		return err
	}
	r.Signer.Sign(req, nil)
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return fmt.Errorf("seal on %s: %d %s", m.Node, resp.StatusCode, bytes.TrimSpace(b.Bytes()))
	}
	n := 0
	err = readFrames(resp.Body, func(s cell.Segment) error {
		if err := putRecovered(ctx, r.Store, s); err != nil {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return err
	}
	r.Logger.Info("recovery: member returned its retained range", "member", m.Node, "session", session, "segments", n)
	return nil
}

// forget tells the members of a sealed session to drop its tails.
func (r *Recoverer) forget(session string, members []core.Member) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range members {
		data, _, err := r.Store.Get(ctx, core.LeaseKey(m.Node))
		if err != nil {
			continue
		}
		l, err := core.DecodeLease(data)
		if err != nil {
			continue
		}
		q := url.Values{"session": {session}}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+l.Advertise+PathForget+"?"+q.Encode(), bytes.NewReader(nil))
		if err != nil {
			continue
		}
		r.Signer.Sign(req, nil)
		if resp, err := r.client.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// StartGated starts a lease holder (a CLI tool lease, say) with the
// takeover recovery gate in its acquisitions, signing seal requests with
// the fleet secret: a cell a dead fleet-mode session left unreleased is
// never restored without its followers' tails, whatever mode the holder
// itself runs in.
func StartGated(ctx context.Context, store bucket.Store, cfg fleet.Config) (*fleet.Node, error) {
	secret, err := fleet.PeerSecret(ctx, store)
	if err != nil {
		return nil, err
	}
	rec := &Recoverer{Store: store, Signer: &fleet.Signer{Secret: secret, Node: cfg.Node}, Logger: cfg.Logger}
	cfg.Recover = rec.Recover
	n, err := fleet.Start(ctx, store, cfg)
	if err != nil {
		return nil, err
	}
	rec.Session = n.Session() // before any acquisition: none can start before Start returns
	return n, nil
}
