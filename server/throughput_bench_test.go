package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
)

// startExampleNode deploys examples/<name> to a fresh file:// bucket and
// runs a node on it, with its state under dir; it returns the node's base
// URL and its internal listener's. The node stops when tb ends.
func startExampleNode(tb testing.TB, name, dir string, with ...func(*Options)) (string, string) {
	tb.Helper()
	store, err := bucket.NewFile(filepath.Join(dir, "bucket"))
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := deploy.Deploy(ctx, store, filepath.Join("..", "examples", name), deploy.Options{Capabilities: deploy.Served()}); err != nil {
		cancel()
		tb.Fatalf("deploy: %v", err)
	}
	ready := make(chan [2]string, 1)
	done := make(chan error, 1)
	opts := Options{
		Store: store, Node: "bench-" + strconv.Itoa(os.Getpid()), Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0",
		Version: "test", TTL: 10 * time.Second, StateDir: filepath.Join(dir, "state"),
		Logger:  slog.New(slog.DiscardHandler),
		OnReady: func(public, internal string) { ready <- [2]string{public, internal} },
	}
	for _, f := range with {
		f(&opts)
	}
	go func() { done <- Run(ctx, opts) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			tb.Error("node did not stop")
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr[0], "http://" + addr[1]
	case err := <-done:
		tb.Fatalf("node exited: %v", err)
	case <-time.After(30 * time.Second):
		tb.Fatal("node not ready in 30s")
	}
	return "", ""
}

// benchClient keeps one keep-alive connection per parallel worker, like
// bench/load.
func tpClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		DisableCompression:  true,
	}, Timeout: 30 * time.Second}
}

func tpGet(tb testing.TB, c *http.Client, url string, buf []byte) string {
	resp, err := c.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	n, _ := io.ReadFull(resp.Body, buf)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %s: %s", url, resp.Status, buf[:n])
	}
	return string(buf[:n])
}

// benchHTTP drives GET url from parallel keep-alive connections (the
// load generator's closed loop) and checks every body.
func tpHTTP(b *testing.B, url, want string) {
	c := tpClient(64)
	defer c.CloseIdleConnections()
	buf := make([]byte, 4096)
	if got := tpGet(b, c, url, buf); got != want {
		b.Fatalf("GET %s = %q, want %q", url, got, want)
	}
	b.ReportAllocs()
	b.SetParallelism(8) // 16 connections on 2 CPUs, 32 on 4
	b.ResetTimer()
	defer reportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 4096)
		for pb.Next() {
			if got := tpGet(b, c, url, buf); got != want {
				b.Errorf("GET %s = %q, want %q", url, got, want)
				return
			}
		}
	})
}

// BenchmarkHelloHTTP is bench/run.sh's hello target in process: GET / of
// examples/hello through the node's HTTP listener.
func BenchmarkHelloHTTP(b *testing.B) {
	base, _ := startExampleNode(b, "hello", b.TempDir())
	tpHTTP(b, base+"/", "Hello from celld! You asked for /\n")
}

// BenchmarkCounterRead is bench/run.sh's counter-read target in process:
// GET /peek?name=bench of examples/counter (a stub RPC to the object,
// storage.get) through the node's HTTP listener.
func BenchmarkCounterRead(b *testing.B) {
	base, _ := startExampleNode(b, "counter", b.TempDir())
	c := tpClient(1)
	if got := tpGet(b, c, base+"/?name=bench", make([]byte, 64)); got != "1\n" {
		b.Fatalf("first write = %q, want 1", got)
	}
	c.CloseIdleConnections()
	tpHTTP(b, base+"/peek?name=bench", "1\n")
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time the process spent per operation from now
// to the end of the benchmark (cpu-ns/op), client included: unlike ns/op
// it barely moves when other processes compete for the CPUs.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}
