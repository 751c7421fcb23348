package cell

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/internal/miniotest"
)

// BenchmarkRestore100MB_MinIO builds a cell of about 100 MB on MinIO
// (rows of incompressible 4000-byte blobs, 1000 to a transaction, each
// transaction waited durable and checkpointed), closes its replicator
// (which writes a snapshot if one is due, as on a graceful stop), and then
// times Restore into fresh paths: the newest snapshot and the segments
// after it, fetched restoreWindow ahead, verified and written to a file
// that is fsynced and renamed. It reports the median of max(b.N, 5)
// restores. Run it with -benchtime 1x.
func BenchmarkRestore100MB_MinIO(b *testing.B) {
	store := minioStore(b)
	ctx := context.Background()
	const (
		cellName = "Bench:restore-100mb"
		rowSize  = 4000 // one row to a 4 KiB page
		perTxn   = 1000
		target   = 100 << 20
	)

	// Build the cell.
	peakBuild := heapPeak()
	t0 := time.Now()
	src := filepath.Join(b.TempDir(), "source.sqlite")
	db, err := Open(src)
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewReplicator(db, ReplicatorConfig{Store: store, Cell: cellName, Epoch: 1})
	if err != nil {
		db.Close()
		b.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE blobs (id INTEGER PRIMARY KEY, v BLOB NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	rng := mrand.NewChaCha8([32]byte{1})
	row := make([]byte, rowSize)
	rows := 0
	for int64(rows)*4096 < target {
		err := db.Transaction(func() error {
			for range perTxn {
				rng.Read(row)
				if _, err := db.Exec("INSERT INTO blobs (v) VALUES (?)", row); err != nil {
					return err
				}
				rows++
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err = r.WaitDurable(wctx, r.Captured())
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.Checkpoint(); err != nil {
			b.Fatal(err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	err = r.Close(cctx)
	cancel()
	if err != nil {
		b.Fatalf("close replicator: %v", err)
	}
	stats := r.Stats()
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	build := time.Since(t0)
	buildHeap := peakBuild()
	srcSize := benchFileSize(b, src)

	// What a restore reads: the chain it plans, and what the bucket holds.
	objs, err := bucket.ListAll(ctx, store, LTXPrefix(cellName))
	if err != nil {
		b.Fatal(err)
	}
	sizeOf := map[string]int64{}
	var stored int64
	for _, o := range objs {
		sizeOf[o.Key] = o.Size
		stored += o.Size
	}
	chain, err := planChain(ctx, store, cellName)
	if err != nil {
		b.Fatal(err)
	}
	var chainBytes, snapBytes int64
	snaps := 0
	for _, s := range chain {
		chainBytes += sizeOf[s.key]
		if s.min == 1 {
			snaps++
			snapBytes += sizeOf[s.key]
		}
	}

	samples := max(b.N, 5)
	dir := b.TempDir()
	var times []time.Duration
	var info RestoreInfo
	var restored string
	peakRestore := heapPeak()
	b.ResetTimer()
	for i := range samples {
		path := filepath.Join(dir, fmt.Sprintf("restored-%d.sqlite", i))
		t0 := time.Now()
		info, err = Restore(ctx, store, cellName, path)
		times = append(times, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		if restored != "" {
			os.Remove(restored) // keep one 100 MB copy on disk
		}
		restored = path
	}
	b.StopTimer()
	restoreHeap := peakRestore()

	// The restore is the cell that was written.
	out, err := Open(restored)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	n, err := out.c.queryInt("SELECT count(*) FROM blobs")
	if err != nil || n != int64(rows) {
		b.Fatalf("restored cell holds %d rows (%v), want %d", n, err, rows)
	}
	if got, err := out.c.queryText("PRAGMA quick_check"); err != nil || got != "ok" {
		b.Fatalf("quick_check of the restored file: %q, %v", got, err)
	}
	if info.TXID != stats.Captured {
		b.Errorf("restored TXID %d, the replicator captured %d", info.TXID, stats.Captured)
	}
	size := benchFileSize(b, restored)

	sorted := slices.Clone(times)
	slices.Sort(sorted)
	med := sorted[len(sorted)/2]
	mbps := float64(size) / 1e6 / med.Seconds()
	b.ReportMetric(med.Seconds(), "restore_s")
	b.ReportMetric(mbps, "MB/s")
	b.ReportMetric(float64(info.Objects), "objects")
	b.ReportMetric(float64(restoreHeap)/1e6, "restore_heap_peak_MB")
	b.ReportMetric(float64(buildHeap)/1e6, "build_heap_peak_MB")

	var t strings.Builder
	fmt.Fprintf(&t, "built %d rows (%d B file, %d transactions) in %v; replicator: %d segments, %d snapshots, %d B uploaded, %d retries\n",
		rows, srcSize, stats.Captured, build.Round(time.Millisecond), stats.Segments, stats.Snapshots, stats.Bytes, stats.Retries)
	fmt.Fprintf(&t, "bucket: %d LTX objects, %d B; restore chain: %d objects, %d B (%d snapshot of %d B, %d segments)\n",
		len(objs), stored, len(chain), chainBytes, snaps, snapBytes, len(chain)-snaps)
	fmt.Fprintf(&t, "peak Go heap above the start: %.1f MB while building (snapshots streamed from temporary files), %.1f MB while restoring (objects streamed)\n",
		float64(buildHeap)/1e6, float64(restoreHeap)/1e6)
	fmt.Fprintf(&t, "restores (s):")
	for _, d := range times {
		fmt.Fprintf(&t, " %.3f", d.Seconds())
	}
	fmt.Fprintf(&t, "\nmedian %.3f s, %.1f MB/s of a %d B file; RestoreInfo %+v", med.Seconds(), mbps, size, info)
	b.Logf("restore of a ~100 MB cell from MinIO\n%s", t.String())
}

func benchFileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// heapPeak samples the Go heap every millisecond until the returned
// function is called, which reports the peak above the heap at the start.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		if p := peak.Load(); p > base {
			return p - base
		}
		return 0
	}
}

// minioStore is an S3 store on a fresh bucket of the shared MinIO.
func minioStore(tb testing.TB) *bucket.S3 {
	tb.Helper()
	srv := miniotest.Shared(tb)
	store, err := bucket.NewS3(bucket.S3Config{
		Bucket:   srv.NewBucket(tb),
		Endpoint: srv.Endpoint,
		Creds:    credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""),
	})
	if err != nil {
		tb.Fatal(err)
	}
	return store
}
