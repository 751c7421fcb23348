package cell

import (
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// loadBlobs fills db with rows of incompressible blobs: about size bytes
// in one transaction.
func loadBlobs(t testing.TB, db *DB, rng *mrand.Rand, size int) int {
	t.Helper()
	exec(t, db, "CREATE TABLE blobs (id INTEGER PRIMARY KEY, v BLOB NOT NULL, n INTEGER NOT NULL DEFAULT 0)")
	rows := size / 4000
	err := db.Transaction(func() error {
		blob := make([]byte, 3900)
		for i := range rows {
			for j := range blob {
				blob[j] = byte(rng.Uint32())
			}
			if _, err := db.Exec("INSERT INTO blobs (id, v) VALUES (?, ?)", i, blob); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// smallWrite changes a page or two: a counter in a random row, a KV pair,
// now and then a row deleted or added.
func smallWrite(t testing.TB, db *DB, rng *mrand.Rand, rows, i int) {
	t.Helper()
	switch rng.IntN(10) {
	case 0:
		exec(t, db, "DELETE FROM blobs WHERE id = ?", rng.IntN(rows))
	case 1:
		exec(t, db, "INSERT OR REPLACE INTO blobs (id, v) VALUES (?, ?)", rng.IntN(rows), fmt.Sprint("small ", i))
	case 2, 3, 4:
		mustPut(t, db, fmt.Sprintf("k%03d", rng.IntN(200)), fmt.Sprint("v", i))
	default:
		exec(t, db, "UPDATE blobs SET n = n + 1 WHERE id = ?", rng.IntN(rows))
	}
}

// A cell of ~4 MB taking one small write at a time (each its own
// segment): merges keep every restore at most 19 objects, without the
// full snapshot every 16 segments that used to upload the whole database
// again and again.
func TestCompaction_largeDatabaseMerges(t *testing.T) {
	mem := bucket.NewMem()
	db, r := replicated(t, mem, 1, RestoreInfo{})
	rng := mrand.New(mrand.NewPCG(7, 11))
	rows := loadBlobs(t, db, rng, 4<<20)
	waitDurable(t, r)
	size := int64(r.state.pages()) * int64(r.state.pageSize)
	const writes = 800
	maxObjects := 0
	for i := range writes {
		smallWrite(t, db, rng, rows, i)
		waitDurable(t, r)
		if i%97 == 0 || i == writes-1 {
			waitBackground(t, r)
			// The owner could die here: what the bucket holds restores
			// to exactly this.
			want := contents(t, db)
			store := &countingStore{Store: mem}
			got, info := restored(t, store)
			sameContents(t, contents(t, got), want)
			maxObjects = max(maxObjects, info.Objects)
			if info.Objects > chainBound(DefaultMergeSegments) || int(store.gets.Load()) != info.Objects {
				t.Errorf("after %d writes: restore read %d objects (info %d), want at most %d",
					i+1, store.gets.Load(), info.Objects, chainBound(DefaultMergeSegments))
			}
		}
	}
	st := r.Stats()
	t.Logf("%d B database, %d small writes: %d segments, %d merges, %d snapshots, %d KiB uploaded; restores read at most %d objects",
		size, writes, st.Segments, st.Merges, st.Snapshots, st.Bytes>>10, maxObjects)
	if st.Merges == 0 {
		t.Error("no merged file was written")
	}
	// A snapshot every 16 segments would have uploaded the database
	// writes/16 times over; merging uploads each written page a few times.
	if old := int64(writes/DefaultSnapshotSegments) * size; st.Bytes*5 > old {
		t.Errorf("uploaded %d KiB; snapshots every %d segments would upload %d KiB, want at most a fifth of it",
			st.Bytes>>10, DefaultSnapshotSegments, old>>10)
	}
	// A graceful stop of a database this size writes a snapshot, so the
	// next epoch restores one object, without listing.
	want := contents(t, db)
	sealed(t, db, r)
	h := readHead(t, mem)
	store := &listingStore{Store: mem}
	got, info := pendingRestore(t, store, 2)
	sameContents(t, contents(t, got), want)
	if size > CloseSnapshotBytes || store.lists.Load() != 0 || len(h.Chain) != 1 || info.Objects != 1 {
		t.Errorf("restore from the head: %d LISTs, %d objects, head chain %v; want the snapshot Close wrote", store.lists.Load(), info.Objects, h.Chain)
	}
}

// With two objects to a merge, every level fills quickly: the top one
// overflowing brings a snapshot (every 2^(mergeLevels+1) segments, long
// before the pages written reach the database's size), restores stay
// within the bound, and the contents are right at every step — including
// after merges of pages that left the WAL for the database file
// (checkpoints).
func TestCompaction_levelsFillAndOverflow(t *testing.T) {
	mem := bucket.NewMem()
	db, r := replicated(t, mem, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.MergeSegments = 2 })
	rng := mrand.New(mrand.NewPCG(3, 5))
	rows := loadBlobs(t, db, rng, 2<<20)
	waitDurable(t, r)
	first := r.Stats()
	const writes = 300
	bound := chainBound(2)
	for i := range writes {
		exec(t, db, "UPDATE blobs SET n = n + 1 WHERE id = ?", rng.IntN(rows))
		waitDurable(t, r)
		if i%40 == 0 {
			checkpoint(t, r)
		}
		if i%7 == 0 {
			want := contents(t, db)
			waitBackground(t, r)
			got, info := restored(t, mem)
			sameContents(t, contents(t, got), want)
			if info.Objects > bound {
				t.Fatalf("after %d writes: restore read %d objects, want at most %d", i+1, info.Objects, bound)
			}
		}
	}
	// The chain a Seal would write names merged objects in place of what
	// they cover, reaches from TXID 1 to the last durable one, and is as
	// short as a restore's.
	waitBackground(t, r)
	r.mu.Lock()
	chain, known, durable := slices.Clone(r.chain), r.chainKnown, r.durable
	r.mu.Unlock()
	merged := 0
	for i, c := range chain {
		if i == 0 && c.min != 1 || i > 0 && c.min != chain[i-1].max+1 {
			t.Fatalf("chain %v is not contiguous at %d", chain, i)
		}
		if c.min > 1 && c.max > c.min {
			merged++
		}
	}
	if !known || len(chain) == 0 || chain[len(chain)-1].max != durable || len(chain) > bound || merged == 0 {
		t.Errorf("seal chain %v (known %v, %d merged), durable %d; want a known chain of at most %d objects to it", chain, known, merged, durable, bound)
	}
	st := r.Stats()
	t.Logf("%d writes: %d segments, %d merges, %d snapshots; seal chain %d objects, %d merged", writes, st.Segments, st.Merges, st.Snapshots, len(chain), merged)
	overflows := (st.Segments - first.Segments) >> (mergeLevels + 1)
	if st.Snapshots-first.Snapshots < overflows || st.Merges < writes/3 {
		t.Errorf("stats %+v (after the load: %+v): want a snapshot for each of %d overflows and a merge about every other segment", st, first, overflows)
	}
}

// checkpoint checkpoints once the replicator is idle (a merge can make a
// commit durable before its own segment is up).
func checkpoint(t testing.TB, r *Replicator) {
	t.Helper()
	for range 3000 {
		waitBackground(t, r)
		done, err := r.Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		if done {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no checkpoint in 3000 tries")
}

// chainBound is the most objects a restore applies with merges of f: the
// newest snapshot and f-1 objects of each level, segments included.
func chainBound(f int) int { return 1 + (f-1)*(mergeLevels+1) }

// waitBackground waits until no snapshot or merge is being written.
func waitBackground(t testing.TB, r *Replicator) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Segment uploads too: a merge can make its end durable while
		// the last segment's own upload is still on its way (pipelined),
		// and that object would land after whatever the test does next.
		r.mu.Lock()
		idle := r.snap == nil && r.merging == 0 && len(r.pending) == 0 && !r.uploading && !r.upBusy && len(r.upq) == 0
		r.mu.Unlock()
		if idle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("background uploads still running after 30s")
		}
		time.Sleep(time.Millisecond)
	}
}

// A small database still gets a snapshot in place of every 16th segment
// and never a merge: that costs nothing extra.
func TestCompaction_smallDatabaseOnlySnapshots(t *testing.T) {
	mem := bucket.NewMem()
	db, r := replicated(t, mem, 1, RestoreInfo{})
	for i := range 100 {
		mustPut(t, db, fmt.Sprintf("k%d", i%10), fmt.Sprint(i))
		waitDurable(t, r)
	}
	st := r.Stats()
	if st.Merges != 0 || st.Snapshots < 100/DefaultSnapshotSegments {
		t.Errorf("stats %+v: want no merges and a snapshot every %d segments", st, DefaultSnapshotSegments)
	}
	got, info := restored(t, mem)
	sameContents(t, contents(t, got), contents(t, db))
	if info.Objects > DefaultSnapshotSegments+1 {
		t.Errorf("restore read %d objects", info.Objects)
	}
}

// A database large for what is written stacks top-level files instead of
// a snapshot when the levels overflow: a snapshot of it would cost more
// than maxTopAmplification times the pages written since the last one.
func TestCompaction_largeDatabaseStacksTopLevel(t *testing.T) {
	mem := bucket.NewMem()
	db, r := replicated(t, mem, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.MergeSegments = 2 })
	rng := mrand.New(mrand.NewPCG(9, 9))
	rows := loadBlobs(t, db, rng, 4<<20)
	waitDurable(t, r)
	// The load itself is snapshotted (a merge would hold it all).
	exec(t, db, "UPDATE blobs SET n = 1 WHERE id = 0")
	waitDurable(t, r)
	waitBackground(t, r)
	before := r.Stats()
	const writes = 100 // 4 KiB each: 64 of them overflow the levels
	for range writes {
		exec(t, db, "UPDATE blobs SET n = n + 1 WHERE id = ?", rng.IntN(rows))
		waitDurable(t, r)
	}
	waitBackground(t, r)
	st := r.Stats()
	got, info := restored(t, mem)
	sameContents(t, contents(t, got), contents(t, db))
	top := (st.Segments - before.Segments) >> mergeLevels
	t.Logf("%d writes after the load: %d snapshots, %d merges; restore %d objects", writes, st.Snapshots-before.Snapshots, st.Merges-before.Merges, info.Objects)
	if st.Snapshots != before.Snapshots || info.Objects > chainBound(2)+top {
		t.Errorf("stats %+v (before %+v), restore %d objects: want no snapshot and at most %d objects", st, before, info.Objects, chainBound(2)+top)
	}
}

// A snapshot that takes long to upload does not stop merging: while it is
// in flight and another is already due, merges keep the chain short.
func TestCompaction_mergesWhileASnapshotUploads(t *testing.T) {
	mem := bucket.NewMem()
	slow := make(chan struct{})
	mem.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" && strings.Contains(c.Key, "/0000000000000001-") && !strings.HasSuffix(c.Key, "-0000000000000001.ltx") {
			<-slow // every snapshot after the first waits until the test is done
		}
		return bucket.Fault{}
	})
	db, r := replicated(t, mem, 1, RestoreInfo{})
	t.Cleanup(func() { close(slow) })
	rng := mrand.New(mrand.NewPCG(4, 4))
	rows := loadBlobs(t, db, rng, 1<<20)
	waitDurable(t, r)
	for range 80 {
		// About 20 pages a write: a snapshot is due every 16 writes.
		err := db.Transaction(func() error {
			for range 20 {
				if _, err := db.Exec("UPDATE blobs SET n = n + 1 WHERE id = ?", rng.IntN(rows)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		waitDurable(t, r)
	}
	// Let the merges finish (the snapshots cannot).
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		merging := r.merging
		r.mu.Unlock()
		if merging == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("merges still running")
		}
		time.Sleep(time.Millisecond)
	}
	want := contents(t, db)
	got, info := restored(t, mem)
	sameContents(t, contents(t, got), want)
	st := r.Stats()
	t.Logf("80 writes with snapshots stuck: %d segments, %d merges; restore %d objects", st.Segments, st.Merges, info.Objects)
	if info.Objects > chainBound(DefaultMergeSegments)+1 {
		t.Errorf("restore applies %d objects while snapshots are stuck; want at most %d", info.Objects, chainBound(DefaultMergeSegments)+1)
	}
}
