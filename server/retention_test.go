package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
)

// A cell that stays resident still sheds the epochs below its newest
// snapshot when retention is on, and what its live epoch's newer objects
// cover, and restores elsewhere afterwards.
func TestRetention_PrunesResidentCells(t *testing.T) {
	ctx := context.Background()
	mem := bucket.NewMem()
	const name = "note:r"
	epochs := func() map[string]int {
		objs, err := bucket.ListAll(ctx, mem, cell.LTXPrefix(name))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, o := range objs {
			if dir, _, ok := strings.Cut(strings.TrimPrefix(o.Key, cell.LTXPrefix(name)), "/"); ok {
				out[dir]++
			}
		}
		return out
	}
	// Epoch 1: some history, then released.
	a := startDrainNode(t, mem, "node-a", nil)
	for i := range 3 {
		a.callCell(t, name, fmt.Sprint("a", i))
	}
	a.shutdown(t, "")
	if err := a.wait(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// What epoch 1 left, and every object epoch 2 ever writes (counted as
	// it is written: the periodic pass may prune while the writes are
	// still going on, on a slow machine, so a listing after them can
	// already be pruned).
	before := epochs()
	var mu sync.Mutex
	written := map[string]bool{}
	e2 := cell.LTXPrefix(name) + "e0000000000000002/"
	mem.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" && strings.HasPrefix(c.Key, e2) {
			mu.Lock()
			written[c.Key] = true
			mu.Unlock()
		}
		return bucket.Fault{}
	})
	// Epoch 2: enough writes for a snapshot in the new epoch; the cell
	// stays resident.
	every := retainEvery
	t.Cleanup(func() { retainEvery = every })
	retainEvery = func(time.Duration) time.Duration { return 100 * time.Millisecond }
	b := startDrainNode(t, mem, "node-b", func(o *Options) { o.LTXRetention = time.Millisecond })
	for i := range 40 {
		if status, body := b.callCell(t, name, fmt.Sprint("b", i)); status != 200 || body != fmt.Sprint(4+i) {
			t.Fatalf("write %d: %d %q", i, status, body)
		}
	}
	mu.Lock()
	before["e0000000000000002"] = len(written)
	mu.Unlock()
	if before["e0000000000000001"] < 2 || before["e0000000000000002"] == 0 {
		t.Fatalf("history before pruning: %v", before)
	}
	// The periodic pass prunes while the cell stays resident.
	var after map[string]int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		after = epochs()
		// Only the retired marker is left of epoch 1; the live epoch keeps
		// what a restore applies.
		if after["e0000000000000001"] == 1 && after["e0000000000000002"] < before["e0000000000000002"] {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not pruned while resident: epoch 1 %d objects (before %d), epoch 2 %d (before %d)",
				after["e0000000000000001"], before["e0000000000000001"], after["e0000000000000002"], before["e0000000000000002"])
		}
	}
	t.Logf("pruned while resident: epoch 1 %d -> %d objects, live epoch 2 %d -> %d",
		before["e0000000000000001"], after["e0000000000000001"], before["e0000000000000002"], after["e0000000000000002"])
	// Still restorable from the bucket alone, with everything in it.
	b.shutdown(t, "")
	if err := b.wait(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	c := startDrainNode(t, mem, "node-c", nil)
	if status, body := c.callCell(t, name, "c"); status != 200 || body != "44" {
		t.Errorf("restored elsewhere: %d %q, want 44", status, body)
	}
}
