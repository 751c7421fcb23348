package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The garbage collector's settings for `celld serve`.
//
// A node's live heap is small (a few MB: the isolates and their prelude)
// while every request allocates tens of KB of short-lived JavaScript
// objects, so at Go's default (GOGC=100, a 4 MB minimum goal) the collector
// runs every few milliseconds and takes a third of the CPU of a Durable
// Object read. Two settings cut that:
//
//   - GOGC 200 instead of 100: each cycle comes after twice the allocation,
//     for a peak heap of 3× the live heap instead of 2×. Measured with
//     bench/run.sh pinned: hello 12.3k → 16.6k req/s, counter reads 5.5k →
//     6.3k.
//   - a floor under the heap goal (CELLD_GC_HEAP_MIN_MB, default 64): while
//     the live heap is small the goal stays at the floor, so a node serving
//     a few objects collects once per 64 MB of garbage, not once per 8.
//     With many resident objects the live heap passes the floor and GOGC
//     200 alone applies.
//
// GOGC in the environment wins: set, it is Go's own setting and neither
// of the above applies.

const (
	// defaultGCPercent is the GOGC celld serve uses when GOGC is unset.
	defaultGCPercent = 200
	// maxGCPercent bounds what the floor may raise GOGC to: at a live
	// heap of 1 MB a 64 MB floor would ask for 6300.
	maxGCPercent = 5000
)

// tuneGC applies the settings above unless GOGC is set; floorMB 0 keeps
// GOGC 200 without a floor. It returns a function that stops the floor.
func tuneGC(floorMB int64) (stop func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	debug.SetGCPercent(defaultGCPercent)
	if floorMB <= 0 {
		return func() {}
	}
	t := &gcFloor{floor: uint64(floorMB) << 20, base: defaultGCPercent, percent: defaultGCPercent}
	t.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t.arm()
	return func() {
		t.stopped.Store(true)
		debug.SetGCPercent(defaultGCPercent)
	}
}

// gcFloor keeps the heap goal at least floor bytes: after each collection
// it sets GOGC so that live × (1 + GOGC/100) reaches the floor, never
// below base.
type gcFloor struct {
	floor   uint64
	base    int
	percent int // last set; touched only by the cleanup, one at a time
	sample  []metrics.Sample
	stopped atomic.Bool
}

// gcSentinel is garbage the moment it is made: its cleanup runs after the
// next collection, re-arms, and so runs once per cycle. Not a tiny
// allocation (those are batched and freed late).
type gcSentinel struct{ _ [64]byte }

func (t *gcFloor) arm() {
	runtime.AddCleanup(new(gcSentinel), (*gcFloor).afterGC, t)
}

func (t *gcFloor) afterGC() {
	if t.stopped.Load() {
		return
	}
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		p := floorPercent(t.sample[0].Value.Uint64(), t.floor, t.base)
		// Only a real change: SetGCPercent recomputes the pacer.
		if d := p - t.percent; d > t.percent/8 || -d > t.percent/8 {
			t.percent = p
			debug.SetGCPercent(p)
		}
	}
	t.arm()
}

// floorPercent is the GOGC that makes a live heap of live bytes grow to
// floor before the next collection, at least base and at most
// maxGCPercent.
func floorPercent(live, floor uint64, base int) int {
	if live == 0 {
		return maxGCPercent
	}
	if live >= floor {
		return base
	}
	p := int((floor-live)*100/live) + 1
	return max(base, min(p, maxGCPercent))
}
