package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/internal/miniotest"
	"github.com/celldgo/celld/server/api"
	"github.com/celldgo/celld/worker"
)

// End-to-end benchmarks of a node on MinIO over loopback. Each starts
// its own bucket and nodes in-process and prints a table with b.Logf; the
// headline numbers are reported with b.ReportMetric. Run them with
//
//	go test -run XXX -bench '_MinIO' -benchtime 1x ./server/
//
// b.N is not a loop the framework tunes: every benchmark takes a fixed
// number of samples (more when -benchtime Nx asks for more).

// minioStore returns an S3 store on a fresh bucket of the shared MinIO.
func benchMinioStore(b *testing.B) *bucket.S3 {
	b.Helper()
	srv := miniotest.Shared(b)
	s, err := bucket.NewS3(bucket.S3Config{
		Bucket:   srv.NewBucket(b),
		Endpoint: srv.Endpoint,
		Creds:    credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""),
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchDeploy(b *testing.B, store bucket.Store, dir string) {
	b.Helper()
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		b.Fatal(err)
	}
}

// benchLog keeps what the nodes log at Warn and above, so that a benchmark
// can show errors that its numbers alone would hide.
type benchLog struct {
	mu    sync.Mutex
	lines []string
	n     int
}

func (w *benchLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	if len(w.lines) < 20 {
		w.lines = append(w.lines, strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

func (w *benchLog) report(b *testing.B) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n > 0 {
		b.Logf("nodes logged %d lines at WARN or above; the first: %.400s", w.n, w.lines[0])
	}
}

// benchNode is a node running in this process.
type benchNode struct {
	name             string
	public, internal string
	stateDir         string
	stop             func() error // graceful: release cells, delete the lease
}

// startBenchNode runs a node on store with its state in stateDir (a fresh
// directory when empty). It is stopped when the benchmark ends unless
// stop was called first.
func startBenchNode(b *testing.B, store bucket.Store, name, stateDir string, logs *benchLog) *benchNode {
	b.Helper()
	if stateDir == "" {
		stateDir = filepath.Join(b.TempDir(), "state")
	}
	ctx, cancel := context.WithCancel(context.Background())
	type addrs struct{ pub, in string }
	ready := make(chan addrs, 1)
	done := make(chan error, 1)
	o := Options{
		Store: store, Node: name, Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0",
		Version: "bench", TTL: 5 * time.Second, StateDir: stateDir, MaxOpenCells: benchMaxOpenCells, IdleEvict: benchIdleEvict,
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		OnReady: func(pub, in string) { ready <- addrs{pub, in} },
	}
	go func() { done <- Run(ctx, o) }()
	var once sync.Once
	var stopErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(30 * time.Second):
				stopErr = fmt.Errorf("node %s did not stop within 30s", name)
			}
		})
		return stopErr
	}
	b.Cleanup(func() {
		if err := stop(); err != nil {
			b.Errorf("stop node %s: %v", name, err)
		}
	})
	select {
	case a := <-ready:
		return &benchNode{name: name, public: "http://" + a.pub, internal: "http://" + a.in, stateDir: stateDir, stop: stop}
	case err := <-done:
		b.Fatalf("node %s exited: %v", name, err)
	case <-time.After(30 * time.Second):
		b.Fatalf("node %s not ready", name)
	}
	return nil
}

// benchClient keeps enough idle connections for every concurrent writer.
func benchClient(b *testing.B) *http.Client {
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func benchGet(c *http.Client, u string) (int, string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// getOK is get that insists on a 200.
func benchGetOK(c *http.Client, u string) (string, error) {
	status, body, err := benchGet(c, u)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %q", u, status, strings.TrimSpace(body))
	}
	return body, err
}

// counterValue is the number a counter response carries.
func benchCount(body string) (int, error) {
	return strconv.Atoi(strings.TrimSpace(body))
}

// quantileUS is the q-quantile (nearest rank) of ds in microseconds.
func benchQuantile(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(max(int(math.Ceil(q*float64(len(s))))-1, 0), len(s)-1)
	return float64(s[i].Nanoseconds()) / 1e3
}

// cellName is the cell of a Durable Object addressed by name.
func benchCellName(class, name string) string {
	return class + ":" + worker.ObjectIDFromName(class, name)
}

// cellsOn lists the cells a node shows in /state.
func benchCells(c *http.Client, n *benchNode) ([]api.Cell, error) {
	body, err := benchGetOK(c, n.internal+"/state")
	if err != nil {
		return nil, err
	}
	var st struct {
		Cells []api.Cell `json:"cells"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		return nil, err
	}
	return st.Cells, nil
}

func benchFileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// benchStore counts the calls a node makes to its store, by operation and
// kind of key, and the time they take.
type benchStore struct {
	bucket.Store
	mu    sync.Mutex
	calls map[string]benchCalls
}

type benchCalls struct {
	n int
	d time.Duration
}

func newBenchStore(s bucket.Store) *benchStore {
	return &benchStore{Store: s, calls: map[string]benchCalls{}}
}

// benchKind names what a key is: own.json, ltx, lease or other.
func benchKind(key string) string {
	switch {
	case strings.HasSuffix(key, "/own.json"):
		return "own.json"
	case strings.Contains(key, "/ltx/") || strings.HasSuffix(key, "/ltx"):
		return "ltx"
	case strings.HasPrefix(key, "wake/entries/"):
		return "wake-entry"
	case strings.HasPrefix(key, "wake/"):
		return "wake-other"
	case strings.HasPrefix(key, core.NodesPrefix):
		return "lease"
	default:
		return "other"
	}
}

func (s *benchStore) note(op, key string, t0 time.Time) {
	d := time.Since(t0)
	k := op + " " + benchKind(key)
	s.mu.Lock()
	c := s.calls[k]
	c.n++
	c.d += d
	s.calls[k] = c
	s.mu.Unlock()
}

func (s *benchStore) Get(ctx context.Context, key string) ([]byte, bucket.Object, error) {
	defer s.note("GET", key, time.Now())
	return s.Store.Get(ctx, key)
}

func (s *benchStore) GetRange(ctx context.Context, key string, r bucket.Range) ([]byte, bucket.Object, error) {
	defer s.note("GET", key, time.Now())
	return s.Store.GetRange(ctx, key, r)
}

func (s *benchStore) Head(ctx context.Context, key string) (bucket.Object, error) {
	defer s.note("HEAD", key, time.Now())
	return s.Store.Head(ctx, key)
}

func (s *benchStore) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	defer s.note("PUT", key, time.Now())
	return s.Store.Put(ctx, key, data, cond)
}

func (s *benchStore) Delete(ctx context.Context, key string) error {
	defer s.note("DELETE", key, time.Now())
	return s.Store.Delete(ctx, key)
}

func (s *benchStore) List(ctx context.Context, prefix, startAfter string, limit int) (bucket.Page, error) {
	defer s.note("LIST", prefix, time.Now())
	return s.Store.List(ctx, prefix, startAfter, limit)
}

// benchCallTimes summarizes the calls of several samples: per kind, how
// many per sample and the median time of one, and the median over the
// samples of their time in the bucket (leases and other keys left out).
func benchCallTimes(samples []map[string]benchCalls) string {
	kinds := map[string][]time.Duration{}
	var sums []time.Duration
	for _, m := range samples {
		var sum time.Duration
		for k, c := range m {
			if strings.HasSuffix(k, " lease") || strings.HasSuffix(k, " other") {
				continue
			}
			kinds[k] = append(kinds[k], c.d/time.Duration(c.n))
			sum += c.d
		}
		sums = append(sums, sum)
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		n := 0
		for _, m := range samples {
			n += m[k].n
		}
		parts = append(parts, fmt.Sprintf("%s x%.2f p50 %.2f ms", k, float64(n)/float64(len(samples)), benchQuantile(kinds[k], .5)/1e3))
	}
	return fmt.Sprintf("%s; in the bucket p50 %.2f ms", strings.Join(parts, ", "), benchQuantile(sums, .5)/1e3)
}

func (s *benchStore) snapshot() map[string]benchCalls {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.calls)
}

// benchDelta is what was called between two snapshots.
func benchDelta(before, after map[string]benchCalls) map[string]benchCalls {
	out := map[string]benchCalls{}
	for k, a := range after {
		if d := (benchCalls{a.n - before[k].n, a.d - before[k].d}); d.n > 0 {
			out[k] = d
		}
	}
	return out
}

// benchPer renders calls divided by per ("PUT ltx 1.06, GET own.json
// 1.00"), the kinds in skip left out.
func benchPer(calls map[string]benchCalls, per float64, skip ...string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(calls)) {
		if slices.ContainsFunc(skip, func(s string) bool { return strings.HasSuffix(k, " "+s) }) {
			continue
		}
		mean := calls[k].d.Microseconds() / int64(calls[k].n)
		if per == 1 {
			parts = append(parts, fmt.Sprintf("%s %d (mean %d µs)", k, calls[k].n, mean))
		} else {
			parts = append(parts, fmt.Sprintf("%s %.2f (mean %d µs)", k, float64(calls[k].n)/per, mean))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// BenchmarkDurableWrite_MinIO: the acknowledgement of one durable write
// through a node's public listener (GET / on examples/counter: the object
// increments, and the response leaves the output gate only once the LTX
// is in the bucket and own.json still names the node), against what the
// gate cannot avoid doing on the same store: one conditional PUT of a
// fresh key the size of the cell's LTX segments, then one GET of the
// cell's own.json. The two are interleaved, alternating which goes first,
// so both see the same noise. /peek (a read: the gate does not wait) is
// measured alongside to show what HTTP and the JavaScript runtime cost,
// and the raw pair once more with the PUT to a key shaped like the cell's
// segment keys (ack_p50_ratio_ltxkey): on MinIO's file system backend a
// deeper key costs a few hundred µs, which no node can avoid. Run it with
// bench/durable.sh, which keeps MinIO off the node's CPUs as the bucket is
// in production.
func BenchmarkDurableWrite_MinIO(b *testing.B) {
	store := benchMinioStore(b)
	benchDeploy(b, store, "../examples/counter")
	logs := &benchLog{}
	counted := newBenchStore(store) // the node's calls; the raw ones go to store itself
	n := startBenchNode(b, counted, "bench-a", "", logs)
	c := benchClient(b)
	ctx := context.Background()
	const name = "durable"
	cellID := benchCellName("Counter", name)
	incr, peek := n.public+"/?name="+name, n.public+"/peek?name="+name

	// Warm the cell, the connections and the runtime.
	want := 0
	for range 20 {
		body, err := benchGetOK(c, incr)
		if err != nil {
			b.Fatal(err)
		}
		want++
		if v, err := benchCount(body); err != nil || v != want {
			b.Fatalf("warm-up increment: %q, want %d", body, want)
		}
	}
	// The raw PUT carries as many bytes as the cell's LTX segments.
	objs, err := bucket.ListAll(ctx, store, cell.LTXPrefix(cellID))
	if err != nil || len(objs) == 0 {
		b.Fatalf("list LTX of %s: %d objects, %v", cellID, len(objs), err)
	}
	var sizes []int64
	for _, o := range objs {
		if !strings.Contains(o.Key, "/0000000000000001-") { // not a snapshot
			sizes = append(sizes, o.Size)
		}
	}
	if len(sizes) == 0 {
		b.Fatalf("no LTX segment after %d writes: %d objects", want, len(objs))
	}
	slices.Sort(sizes)
	payload := make([]byte, sizes[len(sizes)/2])
	rand.Read(payload)
	ownKey := core.OwnKey(cellID)
	if _, _, err := store.Get(ctx, ownKey); err != nil {
		b.Fatalf("read %s: %v", ownKey, err)
	}
	runID := make([]byte, 4)
	rand.Read(runID)
	rawPrefix := "bench/raw-" + hex.EncodeToString(runID) + "/"
	for i := range 5 {
		if _, err := store.Put(ctx, fmt.Sprintf("%swarm-%d", rawPrefix, i), payload, bucket.IfAbsent()); err != nil {
			b.Fatal(err)
		}
		if _, err := benchGetOK(c, peek); err != nil {
			b.Fatal(err)
		}
	}

	samples := max(b.N, 300)
	acks := make([]time.Duration, 0, samples)
	raws := make([]time.Duration, 0, samples)
	peeks := make([]time.Duration, 0, samples)
	ack := func(int) error {
		body, err := benchGetOK(c, incr)
		if err != nil {
			return err
		}
		want++
		if v, err := benchCount(body); err != nil || v != want {
			return fmt.Errorf("increment answered %q, want %d", body, want)
		}
		return nil
	}
	raw := func(i int) error {
		if _, err := store.Put(ctx, fmt.Sprintf("%s%06d", rawPrefix, i), payload, bucket.IfAbsent()); err != nil {
			return err
		}
		_, _, err := store.Get(ctx, ownKey)
		return err
	}
	// The same, but to a key as deep and as long as the cell's segment
	// keys (cells/<cell>/ltx/e<epoch>/<min>-<max>.ltx, outside cells/):
	// on MinIO's file system backend every path level costs, so this is
	// the round trip a segment upload cannot go below.
	rawLTXPrefix := "bench/Counter:" + strings.Repeat(hex.EncodeToString(runID), 8) + "/ltx/e0000000000000001/"
	rawLTX := func(i int) error {
		key := rawLTXPrefix + ltxName(uint64(i+1000), uint64(i+1000))
		if _, err := store.Put(ctx, key, payload, bucket.IfAbsent()); err != nil {
			return err
		}
		_, _, err := store.Get(ctx, ownKey)
		return err
	}
	read := func(int) error {
		body, err := benchGetOK(c, peek)
		if err == nil {
			if v, cerr := benchCount(body); cerr != nil || v != want {
				err = fmt.Errorf("peek answered %q, want %d", body, want)
			}
		}
		return err
	}
	type side struct {
		fn func(int) error
		d  *[]time.Duration
	}
	rawLTXs := make([]time.Duration, 0, samples)
	sides := []side{{ack, &acks}, {raw, &raws}, {read, &peeks}, {rawLTX, &rawLTXs}}
	before := counted.snapshot()
	b.ResetTimer()
	for i := range samples {
		for j := range sides {
			s := sides[(i+j)%len(sides)] // rotate which goes first
			t0 := time.Now()
			if err := s.fn(i); err != nil {
				b.Fatalf("sample %d: %v", i, err)
			}
			*s.d = append(*s.d, time.Since(t0))
		}
	}
	b.StopTimer()
	calls := benchDelta(before, counted.snapshot())

	a50, a99 := benchQuantile(acks, .50), benchQuantile(acks, .99)
	r50, r99 := benchQuantile(raws, .50), benchQuantile(raws, .99)
	p50 := benchQuantile(peeks, .50)
	b.ReportMetric(a50, "ack_p50_us")
	b.ReportMetric(a99, "ack_p99_us")
	b.ReportMetric(r50, "raw_p50_us")
	b.ReportMetric(r99, "raw_p99_us")
	b.ReportMetric(a50/r50, "ack_p50_ratio")
	b.ReportMetric(a99/r99, "ack_p99_ratio")
	b.ReportMetric(p50, "peek_p50_us")
	l50 := benchQuantile(rawLTXs, .50)
	b.ReportMetric(a50/l50, "ack_p50_ratio_ltxkey")

	wal := benchFileSize(filepath.Join(n.stateDir, "Counter", strings.TrimPrefix(cellID, "Counter:")+".sqlite-wal"))
	var t strings.Builder
	fmt.Fprintf(&t, "%d samples per side, interleaved; latencies in µs; store %s\n", samples, store)
	fmt.Fprintf(&t, "%-44s %9s %9s %9s\n", "path", "p50", "p99", "max")
	row := func(label string, ds []time.Duration) {
		fmt.Fprintf(&t, "%-44s %9.0f %9.0f %9.0f\n", label, benchQuantile(ds, .5), benchQuantile(ds, .99), benchQuantile(ds, 1))
	}
	row("durable ack (GET /, through the output gate)", acks)
	row(fmt.Sprintf("raw PUT If-None-Match:* (%d B) + GET own.json", len(payload)), raws)
	row("read (GET /peek, gate does not wait)", peeks)
	row("raw, to a key shaped like an LTX key", rawLTXs)
	fmt.Fprintf(&t, "ack/raw: p50 %.3f (target <= 1.25), p99 %.3f; against the LTX-shaped key: p50 %.3f\n", a50/r50, a99/r99, a50/l50)
	fmt.Fprintf(&t, "node's S3 calls per ack: %s; median LTX segment %d B; -wal file after %d writes: %d B",
		benchPer(calls, float64(samples), "lease", "other"), len(payload), want, wal)
	b.Logf("durable write acknowledgement vs the raw S3 round trips it needs\n%s", t.String())
	logs.report(b)
}

// ltxName is the file name of an LTX object holding TXIDs lo..hi.
func ltxName(lo, hi uint64) string { return fmt.Sprintf("%016x-%016x.ltx", lo, hi) }

// BenchmarkGroupCommit_MinIO: acknowledged writes per second on one cell
// with 64 concurrent writers against one writer, each for the same time.
// Concurrent writes to a cell join one LTX while the previous one uploads,
// so throughput should grow with the writers until the cell's own
// goroutine is the limit. Every acknowledged increment must have returned
// a distinct value, and the final count must equal the acknowledgements.
func BenchmarkGroupCommit_MinIO(b *testing.B) {
	store := benchMinioStore(b)
	benchDeploy(b, store, "../examples/counter")
	logs := &benchLog{}
	counted := newBenchStore(store)
	n := startBenchNode(b, counted, "bench-gc", "", logs)
	c := benchClient(b)
	ctx := context.Background()
	const name = "group"
	cellID := benchCellName("Counter", name)
	incr := n.public + "/?name=" + name
	for range 10 {
		if _, err := benchGetOK(c, incr); err != nil {
			b.Fatal(err)
		}
	}
	phase := 3 * time.Second
	ltxCount := func() int {
		objs, err := bucket.ListAll(ctx, store, cell.LTXPrefix(cellID))
		if err != nil {
			b.Fatal(err)
		}
		return len(objs)
	}

	type result struct {
		writers  int
		acked    int
		failed   int
		failure  string
		elapsed  time.Duration
		lat      []time.Duration
		values   []int
		ltxAdded int
		calls    map[string]benchCalls
	}
	run := func(path string, writers int) result {
		before, calls := ltxCount(), counted.snapshot()
		var mu sync.Mutex
		res := result{writers: writers}
		var wg sync.WaitGroup
		start := time.Now()
		deadline := start.Add(phase)
		var stopped atomic.Bool
		for range writers {
			wg.Go(func() {
				var lat []time.Duration
				var vals []int
				failed, failure := 0, ""
				for !stopped.Load() && time.Now().Before(deadline) {
					t0 := time.Now()
					body, err := benchGetOK(c, n.public+path)
					d := time.Since(t0)
					if err != nil {
						failed++
						failure = err.Error()
						continue
					}
					v, err := benchCount(body)
					if err != nil {
						failed++
						failure = fmt.Sprintf("body %q", body)
						continue
					}
					lat = append(lat, d)
					vals = append(vals, v)
				}
				mu.Lock()
				res.lat = append(res.lat, lat...)
				res.values = append(res.values, vals...)
				res.failed += failed
				if failure != "" {
					res.failure = failure
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		res.elapsed = time.Since(start)
		res.acked = len(res.lat)
		res.ltxAdded = ltxCount() - before
		res.calls = benchDelta(calls, counted.snapshot())
		return res
	}

	b.ResetTimer()
	one := run("/?name="+name, 1)
	many := run("/?name="+name, 64)
	b.StopTimer()
	// The same writers reading (the gate does not wait): what HTTP and the
	// runtime allow on this machine without the bucket.
	reads := run("/peek?name="+name, 64)

	rate := func(r result) float64 { return float64(r.acked) / r.elapsed.Seconds() }
	x := rate(many) / rate(one)
	b.ReportMetric(rate(one), "writes/s_1")
	b.ReportMetric(rate(many), "writes/s_64")
	b.ReportMetric(x, "group_commit_x")

	// Every acknowledged increment returned a different count, and the
	// count is the number of increments acknowledged.
	all := append(slices.Clone(one.values), many.values...)
	slices.Sort(all)
	dups := 0
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			dups++
		}
	}
	final := -1
	if body, err := benchGetOK(c, n.public+"/peek?name="+name); err == nil {
		final, _ = benchCount(body)
	}

	var t strings.Builder
	fmt.Fprintf(&t, "%.0fs per phase on one cell; latencies in µs\n", phase.Seconds())
	fmt.Fprintf(&t, "%-19s %7s %6s %7s %8s %8s %8s  %s\n", "phase", "ok", "failed", "ops/s", "p50", "p99", "ops/LTX", "node's S3 calls per op")
	for _, r := range []struct {
		label string
		result
	}{{"1 writer (GET /)", one}, {"64 writers (GET /)", many}, {"64 readers (/peek)", reads}} {
		perLTX := "-"
		if r.ltxAdded > 0 {
			perLTX = fmt.Sprintf("%.1f", float64(r.acked)/float64(r.ltxAdded))
		}
		fmt.Fprintf(&t, "%-19s %7d %6d %7.0f %8.0f %8.0f %8s  %s\n", r.label, r.acked, r.failed, rate(r.result),
			benchQuantile(r.lat, .5), benchQuantile(r.lat, .99), perLTX,
			benchPer(r.calls, float64(max(r.acked, 1)), "lease", "other"))
	}
	fmt.Fprintf(&t, "group_commit_x %.2f (target >= 10); duplicate counts among acknowledged increments: %d; final count %d after %d acknowledged (+10 warm-up)",
		x, dups, final, one.acked+many.acked)
	b.Logf("group commit: 64 writers vs 1 on one cell\n%s", t.String())
	for _, r := range []result{one, many, reads} {
		if r.failed > 0 {
			b.Errorf("%d writers: %d requests failed, last: %s", r.writers, r.failed, r.failure)
		}
	}
	if dups > 0 {
		b.Errorf("%d acknowledged increments returned a count another one also returned (lost updates)", dups)
	}
	// A failed request may or may not have incremented.
	if lo := 10 + one.acked + many.acked; final < lo || final > lo+one.failed+many.failed {
		b.Errorf("final count %d, but %d increments were acknowledged (+10 warm-up, %d failed)", final, lo-10, one.failed+many.failed)
	}
	logs.report(b)
}
