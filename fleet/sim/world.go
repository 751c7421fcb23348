// Package sim drives the fleet core through seeded, deterministic schedules:
// 2–5 nodes with skewed, drifting clocks; a store with latency, timeouts,
// lost responses after applied writes and 5xx; crashes and restarts at any
// step; random acquire and release requests for a handful of cells. After
// every step it checks safety, and at quiescence liveness. The same seed
// always replays the same run.
package sim

import (
	"container/heap"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/celldgo/celld/fleet/core"
)

// Options for one run.
type Options struct {
	Seed     uint64
	Mutation core.Mutation // a deliberately broken core, to test the checker
	Trace    io.Writer     // if set, every step is printed
	// Workload is the simulated time (ms) of random requests and faults
	// before quiescence. Default 60000.
	Workload int64
	// SkewMS bounds each node's clock offset (±). Default 2000, inside the
	// core's default margin; wider skews test the observation rule, which
	// no offset can fool.
	SkewMS int64
	// Margin is the core's skew margin (core.Config.Margin). Default 5000;
	// a huge one leaves takeover to the observation rule alone.
	Margin int64
	// RecoveryGate turns the core's takeover recovery gate on (its
	// outcome is simulated: settled, or failed one time in five).
	RecoveryGate bool
	// MixedTTL gives each node its own lease TTL (3, 10 or 30 s), as a
	// fleet whose nodes were started with different CELLD_TTL_MS has:
	// a node must watch a peer's lease for that peer's TTL, not its own.
	MixedTTL bool
}

// Result of one run.
type Result struct {
	Seed      uint64
	Nodes     int
	Steps     int
	Acquired  int    // StartCell effects seen
	Violation string // empty when every check held
}

const (
	t0        = int64(1_780_000_000_000) // simulated epoch start (ms)
	ttl       = 10000
	margin    = 5000
	timeout   = 3000 // executor's store call timeout: past it a write is ambiguous
	maxSkewMS = 2000
)

type item struct {
	at  int64
	seq uint64
	fn  func()
}

type queue []item

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(item)) }
func (q *queue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

type object struct {
	data []byte
	etag string
}

type node struct {
	name     string
	skew     int64 // ms
	drift    int64 // parts per million
	ttl      int64 // lease TTL, ms
	m        *core.Machine
	session  string
	sessions int
	dead     bool // crashed or fenced, waiting for its supervisor
	// pausedUntil: a frozen process (SIGSTOP, GC pause) takes no step
	// before this real time.
	pausedUntil int64
}

type world struct {
	o       Options
	rng     *rand.Rand
	now     int64
	q       queue
	seq     uint64
	steps   int
	healthy bool // quiescence: no faults, no crashes
	store   map[string]object
	gen     uint64
	nodes   []*node
	cells   []string
	asked   map[string]bool

	// ground truth
	live      map[string]map[string]uint64 // cell -> session -> epoch of live owner contexts
	epochOf   map[string]string            // cell#epoch -> session that started it
	maxEpoch  map[string]uint64            // cell -> highest epoch in own.json
	acquired  int
	violation string
}

func (w *world) at(t int64, fn func()) {
	if t < w.now {
		t = w.now
	}
	w.seq++
	heap.Push(&w.q, item{at: t, seq: w.seq, fn: fn})
}

func (w *world) clock(n *node) int64 { return clockAt(n, w.now) }

// clockAt is n's clock at real time r.
func clockAt(n *node, r int64) int64 { return r + n.skew + (r-t0)*n.drift/1_000_000 }

// realAt converts a node-clock time to real time: the first real
// millisecond at which n's clock reads at least at, as a timer fires.
func (w *world) realAt(n *node, at int64) int64 {
	r := t0 + (at-t0-n.skew)*1_000_000/(1_000_000+n.drift)
	for clockAt(n, r) < at {
		r++
	}
	return r
}

func (w *world) tracef(format string, args ...any) {
	if w.o.Trace != nil {
		fmt.Fprintf(w.o.Trace, "%8d %s\n", w.now-t0, fmt.Sprintf(format, args...))
	}
}

func (w *world) fail(format string, args ...any) {
	if w.violation == "" {
		w.violation = fmt.Sprintf("t=%dms step %d: %s", w.now-t0, w.steps, fmt.Sprintf(format, args...))
		w.tracef("VIOLATION %s", w.violation)
	}
}

func (w *world) chance(p float64) bool { return !w.healthy && w.rng.Float64() < p }

func (w *world) latency() int64 {
	if w.healthy {
		return 1 + w.rng.Int64N(20)
	}
	if w.rng.IntN(50) == 0 {
		return 1000 + w.rng.Int64N(5000) // a slow call, often past the timeout
	}
	return 1 + w.rng.Int64N(250)
}

func fxString(fx []core.Effect) string {
	var parts []string
	for _, e := range fx {
		switch e := e.(type) {
		case core.Write:
			cond := []string{"put", "create", "cas"}[e.Cond]
			parts = append(parts, fmt.Sprintf("%s#%d %s %s", cond, e.Op, e.Key, e.Data))
		case core.Read:
			parts = append(parts, fmt.Sprintf("read#%d %s", e.Op, e.Key))
		case core.SetTimer:
			parts = append(parts, fmt.Sprintf("timer %s@%d", e.Timer, e.At-t0))
		default:
			parts = append(parts, fmt.Sprintf("%T%+v", e, e))
		}
	}
	return "[" + strings.Join(parts, "; ") + "]"
}
