package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
)

// loop is the only goroutine that touches the machine.
func (n *Node) loop() {
	defer close(n.done)
	for {
		select {
		case <-n.ctx.Done():
			return
		case ev := <-n.events:
			fx := n.m.Step(ev)
			n.expires.Store(n.m.Expires())
			for _, f := range fx {
				n.run(f)
			}
		}
	}
}

func (n *Node) run(f core.Effect) {
	switch f := f.(type) {
	case core.Read:
		n.goIO(func(ctx context.Context) core.Event {
			data, o, err := n.store.Get(ctx, f.Key)
			d := core.Done{Now: n.nowMS(), Op: f.Op, Outcome: core.Applied, Data: data, ETag: o.ETag}
			switch bucket.OutcomeOf(err) {
			case bucket.Applied:
			case bucket.NotFound:
				d.Outcome = core.NotFound
			default:
				n.log.Warn("fleet read failed", "key", f.Key, "err", err)
				d.Outcome = core.Failed
			}
			return d
		})
	case core.Write:
		n.goIO(func(ctx context.Context) core.Event {
			cond := bucket.Cond{}
			switch f.Cond {
			case core.IfAbsent:
				cond = bucket.IfAbsent()
			case core.IfMatch:
				cond = bucket.IfMatch(f.ETag)
			}
			start := time.Now()
			o, err := n.store.Put(ctx, f.Key, f.Data, cond)
			if n.cfg.OnRenewal != nil && f.Cond == core.IfMatch && f.Key == core.LeaseKey(n.cfg.Node) {
				n.cfg.OnRenewal(bucket.OutcomeOf(err).String(), time.Since(start))
			}
			d := core.Done{Now: n.nowMS(), Op: f.Op, ETag: o.ETag}
			switch bucket.OutcomeOf(err) {
			case bucket.Applied:
				d.Outcome = core.Applied
			case bucket.Rejected:
				d.Outcome = core.Rejected
			case bucket.Ambiguous:
				n.log.Warn("fleet write outcome unknown; settling by re-read", "key", f.Key, "err", err)
				d.Outcome = core.Ambiguous
			default:
				n.log.Warn("fleet write failed", "key", f.Key, "err", err)
				d.Outcome = core.Failed
			}
			return d
		})
	case core.Recover:
		n.inflight.Add(1)
		go func() {
			defer n.inflight.Done()
			d := core.Done{Op: f.Op, Outcome: core.Applied}
			if err := n.cfg.Recover(n.ctx, f.Node, f.Session); err != nil {
				n.log.Warn("takeover recovery gate", "cell", f.Cell, "node", f.Node, "session", f.Session, "err", err)
				d.Outcome, d.Data = core.Failed, []byte(err.Error())
			}
			d.Now = n.nowMS()
			n.post(d)
		}()
	case core.SetTimer:
		if t := n.timers[f.Timer]; t != nil {
			t.Stop()
		}
		// Timers run on the node's clock (cfg.Now), as events are stamped.
		d := time.UnixMilli(f.At).Sub(n.cfg.Now())
		n.timers[f.Timer] = time.AfterFunc(d, func() {
			n.post(core.TimerFired{Now: n.nowMS(), Timer: f.Timer, Gen: f.Gen})
		})
	case core.Ready:
		n.readyOnce.Do(func() { close(n.ready) })
	case core.StartFailed:
		n.startErr = fmt.Errorf("start node %s: %s", n.cfg.Node, f.Detail)
		n.readyOnce.Do(func() { close(n.ready) })
	case core.PredecessorLive:
		n.predecessorLive(f.Lease)
	case core.StartCell:
		ctx, cancel := context.WithCancelCause(context.Background())
		n.mu.Lock()
		n.owners[f.Cell] = &Owner{Cell: f.Cell, Epoch: f.Epoch, etag: f.ETag, ctx: ctx, stop: cancel}
		n.mu.Unlock()
	case core.StopCell:
		n.mu.Lock()
		if o := n.owners[f.Cell]; o != nil {
			o.stop(fmt.Errorf("%w: %s (epoch %d, %s)", ErrNotOwner, f.Cell, f.Epoch, f.Reason))
			delete(n.owners, f.Cell)
		}
		n.mu.Unlock()
	case core.Reply:
		n.mu.Lock()
		ws := n.waiters[f.Cell]
		delete(n.waiters, f.Cell)
		n.mu.Unlock()
		for _, w := range ws {
			w <- f.Result
		}
	case core.Released:
		n.mu.Lock()
		ws := n.releases[f.Cell]
		delete(n.releases, f.Cell)
		n.mu.Unlock()
		for _, w := range ws {
			close(w)
		}
	case core.Fence:
		n.fenceCause.Store(f.Reason)
		n.log.Error(fmt.Sprintf("SELF-FENCE: %s %s", f.Reason, f.Detail), "node", n.cfg.Node, "session", n.session)
		for i, t := range n.timers {
			if t != nil {
				t.Stop()
				n.timers[i] = nil
			}
		}
		n.mu.Lock()
		for cell, o := range n.owners {
			o.stop(fmt.Errorf("%w: %s: node fenced (%s)", ErrNotOwner, cell, f.Reason))
		}
		n.owners = map[string]*Owner{}
		for cell, ws := range n.releases {
			for _, w := range ws {
				close(w)
			}
			delete(n.releases, cell)
		}
		n.mu.Unlock()
		close(n.fenced)
	}
}

// goIO runs one store call off the loop and posts its completion.
func (n *Node) goIO(call func(ctx context.Context) core.Event) {
	n.inflight.Add(1)
	go func() {
		defer n.inflight.Done()
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.OpTimeout)
		defer cancel()
		n.post(call(ctx))
	}()
}

// Acquire takes cell for this node (epoch + 1), or returns an
// *ElsewhereError naming the live owner, or ErrUnavailable.
func (n *Node) Acquire(ctx context.Context, cell string) (*Owner, error) {
	return n.acquire(ctx, cell, 0)
}

// Adopt resumes a cell this node's previous process owned at epoch and
// left owned by a preserve drain (Config.ResumeSession): it is owned again
// at the same epoch, with no write, if its record still names this session
// at that epoch; otherwise it fails (ErrUnavailable) and the cell is not
// owned.
func (n *Node) Adopt(ctx context.Context, cell string, epoch uint64) (*Owner, error) {
	if epoch == 0 {
		return nil, fmt.Errorf("adopt %s: epoch 0", cell)
	}
	return n.acquire(ctx, cell, epoch)
}

// Abandon stops the node without releasing its cells or deleting its
// lease (a preserve drain): the next process with the same session
// carries both on. Nothing is written.
func (n *Node) Abandon() { n.shutdown() }

func (n *Node) acquire(ctx context.Context, cell string, adopt uint64) (*Owner, error) {
	if !n.Serving() {
		return nil, fmt.Errorf("acquire %s: %w", cell, ErrFenced)
	}
	n.mu.Lock()
	if o := n.owners[cell]; o != nil && o.ctx.Err() == nil {
		n.mu.Unlock()
		return o, nil
	}
	w := make(chan core.AcquireResult, 1)
	n.waiters[cell] = append(n.waiters[cell], w)
	n.mu.Unlock()
	n.post(core.Acquire{Now: n.nowMS(), Cell: cell, Adopt: adopt})
	select {
	case r := <-w:
		switch r.Kind {
		case core.Owned:
			n.mu.Lock()
			o := n.owners[cell]
			n.mu.Unlock()
			if o == nil || o.Epoch != r.Epoch {
				return nil, fmt.Errorf("acquire %s: %w: lost while starting", cell, ErrUnavailable)
			}
			return o, nil
		case core.Elsewhere:
			return nil, &ElsewhereError{Cell: cell, Node: r.Node, Advertise: r.Advertise, Expires: time.UnixMilli(r.Expires),
				Observe: time.Duration(r.Observe) * time.Millisecond}
		default:
			return nil, fmt.Errorf("acquire %s: %w: %s", cell, ErrUnavailable, r.Detail)
		}
	case <-n.fenced:
		return nil, fmt.Errorf("acquire %s: %w", cell, ErrFenced)
	case <-ctx.Done():
		// The claim may still land; nobody will use it, so hand it back
		// rather than leave a cell owned with no caller.
		go func() {
			select {
			case r := <-w:
				if r.Kind == core.Owned {
					rctx, cancel := context.WithTimeout(context.Background(), n.cfg.TTL)
					defer cancel()
					_ = n.Release(rctx, cell)
				}
			case <-n.fenced:
			case <-n.ctx.Done():
			}
		}()
		return nil, fmt.Errorf("acquire %s: %w", cell, context.Cause(ctx))
	}
}

// Release hands cell back (its owner context is cancelled first) and waits
// until the release write has settled. Releasing a cell we do not own is a
// no-op.
func (n *Node) Release(ctx context.Context, cell string) error {
	n.mu.Lock()
	if _, ok := n.owners[cell]; !ok {
		n.mu.Unlock()
		return nil
	}
	w := make(chan struct{})
	n.releases[cell] = append(n.releases[cell], w)
	n.mu.Unlock()
	n.post(core.Release{Now: n.nowMS(), Cell: cell})
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("release %s: %w", cell, context.Cause(ctx))
	}
}

// Owned lists the cells this node owns.
func (n *Node) Owned() []*Owner {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*Owner, 0, len(n.owners))
	for _, o := range n.owners {
		out = append(out, o)
	}
	return out
}

// Close releases every owned cell, stops renewing and deletes the lease
// record so peers need not wait for it to expire. A fenced node only stops.
func (n *Node) Close(ctx context.Context) error {
	select {
	case <-n.fenced:
		n.shutdown()
		return nil
	default:
	}
	for _, o := range n.Owned() {
		if err := n.Release(ctx, o.Cell); err != nil {
			n.log.Warn("release on close", "cell", o.Cell, "err", err)
		}
	}
	n.shutdown()
	if !n.Serving() {
		return nil
	}
	// Delete the lease only if it is still ours.
	data, _, err := n.store.Get(ctx, core.LeaseKey(n.cfg.Node))
	if err != nil {
		return fmt.Errorf("close node %s: read lease: %w", n.cfg.Node, err)
	}
	if l, err := core.DecodeLease(data); err != nil || l.Session != n.session {
		return nil
	}
	if err := n.store.Delete(ctx, core.LeaseKey(n.cfg.Node)); err != nil {
		return fmt.Errorf("close node %s: delete lease: %w", n.cfg.Node, err)
	}
	return nil
}

// shutdown stops the loop and timers; it writes nothing.
func (n *Node) shutdown() {
	n.stop()
	<-n.done
	for _, t := range n.timers {
		if t != nil {
			t.Stop()
		}
	}
	n.mu.Lock()
	for cell, o := range n.owners {
		o.stop(fmt.Errorf("%w: %s: node stopped", ErrNotOwner, cell))
	}
	n.owners = map[string]*Owner{}
	n.mu.Unlock()
}

// Confirm re-reads cell's ownership record and succeeds only if it still
// names this node's session at epoch: the check an output gate makes after
// its writes are in the bucket, so that a node that lost the cell (a clock
// is never trusted for this) never acknowledges. A record naming anyone
// else stops the cell here (its owner context ends with ErrNotOwner).
//
// While the record still carries the ETag of the claim this node wrote, it
// is byte for byte that claim, so a HEAD settles it (cheaper than a GET on
// every store we know); any other ETag is read and decoded.
func (n *Node) Confirm(ctx context.Context, cell string, epoch uint64) error {
	n.mu.Lock()
	etag := ""
	if o := n.owners[cell]; o != nil && o.Epoch == epoch {
		etag = o.etag
	}
	n.mu.Unlock()
	if etag != "" {
		obj, err := n.store.Head(ctx, core.OwnKey(cell))
		switch {
		case err == nil && obj.ETag == etag:
			return nil
		case err != nil && !errors.Is(err, bucket.ErrNotFound):
			return fmt.Errorf("confirm ownership of %s: %w", cell, err)
		}
	}
	data, obj, err := n.store.Get(ctx, core.OwnKey(cell))
	if err != nil {
		return fmt.Errorf("confirm ownership of %s: %w", cell, err)
	}
	own, err := core.DecodeOwn(data)
	if err != nil {
		return fmt.Errorf("confirm ownership of %s: %w", cell, err)
	}
	if own.Session != n.session || own.Epoch != epoch || own.Released {
		n.post(core.Lost{Now: n.nowMS(), Cell: cell})
		return fmt.Errorf("%w: %s is now held by %s at epoch %d (we had epoch %d)", ErrNotOwner, cell, own.Node, own.Epoch, epoch)
	}
	// Still ours under another ETag (rewritten, or a store whose HEAD
	// reports ETags differently): the next confirmation compares with it.
	n.mu.Lock()
	if o := n.owners[cell]; o != nil && o.Epoch == epoch && obj.ETag != "" {
		o.etag = obj.ETag
	}
	n.mu.Unlock()
	return nil
}
