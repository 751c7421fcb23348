package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// E-order: the events one stub sends (RPC calls and fetch()) reach the
// object in the order the script made them, as in workerd, however the
// concurrent deliveries race on the way (goroutines, peer HTTP requests,
// retries after an eviction).
//
// The caller numbers the events of each stub 1, 2, 3, ... in call order
// (on the loop) and sends with each its number and the stub's floor: the
// lowest number whose event has not finished yet. The object lets event n
// in once event n-1 was let in, or at once when n-1 is below the floor
// (it has finished, so it was delivered, or it was never sent). A gap
// that never fills (an event lost on the way) holds its successors for
// at most orderGapWait.

// CallOrder places one event in its stub's sequence.
type CallOrder struct {
	Stub  string // random, one per stub
	Seq   uint64 // 1, 2, 3, ... in call order
	Floor uint64 // the stub's lowest unfinished event when this one left
}

// orderGapWait bounds how long an event waits for its predecessor.
const orderGapWait = 5 * time.Second

type callOrderKey struct{}

// WithCallOrder returns a context carrying o. A host that forwards events
// to another node carries it along (CallOrder.String, ParseCallOrder).
func WithCallOrder(ctx context.Context, o CallOrder) context.Context {
	return context.WithValue(ctx, callOrderKey{}, o)
}

// CallOrderFrom returns the order WithCallOrder attached, if any.
func CallOrderFrom(ctx context.Context) (CallOrder, bool) {
	o, ok := ctx.Value(callOrderKey{}).(CallOrder)
	return o, ok
}

// String is o as one header-safe token: "stub seq floor".
func (o CallOrder) String() string {
	return o.Stub + " " + strconv.FormatUint(o.Seq, 10) + " " + strconv.FormatUint(o.Floor, 10)
}

// ParseCallOrder reverses CallOrder.String.
func ParseCallOrder(s string) (CallOrder, error) {
	f := strings.Fields(s)
	if len(f) != 3 || len(f[0]) == 0 || len(f[0]) > 64 {
		return CallOrder{}, fmt.Errorf("parse call order %q: want \"stub seq floor\"", s)
	}
	seq, err1 := strconv.ParseUint(f[1], 10, 64)
	floor, err2 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || seq == 0 || floor > seq {
		return CallOrder{}, fmt.Errorf("parse call order %q: bad numbers", s)
	}
	return CallOrder{Stub: f[0], Seq: seq, Floor: floor}, nil
}

// stubSeq numbers the events of one stub; it lives on the caller's loop.
type stubSeq struct {
	id   string
	next uint64          // the number the next event takes
	low  uint64          // the lowest number not finished
	done map[uint64]bool // finished numbers above low
}

// Stub ids are this process's random prefix and a counter: unique across
// nodes and restarts without a random read per stub (a Worker may make a
// stub per request).
var (
	stubIDPrefix = sync.OnceValue(func() string {
		b := make([]byte, 8)
		_, _ = rand.Read(b) // crypto/rand.Read never fails
		return hex.EncodeToString(b) + "-"
	})
	stubIDs atomic.Uint64
)

func newStubSeq() *stubSeq {
	return &stubSeq{id: stubIDPrefix() + strconv.FormatUint(stubIDs.Add(1), 36), next: 1, low: 1}
}

// take numbers the next event.
func (s *stubSeq) take() uint64 {
	n := s.next
	s.next++
	return n
}

// order is the CallOrder event n leaves with.
func (s *stubSeq) order(n uint64) CallOrder {
	return CallOrder{Stub: s.id, Seq: n, Floor: s.low}
}

// context is ctx carrying event n's order (ctx itself for a nil s).
func (s *stubSeq) context(ctx context.Context, n uint64) context.Context {
	if s == nil {
		return ctx
	}
	return WithCallOrder(ctx, s.order(n))
}

// finish marks event n finished (answered, failed, or never sent).
func (s *stubSeq) finish(n uint64) {
	if s == nil || n < s.low {
		return
	}
	if n > s.low {
		if s.done == nil {
			s.done = map[uint64]bool{}
		}
		s.done[n] = true
		return
	}
	s.low++
	for s.done[s.low] {
		delete(s.done, s.low)
		s.low++
	}
}

// orderGate is an object's side: per stub, the last event let in. Idle
// entries go by generations: stubs seen since the last rotation are in
// cur, those seen in the one before in old, and a rotation (every
// stubGateIdle) drops old, so each entry outlives its last event by
// stubGateIdle to twice that, at no cost per event.
type orderGate struct {
	mu      sync.Mutex
	cur     map[string]*stubGate
	old     map[string]*stubGate
	rotated time.Time
}

type stubGate struct {
	last    uint64
	waiting map[uint64]chan struct{} // closed once last reaches the key
}

// stubGateIdle is how long a stub's entry outlives its last event, at
// least.
const stubGateIdle = 30 * time.Second

// orderTicket records one event as let in (done, which may be called
// more than once); the zero ticket records nothing.
type orderTicket struct {
	g    *orderGate
	stub string
	seq  uint64
}

func (t orderTicket) done() {
	if t.g == nil {
		return
	}
	t.g.mu.Lock()
	t.g.stub(t.stub).bump(t.seq)
	t.g.mu.Unlock()
}

// enter waits until the event may be let in (see CallOrder), then returns
// the ticket that records it as let in; the caller calls done right after
// queueing the event on the loop (or refusing it).
func (g *orderGate) enter(ctx context.Context) (orderTicket, error) {
	o, ok := CallOrderFrom(ctx)
	if !ok {
		return orderTicket{}, nil
	}
	g.mu.Lock()
	sg := g.stub(o.Stub)
	var timer <-chan time.Time
	for o.Seq-1 >= o.Floor && sg.last < o.Seq-1 {
		ch := sg.waitFor(o.Seq - 1)
		g.mu.Unlock()
		if timer == nil {
			t := time.NewTimer(orderGapWait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-ch:
		case <-timer:
			g.mu.Lock()
			sg = g.stub(o.Stub)
			sg.bump(o.Seq - 1) // give up on the gap
			continue
		case <-ctx.Done():
			return orderTicket{}, fmt.Errorf("wait for earlier calls of the stub: %w", context.Cause(ctx))
		}
		g.mu.Lock()
		sg = g.stub(o.Stub)
	}
	g.mu.Unlock()
	return orderTicket{g: g, stub: o.Stub, seq: o.Seq}, nil
}

// stub returns the entry of id, creating it; g.mu is held.
func (g *orderGate) stub(id string) *stubGate {
	if sg := g.cur[id]; sg != nil {
		return sg
	}
	if g.cur == nil || time.Since(g.rotated) > stubGateIdle {
		g.old, g.cur, g.rotated = g.cur, map[string]*stubGate{}, time.Now()
	}
	sg := g.old[id]
	if sg != nil {
		delete(g.old, id)
	} else {
		sg = &stubGate{}
	}
	g.cur[id] = sg
	return sg
}

// waitFor returns a channel closed once event n was let in; g.mu is held.
func (sg *stubGate) waitFor(n uint64) chan struct{} {
	if sg.waiting == nil {
		sg.waiting = map[uint64]chan struct{}{}
	}
	ch := sg.waiting[n]
	if ch == nil {
		ch = make(chan struct{})
		sg.waiting[n] = ch
	}
	return ch
}

// bump records event n as let in and wakes the events waiting for it (or
// for an earlier one, after a gap was given up); g.mu is held.
func (sg *stubGate) bump(n uint64) {
	if n <= sg.last {
		return
	}
	step := n == sg.last+1
	sg.last = n
	if step {
		if ch := sg.waiting[n]; ch != nil {
			close(ch)
			delete(sg.waiting, n)
		}
		return
	}
	for k, ch := range sg.waiting {
		if k <= n {
			close(ch)
			delete(sg.waiting, k)
		}
	}
}
