package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
)

// BenchmarkAssets_VsWorker: GET of a 16 KiB static asset (served by the
// node, no JavaScript) against a Worker that returns the same bytes;
// reports each one's throughput and p99 and the ratios
// (asset/worker throughput, worker/asset p99). Target: ≥ 1.5×.
func BenchmarkAssets_VsWorker(b *testing.B) {
	body := strings.Repeat("0123456789abcdef", 1024)
	dir := b.TempDir()
	files := map[string]string{
		"wrangler.jsonc": `{"name":"bench","main":"index.js","compatibility_date":"2025-06-01",
		  "assets":{"directory":"public","run_worker_first":["/w"]}}`,
		"index.js":        `import body from "./body.txt"; export default { fetch() { return new Response(body, {headers: {"content-type": "application/octet-stream"}}); } };`,
		"body.txt":        body,
		"public/data.bin": body,
	}
	for name, s := range files {
		writeFile(b, dir, name, s)
	}
	store, err := bucket.NewFile(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		b.Fatal(err)
	}
	base, _ := startExampleNodeOn(b, store)
	// A lean keep-alive client (one connection per goroutine, requests
	// written by hand, responses parsed by http.ReadResponse): the client
	// shares the CPUs with the node, and net/http's transport would
	// otherwise be most of what is measured.
	host := strings.TrimPrefix(base, "http://")
	// run sends n requests for path from 8 goroutines and returns how long
	// that took and every latency.
	run := func(path string, n int) (time.Duration, []time.Duration) {
		const workers = 8
		lat := make([]time.Duration, n)
		var wg sync.WaitGroup
		start := time.Now()
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn, err := net.Dial("tcp", host)
				if err != nil {
					b.Error(err)
					return
				}
				defer conn.Close()
				br := bufio.NewReader(conn)
				req := []byte("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")
				for i := w; i < n; i += workers {
					t0 := time.Now()
					if _, err := conn.Write(req); err != nil {
						b.Error(err)
						return
					}
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						b.Error(err)
						return
					}
					got, _ := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 || got != int64(len(body)) {
						b.Errorf("%s: %d, %d bytes", path, resp.StatusCode, got)
						return
					}
					lat[i] = time.Since(t0)
				}
			}()
		}
		wg.Wait()
		return time.Since(start), lat
	}
	// The two alternate in rounds, so that the load of a shared machine
	// falls on both alike.
	n := max(b.N, 10000) // long enough for the Worker's steady state (its GC)
	const rounds = 10
	run("/data.bin", 500) // warm the cache and the isolates
	run("/w", 500)
	b.ResetTimer()
	var aTime, wTime time.Duration
	var aLat, wLat []time.Duration
	for range rounds {
		el, lat := run("/data.bin", n/rounds)
		aTime, aLat = aTime+el, append(aLat, lat...)
		el, lat = run("/w", n/rounds)
		wTime, wLat = wTime+el, append(wLat, lat...)
	}
	p99 := func(l []time.Duration) time.Duration { slices.Sort(l); return l[len(l)*99/100] }
	aRate, wRate := float64(len(aLat))/aTime.Seconds(), float64(len(wLat))/wTime.Seconds()
	aP99, wP99 := p99(aLat), p99(wLat)
	b.ReportMetric(aRate, "asset-req/s")
	b.ReportMetric(wRate, "worker-req/s")
	b.ReportMetric(float64(aP99.Microseconds()), "asset-p99-µs")
	b.ReportMetric(float64(wP99.Microseconds()), "worker-p99-µs")
	b.ReportMetric(aRate/wRate, "throughput-ratio")
	b.ReportMetric(float64(wP99)/float64(aP99), "p99-ratio")
	b.Logf("assets %.0f req/s p99 %v; worker %.0f req/s p99 %v; throughput ratio %.2f×, p99 ratio %.2f×",
		aRate, aP99, wRate, wP99, aRate/wRate, float64(wP99)/float64(aP99))
}

func writeFile(tb testing.TB, dir, name, body string) {
	tb.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// startExampleNodeOn runs a node on store until tb ends.
func startExampleNodeOn(tb testing.TB, store bucket.Store) (string, string) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan [2]string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Store: store, Node: "bench", Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0",
			Version: "test", TTL: 10 * time.Second, StateDir: filepath.Join(tb.TempDir(), "state"),
			Logger:  slog.New(slog.DiscardHandler),
			OnReady: func(p, i string) { ready <- [2]string{p, i} },
		})
	}()
	tb.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-ready:
		return "http://" + a[0], "http://" + a[1]
	case err := <-done:
		tb.Fatalf("node exited: %v", err)
	}
	return "", ""
}
