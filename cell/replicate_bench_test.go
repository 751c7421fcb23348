package cell

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// BenchmarkDurableWrite measures one KV write from commit until
// WaitDurable returns, against one raw Put of an object the size of a
// typical segment on the same store: the ratio is what capture, encoding
// and the uploader add to the bucket round trip. "mem+2ms" adds 2ms to
// every Put, as a nearby object store would; group_commit lets commits run
// ahead of their uploads, as interleaved requests on one cell do.
func BenchmarkDurableWrite(b *testing.B) {
	// The local commit alone, checkpointed as often as below: the floor.
	b.Run("commit_only", func(b *testing.B) {
		db := openTest(b)
		value := make([]byte, 100)
		for i := 0; b.Loop(); i++ {
			if err := db.Put("key:"+strconv.Itoa(i%1000), value); err != nil {
				b.Fatal(err)
			}
			if i%100 == 99 {
				db.c.checkpointTruncate()
			}
		}
	})
	for _, lat := range []time.Duration{0, 2 * time.Millisecond} {
		name := "mem"
		if lat > 0 {
			name = "mem+" + lat.String()
		}
		newStore := func() *bucket.Mem {
			m := bucket.NewMem()
			if lat > 0 {
				m.SetFaults(func(c bucket.Call) bucket.Fault {
					if c.Method == "put" {
						return bucket.Fault{Latency: lat}
					}
					return bucket.Fault{}
				})
			}
			return m
		}
		b.Run(name+"/commit_to_durable", func(b *testing.B) {
			db, r := replicated(b, newStore(), 1, RestoreInfo{})
			value := make([]byte, 100)
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				if err := db.Put("key:"+strconv.Itoa(i%1000), value); err != nil {
					b.Fatal(err)
				}
				if err := r.WaitDurable(ctx, r.Captured()); err != nil {
					b.Fatal(err)
				}
				if i%100 == 99 {
					r.Checkpoint()
				}
			}
			st := r.Stats()
			b.ReportMetric(float64(st.Bytes)/float64(max(st.Segments+st.Snapshots, 1)), "B/object")
			b.ReportMetric(float64(st.Captured)/float64(max(st.Segments+st.Snapshots, 1)), "commits/object")
		})
		b.Run(name+"/raw_put", func(b *testing.B) {
			store := newStore()
			data := make([]byte, 1024) // about one segment of one small write (B/object above)
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				if _, err := store.Put(ctx, fmt.Sprintf("bench/%d", i%1000), data, bucket.Cond{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		// Group commit: commits do not wait for each other, as when many
		// requests interleave on one cell; each has its own WaitDurable.
		b.Run(name+"/group_commit", func(b *testing.B) {
			db, r := replicated(b, newStore(), 1, RestoreInfo{})
			value := make([]byte, 100)
			ctx := context.Background()
			var wg sync.WaitGroup
			for i := 0; b.Loop(); i++ {
				if err := db.Put("key:"+strconv.Itoa(i%1000), value); err != nil {
					b.Fatal(err)
				}
				txid := r.Captured()
				wg.Go(func() {
					if err := r.WaitDurable(ctx, txid); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
			st := r.Stats()
			b.ReportMetric(float64(st.Captured)/float64(max(st.Segments+st.Snapshots, 1)), "commits/object")
		})
	}
}
