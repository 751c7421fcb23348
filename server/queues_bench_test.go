package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/internal/miniotest"
)

// The queue benchmark's Worker: /send sends n messages at once (each
// carrying its send time), the consumer keeps, per batch, how long each
// message took from send() to the handler's start.
const queueBenchWorker = `
export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (url.pathname === "/send") {
      const n = Number(url.searchParams.get("n"));
      await Promise.all(Array.from({ length: n }, () => env.Q.send({ t: Date.now() })));
      return new Response("ok");
    }
    const out = [];
    let cursor;
    do {
      const page = await env.LAT.list({ prefix: "l:", cursor });
      for (const k of page.keys) out.push(...JSON.parse(await env.LAT.get(k.name)));
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    return Response.json(out);
  },
  async queue(batch, env) {
    const now = Date.now();
    await env.LAT.put("l:" + crypto.randomUUID(), JSON.stringify(batch.messages.map((m) => now - m.body.t)));
  },
};`

// BenchmarkQueue measures, on MinIO, producer throughput into one queue
// (concurrent sends, group commit) against sends one at a time, and the
// latency from send() to the consumer's handler start (p50, p99).
// Wall-clock figures: noisy while other work runs on the machine.
func BenchmarkQueue(b *testing.B) {
	srv := miniotest.Shared(b)
	name := srv.NewBucket(b)
	store, err := bucket.NewS3(bucket.S3Config{Bucket: name, Endpoint: srv.Endpoint,
		Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "index.js"), []byte(queueBenchWorker), 0o644)
	os.WriteFile(filepath.Join(dir, "wrangler.jsonc"), []byte(`{"name":"qbench","main":"index.js","compatibility_date":"2026-04-01",
		"kv_namespaces":[{"binding":"LAT","id":"lat"}],
		"queues":{"producers":[{"binding":"Q","queue":"bench"}],
		"consumers":[{"queue":"bench","max_batch_size":100,"max_batch_timeout":0}]}}`), 0o644)
	benchDeploy(b, store, dir)
	logs := &benchLog{}
	node := startBenchNode(b, store, "qbench", "", logs)
	defer logs.report(b)
	hc := &http.Client{Timeout: time.Minute}
	get := func(url string) []byte {
		resp, err := hc.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			b.Fatalf("%s: %d %s", url, resp.StatusCode, body)
		}
		return body
	}
	get(node.public + "/send?n=1") // warm: activation, first commit
	const clients, perRequest = 4, 50
	var sent atomic.Int64
	run := func(total, clients, per int) float64 {
		var next atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(int64(per)) <= int64(total) {
					get(fmt.Sprintf("%s/send?n=%d", node.public, per))
					sent.Add(int64(per))
				}
			}()
		}
		wg.Wait()
		return float64(total) / time.Since(start).Seconds()
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.ResetTimer()
	cpu0 := cpu()
	grouped := run(b.N*2000, clients, perRequest)
	cpuPerMsg := float64((cpu() - cpu0).Microseconds()) / float64(b.N*2000)
	b.StopTimer()
	single := run(200, 1, 1)
	// Every message reaches the handler; then read the latencies.
	var lat []float64
	deadline := time.Now().Add(2 * time.Minute)
	for {
		lat = nil
		if err := json.Unmarshal(get(node.public+"/lat"), &lat); err != nil {
			b.Fatal(err)
		}
		if int64(len(lat)) >= sent.Load()+1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if int64(len(lat)) < sent.Load()+1 {
		b.Fatalf("%d of %d messages delivered", len(lat), sent.Load()+1)
	}
	slices.Sort(lat)
	p := func(q float64) float64 { return lat[int(q*float64(len(lat)-1))] }
	b.ReportMetric(grouped, "msgs/s")
	b.ReportMetric(cpuPerMsg, "cpu-us/msg")
	b.ReportMetric(single, "serial-msgs/s")
	b.ReportMetric(grouped/single, "group-ratio")
	b.ReportMetric(p(0.5), "p50-ms")
	b.ReportMetric(p(0.99), "p99-ms")
}
