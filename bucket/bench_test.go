package bucket

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/internal/miniotest"
)

// BenchmarkS3VsRaw measures what the Store layer costs over bare minio-go
// on MinIO: per op, max(b.N, 300) calls through S3 and as many raw calls
// on the very same clients with the same payloads, interleaved (alternating
// which goes first) so both see the same server state. It reports p50 and
// p99 latencies in microseconds and the p50 ratio ours/raw. Run it with
// -benchtime Nx: b.N is the sample count, not a loop the framework tunes.
func BenchmarkS3VsRaw(b *testing.B) {
	srv := miniotest.Shared(b)
	bkt := srv.NewBucket(b)
	s, err := NewS3(S3Config{
		Bucket:   bkt,
		Endpoint: srv.Endpoint,
		Creds:    credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""),
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	payload := make([]byte, 4<<10)
	_, _ = rand.Read(payload)
	n := max(b.N, 300)

	if _, err := s.Put(ctx, "obj", payload, Cond{}); err != nil {
		b.Fatal(err)
	}
	rawPut := func(key string, set func(*minio.PutObjectOptions)) (string, error) {
		opts := minio.PutObjectOptions{DisableMultipart: true}
		set(&opts)
		info, err := s.put.PutObject(ctx, bkt, key, bytes.NewReader(payload), int64(len(payload)), opts)
		return info.ETag, err
	}
	rawGet := func(key string, opts minio.GetObjectOptions) error {
		body, _, _, err := s.read.GetObject(ctx, bkt, key, opts)
		if err != nil {
			return err
		}
		defer body.Close()
		_, err = io.ReadAll(body)
		return err
	}
	var rangeOpts minio.GetObjectOptions
	if err := rangeOpts.SetRange(1024, 2047); err != nil {
		b.Fatal(err)
	}

	// Each op gets a fresh pair of calls per iteration i.
	var oursETag, rawETag string
	ops := []struct {
		name      string
		setup     func() error
		ours, raw func(i int) error
	}{
		{
			name: "create",
			ours: func(i int) error {
				_, err := s.Put(ctx, fmt.Sprintf("create/ours/%06d", i), payload, IfAbsent())
				return err
			},
			raw: func(i int) error {
				_, err := rawPut(fmt.Sprintf("create/raw/%06d", i), func(o *minio.PutObjectOptions) { o.SetMatchETagExcept("*") })
				return err
			},
		},
		{
			name: "cas",
			setup: func() error {
				o, err := s.Put(ctx, "cas/ours", payload, IfAbsent())
				oursETag = o.ETag
				if err != nil {
					return err
				}
				rawETag, err = rawPut("cas/raw", func(o *minio.PutObjectOptions) { o.SetMatchETagExcept("*") })
				return err
			},
			ours: func(int) error {
				o, err := s.Put(ctx, "cas/ours", payload, IfMatch(oursETag))
				oursETag = o.ETag
				return err
			},
			raw: func(int) error {
				etag, err := rawPut("cas/raw", func(o *minio.PutObjectOptions) { o.SetMatchETag(rawETag) })
				rawETag = etag
				return err
			},
		},
		{
			name: "get",
			ours: func(int) error {
				_, _, err := s.Get(ctx, "obj")
				return err
			},
			raw: func(int) error { return rawGet("obj", minio.GetObjectOptions{}) },
		},
		{
			name: "range",
			ours: func(int) error {
				_, _, err := s.GetRange(ctx, "obj", Bytes(1024, 2047))
				return err
			},
			raw: func(int) error { return rawGet("obj", rangeOpts) },
		},
	}

	var table strings.Builder
	fmt.Fprintf(&table, "%d samples per side; latencies in µs\n", n)
	fmt.Fprintf(&table, "%-7s %9s %9s %9s %9s %7s\n", "op", "p50", "raw p50", "p99", "raw p99", "ratio")
	b.ResetTimer()
	for _, op := range ops {
		if op.setup != nil {
			if err := op.setup(); err != nil {
				b.Fatalf("%s setup: %v", op.name, err)
			}
		}
		// Warm both paths (connections, credentials) before measuring.
		for i := range 5 {
			if err := op.ours(n + 2*i); err != nil {
				b.Fatalf("%s warm-up: %v", op.name, err)
			}
			if err := op.raw(n + 2*i + 1); err != nil {
				b.Fatalf("%s raw warm-up: %v", op.name, err)
			}
		}
		ours := make([]time.Duration, 0, n)
		raw := make([]time.Duration, 0, n)
		for i := range n {
			first, second := op.ours, op.raw
			fd, sd := &ours, &raw
			if i%2 == 1 {
				first, second, fd, sd = second, first, sd, fd
			}
			for _, c := range []struct {
				fn func(int) error
				d  *[]time.Duration
			}{{first, fd}, {second, sd}} {
				t0 := time.Now()
				if err := c.fn(i); err != nil {
					b.Fatalf("%s #%d: %v", op.name, i, err)
				}
				*c.d = append(*c.d, time.Since(t0))
			}
		}
		p50, p99 := quantile(ours, 0.50), quantile(ours, 0.99)
		r50, r99 := quantile(raw, 0.50), quantile(raw, 0.99)
		ratio := p50 / r50
		b.ReportMetric(p50, op.name+"_p50_us")
		b.ReportMetric(p99, op.name+"_p99_us")
		b.ReportMetric(r50, op.name+"_raw_p50_us")
		b.ReportMetric(r99, op.name+"_raw_p99_us")
		b.ReportMetric(ratio, op.name+"_ratio")
		fmt.Fprintf(&table, "%-7s %9.0f %9.0f %9.0f %9.0f %7.3f\n", op.name, p50, r50, p99, r99, ratio)
	}
	b.StopTimer()
	b.Logf("S3 store vs raw minio-go on %s\n%s", s, table.String())
}

// quantile returns the q-quantile of ds in microseconds (nearest rank).
func quantile(ds []time.Duration, q float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := max(int(math.Ceil(q*float64(len(s))))-1, 0)
	return float64(s[i].Nanoseconds()) / 1e3
}
