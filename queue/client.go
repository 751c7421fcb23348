package queue

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/celldgo/celld/cell"
)

// Client reaches one queue through a Caller (the node's router, or a
// command's peer connection or tool lease). Each method is one request.
type Client struct {
	c    cell.Caller
	name string
	cell string
}

// NewClient returns a client of queue name.
func NewClient(c cell.Caller, name string) *Client {
	return &Client{c: c, name: name, cell: CellName(name)}
}

// Name is the queue's name.
func (c *Client) Name() string { return c.name }

func (c *Client) call(ctx context.Context, r request) (answer, error) {
	var a answer
	req, err := encode(r)
	if err != nil {
		return a, fmt.Errorf("encode queue request: %w", err)
	}
	res, err := c.c.Call(ctx, c.cell, req)
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(res, &a); err != nil {
		return a, fmt.Errorf("decode queue answer: %w", err)
	}
	return a, nil
}

// Send stores messages (one send or sendBatch) and resolves once they are
// durable, with the queue's backlog metrics.
func (c *Client) Send(ctx context.Context, msgs []Message) (Metrics, error) {
	if err := CheckSend(msgs); err != nil {
		return Metrics{}, err
	}
	a, err := c.call(ctx, request{Op: opSend, Messages: msgs})
	if err != nil || a.Metrics == nil {
		return Metrics{}, err
	}
	return *a.Metrics, nil
}

// Configure records the queue's consumer (nil: none; nothing delivers).
func (c *Client) Configure(ctx context.Context, cfg *Config) error {
	_, err := c.call(ctx, request{Op: opConfigure, Config: cfg})
	return err
}

// Lease leases the next batch if one is due (an empty batch otherwise)
// for leaseMS (0: DefaultLease). Exhausted leases are settled first.
func (c *Client) Lease(ctx context.Context, leaseMS int64) (Batch, error) {
	a, err := c.call(ctx, request{Op: opLease, LeaseMS: leaseMS})
	if err != nil || a.Batch == nil {
		return Batch{}, err
	}
	return *a.Batch, nil
}

// Settle applies a consumer's outcomes to a lease's messages.
func (c *Client) Settle(ctx context.Context, lease string, outs []Outcome) error {
	_, err := c.call(ctx, request{Op: opSettle, Lease: lease, Outcomes: outs})
	return err
}

// TakeDead lists exhausted messages waiting to move to their dead-letter
// queue (DeadTo), oldest first, at most MaxBatchMessages.
func (c *Client) TakeDead(ctx context.Context) ([]Message, error) {
	a, err := c.call(ctx, request{Op: opTakeDead})
	return a.Messages, err
}

// DropDead deletes exhausted messages once they were moved.
func (c *Client) DropDead(ctx context.Context, ids []string) error {
	_, err := c.call(ctx, request{Op: opDropDead, IDs: ids})
	return err
}

// Info reports the queue's state.
func (c *Client) Info(ctx context.Context) (Info, error) {
	a, err := c.call(ctx, request{Op: opInfo})
	if err != nil || a.Info == nil {
		return Info{Queue: c.name}, err
	}
	a.Info.Queue = c.name
	return *a.Info, nil
}

// Peek lists up to limit stored messages, oldest first, without leasing.
func (c *Client) Peek(ctx context.Context, limit int) ([]Message, error) {
	a, err := c.call(ctx, request{Op: opPeek, Limit: limit})
	return a.Messages, err
}

// Purge deletes every message; a batch leased now settles to nothing.
func (c *Client) Purge(ctx context.Context) (int64, error) {
	a, err := c.call(ctx, request{Op: opPurge})
	return a.Count, err
}

// SetPaused pauses or resumes delivery; producers send on either way.
func (c *Client) SetPaused(ctx context.Context, paused bool) error {
	_, err := c.call(ctx, request{Op: opPause, Paused: paused})
	return err
}

// Redrive moves up to limit dead-lettered messages of this queue back to
// the queues they came from, and reports how many moved. A message is
// sent to its source before it is deleted here, so an interrupted
// redrive delivers it again rather than never.
func (c *Client) Redrive(ctx context.Context, limit int) (int, error) {
	a, err := c.call(ctx, request{Op: opTakeDLQ, Limit: limit})
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, group := range groupBy(a.Messages, func(m Message) string { return m.Source }) {
		src := NewClient(c.c, group[0].Source)
		if _, err := src.Send(ctx, resend(group, "")); err != nil {
			return moved, fmt.Errorf("redrive to queue %s: %w", group[0].Source, err)
		}
		if _, err := c.call(ctx, request{Op: opDrop, IDs: ids(group)}); err != nil {
			return moved, err
		}
		moved += len(group)
	}
	return moved, nil
}

// MoveDead moves this queue's exhausted messages to their dead-letter
// queues (the delivery loop's step); it reports how many moved.
func (c *Client) MoveDead(ctx context.Context) (int, error) {
	dead, err := c.TakeDead(ctx)
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, group := range groupBy(dead, func(m Message) string { return m.DeadTo }) {
		dlq := NewClient(c.c, group[0].DeadTo)
		if _, err := dlq.Send(ctx, resend(group, c.name)); err != nil {
			return moved, fmt.Errorf("move to dead-letter queue %s: %w", group[0].DeadTo, err)
		}
		if err := c.DropDead(ctx, ids(group)); err != nil {
			return moved, err
		}
		moved += len(group)
	}
	return moved, nil
}

// resend is msgs as a send to another queue: same id, body, content type
// and timestamp, attempts from zero, source as given.
func resend(msgs []Message, source string) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{ID: m.ID, Body: m.Body, ContentType: m.ContentType, Timestamp: m.Timestamp, Source: source}
	}
	return out
}

func ids(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

// groupBy splits msgs by key, in order of first appearance, in sends of
// at most MaxBatchMessages and MaxBatchBytes.
func groupBy(msgs []Message, key func(Message) string) [][]Message {
	var order []string
	by := map[string][][]Message{}
	for _, m := range msgs {
		k := key(m)
		g := by[k]
		if g == nil {
			order = append(order, k)
		}
		if n := len(g); n == 0 || len(g[n-1]) >= MaxBatchMessages || size(g[n-1])+len(m.Body) > MaxBatchBytes {
			g = append(g, nil)
		}
		g[len(g)-1] = append(g[len(g)-1], m)
		by[k] = g
	}
	var out [][]Message
	for _, k := range order {
		out = append(out, by[k]...)
	}
	return out
}

func size(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Body)
	}
	return n
}
