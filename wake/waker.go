package wake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
)

// DefaultTick is the waker's scan interval (CELLD_WAKER_TICK_MS).
const DefaultTick = 60 * time.Second

// ErrFormat: the bucket's wake/ format is not one this node reads.
var ErrFormat = errors.New("unsupported wake/ format")

// EnsureFormat creates wake/format.json on a fresh bucket and refuses a
// format this package does not read.
func EnsureFormat(ctx context.Context, s bucket.Store) error {
	for range 3 {
		data, _, err := s.Get(ctx, FormatKey)
		switch bucket.OutcomeOf(err) {
		case bucket.Applied:
			var f formatRecord
			if err := json.Unmarshal(data, &f); err != nil {
				return fmt.Errorf("read %s: %w: %v", FormatKey, ErrFormat, err)
			}
			if f.Format != Format {
				return fmt.Errorf("read %s: %w: format %d, this node reads %d", FormatKey, ErrFormat, f.Format, Format)
			}
			return nil
		case bucket.NotFound:
			_, err := s.Put(ctx, FormatKey, encode(formatRecord{Format: Format}), bucket.IfAbsent())
			if err == nil || bucket.OutcomeOf(err) == bucket.Rejected {
				continue // read back what is there
			}
			return fmt.Errorf("write %s: %w", FormatKey, err)
		default:
			return fmt.Errorf("read %s: %w", FormatKey, err)
		}
	}
	return fmt.Errorf("read %s: it keeps changing", FormatKey)
}

// WakerConfig configures a Waker.
type WakerConfig struct {
	Store   bucket.Store
	Node    string
	Session string
	Tick    time.Duration // default DefaultTick
	Now     func() time.Time
	// Wake acquires the cell here (epoch+1) and restores it; its object
	// then reads its alarm from SQLite and fires it if due.
	Wake func(ctx context.Context, cell string) error
	// Lookup reports the cell's ownership (default: fleet.LookupCell).
	Lookup func(ctx context.Context, cell string, now int64) (Owner, error)
	// Skip, when set, is consulted before waking a cell (for example: the
	// node is draining, or owns the cell itself).
	Skip     func(cell string) bool
	PageSize int // keys per LIST page (default 1000)
	MaxPages int // pages listed per tick at most (default 64)
	Parallel int // cells woken at once (default 8)
	Log      *slog.Logger
}

// Waker holds the waker role when it can and wakes the cells of due
// entries whose owner is gone.
type Waker struct {
	cfg WakerConfig

	holder atomic.Bool
	due    atomic.Int64 // due entries seen by the last scan
	pages  atomic.Int64 // LIST pages of the last scan
	woken  atomic.Int64 // cells woken, in total
	delete atomic.Int64 // retired entries deleted, in total
	ticks  atomic.Int64
	resign atomic.Bool
}

// NewWaker makes a waker; Run drives it.
func NewWaker(cfg WakerConfig) *Waker {
	if cfg.Tick <= 0 {
		cfg.Tick = DefaultTick
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = bucket.MaxListLimit
	}
	if cfg.MaxPages <= 0 {
		cfg.MaxPages = 64
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 8
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Lookup == nil {
		store := cfg.Store
		cfg.Lookup = func(ctx context.Context, cell string, now int64) (Owner, error) {
			ci, err := fleet.LookupCell(ctx, store, cell, now)
			if err != nil {
				return Owner{}, err
			}
			return Owner{Live: ci.OwnerLive, Epoch: ci.Own.Epoch}, nil
		}
	}
	return &Waker{cfg: cfg}
}

// WakerStats are the waker's counters.
type WakerStats struct {
	Holder  bool  // this node holds the waker role
	Due     int64 // due entries seen by the last scan
	Pages   int64 // LIST pages the last scan read
	Woken   int64 // cells woken so far
	Deleted int64 // retired entries deleted so far
	Ticks   int64
}

// Stats returns the counters.
func (w *Waker) Stats() WakerStats {
	return WakerStats{Holder: w.holder.Load(), Due: w.due.Load(), Pages: w.pages.Load(),
		Woken: w.woken.Load(), Deleted: w.delete.Load(), Ticks: w.ticks.Load()}
}

// Run ticks until ctx ends.
func (w *Waker) Run(ctx context.Context) {
	t := time.NewTicker(w.cfg.Tick)
	defer t.Stop()
	for {
		if err := w.Tick(ctx); err != nil && ctx.Err() == nil {
			w.cfg.Log.Warn("waker tick", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick claims (or renews) the waker role and, holding it, scans the due
// minutes once.
func (w *Waker) Tick(ctx context.Context) error {
	w.ticks.Add(1)
	if w.resign.Load() {
		return nil
	}
	ok, err := w.claim(ctx)
	w.holder.Store(ok)
	if err != nil || !ok {
		return err
	}
	return w.scan(ctx)
}

// Resign gives the role up for good (the node drains): the lease is
// rewritten as expired, so any other node may claim it at its next tick.
func (w *Waker) Resign(ctx context.Context) error {
	w.resign.Store(true)
	w.holder.Store(false)
	data, obj, err := w.cfg.Store.Get(ctx, WakerKey)
	if bucket.OutcomeOf(err) == bucket.NotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", WakerKey, err)
	}
	var l WakerLease
	if json.Unmarshal(data, &l) != nil || l.Session != w.cfg.Session {
		return nil // not ours
	}
	l.Expires = 0
	if _, err := w.cfg.Store.Put(ctx, WakerKey, encode(l), bucket.IfMatch(obj.ETag)); err != nil && bucket.OutcomeOf(err) != bucket.Rejected {
		return fmt.Errorf("write %s: %w", WakerKey, err)
	}
	return nil
}

// claim takes the role if it is free, expired or ours; the lease lasts
// three ticks, so a dead holder is replaced within about three ticks.
func (w *Waker) claim(ctx context.Context) (bool, error) {
	now := w.cfg.Now().UnixMilli()
	data, obj, err := w.cfg.Store.Get(ctx, WakerKey)
	var cur *WakerLease
	cond := bucket.IfAbsent()
	switch bucket.OutcomeOf(err) {
	case bucket.NotFound:
	case bucket.Applied:
		var l WakerLease
		if jerr := json.Unmarshal(data, &l); jerr == nil {
			cur = &l
		}
		cond = bucket.IfMatch(obj.ETag)
	default:
		return false, fmt.Errorf("read %s: %w", WakerKey, err)
	}
	if !Claimable(cur, w.cfg.Session, now) {
		return false, nil
	}
	if w.resign.Load() {
		return false, nil
	}
	lease := WakerLease{Node: w.cfg.Node, Session: w.cfg.Session, Expires: now + 3*w.cfg.Tick.Milliseconds()}
	_, err = w.cfg.Store.Put(ctx, WakerKey, encode(lease), cond)
	switch bucket.OutcomeOf(err) {
	case bucket.Applied:
		return true, nil
	case bucket.Rejected:
		return false, nil // another node took it
	}
	return false, fmt.Errorf("write %s: %w", WakerKey, err)
}

// scan lists the due minutes in order and acts on each entry.
func (w *Waker) scan(ctx context.Context) error {
	now := w.cfg.Now().UnixMilli()
	after := ""
	var due []Entry
	pages := int64(0)
	for p := 0; p < w.cfg.MaxPages; p++ {
		page, err := w.cfg.Store.List(ctx, EntriesPrefix, after, w.cfg.PageSize)
		if err != nil {
			return fmt.Errorf("list %s: %w", EntriesPrefix, err)
		}
		pages++
		done := !page.Truncated || len(page.Objects) == 0
		for _, o := range page.Objects {
			e, err := ParseKey(o.Key)
			if err != nil {
				continue // not ours to judge; never deleted
			}
			if !Due(e.Minute, now) {
				done = true
				break
			}
			due = append(due, e)
		}
		if done {
			break
		}
		after = page.Objects[len(page.Objects)-1].Key
	}
	w.pages.Store(pages)
	w.due.Store(int64(len(due)))
	// One decision per cell: its entries, oldest first.
	byCell := map[string][]Entry{}
	var order []string
	for _, e := range due {
		if _, ok := byCell[e.Cell]; !ok {
			order = append(order, e.Cell)
		}
		byCell[e.Cell] = append(byCell[e.Cell], e)
	}
	sem := make(chan struct{}, w.cfg.Parallel)
	var wg sync.WaitGroup
	for _, cellName := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			w.handle(ctx, cellName, byCell[cellName], now)
		}()
	}
	wg.Wait()
	return nil
}

func (w *Waker) handle(ctx context.Context, cellName string, entries []Entry, now int64) {
	retired, err := w.readRetired(ctx, cellName)
	if err != nil {
		w.cfg.Log.Warn("waker: read retirement", "cell", cellName, "err", err)
		return
	}
	var live []Entry
	for _, e := range entries {
		if Decide(e, retired, Owner{Live: true}) == Delete {
			if err := w.cfg.Store.Delete(ctx, e.Key()); err == nil {
				w.delete.Add(1)
			}
			continue
		}
		live = append(live, e)
	}
	if len(live) == 0 {
		return
	}
	if w.cfg.Skip != nil && w.cfg.Skip(cellName) {
		return
	}
	owner, err := w.cfg.Lookup(ctx, cellName, now)
	if err != nil {
		w.cfg.Log.Warn("waker: look up owner", "cell", cellName, "err", err)
		return
	}
	if Decide(live[0], retired, owner) != Wake {
		return
	}
	w.cfg.Log.Info("waker: waking cell for a due alarm", "cell", cellName, "entry", live[0].Key())
	if err := w.cfg.Wake(ctx, cellName); err != nil {
		w.cfg.Log.Warn("waker: wake cell", "cell", cellName, "err", err)
		return
	}
	w.woken.Add(1)
}

func (w *Waker) readRetired(ctx context.Context, cellName string) (*Retired, error) {
	data, _, err := w.cfg.Store.Get(ctx, RetiredKey(cellName))
	switch bucket.OutcomeOf(err) {
	case bucket.NotFound:
		return nil, nil
	case bucket.Applied:
		var r Retired
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("read %s: %w", RetiredKey(cellName), err)
		}
		return &r, nil
	}
	return nil, fmt.Errorf("read %s: %w", RetiredKey(cellName), err)
}

// ClassID splits a Durable Object cell name "Class:id".
func ClassID(cell string) (class, id string, ok bool) {
	return strings.Cut(cell, ":")
}
