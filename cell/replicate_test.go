package cell

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/superfly/ltx"
)

// writeMix commits n transactions of every kind a cell makes: KV puts and
// deletes, SQL inserts, updates and deletes, multi-statement transactions.
// Row i of table t holds i.
func writeMix(t testing.TB, db *DB, from, n int) {
	t.Helper()
	exec(t, db, "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT, b BLOB)")
	for i := from; i < from+n; i++ {
		switch i % 5 {
		case 0, 1:
			mustPut(t, db, fmt.Sprintf("key:%05d", i), strings.Repeat("v", i%300))
		case 2:
			exec(t, db, "INSERT INTO t (id, v, b) VALUES (?, ?, ?)", i, fmt.Sprint("row ", i), make([]byte, i%2000))
		case 3:
			err := db.Transaction(func() error {
				if _, err := db.Exec("UPDATE t SET v = v || '+' WHERE id % 7 = ?", i%7); err != nil {
					return err
				}
				if _, err := db.Delete(fmt.Sprintf("key:%05d", i-3)); err != nil {
					return err
				}
				return db.Put(fmt.Sprintf("txn:%05d", i), []byte{byte(i)})
			})
			if err != nil {
				t.Fatalf("transaction %d: %v", i, err)
			}
		case 4:
			exec(t, db, "DELETE FROM t WHERE id = ?", i-2-10)
		}
	}
}

func TestReplicator_roundTrip(t *testing.T) {
	stores := map[string]func(t *testing.T) bucket.Store{
		"mem": func(*testing.T) bucket.Store { return bucket.NewMem() },
		"file": func(t *testing.T) bucket.Store {
			s, err := bucket.NewFile(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			store := newStore(t)
			db, r := replicated(t, store, 1, RestoreInfo{})
			writeMix(t, db, 0, 300)
			want := contents(t, db)
			captured := r.Captured()
			if commits := db.Commits(); captured != commits {
				t.Errorf("Captured = %d, want one TXID per commit (%d)", captured, commits)
			}
			closeReplicated(t, db, r)

			got, info := restored(t, store)
			sameContents(t, contents(t, got), want)
			if info.TXID != captured || info.Epoch != 1 || info.Objects == 0 {
				t.Errorf("restore info = %+v, want TXID %d in epoch 1", info, captured)
			}
		})
	}
}

func TestReplicator_firstLTXIsSnapshot(t *testing.T) {
	store := bucket.NewMem()
	// A file with content but no history: the first LTX must carry all of it.
	path := t.TempDir() + "/cell.db"
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	writeMix(t, db, 0, 50)
	db.Close()
	db, r := replicatedAt(t, path, store, 1, RestoreInfo{})
	mustPut(t, db, "after", "start")
	want := contents(t, db)
	closeReplicated(t, db, r)

	keys := ltxKeys(t, store)
	if len(keys) != 1 || !strings.HasSuffix(keys[0], "/0000000000000001-0000000000000001.ltx") {
		t.Fatalf("objects = %v, want one snapshot of TXID 1", keys)
	}
	got, _ := restored(t, store)
	sameContents(t, contents(t, got), want)
}

// storedStore records the keys whose Put has returned, in order.
type storedStore struct {
	bucket.Store
	mu     sync.Mutex
	stored []string
}

func (s *storedStore) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	o, err := s.Store.Put(ctx, key, data, cond)
	if err == nil {
		s.mu.Lock()
		s.stored = append(s.stored, key)
		s.mu.Unlock()
	}
	return o, err
}

// covers reports whether an object holding txid was stored.
func (s *storedStore) covers(txid uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.stored {
		lo, hi, err := ltx.ParseFilename(k[strings.LastIndex(k, "/")+1:])
		if err == nil && uint64(lo) <= txid && txid <= uint64(hi) {
			return true
		}
	}
	return false
}

func TestReplicator_groupCommit(t *testing.T) {
	mem := bucket.NewMem()
	const latency = 20 * time.Millisecond
	mem.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" {
			return bucket.Fault{Latency: latency}
		}
		return bucket.Fault{}
	})
	store := &storedStore{Store: mem}
	db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
	const commits = 200
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range commits {
		mustPut(t, db, fmt.Sprint("k", i), "v")
		txid := r.Captured()
		// Each commit's output waits for its own durability, as the output
		// gate will; it must find its transaction in the bucket.
		wg.Go(func() {
			if err := r.WaitDurable(ctx, txid); err != nil {
				t.Error(err)
			}
			if !store.covers(txid) {
				t.Errorf("WaitDurable(%d) returned before an object holding it was stored", txid)
			}
		})
		if i%10 == 0 {
			time.Sleep(time.Millisecond) // commits keep coming while uploads are in flight
		}
	}
	wg.Wait()
	st := r.Stats()
	t.Logf("%d commits → %d LTX objects (one upload of %v in flight at a time)", commits, st.Segments, latency)
	if st.Segments >= commits/4 {
		t.Errorf("%d commits made %d LTX objects; group commit should merge them", commits, st.Segments)
	}
	want := contents(t, db)
	closeReplicated(t, db, r)
	got, _ := restored(t, store)
	sameContents(t, contents(t, got), want)
}

func TestReplicator_retriesFailedUploads(t *testing.T) {
	store := bucket.NewMem()
	var failures int
	store.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" && failures < 3 {
			failures++
			if failures == 2 {
				return bucket.Fault{LoseResponse: true} // applied, but looks ambiguous
			}
			return bucket.Fault{Status: 503}
		}
		return bucket.Fault{}
	})
	db, r := replicated(t, store, 1, RestoreInfo{})
	mustPut(t, db, "a", "1")
	mustPut(t, db, "b", "2")
	waitDurable(t, r)
	if got := r.Stats().Retries; got != 3 {
		t.Errorf("Retries = %d, want 3", got)
	}
	want := contents(t, db)
	closeReplicated(t, db, r)
	got, _ := restored(t, store)
	sameContents(t, contents(t, got), want)
}

func TestReplicator_Checkpoint(t *testing.T) {
	store := bucket.NewMem()
	gate := make(chan struct{})
	store.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" {
			<-gate // uploads wait until the test lets them through
		}
		return bucket.Fault{}
	})
	db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
	walSize := func() int64 {
		t.Helper()
		st, err := os.Stat(db.Path() + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	mustPut(t, db, "a", "1")
	if done, err := r.Checkpoint(); done || err != nil {
		t.Fatalf("Checkpoint with an upload in flight = %v, %v; want false", done, err)
	}
	if walSize() == 0 {
		t.Fatal("the WAL was emptied before its frames were durable")
	}
	close(gate)
	waitDurable(t, r)
	if done, err := r.Checkpoint(); !done || err != nil {
		t.Fatalf("Checkpoint when idle = %v, %v; want true", done, err)
	}
	if n := walSize(); n != 0 {
		t.Fatalf("WAL is %d bytes after a TRUNCATE checkpoint", n)
	}

	// The WAL restarts with new salts; capture follows it, through several
	// rounds, and the history stays whole.
	for round := range 5 {
		writeMix(t, db, round*40, 40)
		waitDurable(t, r)
		if done, err := r.Checkpoint(); !done || err != nil {
			t.Fatalf("round %d: Checkpoint = %v, %v", round, done, err)
		}
	}
	writeMix(t, db, 200, 10) // and some left in the WAL
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := contents(t, db)
	captured := r.Captured()
	closeReplicated(t, db, r)
	got, info := restored(t, store)
	sameContents(t, contents(t, got), want)
	if info.TXID != captured {
		t.Errorf("restored TXID %d, captured %d", info.TXID, captured)
	}
}

func TestReplicator_dbClosedFirst(t *testing.T) {
	store := bucket.NewMem()
	gate := make(chan struct{})
	store.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" {
			<-gate
		}
		return bucket.Fault{}
	})
	db, r := replicated(t, store, 1, RestoreInfo{})
	writeMix(t, db, 0, 30) // the first LTX, a snapshot, reads the database file
	want := contents(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	close(gate)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := restored(t, store)
	sameContents(t, contents(t, got), want)
}

func TestReplicator_Checkpoint_refusedInTransaction(t *testing.T) {
	db, r := replicated(t, bucket.NewMem(), 1, RestoreInfo{})
	mustPut(t, db, "a", "1")
	waitDurable(t, r)
	err := db.Transaction(func() error {
		done, err := r.Checkpoint()
		if done || err != nil {
			t.Errorf("Checkpoint inside a transaction = %v, %v", done, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestReplicator_largeTransactionSpillsToWAL(t *testing.T) {
	store := bucket.NewMem()
	db, r := replicated(t, store, 1, RestoreInfo{})
	// A tiny page cache makes SQLite write frames of the open transaction
	// to the WAL before its commit frame (a cache spill).
	if err := db.c.exec("PRAGMA cache_size=10"); err != nil {
		t.Fatal(err)
	}
	exec(t, db, "CREATE TABLE big (id INTEGER PRIMARY KEY, v BLOB)")
	err := db.Transaction(func() error {
		for i := range 2000 {
			if _, err := db.Exec("INSERT INTO big VALUES (?, ?)", i, make([]byte, 1000)); err != nil {
				return err
			}
		}
		_, err := db.Exec("UPDATE big SET v = randomblob(900) WHERE id % 3 = 0")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	exec(t, db, "DELETE FROM big WHERE id > 100")
	if err := db.DeleteAll(); err != nil { // VACUUM: the file shrinks
		t.Fatal(err)
	}
	mustPut(t, db, "after", "vacuum")
	want := contents(t, db)
	closeReplicated(t, db, r)
	got, _ := restored(t, store)
	sameContents(t, contents(t, got), want)
}

func TestReplicator_Snapshot(t *testing.T) {
	store := &countingStore{Store: bucket.NewMem()}
	db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
	for i := range 30 {
		mustPut(t, db, fmt.Sprint("k", i), "v")
		waitDurable(t, r) // one segment per commit
	}
	if err := r.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.Snapshot(context.Background()); err != nil { // nothing new: no second object
		t.Fatal(err)
	}
	if st := r.Stats(); st.Snapshots != 1 {
		t.Errorf("Snapshots = %d, want 1", st.Snapshots)
	}
	mustPut(t, db, "after", "snapshot")
	want := contents(t, db)
	closeReplicated(t, db, r)
	got, info := restored(t, store)
	sameContents(t, contents(t, got), want)
	if info.Objects != 2 || store.gets.Load() != 2 {
		t.Errorf("restore read %d objects (%d gets), want the snapshot and one segment", info.Objects, store.gets.Load())
	}
}

// TestReplicator_compactionBoundsRestore: after 10,000 small writes a
// restore reads at most 20 objects, whether the owner died (the replicator
// still running, nothing flushed beyond what is durable) or closed.
func TestReplicator_compactionBoundsRestore(t *testing.T) {
	mem := bucket.NewMem()
	// A 1ms round trip, as to a nearby object store: group commit ships
	// about a segment per round trip, and a snapshot takes about one.
	mem.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" {
			return bucket.Fault{Latency: time.Millisecond}
		}
		return bucket.Fault{}
	})
	db, r := replicated(t, mem, 1, RestoreInfo{})
	exec(t, db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	const writes = 10_000
	for i := range writes {
		if i%2 == 0 {
			mustPut(t, db, fmt.Sprintf("key:%05d", i%3000), fmt.Sprint("value ", i))
		} else {
			exec(t, db, "INSERT INTO t VALUES (?, ?)", i, "row")
		}
	}
	waitDurable(t, r)
	want := contents(t, db)
	check := func(when string) {
		t.Helper()
		store := &countingStore{Store: mem}
		got, info := restored(t, store)
		sameContents(t, contents(t, got), want)
		st := r.Stats()
		t.Logf("%s: %d writes → %d segments, %d snapshots, %d KiB uploaded; restore read %d objects",
			when, writes, st.Segments, st.Snapshots, st.Bytes>>10, store.gets.Load())
		if n := store.gets.Load(); n > 20 || int(n) != info.Objects {
			t.Errorf("%s: restore read %d objects (info says %d), want at most 20", when, n, info.Objects)
		}
		if st.Snapshots == 0 {
			t.Errorf("%s: no snapshot was written", when)
		}
	}
	check("owner died")
	closeReplicated(t, db, r)
	check("after close")
}

func TestReplicator_fatalOnForeignCheckpoint(t *testing.T) {
	db, r := replicated(t, bucket.NewMem(), 1, RestoreInfo{})
	mustPut(t, db, "a", "1")
	waitDurable(t, r)
	// A checkpoint the replicator did not run: the WAL restarts behind its back.
	if err := db.c.exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, "b", "2")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.WaitDurable(ctx, r.Captured()+1)
	if err == nil || !strings.Contains(err.Error(), "wal restarted") {
		t.Fatalf("WaitDurable after a foreign checkpoint = %v, want the capture error", err)
	}
	if cerr := r.Close(ctx); cerr == nil || !strings.Contains(cerr.Error(), "wal restarted") {
		t.Fatalf("Close = %v, want the capture error", cerr)
	}
}

func TestNewReplicator_checksumMismatch(t *testing.T) {
	store := bucket.NewMem()
	db, r := replicated(t, store, 1, RestoreInfo{})
	mustPut(t, db, "a", "1")
	closeReplicated(t, db, r)
	path := t.TempDir() + "/cell.db"
	info, err := Restore(context.Background(), store, testCell, path)
	if err != nil {
		t.Fatal(err)
	}
	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	mustPut(t, db2, "local", "write") // not in the bucket
	if _, err := NewReplicator(db2, ReplicatorConfig{Store: store, Cell: testCell, Epoch: 2, From: info}); err == nil ||
		!strings.Contains(err.Error(), "was restored with") {
		t.Fatalf("NewReplicator on a file that is not the restored one: %v", err)
	}
}

// TestReplicator_CheckpointsALoadedCell: a cell that keeps writing gets its
// WAL checkpointed once the captured frames are durable, so the WAL stays
// bounded while the cell is loaded, and restore still sees every write.
func TestReplicator_CheckpointsALoadedCell(t *testing.T) {
	ctx := context.Background()
	store := bucket.NewMem()
	path := filepath.Join(t.TempDir(), "c.sqlite")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReplicator(db, ReplicatorConfig{Store: store, Cell: "C", Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	var maxWAL int64
	for i := 0; i < 3000; i++ {
		if err := db.Put(fmt.Sprintf("k%05d", i), make([]byte, 2000)); err != nil {
			t.Fatal(err)
		}
		if err := r.WaitDurable(ctx, r.Captured()); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path + "-wal"); err == nil && st.Size() > maxWAL {
			maxWAL = st.Size()
		}
	}
	// Without checkpoints this WAL passes 24 MB; with them it stays within
	// a few times the threshold (a checkpoint waits for uploads in flight).
	if limit := int64(3*CheckpointFrames) * 4120; maxWAL > limit {
		t.Fatalf("WAL grew to %d bytes while loaded, want it checkpointed below %d", maxWAL, limit)
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out := filepath.Join(t.TempDir(), "restored.sqlite")
	info, err := Restore(ctx, store, "C", out)
	if err != nil || info.TXID != 3000 {
		t.Fatalf("restore = %+v, %v; want TXID 3000", info, err)
	}
	db2, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if _, ok, err := db2.Get("k02999"); !ok || err != nil {
		t.Fatalf("last write missing after restore: %v %v", ok, err)
	}
}

// concurrencyStore records the most PUTs it had in flight at once.
type concurrencyStore struct {
	bucket.Store
	inflight, most atomic.Int64
}

func (s *concurrencyStore) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	n := s.inflight.Add(1)
	defer s.inflight.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(time.Millisecond) // a round trip, so that overlaps show
	return s.Store.Put(ctx, key, data, cond)
}

// TestReplicator_inlineSnapshots: a small database's compaction snapshot
// is the next upload itself, never a second upload beside a segment, and
// restore stays bounded.
func TestReplicator_inlineSnapshots(t *testing.T) {
	mem := bucket.NewMem()
	store := &concurrencyStore{Store: mem}
	db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 4 })
	for i := range 40 {
		mustPut(t, db, "count", fmt.Sprint(i))
		waitDurable(t, r)
	}
	want := contents(t, db)
	st := r.Stats()
	if st.Snapshots < 5 {
		t.Errorf("40 durable commits with a snapshot due every 4 segments: stats %+v", st)
	}
	if m := store.most.Load(); m != 1 {
		t.Errorf("up to %d uploads in flight at once; want 1", m)
	}
	counted := &countingStore{Store: mem}
	got, info := restored(t, counted)
	sameContents(t, contents(t, got), want)
	if info.Objects > 5 {
		t.Errorf("restore read %d objects, want at most 5", info.Objects)
	}
}
