package queue

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
)

// testQueue runs queue cells in one process on a fake clock: a Caller
// that opens each cell's database on first use.
type testQueue struct {
	t   *testing.T
	dir string
	now time.Time
	dbs map[string]*cell.DB
}

func newTestQueue(t *testing.T) *testQueue {
	q := &testQueue{t: t, dir: t.TempDir(), now: time.UnixMilli(1_800_000_000_000), dbs: map[string]*cell.DB{}}
	t.Cleanup(func() {
		for _, db := range q.dbs {
			db.Close()
		}
	})
	return q
}

func (q *testQueue) Call(_ context.Context, name string, req []byte) ([]byte, error) {
	db := q.dbs[name]
	if db == nil {
		var err error
		if db, err = cell.Open(filepath.Join(q.dir, name+".sqlite")); err != nil {
			q.t.Fatal(err)
		}
		q.dbs[name] = db
	}
	return HandleAt(func() time.Time { return q.now })(db, req)
}

func (q *testQueue) client(name string) *Client { return NewClient(q, name) }

func (q *testQueue) advance(d time.Duration) { q.now = q.now.Add(d) }

func text(bodies ...string) []Message {
	out := make([]Message, len(bodies))
	for i, b := range bodies {
		out[i] = Message{Body: []byte(b), ContentType: ContentText}
	}
	return out
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		ok(t, err)
		return v
	}
}

func TestLease_BySizeAndByTimeout(t *testing.T) {
	q := newTestQueue(t)
	ctx := context.Background()
	c := q.client("jobs")
	ok(t, c.Configure(ctx, &Config{MaxBatchSize: 3, MaxBatchTimeout: 5, MaxRetries: 3}))
	must[Metrics](t)(c.Send(ctx, text("a", "b")))
	if b := must[Batch](t)(c.Lease(ctx, 0)); len(b.Messages) != 0 {
		t.Fatalf("2 of 3 messages, before the timeout: leased %d", len(b.Messages))
	}
	q.advance(5 * time.Second)
	b := must[Batch](t)(c.Lease(ctx, 0))
	if len(b.Messages) != 2 || b.Messages[0].Attempts != 1 || string(b.Messages[0].Body) != "a" {
		t.Fatalf("after the timeout: %+v", b.Messages)
	}
	must[Metrics](t)(c.Send(ctx, text("c", "d", "e", "f")))
	if b := must[Batch](t)(c.Lease(ctx, 0)); len(b.Messages) != 3 {
		t.Fatalf("a full batch is due at once: leased %d", len(b.Messages))
	}
}

func TestSettle_RetryDelayExhaustionAndDeadLetter(t *testing.T) {
	q := newTestQueue(t)
	ctx := context.Background()
	c := q.client("jobs")
	ok(t, c.Configure(ctx, &Config{MaxBatchSize: 10, MaxBatchTimeout: 0, MaxRetries: 1, RetryDelay: 10, DeadLetterQueue: "dlq"}))
	must[Metrics](t)(c.Send(ctx, text("x")))
	b := must[Batch](t)(c.Lease(ctx, 0))
	id := b.Messages[0].ID
	ok(t, c.Settle(ctx, b.Lease, []Outcome{{ID: id, Retry: true}}))
	q.advance(9 * time.Second)
	if b := must[Batch](t)(c.Lease(ctx, 0)); len(b.Messages) != 0 {
		t.Fatal("retried before retry_delay passed")
	}
	q.advance(time.Second)
	b = must[Batch](t)(c.Lease(ctx, 0))
	if len(b.Messages) != 1 || b.Messages[0].Attempts != 2 {
		t.Fatalf("second delivery: %+v", b.Messages)
	}
	two := int64(2)
	ok(t, c.Settle(ctx, b.Lease, []Outcome{{ID: id, Retry: true, Delay: &two}}))
	// attempts 2 > max_retries 1: exhausted, moving to the DLQ.
	if in := must[Info](t)(c.Info(ctx)); in.Dead != 1 || in.Messages != 0 {
		t.Fatalf("after exhaustion: %+v", in)
	}
	if n := must[int](t)(c.MoveDead(ctx)); n != 1 {
		t.Fatalf("moved %d", n)
	}
	peek := must[[]Message](t)(q.client("dlq").Peek(ctx, 10))
	if len(peek) != 1 || peek[0].ID != id || peek[0].Attempts != 0 || peek[0].Source != "jobs" {
		t.Fatalf("dead-letter queue holds %+v", peek)
	}
	if n := must[int](t)(q.client("dlq").Redrive(ctx, 10)); n != 1 {
		t.Fatalf("redrove %d", n)
	}
	if in := must[Info](t)(c.Info(ctx)); in.Messages != 1 {
		t.Fatalf("after redrive the source holds %d", in.Messages)
	}
}

func TestLease_ExpiryIsAFailedDelivery(t *testing.T) {
	q := newTestQueue(t)
	ctx := context.Background()
	c := q.client("jobs")
	ok(t, c.Configure(ctx, &Config{MaxBatchSize: 10, MaxBatchTimeout: 0, MaxRetries: 0}))
	must[Metrics](t)(c.Send(ctx, text("x")))
	b := must[Batch](t)(c.Lease(ctx, 1000))
	q.advance(999 * time.Millisecond)
	if in := must[Info](t)(c.Info(ctx)); in.Leased != 1 {
		t.Fatalf("lease not held: %+v", in)
	}
	q.advance(time.Millisecond)
	// max_retries 0 and no dead-letter queue: the expired delivery drops it.
	if b2 := must[Batch](t)(c.Lease(ctx, 1000)); len(b2.Messages) != 0 {
		t.Fatalf("redelivered past max_retries: %+v", b2.Messages)
	}
	if in := must[Info](t)(c.Info(ctx)); in.Messages != 0 {
		t.Fatalf("an exhausted message without a dead-letter queue stays: %+v", in)
	}
	// A late settlement of the expired lease is ignored.
	ok(t, c.Settle(ctx, b.Lease, []Outcome{{ID: b.Messages[0].ID}}))
}

func TestPauseConcurrencyPurgeAndAlarm(t *testing.T) {
	q := newTestQueue(t)
	ctx := context.Background()
	c := q.client("jobs")
	ok(t, c.Configure(ctx, &Config{MaxBatchSize: 1, MaxBatchTimeout: 0, MaxRetries: 3, MaxConcurrency: 1}))
	delay := int64(60)
	must[Metrics](t)(c.Send(ctx, []Message{{Body: []byte("a"), ContentType: ContentText}, {Body: []byte("b"), ContentType: ContentText}, {Body: []byte("later"), ContentType: ContentText, DelaySeconds: &delay}}))
	db := q.dbs["queue:jobs"]
	if a := must[cell.Alarm](t)(db.Alarm()); !a.Set || a.Deadline > q.now.UnixMilli() {
		t.Fatalf("ready messages, alarm %+v: want due now", a)
	}
	ok(t, c.SetPaused(ctx, true))
	if b := must[Batch](t)(c.Lease(ctx, 0)); len(b.Messages) != 0 {
		t.Fatal("leased while paused")
	}
	ok(t, c.SetPaused(ctx, false))
	b := must[Batch](t)(c.Lease(ctx, 0))
	if len(b.Messages) != 1 {
		t.Fatal("nothing leased after resume")
	}
	if b2 := must[Batch](t)(c.Lease(ctx, 0)); len(b2.Messages) != 0 {
		t.Fatal("max_concurrency 1: a second batch was leased while the first runs")
	}
	if due, ok, known := NextDue(db); !known || !ok || due != q.now.UnixMilli()+DefaultLease {
		t.Errorf("next due %d %v %v: want the lease's end while concurrency is full", due, ok, known)
	}
	n := must[int64](t)(c.Purge(ctx))
	if n != 3 {
		t.Fatalf("purged %d, want 3", n)
	}
	if in := must[Info](t)(c.Info(ctx)); in.Messages != 0 {
		t.Fatalf("after purge %+v", in)
	}
}

func TestCheckSend_Limits(t *testing.T) {
	big := make([]byte, MaxMessageBytes+1)
	neg, far := int64(-1), int64(MaxDelaySeconds+1)
	for name, msgs := range map[string][]Message{
		"empty":      nil,
		"101":        make([]Message, 101),
		"big":        {{Body: big, ContentType: ContentBytes}},
		"batch size": {{Body: big[:MaxMessageBytes], ContentType: ContentBytes}, {Body: big[:MaxMessageBytes], ContentType: ContentBytes}, {Body: big[:1000], ContentType: ContentBytes}},
		"neg delay":  {{Body: []byte("x"), ContentType: ContentText, DelaySeconds: &neg}},
		"far delay":  {{Body: []byte("x"), ContentType: ContentText, DelaySeconds: &far}},
		"type":       {{Body: []byte("x"), ContentType: "xml"}},
	} {
		if err := CheckSend(msgs); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := CheckSend([]Message{{Body: big[:MaxMessageBytes], ContentType: ContentBytes}}); err != nil {
		t.Errorf("a message of exactly %d bytes: %v", MaxMessageBytes, err)
	}
}
