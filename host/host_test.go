package host

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// countingLease counts the ownership re-reads the gate makes.
type countingLease struct {
	*fleet.Node
	confirms atomic.Int32
	fail     atomic.Pointer[error]
}

func (l *countingLease) Confirm(ctx context.Context, cell string, epoch uint64) error {
	l.confirms.Add(1)
	if p := l.fail.Load(); p != nil {
		return *p
	}
	return l.Node.Confirm(ctx, cell, epoch)
}

func startLease(t *testing.T, store bucket.Store, name string, kind string) *countingLease {
	t.Helper()
	ctx := context.Background()
	if err := fleet.EnsureFormat(ctx, store); err != nil {
		t.Fatal(err)
	}
	n, err := fleet.Start(ctx, store, fleet.Config{Node: name, Kind: kind, TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(context.Background()) })
	return &countingLease{Node: n}
}

func TestCell_LifeAcrossEpochs(t *testing.T) {
	ctx := context.Background()
	store := bucket.NewMem()
	lease := startLease(t, store, "tool-a", core.KindTool)
	h := New(store, lease, nil)
	path := filepath.Join(t.TempDir(), "c.sqlite")

	c, err := h.Open(ctx, "kv:ns", path, OpenOptions{Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Epoch() != 1 || c.Phase() != PhaseOwned {
		t.Fatalf("epoch %d phase %s, want 1 owned", c.Epoch(), c.Phase())
	}
	if err := c.DB().Put("k", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := c.Gate(ctx); err != nil {
		t.Fatalf("gate: %v", err)
	}
	if st := c.Stats(); st.Durable < 1 {
		t.Fatalf("gate passed with durable TXID %d", st.Durable)
	}
	if err := c.Stop(ctx, PhaseEvicting); err != nil {
		t.Fatal(err)
	}
	if c.Phase() != PhaseStopped || c.Owned() {
		t.Fatalf("after stop: phase %s owned %v", c.Phase(), c.Owned())
	}

	// A second lease (another process) takes it at epoch 2 with the data.
	other := startLease(t, store, "node-b", core.KindNode)
	h2 := New(store, other, nil)
	c2, err := h2.Open(ctx, "kv:ns", filepath.Join(t.TempDir(), "c.sqlite"), OpenOptions{Prefetch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Stop(ctx, PhaseEvicting)
	if c2.Epoch() != 2 {
		t.Fatalf("epoch %d, want 2", c2.Epoch())
	}
	v, ok, err := c2.DB().Get("k")
	if err != nil || !ok || string(v) != "v1" {
		t.Fatalf("restored k = %q %v %v", v, ok, err)
	}
	// While b holds it, a's host cannot.
	_, err = h.Open(ctx, "kv:ns", path, OpenOptions{})
	var el *fleet.ElsewhereError
	if !errors.As(err, &el) || el.Node != "node-b" {
		t.Fatalf("open of a cell a live peer owns: %v", err)
	}
}

func TestCell_GateSharesConfirmationRounds(t *testing.T) {
	ctx := context.Background()
	store := bucket.NewMem()
	lease := startLease(t, store, "node-a", core.KindNode)
	c, err := New(store, lease, nil).Open(ctx, "kv:ns", filepath.Join(t.TempDir(), "c.sqlite"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx, PhaseEvicting)

	// No write, no re-read.
	for range 5 {
		if err := c.Gate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := lease.confirms.Load(); n != 0 {
		t.Fatalf("%d ownership re-reads with nothing written", n)
	}
	// One write, many outputs waiting on it: far fewer re-reads than
	// outputs (concurrent gates share a round).
	if err := c.DB().Put("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- c.Gate(ctx) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := lease.confirms.Load(); n < 1 || n > 2 {
		t.Fatalf("%d ownership re-reads for one write and 32 outputs, want 1 (2 if one round began early)", n)
	}
	// Confirmed: later outputs pass without a re-read.
	before := lease.confirms.Load()
	if err := c.Gate(ctx); err != nil || lease.confirms.Load() != before {
		t.Fatalf("gate after confirmation: %v, %d re-reads", err, lease.confirms.Load()-before)
	}
}

func TestCell_GateRefusalEndsTheCell(t *testing.T) {
	ctx := context.Background()
	store := bucket.NewMem()
	lease := startLease(t, store, "node-a", core.KindNode)
	c, err := New(store, lease, nil).Open(ctx, "kv:ns", filepath.Join(t.TempDir(), "c.sqlite"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(ctx, PhaseEvicting)
	boom := fmt.Errorf("confirm ownership: %w", fleet.ErrNotOwner)
	lease.fail.Store(&boom)
	if err := c.DB().Put("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := c.Gate(ctx); !errors.Is(err, fleet.ErrNotOwner) {
		t.Fatalf("gate with ownership not confirmed: %v", err)
	}
	select {
	case <-c.Context().Done():
	default:
		t.Fatal("a refused gate left the cell's context live")
	}
	if cause := context.Cause(c.Context()); !errors.Is(cause, fleet.ErrNotOwner) {
		t.Fatalf("cause %v", cause)
	}
}

func TestCell_WithdrawnCallerLeavesTheCellLive(t *testing.T) {
	store := bucket.NewMem()
	lease := startLease(t, store, "node-a", core.KindNode)
	c, err := New(store, lease, nil).Open(context.Background(), "kv:ns", filepath.Join(t.TempDir(), "c.sqlite"), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop(context.Background(), PhaseEvicting)
	if err := c.DB().Put("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Gate(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("gate with a cancelled caller: %v", err)
	}
	if c.Context().Err() != nil {
		t.Fatalf("a caller giving up ended the cell: %v", context.Cause(c.Context()))
	}
	if err := c.Gate(context.Background()); err != nil {
		t.Fatalf("next gate: %v", err)
	}
}

func TestHost_ResumeAtTheSameEpoch(t *testing.T) {
	ctx := context.Background()
	store := bucket.NewMem()
	lease := startLease(t, store, "node-a", core.KindNode)
	h := New(store, lease, nil)
	path := filepath.Join(t.TempDir(), "c.sqlite")
	c, err := h.Open(ctx, "kv:ns", path, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DB().Put("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := c.Gate(ctx); err != nil {
		t.Fatal(err)
	}
	pos, ok, err := c.Preserve(ctx)
	if err != nil || !ok || pos.Epoch != 1 || pos.TXID == 0 {
		t.Fatalf("preserve: %+v %v %v", pos, ok, err)
	}
	if !c.Owned() {
		t.Fatal("preserve released the cell")
	}
	c2, err := h.Resume(ctx, "kv:ns", path, pos)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Stop(ctx, PhaseEvicting)
	if c2.Epoch() != 1 {
		t.Fatalf("resumed at epoch %d", c2.Epoch())
	}
	if v, ok, _ := c2.DB().Get("k"); !ok || string(v) != "v" {
		t.Fatalf("resumed k = %q %v", v, ok)
	}
}
