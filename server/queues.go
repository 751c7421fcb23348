package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/queue"
	"github.com/celldgo/celld/queue/queuejs"
	"github.com/celldgo/celld/worker"
)

// Queues on a node. A queue is the built-in cell queue:<name>; its owner
// delivers it: the cell's alarm (set by the cell's handler to the next
// instant something is due) fires a delivery pass on this node, which
// records the deployment's consumer in the cell, moves exhausted
// messages to their dead-letter queue, and leases due batches — up to
// the consumer's max_concurrency at once — to the deployment's queue()
// handler, run in a pooled isolate of this node. A batch's lease
// outlives this node in the cell: after a crash the next owner finds it
// expired and delivers its messages again.

// queueState is a queue cell's delivery on this node.
type queueState struct {
	mu         sync.Mutex
	configured bool
	cfg        *queue.Config // what the cell was last told
	inflight   int           // batches running
	passing    bool          // a pass runs; again: run one more after it
	again      bool
	lastSeq    uint64 // the alarm installation last reported
	group      *queue.Grouper
	timer      *time.Timer // the local delivery timer (armQueue)
	timerAt    int64
}

// queueLease is the default of how long a batch is leased to its
// handler (Options.QueueLease); a handler that neither returns nor throws
// by then counts as a failed delivery, and so does the death of its node.
var queueLease = 5 * time.Minute

func (o *objects) batchLease() time.Duration {
	if o.queueLease > 0 {
		return o.queueLease
	}
	return queueLease
}

// queueMaxCalls bounds the requests waiting for one queue cell on its
// owner; past it a send is refused as overloaded (503, Retry-After).
var queueMaxCalls = 256

// ErrQueueOverloaded: a queue's owner holds queueMaxCalls requests for it
// already; retry shortly.
var ErrQueueOverloaded error = queueOverloaded{}

type queueOverloaded struct{}

func (queueOverloaded) Error() string        { return "queue owner overloaded" }
func (queueOverloaded) Is(target error) bool { return target == worker.ErrUnavailable }

// queueDefaultConcurrency: batches of one queue in flight on a node when
// the consumer sets no max_concurrency.
const queueDefaultConcurrency = 8

// startQueue hooks a queue cell's alarm to delivery.
func (o *objects) startQueue(r *resident) {
	r.queue = &queueState{}
	r.queue.group = queue.NewGrouper(r.callCell)
	o.alarmHooks(r, func(ctx context.Context) (worker.AlarmResult, error) {
		o.queuePass(ctx, r)
		return worker.AlarmResult{Ran: true, Started: time.Now()}, nil
	})
	r.bi.After(func(db *cell.DB) {
		a, err := db.Alarm()
		if err != nil {
			return
		}
		q := r.queue
		due, ok, known := queue.NextDue(db)
		q.mu.Lock()
		changed := a.Seq != q.lastSeq
		q.lastSeq = a.Seq
		q.mu.Unlock()
		if changed {
			r.onAlarm(a)
		}
		if known {
			o.armQueue(r, due, ok)
		}
	})
}

// stopQueue stops r's local delivery timer and forgets its cell (the
// cell stops).
func (r *resident) stopQueue() {
	q := r.queue
	q.mu.Lock()
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	q.mu.Unlock()
	queue.Forget(r.hc.DB())
}

// armQueue sets r's local delivery timer to due (unix ms), the exact next
// instant something is due; the cell's alarm stands within
// queue.AlarmSlack of it for the case this node dies.
func (o *objects) armQueue(r *resident, due int64, ok bool) {
	q := r.queue
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.timer != nil && (!ok || q.timerAt != due) {
		q.timer.Stop()
		q.timer = nil
	}
	if !ok || q.timer != nil {
		return
	}
	q.timerAt = due
	q.timer = time.AfterFunc(time.Until(time.UnixMilli(due)), func() { o.queueKick(r) })
}

// queueKick runs a pass as the alarm would (the cell just activated, or
// a batch settled).
func (o *objects) queueKick(r *resident) {
	_, due := r.armed()
	o.fireAlarm(r, due, time.Time{})
}

// consumerOf is the consumer of queue name in dep, as the cell stores it.
func consumerOf(dep *deploy.Deployment, name string) *queue.Config {
	if dep == nil || dep.Manifest.Queues == nil {
		return nil
	}
	for _, c := range dep.Manifest.Queues.Consumers {
		if c.Queue != name {
			continue
		}
		cfg := &queue.Config{Script: dep.Manifest.ScriptName, MaxBatchSize: queue.DefaultBatchSize,
			MaxBatchTimeout: queue.DefaultTimeoutSec, MaxRetries: queue.DefaultRetries, DeadLetterQueue: c.DeadLetterQueue}
		set := func(dst *int, v *int) {
			if v != nil {
				*dst = *v
			}
		}
		set(&cfg.MaxBatchSize, c.MaxBatchSize)
		set(&cfg.MaxBatchTimeout, c.MaxBatchTimeout)
		set(&cfg.MaxRetries, c.MaxRetries)
		set(&cfg.RetryDelay, c.RetryDelay)
		set(&cfg.MaxConcurrency, c.MaxConcurrency)
		return cfg
	}
	return nil
}

func sameConfig(a, b *queue.Config) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// queueClient reaches r's own cell directly and other queues (dead-letter
// queues) wherever they live.
func (o *objects) queueClient(r *resident, name string) *queue.Client {
	return queue.NewClient(cell.CallerFunc(func(ctx context.Context, cellName string, req []byte) ([]byte, error) {
		if cellName == r.cell {
			return r.callBuiltin(ctx, req)
		}
		return o.Call(ctx, cellName, req)
	}), name)
}

// queuePass delivers what is due now. Passes of one queue do not
// overlap: one asked for while another runs runs right after it.
func (o *objects) queuePass(ctx context.Context, r *resident) {
	q := r.queue
	q.mu.Lock()
	if q.passing {
		q.again = true
		q.mu.Unlock()
		return
	}
	q.passing = true
	q.mu.Unlock()
	for {
		err := o.queuePassOnce(ctx, r)
		q.mu.Lock()
		again := q.again
		q.again = false
		if !again || err != nil {
			q.passing = false
			q.mu.Unlock()
			if err != nil && r.hc.Context().Err() == nil {
				o.log.Warn("queue delivery pass failed; trying again in 1s", "cell", r.cell, "err", err)
				time.AfterFunc(time.Second, func() { o.queueKick(r) })
			}
			return
		}
		q.mu.Unlock()
	}
}

func (o *objects) queuePassOnce(ctx context.Context, r *resident) error {
	name, _ := queue.NameOf(r.cell)
	c := o.queueClient(r, name)
	o.mu.Lock()
	ap := o.app
	o.mu.Unlock()
	var dep *deploy.Deployment
	if ap != nil {
		dep = ap.dep
	}
	cfg := consumerOf(dep, name)
	q := r.queue
	q.mu.Lock()
	stale := !q.configured || !sameConfig(q.cfg, cfg)
	q.mu.Unlock()
	if stale {
		if err := c.Configure(ctx, cfg); err != nil {
			return err
		}
		q.mu.Lock()
		q.configured, q.cfg = true, cfg
		q.mu.Unlock()
	}
	if cfg == nil || ap == nil {
		return nil
	}
	if _, err := c.MoveDead(ctx); err != nil {
		return err
	}
	limit := cfg.MaxConcurrency
	if limit <= 0 {
		limit = queueDefaultConcurrency
	}
	for {
		q.mu.Lock()
		full := q.inflight >= limit
		if !full {
			q.inflight++
		}
		q.mu.Unlock()
		if full {
			return nil
		}
		b, err := c.Lease(ctx, o.batchLease().Milliseconds())
		if err != nil || len(b.Messages) == 0 {
			q.mu.Lock()
			q.inflight--
			q.mu.Unlock()
			return err
		}
		r.inflight.Add(1)
		go o.deliverBatch(r, c, ap, b)
	}
}

// deliverBatch runs the consumer on one leased batch and settles it.
func (o *objects) deliverBatch(r *resident, c *queue.Client, ap *app, b queue.Batch) {
	defer r.done()
	ctx, cancel := context.WithTimeout(r.hc.Context(), o.batchLease())
	outs, err := queuejs.Deliver(ctx, ap.rt, c.Name(), b)
	cancel()
	if err != nil {
		var ex *worker.Exception
		if errors.As(err, &ex) {
			o.log.Info("queue handler threw", "queue", c.Name(), "messages", len(b.Messages), "error", ex.Error())
		} else {
			o.log.Warn("queue handler did not run", "queue", c.Name(), "err", err)
		}
	}
	sctx, scancel := context.WithTimeout(r.hc.Context(), 30*time.Second)
	if serr := c.Settle(sctx, b.Lease, outs); serr != nil {
		o.log.Warn("settle queue batch; its lease will expire instead", "queue", c.Name(), "err", serr)
	}
	scancel()
	q := r.queue
	q.mu.Lock()
	q.inflight--
	q.mu.Unlock()
	go o.queueKick(r)
}

// activateConsumers brings the queues ap consumes to a node (this one,
// unless a live peer owns them) and has every resident queue take the
// deployment's consumer: messages sent while no consumer was deployed, or
// moved by a command under its own lease, are delivered without waiting
// for the next send.
func (o *objects) activateConsumers(ap *app) {
	if ap.dep.Manifest.Queues != nil {
		for _, c := range ap.dep.Manifest.Queues.Consumers {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := o.local(ctx, queue.Kind.Name, c.Queue)
			cancel()
			var elsewhere *fleet.ElsewhereError
			if err != nil && !errors.As(err, &elsewhere) && !o.drain.active.Load() {
				o.log.Debug("activate consumed queue", "queue", c.Queue, "err", err)
			}
		}
	}
	o.mu.Lock()
	var queues []*resident
	for _, r := range o.residents {
		if r.queue != nil {
			queues = append(queues, r)
		}
	}
	o.mu.Unlock()
	for _, r := range queues {
		go o.queueKick(r)
	}
}
