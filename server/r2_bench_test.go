package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/internal/miniotest"
)

var r2BenchSizes = flag.String("r2.sizes", "1048576,67108864", "BenchmarkR2Throughput: object sizes in bytes, comma-separated")

const r2BenchWorker = `export default {
  async fetch(request, env) {
    const key = new URL(request.url).pathname.slice(1);
    if (request.method === "PUT") {
      const o = await env.B.put(key, request.body);
      return new Response(String(o.size));
    }
    const o = await env.B.get(key);
    if (o === null) return new Response("missing", { status: 404 });
    return new Response(o.body);
  },
};
`

// r2Sample is what one side spent on one kind of operation: wall time per
// operation, and CPU time of this process (the client, and the node on
// the Worker side) and of MinIO.
type r2Sample struct {
	wall       []time.Duration
	self, srv  time.Duration
	bytesMoved int64
}

// median is the wall time of the median operation.
func (s *r2Sample) median() time.Duration {
	w := slices.Clone(s.wall)
	slices.Sort(w)
	return w[len(w)/2]
}

// mibps is the throughput at the median operation.
func (s *r2Sample) mibps(size int) float64 {
	return float64(size) / (1 << 20) / s.median().Seconds()
}

// sizeLabel names an object size for a metric: 1MiB, 64MiB, 4KiB, 100B.
func sizeLabel(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// cpuPerMiB is CPU milliseconds per MiB moved, this process and MinIO.
func (s *r2Sample) cpuPerMiB() (self, srv float64) {
	mib := float64(s.bytesMoved) / (1 << 20)
	return float64(s.self.Microseconds()) / 1e3 / mib, float64(s.srv.Microseconds()) / 1e3 / mib
}

// procCPU is the user+system CPU time of process pid so far (all its
// threads), or 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces) start
	// at state; utime and stime are the 14th and 15th fields overall.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

// serveGC sets the collector as `celld serve` runs it (cli/serve_gc.go):
// GOGC 200, raised while the live heap is small so that the heap goal
// stays at least 64 MB. A node in this process then collects as often as
// a deployed one, not at the test binary's default (GOGC 100, whose
// frequent cycles' idle-time marking takes CPU from MinIO on a loaded
// machine). Both sides of a benchmark share the setting.
func serveGC() {
	const floor, base, most = 64 << 20, 200, 5000
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	p := base
	if live := s[0].Value.Uint64(); live > 0 && live < floor {
		p = max(base, min(int((floor-live)*100/live)+1, most))
	}
	debug.SetGCPercent(p)
}

// BenchmarkR2Throughput moves 1 MiB and 64 MiB objects through a Worker's
// R2 binding (env.B.put(key, request.body), new Response(obj.body)) on a
// node backed by MinIO, and through raw minio-go on the same MinIO with
// its defaults (PutObject of a bytes.Reader: one signed PUT for 1 MiB, a
// parallel multipart upload for 64 MiB; GetObject read to the end). It
// prints the ratio worker/raw of the throughput at the median operation
// for put and get, and the CPU each side costs per MiB: this process
// (client, plus the node on the Worker side) and MinIO. The process runs
// with celld serve's collector settings (serveGC).
//
// The two sides alternate operation by operation, the order swapped
// every round, so load from outside falls on both alike.
func BenchmarkR2Throughput(b *testing.B) {
	srv := miniotest.Shared(b)
	name := srv.NewBucket(b)
	store, err := bucket.NewS3(bucket.S3Config{Bucket: name, Endpoint: srv.Endpoint,
		Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "index.js"), []byte(r2BenchWorker), 0o644)
	os.WriteFile(filepath.Join(dir, "wrangler.jsonc"), []byte(`{"name":"r2bench","main":"index.js","compatibility_date":"2026-04-01",
		"r2_buckets":[{"binding":"B","bucket_name":"bench"}]}`), 0o644)
	benchDeploy(b, store, dir)
	logs := &benchLog{}
	node := startBenchNode(b, store, "r2bench", "", logs)
	defer logs.report(b)
	raw, err := srv.Client()
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Timeout: 5 * time.Minute}
	ctx := context.Background()
	pid := srv.PID()
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	var sizes []int
	for _, f := range strings.Split(*r2BenchSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("-r2.sizes: %q is not a size in bytes", f)
		}
		sizes = append(sizes, n)
	}
	for _, size := range sizes {
		data := make([]byte, size)
		rand.Read(data)
		serveGC()
		rounds := 40
		if size > 8<<20 {
			rounds = 12
		} else if size < 64<<10 {
			rounds = 400 // small objects: the fixed cost per operation
		}
		rounds *= b.N
		rawKey := fmt.Sprintf("raw/%d", size)
		wURL := fmt.Sprintf("%s/w/%d", node.public, size)
		ops := map[string]func(){
			"raw put": func() {
				if _, err := raw.PutObject(ctx, name, rawKey, bytes.NewReader(data), int64(size), minio.PutObjectOptions{}); err != nil {
					b.Fatal(err)
				}
			},
			"raw get": func() {
				o, err := raw.GetObject(ctx, name, rawKey, minio.GetObjectOptions{})
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, o)
				o.Close()
				if err != nil || n != int64(size) {
					b.Fatalf("raw get: %d bytes, %v", n, err)
				}
			},
			"worker put": func() {
				req, _ := http.NewRequest("PUT", wURL, bytes.NewReader(data))
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(body) != fmt.Sprint(size) {
					b.Fatalf("worker put: %d %q", resp.StatusCode, body)
				}
			},
			"worker get": func() {
				resp, err := hc.Get(wURL)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || n != int64(size) || resp.StatusCode != 200 {
					b.Fatalf("worker get: %d, %d bytes, %v", resp.StatusCode, n, err)
				}
			},
		}
		// One untimed round warms connections and the isolate.
		for _, op := range []string{"raw put", "worker put", "raw get", "worker get"} {
			ops[op]()
		}
		samples := map[string]*r2Sample{}
		for k := range ops {
			samples[k] = &r2Sample{}
		}
		run := func(op string) {
			s := samples[op]
			c0, m0, t0 := cpuTime(), procCPU(pid), time.Now()
			ops[op]()
			s.wall = append(s.wall, time.Since(t0))
			s.self += cpuTime() - c0
			s.srv += procCPU(pid) - m0
			s.bytesMoved += int64(size)
		}
		for r := range rounds {
			first, second := "raw", "worker"
			if r%2 == 1 {
				first, second = second, first
			}
			for _, verb := range []string{"put", "get"} {
				run(first + " " + verb)
				run(second + " " + verb)
			}
		}
		for _, verb := range []string{"put", "get"} {
			w, r := samples["worker "+verb], samples["raw "+verb]
			wm, rm := w.mibps(size), r.mibps(size)
			ws, wsrv := w.cpuPerMiB()
			rs, rsrv := r.cpuPerMiB()
			l := sizeLabel(size)
			b.Logf("%6s %s: worker %6.1f MiB/s, raw %6.1f MiB/s, ratio %.2f; median op worker %v, raw %v; CPU ms/MiB: worker %.2f here (client+node) + %.2f MinIO, raw %.2f here (client) + %.2f MinIO",
				l, verb, wm, rm, wm/rm, w.median().Round(time.Microsecond), r.median().Round(time.Microsecond), ws, wsrv, rs, rsrv)
			b.ReportMetric(wm/rm, fmt.Sprintf("%s-ratio-%s", verb, l))
			b.ReportMetric(ws, fmt.Sprintf("%s-cpu-ms/MiB-worker-%s", verb, l))
			b.ReportMetric(rs, fmt.Sprintf("%s-cpu-ms/MiB-raw-%s", verb, l))
		}
	}
}
