package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"
	dto "github.com/prometheus/client_model/go"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/internal/miniotest"
	"github.com/celldgo/celld/metrics"
)

// value is the value of the series name{labels} (a counter, a gauge, or
// a histogram's sample count), 0 when absent.
func value(t testing.TB, m *metrics.Metrics, name string, labels ...string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if !hasLabels(s, labels) {
				continue
			}
			switch {
			case s.Counter != nil:
				return s.Counter.GetValue()
			case s.Gauge != nil:
				return s.Gauge.GetValue()
			case s.Histogram != nil:
				return float64(s.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

func hasLabels(s *dto.Metric, kv []string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		found := false
		for _, l := range s.GetLabel() {
			if l.GetName() == kv[i] && l.GetValue() == kv[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// TestWrap_CountsEveryBackend runs the same calls through the wrapper on
// each backend and checks each is counted with its outcome, timed, and
// that LTX bytes are told from other writes.
func TestWrap_CountsEveryBackend(t *testing.T) {
	backends := map[string]func(t *testing.T) bucket.Store{
		"memory": func(t *testing.T) bucket.Store { return bucket.NewMem() },
		"file": func(t *testing.T) bucket.Store {
			s, err := bucket.NewFile(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"minio": func(t *testing.T) bucket.Store {
			srv := miniotest.Shared(t)
			s, err := bucket.NewS3(bucket.S3Config{Bucket: srv.NewBucket(t), Endpoint: srv.Endpoint,
				Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			inner := open(t)
			m := metrics.New(nil)
			s := m.Wrap(inner)
			// The wrapper is the same kind of store as what it wraps.
			_, innerStreams := inner.(bucket.Streamer)
			_, streams := s.(bucket.Streamer)
			_, innerObjects := inner.(bucket.Objects)
			_, objects := s.(bucket.Objects)
			if streams != innerStreams || objects != innerObjects {
				t.Fatalf("wrapped: Streamer %v Objects %v, want %v %v", streams, objects, innerStreams, innerObjects)
			}
			if s.String() != inner.String() {
				t.Errorf("String %q, want %q", s.String(), inner.String())
			}

			ltx := "cells/Room:abc/ltx/e0000000000000001/0000000000000001-0000000000000001.ltx"
			if _, err := s.Put(ctx, ltx, bytes.Repeat([]byte("x"), 300), bucket.IfAbsent()); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, ltx, []byte("again"), bucket.IfAbsent()); !errors.Is(err, bucket.ErrRejected) {
				t.Fatalf("second create: %v, want rejected", err)
			}
			if _, err := bucket.PutStream(ctx, s, "nodes/n1.json", strings.NewReader("{}"), 2, bucket.Cond{}); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Get(ctx, ltx); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Get(ctx, "cells/none/own.json"); !errors.Is(err, bucket.ErrNotFound) {
				t.Fatalf("get missing: %v", err)
			}
			if _, err := s.List(ctx, "cells/", "", 10); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, ltx); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				op, outcome string
				want        float64
			}{
				{"put", "applied", 2}, {"put", "rejected", 1}, {"get", "applied", 1}, {"get", "not_found", 1},
				{"list", "applied", 1}, {"delete", "applied", 1},
			} {
				if got := value(t, m, "celld_bucket_requests_total", "op", c.op, "outcome", c.outcome); got != c.want {
					t.Errorf("celld_bucket_requests_total{op=%q,outcome=%q} = %v, want %v", c.op, c.outcome, got, c.want)
				}
			}
			if got := value(t, m, "celld_bucket_request_duration_seconds", "op", "put"); got != 3 {
				t.Errorf("put latency samples %v, want 3", got)
			}
			// Only the applied LTX write counts: not the rejected one, not
			// the lease.
			if got := value(t, m, "celld_ltx_uploaded_bytes_total"); got != 300 {
				t.Errorf("LTX bytes %v, want 300", got)
			}
			if objects {
				o := s.(bucket.Objects)
				if _, err := o.PutObject(ctx, "r2/media/a.txt", strings.NewReader("hi"), 2, bucket.PutOptions{}); err != nil {
					t.Fatal(err)
				}
				if _, err := o.HeadObject(ctx, "r2/media/missing"); !errors.Is(err, bucket.ErrNotFound) {
					t.Fatalf("head missing: %v", err)
				}
				if got := value(t, m, "celld_bucket_requests_total", "op", "object_put", "outcome", "applied"); got != 1 {
					t.Errorf("object_put applied %v, want 1", got)
				}
				if got := value(t, m, "celld_bucket_requests_total", "op", "object_head", "outcome", "not_found"); got != 1 {
					t.Errorf("object_head not_found %v, want 1", got)
				}
			}
		})
	}
}

// TestNew_RegistriesAreSeparate: two nodes in one process each count
// their own calls (the global registry would panic on the second, or
// merge them).
func TestNew_RegistriesAreSeparate(t *testing.T) {
	a, b := metrics.New(nil), metrics.New(nil)
	a.Request(metrics.KindFetch, "2xx", time.Millisecond)
	if got := value(t, a, "celld_requests_total", "kind", "fetch", "status", "2xx"); got != 1 {
		t.Errorf("a: %v, want 1", got)
	}
	if got := value(t, b, "celld_requests_total", "kind", "fetch", "status", "2xx"); got != 0 {
		t.Errorf("b: %v, want 0", got)
	}
	var nilM *metrics.Metrics
	nilM.Request(metrics.KindFetch, "2xx", 0) // a nil *Metrics is a no-op
	if s := nilM.Wrap(bucket.NewMem()); s == nil {
		t.Fatal("nil Wrap returned nil")
	}
}

func TestStatusClass(t *testing.T) {
	for status, want := range map[int]string{101: "1xx", 200: "2xx", 204: "2xx", 404: "4xx", 503: "5xx", 0: "other", 700: "other"} {
		if got := metrics.StatusClass(status); got != want {
			t.Errorf("StatusClass(%d) = %q, want %q", status, got, want)
		}
	}
}
