package wake

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/bucket"
)

// Alarm is a cell's alarm as its owner reports it (cell.Alarm's fields;
// this package does not import cell).
type Alarm struct {
	Set      bool
	Deadline int64 // unix ms
	Seq      uint64
}

// Publisher publishes the wake entries of the cells a node owns.
type Publisher struct {
	store bucket.Store
	log   *slog.Logger

	puts, deletes, retires atomic.Int64
	armed                  atomic.Int64 // cells with an alarm set
}

// NewPublisher makes a publisher on store.
func NewPublisher(store bucket.Store, log *slog.Logger) *Publisher {
	if log == nil {
		log = slog.Default()
	}
	return &Publisher{store: store, log: log}
}

// Counts are a publisher's counters.
type Counts struct {
	Puts, Deletes, Retires int64 // entry PUTs, entry DELETEs, retirement record PUTs
	Armed                  int64 // cells with an alarm set now
}

// Counts returns the counters.
func (p *Publisher) Counts() Counts {
	return Counts{Puts: p.puts.Load(), Deletes: p.deletes.Load(), Retires: p.retires.Load(), Armed: p.armed.Load()}
}

// Cell tracks the wake entries of one owned cell at one epoch.
func (p *Publisher) Cell(name string, epoch uint64) *Cell {
	return &Cell{p: p, name: name, epoch: epoch, changed: make(chan struct{})}
}

// Cell is the wake state of one owned cell: the alarm its object last
// reported, what of it is published, and the entries published at this
// epoch and not yet deleted.
type Cell struct {
	p     *Publisher
	name  string
	epoch uint64

	mu       sync.Mutex
	want     Alarm
	reported bool
	pub      uint64 // highest reported Seq whose entry is published (or needs none)
	live     []published
	retire   bool // the first report came from history: retire older epochs
	running  bool
	closed   bool
	counted  bool // counted in armed
	changed  chan struct{}
}

type published struct {
	key string
	seq uint64
}

// Report records the object's alarm after a committed change, and starts
// publishing it. It never blocks (it runs on the object's loop).
func (c *Cell) Report(a Alarm) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || (c.reported && a.Seq <= c.want.Seq) {
		return
	}
	if !c.reported {
		c.retire = a.Seq > 0 // restored from history: older epochs may have entries
		c.pub = 0
	}
	if !a.Set && !c.running {
		// Nothing to publish, and nothing earlier still on its way out:
		// outputs need not wait (retiring older epochs goes on behind).
		c.pub = a.Seq
	}
	c.reported = true
	c.want = a
	if a.Set != c.counted {
		c.counted = a.Set
		if a.Set {
			c.p.armed.Add(1)
		} else {
			c.p.armed.Add(-1)
		}
	}
	if !c.running && (c.pub < a.Seq || c.retire) {
		c.running = true
		go c.publish()
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// Armed is the alarm last reported.
func (c *Cell) Armed() Alarm {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.want
}

// Mark is the installation sequence reported so far: pass it to Wait
// and Confirmed.
func (c *Cell) Mark() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.want.Seq
}

// Wait returns once every installation reported up to mark is covered by
// a published entry (an unset alarm needs none). The output gate calls
// it: no response that revealed an installation leaves before this.
func (c *Cell) Wait(ctx context.Context, mark uint64) error {
	for {
		c.mu.Lock()
		if c.pub >= mark || !c.reported {
			c.mu.Unlock()
			return nil
		}
		if c.closed {
			c.mu.Unlock()
			return fmt.Errorf("publish wake entry of %s: the cell stopped", c.name)
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("publish wake entry of %s: %w", c.name, context.Cause(ctx))
		}
	}
}

// Confirmed says the state reported at mark is durable (the output gate
// passed after it): entries of older installations are superseded and
// deleted in the background. A late DELETE is harmless: keys are never
// reused.
func (c *Cell) Confirmed(mark uint64) {
	c.mu.Lock()
	var old []string
	keep := c.live[:0]
	for _, e := range c.live {
		if e.seq < mark && mark <= c.pub {
			old = append(old, e.key)
		} else {
			keep = append(keep, e)
		}
	}
	c.live = keep
	c.mu.Unlock()
	if len(old) > 0 {
		go c.p.deleteKeys(old)
	}
}

// Close stops tracking (the cell stops). Published entries stay: the
// successor, or the waker, deals with them.
func (c *Cell) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.counted {
		c.counted = false
		c.p.armed.Add(-1)
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

func (p *Publisher) deleteKeys(keys []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, k := range keys {
		if err := p.store.Delete(ctx, k); err != nil {
			p.log.Debug("delete superseded wake entry", "key", k, "err", err)
			continue
		}
		p.deletes.Add(1)
	}
}

// publish runs until everything reported is published, retrying a failed
// write with backoff (the outputs waiting for it wait on).
func (c *Cell) publish() {
	backoff := 50 * time.Millisecond
	for {
		c.mu.Lock()
		if c.closed || (c.pub >= c.want.Seq && !c.retire) {
			c.running = false
			c.mu.Unlock()
			return
		}
		w, retire := c.want, c.retire
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		var err error
		key := ""
		if w.Set && c.pubSeq() < w.Seq {
			key = Entry{Cell: c.name, ID: ID{Epoch: c.epoch, Seq: w.Seq}, Deadline: w.Deadline}.Key()
			_, err = c.p.store.Put(ctx, key, encode(map[string]any{"deadline_ms": w.Deadline}), bucket.Cond{})
			if err == nil {
				c.p.puts.Add(1)
			}
		}
		if err == nil && retire {
			// Our own entry (if any) is out first: now every older epoch's
			// entries are superseded by what this epoch restored.
			err = c.p.Retire(ctx, c.name, ID{Epoch: c.epoch})
		}
		cancel()
		if err != nil {
			c.p.log.Warn("publish wake entry", "cell", c.name, "epoch", c.epoch, "err", err)
			time.Sleep(backoff)
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 50 * time.Millisecond
		c.mu.Lock()
		if key != "" {
			c.live = append(c.live, published{key: key, seq: w.Seq})
		}
		c.pub = max(c.pub, w.Seq)
		if retire {
			c.retire = false
		}
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
}

func (c *Cell) pubSeq() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pub
}

// Retire moves the cell's retirement frontier up to below (never down),
// with conditional writes: every entry older than below may then be
// deleted by the waker.
func (p *Publisher) Retire(ctx context.Context, cell string, below ID) error {
	key := RetiredKey(cell)
	for range 8 {
		data, obj, err := p.store.Get(ctx, key)
		cond := bucket.IfAbsent()
		switch bucket.OutcomeOf(err) {
		case bucket.NotFound:
		case bucket.Applied:
			var cur Retired
			if jerr := json.Unmarshal(data, &cur); jerr == nil && !cur.Below.Less(below) {
				return nil // already at or past it
			}
			cond = bucket.IfMatch(obj.ETag)
		default:
			return fmt.Errorf("read %s: %w", key, err)
		}
		_, err = p.store.Put(ctx, key, encode(Retired{Below: below}), cond)
		switch bucket.OutcomeOf(err) {
		case bucket.Applied:
			p.retires.Add(1)
			return nil
		case bucket.Rejected:
			continue // raced: read again
		default:
			// Ambiguous or failed: re-read settles it on the next round.
			if ctx.Err() != nil {
				return fmt.Errorf("write %s: %w", key, err)
			}
		}
	}
	return fmt.Errorf("write %s: too many conflicting writers", key)
}
