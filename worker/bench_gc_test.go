package worker_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// serveGC runs the rest of a benchmark under the collector pacing `celld
// serve` uses (cli/serve_gc.go): GOGC 200, raised so the heap goal stays at
// least 64 MB above a small live heap. At Go's defaults the in-process
// figures would show a collector that a serving node does not pay (the
// render spent a quarter more CPU at GOGC 200 than at the floor). GOGC in
// the environment wins, as it does for celld serve (serveGC returns 0).
// The percent is set once, from the live heap after the runtime is built;
// callers report it as the gogc metric.
func serveGC(b *testing.B) int {
	if _, set := os.LookupEnv("GOGC"); set {
		return 0
	}
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	p := 5000 // serve's bound
	if s[0].Value.Kind() == metrics.KindUint64 {
		if live := s[0].Value.Uint64(); live > 0 {
			const floor = 64 << 20
			p = 200
			if live < floor {
				p = max(200, min(int((floor-live)*100/live)+1, 5000))
			}
		}
	}
	old := debug.SetGCPercent(p)
	b.Cleanup(func() { debug.SetGCPercent(old) })
	return p
}
