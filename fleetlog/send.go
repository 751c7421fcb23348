package fleetlog

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet/core"
)

// Appends to the members are pipelined and shared: each member has a
// sender that puts every segment queued for it meanwhile (of all the
// node's cells) into one request, with up to sendWindow requests in
// flight, so an owner never waits for one round trip before sending the
// next group. Requests to one member may arrive out of order; the
// follower keeps each cell's range contiguous, holding a segment that
// would leave a gap until its predecessor lands (Disk.Append), and takes
// a segment it already holds as a no-op — which is also what makes a
// resend safe.
//
// Hedging: a request a member has not answered after hedgeAfter (a few
// times its recent latency) is sent again on another connection, and the
// first answer counts. A member that still has not answered after
// slowAfter is failed (the group's reconcile drops it by core.MayDrop,
// once the members that stay answered a probe), and the waiting appends
// are judged again on the record that no longer names it. The
// acknowledgement rule never weakens: every member of the record (and of
// one being written) must have fsynced the segment (core.FleetAcked).

// sendWindow is how many requests one member may have in flight.
const sendWindow = 4

// maxSendBytes bounds one request's segments (a segment is at most
// cell.FleetMaxSegment; a request holds at least one).
const maxSendBytes = 8 << 20

// Hedge bounds: the first resend waits hedgeFactor times the member's
// recent latency, within [minHedge, maxHedge]; a member is failed once
// slowFactor times it passed, within [minSlow, AppendTimeout].
const (
	hedgeFactor = 4
	minHedge    = 5 * time.Millisecond
	maxHedge    = 250 * time.Millisecond
	slowFactor  = 50
	minSlow     = 500 * time.Millisecond
)

// waiter is one Append waiting for its members' answers.
type waiter struct {
	targets  []member
	ok       map[core.Member]bool
	answered map[core.Member]bool
	done     chan struct{}
	decided  bool
	proven   bool
}

type item struct {
	seg cell.Segment
	w   *waiter
}

// sender queues and sends one member's appends.
type sender struct {
	l  *Log
	m  core.Member
	mu sync.Mutex
	q  []item
	// inflight requests; lat is the recent answer latency (EWMA, ns).
	inflight int
	lat      float64
	kick     chan struct{}
	hedges   int64
}

// senderFor is the member's sender (started on first use). Call with l.mu
// held.
func (l *Log) senderFor(m core.Member) *sender {
	s := l.senders[m]
	if s == nil {
		s = &sender{l: l, m: m, kick: make(chan struct{}, 1), lat: float64(2 * time.Millisecond)}
		l.senders[m] = s
		go s.loop()
	}
	return s
}

func (s *sender) push(it item) {
	s.mu.Lock()
	s.q = append(s.q, it)
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *sender) loop() {
	for {
		s.mu.Lock()
		var run []item
		if len(s.q) > 0 && s.inflight < sendWindow {
			n, size := 0, 0
			for n < len(s.q) && (n == 0 || size+len(s.q[n].seg.Data) <= maxSendBytes) {
				size += len(s.q[n].seg.Data)
				n++
			}
			run = append(run, s.q[:n]...)
			s.q = append(s.q[:0:0], s.q[n:]...)
			s.inflight++
		}
		s.mu.Unlock()
		if run == nil {
			select {
			case <-s.kick:
				continue
			case <-s.l.stop:
				return
			}
		}
		go func() {
			ok := s.send(run)
			s.mu.Lock()
			s.inflight--
			s.mu.Unlock()
			select {
			case s.kick <- struct{}{}:
			default:
			}
			s.l.answered(s.m, run, ok)
		}()
	}
}

// timings are the hedge and slow thresholds from the recent latency.
func (s *sender) timings() (hedge, slow time.Duration) {
	s.mu.Lock()
	lat := time.Duration(s.lat)
	s.mu.Unlock()
	hedge = min(max(hedgeFactor*lat, minHedge), maxHedge)
	slow = min(max(slowFactor*lat, minSlow), s.l.cfg.AppendTimeout)
	if s.l.cfg.Slow > 0 {
		slow = s.l.cfg.Slow
	}
	return hedge, slow
}

// send posts run's segments to the member (hedged) and reports whether it
// fsynced them.
func (s *sender) send(run []item) bool {
	var buf bytes.Buffer
	for _, it := range run {
		writeFrame(&buf, it.seg)
	}
	writeEnd(&buf)
	body := buf.Bytes()
	s.l.mu.Lock()
	addr := s.l.addrs[s.m.Node]
	if s.l.joining != nil && s.l.joining.Member == s.m {
		addr = s.l.joining.addr
	}
	s.l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.l.cfg.AppendTimeout)
	defer cancel()
	q := url.Values{"node": {s.l.cfg.Node}, "session": {s.l.cfg.Session}, "disk": {s.m.Disk}}
	start := time.Now()
	res := make(chan bool, 2)
	attempt := func() {
		status, data, err := s.l.post(ctx, addr, PathAppend, q, body)
		ok := err == nil && status == http.StatusOK
		if !ok && ctx.Err() == nil {
			s.l.log.Warn("fleet append refused or failed", "member", s.m.Node, "status", status, "err", err, "body", string(bytes.TrimSpace(data)))
		}
		res <- ok
	}
	go attempt()
	hedgeAfter, slowAfter := s.timings()
	hedge := time.NewTimer(hedgeAfter)
	defer hedge.Stop()
	slow := time.NewTimer(slowAfter)
	defer slow.Stop()
	pending, failedSlow := 1, false
	for {
		select {
		case ok := <-res:
			pending--
			if ok {
				took := float64(time.Since(start))
				s.mu.Lock()
				s.lat = 0.8*s.lat + 0.2*took
				s.mu.Unlock()
				return true
			}
			if pending == 0 {
				return false
			}
		case <-hedge.C:
			if pending == 1 {
				// Idempotent: the member takes a segment it holds as a
				// no-op, so the first answer of either counts.
				pending++
				s.mu.Lock()
				s.hedges++
				s.mu.Unlock()
				go attempt()
			}
		case <-slow.C:
			if !failedSlow {
				failedSlow = true
				s.l.log.Warn("fleet follower slow: failing it so the group can go on without it", "member", s.m.Node, "after", slowAfter)
				s.l.memberFailed(s.m)
			}
		case <-ctx.Done():
			return false
		}
	}
}

// answered records a member's answer for run's segments and judges their
// appends.
func (l *Log) answered(m core.Member, run []item, ok bool) {
	l.mu.Lock()
	for _, it := range run {
		it.w.answered[m] = true
		if ok {
			it.w.ok[m] = true
		}
		l.decideLocked(it.w)
	}
	l.mu.Unlock()
	if !ok {
		l.memberFailed(m)
	}
}

// decideLocked settles w once its proof holds on the record as it stands
// (and the one being written), or once every target answered without
// one. Call with l.mu held.
func (l *Log) decideLocked(w *waiter) {
	if w.decided {
		return
	}
	all := true
	for _, t := range w.targets {
		all = all && w.answered[t.Member]
	}
	switch {
	case l.provenLocked(w.ok):
		w.decided, w.proven = true, true
	case all || l.fenced:
	default:
		return
	}
	w.decided = true
	delete(l.waiters, w)
	close(w.done)
}

// recordChangedLocked judges every waiting append again (a member was
// dropped: what the rest fsynced may now be a proof). Call with l.mu
// held.
func (l *Log) recordChangedLocked() {
	for w := range l.waiters {
		l.decideLocked(w)
	}
}

// enqueue queues s for every target.
func (l *Log) enqueue(targets []member, s cell.Segment) *waiter {
	w := &waiter{targets: targets, ok: map[core.Member]bool{}, answered: map[core.Member]bool{}, done: make(chan struct{})}
	l.mu.Lock()
	l.waiters[w] = struct{}{}
	var senders []*sender
	for _, t := range targets {
		senders = append(senders, l.senderFor(t.Member))
	}
	// Queued under l.mu, so two segments are queued in the same order
	// for every member.
	for _, sd := range senders {
		sd.push(item{seg: s, w: w})
	}
	l.mu.Unlock()
	return w
}

// await waits for w's verdict (within AppendTimeout and ctx).
func (l *Log) await(ctx context.Context, w *waiter) bool {
	timer := time.NewTimer(l.cfg.AppendTimeout + time.Second)
	defer timer.Stop()
	select {
	case <-w.done:
	case <-timer.C:
	case <-ctx.Done():
	case <-l.stop:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !w.decided {
		w.decided = true
		delete(l.waiters, w)
		close(w.done)
	}
	return w.proven
}

// Hedges is how many requests were sent again to a slow member.
func (l *Log) Hedges() int64 {
	l.mu.Lock()
	ss := make([]*sender, 0, len(l.senders))
	for _, s := range l.senders {
		ss = append(ss, s)
	}
	l.mu.Unlock()
	var n int64
	for _, s := range ss {
		s.mu.Lock()
		n += s.hedges
		s.mu.Unlock()
	}
	return n
}
