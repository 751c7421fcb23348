package fleet

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
)

// BenchmarkAcquire_MinIO compares, on a real MinIO, the latency of
// (a) acquiring a never-owned cell (read own.json: 404, create it),
// (b) taking a cell over from a dead owner (read own.json, read the dead
// lease, CAS own.json) and (c) one raw create-if-absent PUT, the unit the
// other two are measured in.
func BenchmarkAcquire_MinIO(b *testing.B) {
	s := newMinIOStore(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	n, err := Start(sctx, s, Config{Node: "bench", Advertise: "bench:8081", TTL: 10 * time.Second, Logger: quiet})
	scancel()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := n.Close(cctx); err != nil {
			b.Errorf("close: %v", err)
		}
	})

	// The dead owner's lease: expired an hour ago, far past any margin.
	deadLease := core.Lease{Node: "dead", Session: "dead-s", Advertise: "dead:8081",
		Expires: time.Now().Add(-time.Hour).UnixMilli(), Generation: 7, Started: time.Now().Add(-2 * time.Hour).UnixMilli(), Kind: core.KindNode}
	if _, err := s.Put(ctx, core.LeaseKey("dead"), core.Encode(deadLease), bucket.Cond{}); err != nil {
		b.Fatal(err)
	}
	deadOwn := core.Encode(core.Own{Node: "dead", Session: "dead-s", Epoch: 1})

	samples := max(b.N, 200)
	create := make([]time.Duration, 0, samples)
	takeover := make([]time.Duration, 0, samples)
	put := make([]time.Duration, 0, samples)
	run := fmt.Sprintf("%x", time.Now().UnixNano()) // keys unique across b.N rounds

	timeAcquire := func(cell string, wantEpoch uint64) time.Duration {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		t0 := time.Now()
		o, err := n.Acquire(actx, cell)
		d := time.Since(t0)
		if err != nil {
			b.Fatalf("acquire %s: %v", cell, err)
		}
		if o.Epoch != wantEpoch {
			b.Fatalf("acquire %s: epoch %d, want %d", cell, o.Epoch, wantEpoch)
		}
		if err := n.Release(actx, cell); err != nil {
			b.Fatalf("release %s: %v", cell, err)
		}
		return d
	}
	b.ResetTimer()
	for i := range samples {
		// Rotate the order so no path always follows the same one.
		for j := range 3 {
			switch (i + j) % 3 {
			case 0:
				create = append(create, timeAcquire(fmt.Sprintf("Bench:%s:new:%04d", run, i), 1))
			case 1:
				cell := fmt.Sprintf("Bench:%s:take:%04d", run, i)
				b.StopTimer()
				if _, err := s.Put(ctx, core.OwnKey(cell), deadOwn, bucket.IfAbsent()); err != nil {
					b.Fatalf("seed %s: %v", core.OwnKey(cell), err)
				}
				b.StartTimer()
				takeover = append(takeover, timeAcquire(cell, 2))
			case 2:
				key := fmt.Sprintf("bench/%s/put/%04d", run, i)
				t0 := time.Now()
				_, err := s.Put(ctx, key, deadOwn, bucket.IfAbsent())
				d := time.Since(t0)
				if err != nil {
					b.Fatalf("put %s: %v", key, err)
				}
				put = append(put, d)
			}
		}
	}
	b.StopTimer()

	pa, pb, pc := p50(create), p50(takeover), p50(put)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	b.ReportMetric(us(pa), "create_p50_us")
	b.ReportMetric(us(pb), "takeover_p50_us")
	b.ReportMetric(us(pc), "put_p50_us")
	b.ReportMetric(us(pa)/us(pc), "create_ratio")
	b.ReportMetric(us(pb)/us(pc), "takeover_ratio")
	b.Logf("%d samples each\n%-28s %10s %10s %10s %8s\n%-28s %10.0f %10.0f %10.0f %8.2f\n%-28s %10.0f %10.0f %10.0f %8.2f\n%-28s %10.0f %10.0f %10.0f %8.2f",
		samples, "path", "p50 µs", "p90 µs", "p99 µs", "× put",
		"(a) acquire, create", us(pa), us(pct(create, 90)), us(pct(create, 99)), us(pa)/us(pc),
		"(b) acquire, dead owner CAS", us(pb), us(pct(takeover, 90)), us(pct(takeover, 99)), us(pb)/us(pc),
		"(c) raw If-None-Match PUT", us(pc), us(pct(put, 90)), us(pct(put, 99)), 1.0)
}

func p50(ds []time.Duration) time.Duration { return pct(ds, 50) }

// pct is the p-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}
