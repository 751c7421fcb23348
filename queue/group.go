package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
)

// Group commit for sends: concurrent sends to one queue share one
// transaction and one durability wait. A Grouper sits in front of the
// queue cell's owner (the node); every send request that reaches it
// joins the next group, and up to MaxGroupsInFlight groups are committed
// at once (while one waits for the bucket, the next fills). A send's
// answer is its group's.

// MaxGroupsInFlight bounds the groups of one queue being committed at once.
const MaxGroupsInFlight = 4

// MaxGroupCalls bounds the sends one group holds.
const MaxGroupCalls = 256

// IsSend reports whether req is a send request (the ones a Grouper
// combines).
func IsSend(req []byte) bool { return bytes.HasPrefix(req, []byte(`{"op":"send",`)) }

// Grouper combines send requests into group requests for call (the
// queue cell's owner-side entry point: one request, answered after its
// output gate).
type Grouper struct {
	call func(ctx context.Context, req []byte) ([]byte, error)

	mu       sync.Mutex
	pending  []*groupWaiter
	inflight int
}

// NewGrouper makes a grouper over call.
func NewGrouper(call func(ctx context.Context, req []byte) ([]byte, error)) *Grouper {
	return &Grouper{call: call}
}

type groupWaiter struct {
	msgs []Message
	done chan struct{}
	out  []byte
	err  error
}

// Waiting is the number of sends waiting for or in a group commit.
func (g *Grouper) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pending)
}

// Send runs one send request (IsSend) in the next group and returns its
// answer.
func (g *Grouper) Send(ctx context.Context, req []byte) ([]byte, error) {
	var r request
	if err := json.Unmarshal(req, &r); err != nil || r.Op != opSend {
		return nil, fmt.Errorf("decode queue send: %v", err)
	}
	w := &groupWaiter{msgs: r.Messages, done: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, w)
	start := g.inflight < MaxGroupsInFlight
	if start {
		g.inflight++
	}
	g.mu.Unlock()
	if start {
		go g.run()
	}
	select {
	case <-w.done:
		return w.out, w.err
	case <-ctx.Done():
		// The group goes on (its commit may land); this caller stops
		// waiting, as for any call whose context ends.
		return nil, context.Cause(ctx)
	}
}

// run commits groups until nothing is pending.
func (g *Grouper) run() {
	for {
		g.mu.Lock()
		n := min(len(g.pending), MaxGroupCalls)
		if n == 0 {
			g.inflight--
			g.mu.Unlock()
			return
		}
		group := g.pending[:n:n]
		g.pending = append([]*groupWaiter(nil), g.pending[n:]...)
		g.mu.Unlock()
		g.commit(group)
	}
}

func (g *Grouper) commit(group []*groupWaiter) {
	r := request{Op: opSendGroup, Groups: make([][]Message, len(group))}
	for i, w := range group {
		r.Groups[i] = w.msgs
	}
	finish := func(out func(i int) ([]byte, error)) {
		for i, w := range group {
			w.out, w.err = out(i)
			close(w.done)
		}
	}
	req, err := encode(r)
	if err != nil {
		finish(func(int) ([]byte, error) { return nil, err })
		return
	}
	// The group's own context: no single caller's cancellation may undo
	// the others' commit.
	ctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	res, err := g.call(ctx, req)
	if err != nil {
		finish(func(int) ([]byte, error) { return nil, err })
		return
	}
	var a answer
	if err := json.Unmarshal(res, &a); err != nil || len(a.Refused) != len(group) {
		err = errors.Join(errors.New("decode queue group answer"), err)
		finish(func(int) ([]byte, error) { return nil, err })
		return
	}
	one, _ := encode(answer{Metrics: a.Metrics})
	finish(func(i int) ([]byte, error) {
		if a.Refused[i] != "" {
			return nil, &LimitError{a.Refused[i]}
		}
		return one, nil
	})
}
