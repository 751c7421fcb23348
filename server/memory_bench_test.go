package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/server/api"
	"github.com/celldgo/celld/worker"
)

// residentCells is how many counters BenchmarkResidentCells activates.
const residentCells = 1000

// BenchmarkResidentCells measures what one resident Durable Object cell
// costs in memory: it runs a node with examples/counter deployed,
// activates residentCells distinct counters over HTTP (one write each,
// so every cell has its SQLite file, replicator and constructed
// instance), and reports the growth of the process's resident set (VmRSS,
// after debug.FreeOSMemory) per cell, with the Go heap's and the goroutine
// stacks' share (the rest is mostly SQLite's own memory, outside the Go
// heap).
//
//   - awake: hibernation off, every cell keeps its isolate (the cost of a
//     cell in use);
//   - hibernated: the node's idle threshold is short, and the figures are
//     taken once every cell has dropped its isolate (the cost of an idle
//     resident cell, what a node mostly holds). Afterwards a sample of
//     cells is read back, to show they still answer from storage.
//
// Measured 2026-12-02 on the shared 2-core machine (other helpers
// running, load average ~15; the figures are sizes, less sensitive to load
// than times): hibernated 38.8 KB RSS per cell (20.9 KB Go heap, 10.6 KB
// goroutine stacks) now that hibernating parks the cell's database (its
// files closed, SQLite's page cache and statements freed); 133 KB with
// only SQLite's caches released, as before.
//
// It does its work once, whatever b.N: run it with -benchtime=1x.
// CELLD_HEAPPROF=file writes a heap profile taken while the cells are
// resident (file.awake and file.hibernated).
//
//	go test -run '^$' -bench ResidentCells -benchtime 1x ./server/
func BenchmarkResidentCells(b *testing.B) {
	b.Run("awake", func(b *testing.B) { benchResidentCells(b, -1) })
	b.Run("hibernated", func(b *testing.B) { benchResidentCells(b, 200*time.Millisecond) })
}

func benchResidentCells(b *testing.B, hibernate time.Duration) {
	if b.N > 1 {
		b.Skip("measures once: use -benchtime=1x")
	}
	base, internal := startExampleNode(b, "counter", b.TempDir(), func(o *Options) { o.Hibernate = hibernate })
	c := tpClient(8)
	defer c.CloseIdleConnections()
	buf := make([]byte, 64)
	// Warm the stateless isolates and the first activation's code paths.
	if got := tpGet(b, c, base+"/peek?name=warm", buf); got != "0\n" {
		b.Fatalf("warm-up peek = %q", got)
	}
	asleep0 := worker.HibernatingObjects()
	before := settleMemory()

	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			buf := make([]byte, 64)
			for {
				i := next.Add(1) - 1
				if i >= residentCells {
					return
				}
				if got := tpGet(b, c, base+"/?name=cell-"+strconv.FormatInt(i, 10), buf); got != "1\n" {
					b.Errorf("counter %d = %q, want 1", i, got)
					return
				}
			}
		})
	}
	wg.Wait()
	activated := time.Since(start)
	if hibernate > 0 {
		// Every counter, and the warm-up one, drops its isolate.
		deadline := time.Now().Add(60 * time.Second)
		for worker.HibernatingObjects()-asleep0 < residentCells+1 {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d cells hibernating after 60s", worker.HibernatingObjects()-asleep0, residentCells+1)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	after := settleMemory()
	if path := os.Getenv("CELLD_HEAPPROF"); path != "" {
		// The heap while the cells are resident (go test -memprofile
		// writes it only after the node has stopped).
		which := "awake"
		if hibernate > 0 {
			which = "hibernated"
		}
		f, err := os.Create(path + "." + which)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	if n := ownedCells(b, internal); n < residentCells {
		b.Fatalf("%d cells resident, want at least %d", n, residentCells)
	}
	// A hibernated counter still counts from what it stored.
	for i := 0; i < residentCells; i += residentCells / 10 {
		if got := tpGet(b, c, base+"/peek?name=cell-"+strconv.Itoa(i), buf); got != "1\n" {
			b.Fatalf("peek counter %d after the measurement = %q, want 1", i, got)
		}
	}

	kb := func(v int64) float64 { return float64(v) / 1024 / residentCells }
	b.ReportMetric(kb(after.rss-before.rss), "RSS-KB/cell")
	b.ReportMetric(kb(int64(after.heap)-int64(before.heap)), "heap-KB/cell")
	b.ReportMetric(kb(int64(after.stacks)-int64(before.stacks)), "stack-KB/cell")
	b.ReportMetric(float64(activated.Microseconds())/1000/residentCells, "ms/activation")
	b.ReportMetric(0, "ns/op")
	b.Logf("RSS %.1f → %.1f MiB, Go heap in use %.1f → %.1f MiB, goroutine stacks %.1f → %.1f MiB, goroutines %d",
		toMiB(before.rss), toMiB(after.rss), toMiB(int64(before.heap)), toMiB(int64(after.heap)),
		toMiB(int64(before.stacks)), toMiB(int64(after.stacks)), runtime.NumGoroutine())
}

type memSample struct {
	rss    int64  // VmRSS, bytes
	heap   uint64 // Go heap in use (HeapInuse), bytes
	stacks uint64 // goroutine stacks (StackInuse), bytes
}

// settleMemory collects garbage, returns freed memory to the OS and samples.
func settleMemory() memSample {
	for range 2 {
		runtime.GC()
		debug.FreeOSMemory()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{rss: processRSS(), heap: ms.HeapInuse, stacks: ms.StackInuse}
}

// processRSS reads the process's resident set size from /proc/self/status.
func processRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := bytes.CutPrefix(s.Bytes(), []byte("VmRSS:")); ok {
			var kb int64
			fmt.Sscan(string(rest), &kb)
			return kb << 10
		}
	}
	return 0
}

func toMiB(v int64) float64 { return float64(v) / (1 << 20) }

// ownedCells counts the cells the node's /state reports as owned.
func ownedCells(tb testing.TB, internal string) int {
	resp, err := http.Get(internal + "/state")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Cells []api.Cell `json:"cells"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		tb.Fatal(err)
	}
	n := 0
	for _, c := range st.Cells {
		if c.Phase == "owned" {
			n++
		}
	}
	return n
}
