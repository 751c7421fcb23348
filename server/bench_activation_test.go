package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/worker"
)

// BenchmarkColdActivation_MinIO: the first request for a cell on a node
// that never held it. Cells of about 1 MB each are written through
// examples/rpc (deposits with long memos) on one node, which is then
// stopped gracefully (every cell flushed and released); a fresh node with
// an empty state directory then serves one balance request per cell:
// acquire (own.json epoch + 1), restore from the bucket, open, construct,
// the query and the gate. Each cell is one sample.
func BenchmarkColdActivation_MinIO(b *testing.B) {
	store := benchMinioStore(b)
	benchDeploy(b, store, "../examples/rpc")
	logs := &benchLog{}
	first := startBenchNode(b, store, "bench-writer", "", logs)
	c := benchClient(b)
	ctx := context.Background()

	cells := max(b.N, 8)
	const (
		memoLen  = 16 << 10
		deposits = 64 // 64 × 16 KiB: about 1 MB per cell
	)
	accounts := make([]string, cells)
	for i := range accounts {
		accounts[i] = fmt.Sprintf("cold-%02d", i)
	}
	memo := func() string {
		raw := make([]byte, memoLen/2)
		rand.Read(raw)
		return hex.EncodeToString(raw)
	}
	var wg sync.WaitGroup
	errs := make(chan error, cells)
	t0 := time.Now()
	for _, acct := range accounts {
		wg.Go(func() {
			for range deposits {
				q := url.Values{"account": {acct}, "amount": {"1"}, "memo": {memo()}}
				if _, err := benchGetOK(c, first.public+"/deposit?"+q.Encode()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	fill := time.Since(t0)
	if err := first.stop(); err != nil {
		b.Fatalf("graceful stop: %v", err)
	}

	counted := newBenchStore(store)
	second := startBenchNode(b, counted, "bench-cold", "", logs)
	// Warm the runtime and the connection on a cell of its own.
	if _, err := benchGetOK(c, second.public+"/?account=warm"); err != nil {
		b.Fatal(err)
	}
	wantBody := fmt.Sprintf(`{"balance":%d}`, deposits)
	lat := make([]time.Duration, 0, cells)
	var sizes []int64
	var calls []map[string]benchCalls
	b.ResetTimer()
	for _, acct := range accounts {
		before := counted.snapshot()
		t0 := time.Now()
		body, err := benchGetOK(c, second.public+"/?account="+acct)
		d := time.Since(t0)
		calls = append(calls, benchDelta(before, counted.snapshot()))
		if err != nil {
			b.Fatal(err)
		}
		if strings.TrimSpace(body) != wantBody {
			b.Fatalf("%s on the fresh node: %s, want %s", acct, body, wantBody)
		}
		lat = append(lat, d)
		id := worker.ObjectIDFromName("Account", acct)
		sizes = append(sizes, benchFileSize(filepath.Join(second.stateDir, "Account", id+".sqlite")))
	}
	b.StopTimer()

	// What a restore alone takes, for the same cells, into scratch files.
	var restores []time.Duration
	var restoreCalls []map[string]benchCalls
	objects := map[int]int{}
	scratch := b.TempDir()
	rs := newBenchStore(store)
	for i, acct := range accounts {
		before := rs.snapshot()
		t0 := time.Now()
		info, err := cell.Restore(ctx, rs, benchCellName("Account", acct), filepath.Join(scratch, fmt.Sprintf("%d.sqlite", i)))
		if err != nil {
			b.Fatalf("restore %s: %v", acct, err)
		}
		restores = append(restores, time.Since(t0))
		restoreCalls = append(restoreCalls, benchDelta(before, rs.snapshot()))
		objects[info.Objects]++
	}

	ms := func(us float64) float64 { return us / 1e3 }
	b.ReportMetric(ms(benchQuantile(lat, .5)), "cold_p50_ms")
	b.ReportMetric(ms(benchQuantile(lat, 1)), "cold_max_ms")
	b.ReportMetric(ms(benchQuantile(restores, .5)), "restore_p50_ms")

	list := func(ds []time.Duration) string {
		var parts []string
		for _, d := range ds {
			parts = append(parts, fmt.Sprintf("%.1f", float64(d.Microseconds())/1e3))
		}
		return strings.Join(parts, " ")
	}
	var t strings.Builder
	fmt.Fprintf(&t, "%d cells, restored files of %v B, written in %v on node %s, which then stopped gracefully; restore chains (objects: cells) %v\n",
		cells, slices.Compact(slices.Sorted(slices.Values(sizes))), fill.Round(time.Millisecond), first.name, objects)
	fmt.Fprintf(&t, "first request ms: %s\n  p50 %.2f, max %.2f (target <= 20); its S3 calls: %s\n", list(lat),
		ms(benchQuantile(lat, .5)), ms(benchQuantile(lat, 1)), benchCallTimes(calls))
	fmt.Fprintf(&t, "restore alone ms: %s\n  p50 %.2f; its S3 calls: %s",
		list(restores), ms(benchQuantile(restores, .5)), benchCallTimes(restoreCalls))
	b.Logf("cold activation of a ~1 MB cell on a fresh node\n%s", t.String())
	logs.report(b)
}

// BenchmarkForwarding_MinIO: warm reads (GET /peek) of a counter resident
// on node A, sent to B (which forwards the stub call to A over signed peer
// HTTP) and to A directly, interleaved.
func BenchmarkForwarding_MinIO(b *testing.B) {
	store := benchMinioStore(b)
	benchDeploy(b, store, "../examples/counter")
	logs := &benchLog{}
	countA, countB := newBenchStore(store), newBenchStore(store)
	a := startBenchNode(b, countA, "bench-a", "", logs)
	bn := startBenchNode(b, countB, "bench-b", "", logs)
	c := benchClient(b)
	const name = "forward"
	if body, err := benchGetOK(c, a.public+"/?name="+name); err != nil || strings.TrimSpace(body) != "1" {
		b.Fatalf("first increment on A: %q, %v", body, err)
	}
	viaA, viaB := a.public+"/peek?name="+name, bn.public+"/peek?name="+name
	check := func(u string) error {
		body, err := benchGetOK(c, u)
		if err == nil && strings.TrimSpace(body) != "1" {
			err = fmt.Errorf("GET %s: %q, want 1", u, body)
		}
		return err
	}
	for range 20 {
		for _, u := range []string{viaA, viaB} {
			if err := check(u); err != nil {
				b.Fatal(err)
			}
		}
	}
	samples := max(b.N, 2000)
	var direct, forwarded []time.Duration
	beforeA, beforeB := countA.snapshot(), countB.snapshot()
	t0 := time.Now()
	b.ResetTimer()
	for i := range samples {
		order := []struct {
			u string
			d *[]time.Duration
		}{{viaA, &direct}, {viaB, &forwarded}}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
		}
		for _, s := range order {
			t0 := time.Now()
			if err := check(s.u); err != nil {
				b.Fatalf("sample %d: %v", i, err)
			}
			*s.d = append(*s.d, time.Since(t0))
		}
	}
	b.StopTimer()
	elapsed := time.Since(t0)
	callsA, callsB := benchDelta(beforeA, countA.snapshot()), benchDelta(beforeB, countB.snapshot())
	ca, errA := benchCells(c, a)
	cb, errB := benchCells(c, bn)
	if err := errors.Join(errA, errB); err != nil {
		b.Fatal(err)
	}
	if len(ca) != 1 || len(cb) != 0 {
		b.Errorf("cells: A %+v, B %+v; want the one cell on A only", ca, cb)
	}

	d50, f50 := benchQuantile(direct, .5), benchQuantile(forwarded, .5)
	b.ReportMetric(d50, "direct_p50_us")
	b.ReportMetric(f50, "forwarded_p50_us")
	b.ReportMetric(f50-d50, "forward_overhead_us")
	b.ReportMetric(f50/d50, "forward_ratio")
	var t strings.Builder
	fmt.Fprintf(&t, "%d samples per side, interleaved; latencies in µs\n", samples)
	fmt.Fprintf(&t, "%-28s %9s %9s %9s\n", "path", "p50", "p99", "max")
	for _, r := range []struct {
		label string
		ds    []time.Duration
	}{{"direct (A owns the cell)", direct}, {"via B (signed peer HTTP)", forwarded}} {
		fmt.Fprintf(&t, "%-28s %9.0f %9.0f %9.0f\n", r.label, benchQuantile(r.ds, .5), benchQuantile(r.ds, .99), benchQuantile(r.ds, 1))
	}
	fmt.Fprintf(&t, "forward overhead p50 %.0f µs, ratio %.2f\n", f50-d50, f50/d50)
	fmt.Fprintf(&t, "S3 calls in those %.1fs (%d requests each way): A (owner) %s; B (forwarder) %s", elapsed.Seconds(), samples,
		benchPer(callsA, 1), benchPer(callsB, 1))
	b.Logf("forwarded vs direct warm reads\n%s", t.String())
	logs.report(b)
}
