package server

import (
	"flag"
	"path/filepath"

	"fmt"
	"github.com/celldgo/celld/bucket"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	alarmBenchCells = flag.Int("alarms.cells", 10000, "cells BenchmarkAlarms arms")
	alarmBenchMinIO = flag.Bool("alarms.minio", false, "BenchmarkAlarms on MinIO instead of a file:// bucket")
	alarmBenchOpen  = flag.Int("alarms.open", 0, "BenchmarkAlarms: the node's open-cell bound (CELLD_MAX_OPEN_CELLS; 0: derived from RLIMIT_NOFILE)")
	alarmBenchPrep  = flag.Bool("alarms.prepare", true, "BenchmarkAlarms: cells prepare for their alarms ahead (false: the alarm's timer goes off at its time)")
)

// benchMaxOpenCells and benchIdleEvict are the open-cell bound and the
// idle eviction of startBenchNode's nodes (0: the defaults).
var (
	benchMaxOpenCells int
	benchIdleEvict    time.Duration
)

// BenchmarkAlarms: N cells (-alarms.cells, default 10,000) on one
// node, each given an alarm 3 s after the request that sets it (16 at a
// time, through the public listener), after a round of installations an
// hour ahead that measures what an installation costs alone. Reports the lateness of the alarm
// handlers (from the alarm's time to alarm() starting; p50, p99, max)
// while the cells are resident, and the bucket requests each installation
// cost (the /arm request: its LTX segment, its wake entry, the ownership
// re-check) and each firing cost.
//
// A cell with its database open holds two descriptors (database and
// WAL), and the node keeps at most DefaultMaxOpenCells open (about 4,200
// at RLIMIT_NOFILE 20,000): the rest park and reopen for their events, so
// 10,000 cells run under a limit of 20,000. Reported beside the
// latenesses: the open-cell bound, parks and reopens, and the CPU time
// the process spent while the alarms were moved and fired.
//
// Measured 2026-12-01 on the shared 2-core machine (other helpers
// compiling and benchmarking, load average 5-20): 10,000 cells, bound
// 4,183 (RLIMIT_NOFILE 20,000), every move reopening a parked cell (10,000
// reopens): all fired, lateness p50 14 ms, p99 500 ms, max 1.2 s, 2.000
// PUTs per installation, 14.2 ms CPU per alarm moved and fired; 1,200
// cells with bound 400 at load ~20: p50 17 ms, p99 677 ms. On the same
// machine quiet (load < 1), 10,000 cells at the default bound: activated
// in 60 s, lateness p50 5.7 ms, p99 159 ms, max 406 ms, 2.000 PUTs per
// installation, 12.9 ms CPU per alarm, 10,001 reopens — the target p99
// of 100 ms is not met; reopening parked cells and rebuilding hibernated
// objects' isolates are what remain.
//
// With preparation (and hibernation parking the database), measured
// 2026-12-02 on the shared machine at load average 15-36 (other helpers'
// builds and tests; times are pessimistic): 10,000 cells, all fired, p50
// 11 ms, p99 418 ms, max 1.2 s, 96.5% prepared in time (their p99 364 ms),
// 2.000 PUTs per installation, 10.7 ms CPU per alarm. 2,000 cells at load
// ~20: prepared p50 8.8 ms, p99 183 ms (prepared in time: p99 178 ms);
// -alarms.prepare=false p50 3.9 ms, p99 298 ms. What is left at p99 is
// the wait for a core once the handler may start, not preparation.
//
// Quiet (load < 1, 2026-12-02, preparation and parking on main): 10,000
// cells activated in 40 s, all fired, lateness p50 2.0 ms, p99 64 ms, max
// 183 ms, 99.6% prepared in time, 2.000 PUTs per installation, 8.4 ms CPU
// per alarm moved and fired, 10,000 reopens. The p99 target of 100 ms is met.
//
// The bucket is a file:// one unless -alarms.minio: the request counts do
// not depend on the store, and on a shared 2-core machine a MinIO beside
// 10,000 cells answers the node's lease renewal too late.
func BenchmarkAlarms(b *testing.B) {
	n := *alarmBenchCells
	benchMaxOpenCells = *alarmBenchOpen
	alarmPrepOff = !*alarmBenchPrep
	defer func() { alarmPrepOff = false }()
	// On a loaded machine activating 10,000 cells takes minutes: the
	// first ones must not be evicted idle (5 min) before they are armed,
	// or their installations count a reactivation.
	benchIdleEvict = time.Hour
	defer func() { benchMaxOpenCells, benchIdleEvict = 0, 0 }()
	var base bucket.Store
	if *alarmBenchMinIO {
		base = benchMinioStore(b)
	} else {
		fs, err := bucket.NewFile(filepath.Join(b.TempDir(), "bucket"))
		if err != nil {
			b.Fatal(err)
		}
		base = fs
	}
	store := newBenchStore(base)
	benchDeploy(b, store, "../cmd/celld/testdata/alarms")
	var nd *node
	testNodeHook = func(x *node) { nd = x }
	defer func() { testNodeHook = nil }()
	logs := &benchLog{}
	node := startBenchNode(b, store, "alarms", "", logs)
	defer logs.report(b)
	c := benchClient(b)
	const ahead = 3 * time.Second

	// Activation of each cell is part of its first request: measure the
	// installations on cells already active, as a node mostly sees them.
	warm := func(i int) error {
		_, err := benchGetOK(c, fmt.Sprintf("%s/status?name=w%d", node.public, i))
		return err
	}
	armAt := func(ahead time.Duration) func(int) error {
		return func(i int) error {
			at := time.Now().Add(ahead).UnixMilli()
			_, err := benchGetOK(c, fmt.Sprintf("%s/arm?name=w%d&at=%d", node.public, i, at))
			return err
		}
	}
	run := func(f func(int) error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					if err := f(i); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	t0 := time.Now()
	run(warm)
	b.Logf("activated %d cells in %v", n, time.Since(t0).Round(time.Millisecond))
	// Installations with nothing firing: alarms an hour ahead.
	before := store.snapshot()
	t0 = time.Now()
	run(armAt(time.Hour))
	armed := time.Since(t0)
	afterFar := store.snapshot()
	// Then each cell's alarm is moved to 3 s after its request, and fires.
	fired0 := nd.objects.alarmsFired.Load()
	pool0 := nd.objects.host.Pool().Stats()
	cpu0 := cpuTime()
	b.ResetTimer()
	run(armAt(ahead))
	deadline := time.Now().Add(ahead + 2*time.Minute)
	for nd.objects.alarmsFired.Load()-fired0 < int64(n) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // the last firings' own writes reach the bucket
	b.StopTimer()
	cpu := cpuTime() - cpu0
	pool := nd.objects.host.Pool().Stats()
	fired := nd.objects.alarmsFired.Load() - fired0
	late, prepLate := nd.objects.latenesses()
	if fired < int64(n) || len(late) < n {
		b.Fatalf("%d of %d alarms fired (%d latenesses kept)", fired, n, len(late))
	}
	slices.Sort(late)
	q := func(p float64) time.Duration { return late[min(len(late)-1, int(p*float64(len(late))))] }
	// Logged as well: the metrics are lost when the node's stop afterwards
	// fails the benchmark (a stop past 30 s on an overloaded machine).
	b.Logf("%d alarms fired; lateness p50 %v, p99 %v, max %v", fired, q(0.5), q(0.99), late[len(late)-1])
	b.ReportMetric(float64(q(0.5).Microseconds())/1000, "late_p50_ms")
	b.ReportMetric(float64(q(0.99).Microseconds())/1000, "late_p99_ms")
	b.ReportMetric(float64(late[len(late)-1].Microseconds())/1000, "late_max_ms")
	inst := benchDelta(before, afterFar)
	fire := benchDelta(afterFar, store.snapshot())
	puts := 0
	for k, v := range inst {
		if len(k) > 4 && k[:4] == "PUT " && k != "PUT lease" {
			puts += v.n
		}
	}
	b.ReportMetric(float64(puts)/float64(n), "puts/installation")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(n), "cpu_ms/alarm")
	b.Logf("open-cell bound %d: %d open, %d parked at the end; while moving and firing: %d parks, %d reopens; CPU %v (%.2f ms per alarm, moved and fired)",
		pool.Max, pool.Open, pool.Parked, pool.Parks-pool0.Parks, pool.Reopens-pool0.Reopens, cpu.Round(time.Millisecond), float64(cpu.Microseconds())/1000/float64(n))
	if nd.objects.prep != nil {
		ps := nd.objects.prep.stats()
		b.Logf("prepared ahead: %d (%d ready only after their time); %d times no room to prepare (tried again, or fired unprepared); lead at the end %v",
			ps.Prepared, ps.Late, ps.Skipped, ps.Lead.Round(time.Millisecond))
		if len(prepLate) > 0 {
			slices.Sort(prepLate)
			pq := func(p float64) time.Duration { return prepLate[min(len(prepLate)-1, int(p*float64(len(prepLate))))] }
			b.Logf("lateness of the %d alarms prepared in time (of %d): p50 %v, p99 %v, max %v",
				len(prepLate), len(late), pq(0.5), pq(0.99), prepLate[len(prepLate)-1])
		}
		b.ReportMetric(float64(len(prepLate))/float64(len(late)), "prepared_share")
	}
	b.Logf("%d installations in %v; per installation: %s", n, armed.Round(time.Millisecond), benchPer(inst, float64(n), "lease"))
	b.Logf("per move to 3 s ahead and its firing (the handler writes once): %s", benchPer(fire, float64(n), "lease"))
}
