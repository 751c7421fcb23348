package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/internal/miniotest"
)

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

// BenchmarkR2Throughput moves 1 MiB and 64 MiB objects through a Worker's
// R2 binding on a node backed by MinIO, and through raw minio-go on the
// same MinIO, and prints the ratio (worker / raw) for put and get.
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
	for _, size := range []int{1 << 20, 64 << 20} {
		data := make([]byte, size)
		rand.Read(data)
		rounds := 20
		if size > 8<<20 {
			rounds = 4
		}
		timeIt := func(f func(i int)) float64 {
			start := time.Now()
			for i := range rounds {
				f(i)
			}
			return float64(rounds*size) / (1 << 20) / time.Since(start).Seconds()
		}
		ctx := context.Background()
		rawPut := timeIt(func(i int) {
			if _, err := raw.PutObject(ctx, name, fmt.Sprintf("raw/%d-%d", size, i), bytes.NewReader(data), int64(size), minio.PutObjectOptions{}); err != nil {
				b.Fatal(err)
			}
		})
		rawGet := timeIt(func(i int) {
			o, err := raw.GetObject(ctx, name, fmt.Sprintf("raw/%d-%d", size, i), minio.GetObjectOptions{})
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, o)
			o.Close()
			if err != nil || n != int64(size) {
				b.Fatalf("raw get: %d bytes, %v", n, err)
			}
		})
		wPut := timeIt(func(i int) {
			req, _ := http.NewRequest("PUT", fmt.Sprintf("%s/w/%d-%d", node.public, size, i), bytes.NewReader(data))
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != fmt.Sprint(size) {
				b.Fatalf("worker put: %d %q", resp.StatusCode, body)
			}
		})
		wGet := timeIt(func(i int) {
			resp, err := hc.Get(fmt.Sprintf("%s/w/%d-%d", node.public, size, i))
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != int64(size) || resp.StatusCode != 200 {
				b.Fatalf("worker get: %d, %d bytes, %v", resp.StatusCode, n, err)
			}
		})
		b.Logf("%3d MiB  put: worker %6.1f MiB/s, raw %6.1f MiB/s, ratio %.2f   get: worker %6.1f MiB/s, raw %6.1f MiB/s, ratio %.2f",
			size>>20, wPut, rawPut, wPut/rawPut, wGet, rawGet, wGet/rawGet)
		b.ReportMetric(wPut/rawPut, fmt.Sprintf("put-ratio-%dMiB", size>>20))
		b.ReportMetric(wGet/rawGet, fmt.Sprintf("get-ratio-%dMiB", size>>20))
	}
}
