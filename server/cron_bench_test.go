package server

import (
	"flag"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cron/spec"
)

var cronBenchSeconds = flag.Int("cron.seconds", 10, "how long BenchmarkCronLateness lets a every-second cron run")

// BenchmarkCronLateness: testdata/cron with an every-second expression
// (the test-only seconds field) on one node for -cron.seconds; reports
// how late scheduled() started after each occurrence (p50, p99, max: the
// cron cell's alarm timer, reading the due runs, starting the handler in
// a stateless isolate), and how many occurrences ran of those due.
func BenchmarkCronLateness(b *testing.B) {
	b.Setenv(spec.TestSecondsEnv, "1")
	store, err := bucket.NewFile(filepath.Join(b.TempDir(), "bucket"))
	if err != nil {
		b.Fatal(err)
	}
	deployCron(b, store, `["* * * * * *"]`)
	var nd *node
	testNodeHook = func(x *node) { nd = x }
	defer func() { testNodeHook = nil }()
	logs := &benchLog{}
	bn := startBenchNode(b, store, "cron", "", logs)
	defer logs.report(b)
	defer bn.stop()
	span := time.Duration(*cronBenchSeconds) * time.Second
	b.ResetTimer()
	time.Sleep(span)
	b.StopTimer()
	late, _ := nd.objects.latenesses()
	if len(late) < int(span/time.Second)/2 {
		b.Fatalf("%d runs in %v", len(late), span)
	}
	slices.Sort(late)
	q := func(p float64) time.Duration { return late[min(len(late)-1, int(p*float64(len(late))))] }
	b.ReportMetric(float64(q(0.5).Microseconds())/1000, "late_p50_ms")
	b.ReportMetric(float64(q(0.99).Microseconds())/1000, "late_p99_ms")
	b.ReportMetric(float64(late[len(late)-1].Microseconds())/1000, "late_max_ms")
	b.ReportMetric(float64(len(late))/span.Seconds(), "runs/s")
}
