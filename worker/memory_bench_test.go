package worker_test

import (
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"

	"github.com/celldgo/celld/worker"
)

// BenchmarkResidentObjectHeap measures the Go heap one awake Durable
// Object holds in the worker alone (no server, no replication): it
// activates residentObjects counters (examples/counter, one increment
// each, as server.BenchmarkResidentCells does over HTTP) and reports the
// growth of the live heap per object. It is the quick loop for the
// isolate's share of server.BenchmarkResidentCells' heap-KB/cell.
// CELLD_HEAPPROF=file writes a heap profile taken while they are resident.
//
//	go test -run '^$' -bench ResidentObjectHeap -benchtime 1x ./worker/
func BenchmarkResidentObjectHeap(b *testing.B) {
	if b.N > 1 {
		b.Skip("measures once: use -benchtime=1x")
	}
	const residentObjects = 200
	host := newLocalObjects(b)
	rt := newRuntime(b, counterExample, worker.Config{
		Objects: host, DurableObjects: map[string]string{"COUNTER": "Counter"}, Logger: slog.New(slog.DiscardHandler),
		HibernateAfter: -1, // every object keeps its isolate, however slow the run
	})
	host.use(rt)
	if resp := fetch(b, rt, "GET", "/?name=warm", nil); string(resp.Body) != "1\n" {
		b.Fatalf("warm-up write = %q", resp.Body)
	}
	before := liveHeap()
	for i := range residentObjects {
		if resp := fetch(b, rt, "GET", "/?name=c"+strconv.Itoa(i), nil); string(resp.Body) != "1\n" {
			b.Fatalf("counter %d = %q, want 1", i, resp.Body)
		}
	}
	after := liveHeap()
	if path := os.Getenv("CELLD_HEAPPROF"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	if n := len(host.files()); n < residentObjects {
		b.Fatalf("%d object databases, want at least %d", n, residentObjects)
	}
	b.ReportMetric(float64(after-before)/1024/residentObjects, "heap-KB/object")
	b.ReportMetric(0, "ns/op")
}

// liveHeap collects garbage and returns the bytes of live heap objects.
func liveHeap() int64 {
	var ms runtime.MemStats
	for range 2 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
