package cell

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// listingStore counts LIST calls.
type listingStore struct {
	bucket.Store
	lists atomic.Int64
}

func (s *listingStore) List(ctx context.Context, prefix, startAfter string, limit int) (bucket.Page, error) {
	s.lists.Add(1)
	return s.Store.List(ctx, prefix, startAfter, limit)
}

// sealed closes r and db and seals the epoch, insisting that a head
// record was written.
func sealed(t testing.TB, db *DB, r *Replicator) {
	t.Helper()
	closeReplicated(t, db, r)
	ok, err := r.Seal(context.Background())
	if err != nil || !ok {
		t.Fatalf("Seal = %v, %v; want a head record", ok, err)
	}
}

// pendingRestore restores the test cell for epoch through a
// PendingRestore and opens it.
func pendingRestore(t testing.TB, store bucket.Store, epoch uint64) (*DB, RestoreInfo) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pending.db")
	ctx := context.Background()
	info, err := PrepareRestore(ctx, store, testCell, path).Restore(ctx, epoch, nil)
	if err != nil {
		t.Fatalf("restore for epoch %d: %v", epoch, err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, info
}

func readHead(t testing.TB, store bucket.Store) headRecord {
	t.Helper()
	data, _, err := store.Get(context.Background(), HeadKey(testCell))
	if err != nil {
		t.Fatalf("read head: %v", err)
	}
	var h headRecord
	if err := json.Unmarshal(data, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPendingRestore_fromHeadWithoutListing(t *testing.T) {
	for _, segs := range []int{1 << 30, 3} { // no compaction; a snapshot every 3 segments
		mem := bucket.NewMem()
		db, r := replicated(t, mem, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = segs })
		writeMix(t, db, 0, 40)
		want := contents(t, db)
		captured := r.Captured()
		sealed(t, db, r)

		store := &listingStore{Store: mem}
		got, info := pendingRestore(t, store, 2)
		if n := store.lists.Load(); n != 0 {
			t.Errorf("SnapshotSegments %d: %d LISTs; a sealed predecessor needs none", segs, n)
		}
		sameContents(t, contents(t, got), want)
		if info.Epoch != 1 || info.TXID != captured || len(info.Chain) != info.Objects {
			t.Errorf("SnapshotSegments %d: info %+v, want epoch 1 at TXID %d", segs, info, captured)
		}
		h := readHead(t, mem)
		if _, err := h.segments(testCell); err != nil || h.Epoch != 1 || h.TXID != captured {
			t.Errorf("head %+v (%v), want epoch 1 at TXID %d", h, err, captured)
		}
	}
}

// A restored replicator extends the chain it was restored with, and its
// seal lets the epoch after it restore without listing too.
func TestSeal_chainAcrossEpochs(t *testing.T) {
	mem := bucket.NewMem()
	tune := func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 }
	db, r := replicated(t, mem, 1, RestoreInfo{}, tune)
	writeMix(t, db, 0, 20)
	sealed(t, db, r)
	for epoch := uint64(2); epoch <= 4; epoch++ {
		path := filepath.Join(t.TempDir(), "cell.db")
		ctx := context.Background()
		info, err := PrepareRestore(ctx, mem, testCell, path).Restore(ctx, epoch, nil)
		if err != nil {
			t.Fatal(err)
		}
		db, r := replicatedAt(t, path, mem, epoch, info, tune)
		writeMix(t, db, int(epoch)*100, 10)
		sealed(t, db, r)
		h := readHead(t, mem)
		if h.Epoch != epoch || len(h.Chain) != len(info.Chain)+r.Stats().Segments {
			t.Fatalf("epoch %d: head %+v after restoring %d objects and writing %d", epoch, h, len(info.Chain), r.Stats().Segments)
		}
	}
	want, _ := restored(t, mem)
	store := &listingStore{Store: mem}
	got, _ := pendingRestore(t, store, 5)
	sameContents(t, contents(t, got), contents(t, want))
	if n := store.lists.Load(); n != 0 {
		t.Errorf("%d LISTs after a chain of sealed epochs", n)
	}
}

// A head record is trusted only by the epoch right after it: an epoch that
// ended without a seal (a crash, a tool, an older celld) wrote after it.
func TestPendingRestore_staleHeadFallsBackToListing(t *testing.T) {
	mem := bucket.NewMem()
	db, r := replicated(t, mem, 1, RestoreInfo{})
	writeMix(t, db, 0, 10)
	sealed(t, db, r)

	path := filepath.Join(t.TempDir(), "cell.db")
	info, err := Restore(context.Background(), mem, testCell, path)
	if err != nil {
		t.Fatal(err)
	}
	db2, r2 := replicatedAt(t, path, mem, 2, info)
	writeMix(t, db2, 100, 10)
	want := contents(t, db2)
	closeReplicated(t, db2, r2) // epoch 2 ends without a seal

	store := &listingStore{Store: mem}
	got, info := pendingRestore(t, store, 3)
	sameContents(t, contents(t, got), want)
	if info.Epoch != 2 || store.lists.Load() == 0 {
		t.Errorf("restore for epoch 3 after an unsealed epoch 2: %+v, %d LISTs; want epoch 2 from a listing", info, store.lists.Load())
	}
}

// A head record that does not hold up — an object it names is gone, or
// the checksum it promises is not what the chain gives — costs a LIST,
// never history.
func TestPendingRestore_badHeadFallsBackToListing(t *testing.T) {
	for name, spoil := range map[string]func(t *testing.T, s bucket.Store, h headRecord){
		"missing object": func(t *testing.T, s bucket.Store, h headRecord) {
			// The newest segment is gone: no listing can bridge that.
			if err := s.Delete(context.Background(), LTXPrefix(testCell)+h.Chain[len(h.Chain)-1]); err != nil {
				t.Fatal(err)
			}
		},
		"wrong checksum": func(t *testing.T, s bucket.Store, h headRecord) {
			h.Checksum = "8000000000000001"
			if _, err := s.Put(context.Background(), HeadKey(testCell), mustJSON(t, h), bucket.Cond{}); err != nil {
				t.Fatal(err)
			}
		},
		"not json": func(t *testing.T, s bucket.Store, h headRecord) {
			if _, err := s.Put(context.Background(), HeadKey(testCell), []byte("{"), bucket.Cond{}); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			mem := bucket.NewMem()
			db, r := replicated(t, mem, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 4 })
			for i := range 20 {
				writeMix(t, db, i*3, 3)
				waitDurable(t, r)
			}
			if err := r.Snapshot(context.Background()); err != nil {
				t.Fatal(err)
			}
			mustPut(t, db, "last", "write") // a segment after the snapshot
			want := contents(t, db)
			sealed(t, db, r)
			h := readHead(t, mem)
			if len(h.Chain) < 2 || r.Stats().Snapshots == 0 {
				t.Fatalf("head %+v, stats %+v: want a compacted chain", h, r.Stats())
			}
			spoil(t, mem, h)
			store := &listingStore{Store: mem}
			path := filepath.Join(t.TempDir(), "cell.db")
			ctx := context.Background()
			info, err := PrepareRestore(ctx, store, testCell, path).Restore(ctx, 2, nil)
			if err == nil && info.TXID != h.TXID {
				t.Errorf("restore = %+v, want TXID %d", info, h.TXID)
			}
			if store.lists.Load() == 0 {
				t.Error("no LIST after a head record that does not hold up")
			}
			if name == "missing object" {
				if !errors.Is(err, ErrBrokenHistory) {
					t.Fatalf("restore without the newest segment = %+v, %v; want ErrBrokenHistory", info, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Close()
			sameContents(t, contents(t, got), want)
		})
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A replicator that continues an epoch from a bare position (a preserved
// cell resuming) does not know the objects before it, so it writes no head
// until a snapshot of its own starts a chain it knows.
func TestSeal_unknownChain(t *testing.T) {
	mem := bucket.NewMem()
	db, r := replicated(t, mem, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
	writeMix(t, db, 0, 5)
	closeReplicated(t, db, r)
	path := filepath.Join(t.TempDir(), "cell.db")
	info, err := Restore(context.Background(), mem, testCell, path)
	if err != nil {
		t.Fatal(err)
	}
	bare := RestoreInfo{Epoch: info.Epoch, TXID: info.TXID, Checksum: info.Checksum}
	db2, r2 := replicatedAt(t, path, mem, 2, bare, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
	writeMix(t, db2, 100, 5)
	waitDurable(t, r2)
	closeReplicated(t, db2, r2)
	if ok, err := r2.Seal(context.Background()); ok || err != nil {
		t.Fatalf("Seal without a known chain = %v, %v; want false, nil", ok, err)
	}

	path3 := filepath.Join(t.TempDir(), "cell.db")
	info, err = Restore(context.Background(), mem, testCell, path3)
	if err != nil {
		t.Fatal(err)
	}
	bare = RestoreInfo{Epoch: info.Epoch, TXID: info.TXID, Checksum: info.Checksum}
	db3, r3 := replicatedAt(t, path3, mem, 3, bare, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
	writeMix(t, db3, 200, 5)
	if err := r3.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeMix(t, db3, 300, 5)
	want := contents(t, db3)
	sealed(t, db3, r3)
	got, _ := pendingRestore(t, mem, 4)
	sameContents(t, contents(t, got), want)
}

func TestSeal_refusedBeforeClose(t *testing.T) {
	db, r := replicated(t, bucket.NewMem(), 1, RestoreInfo{})
	mustPut(t, db, "a", "1")
	if ok, err := r.Seal(context.Background()); ok || err == nil {
		t.Fatalf("Seal of a running replicator = %v, %v; want an error", ok, err)
	}
}

// A pending restore that is cancelled, or finished for an epoch its head
// record does not describe, leaves no file behind.
func TestPendingRestore_leavesNoTempFile(t *testing.T) {
	mem := bucket.NewMem()
	db, r := replicated(t, mem, 1, RestoreInfo{})
	writeMix(t, db, 0, 10)
	sealed(t, db, r)
	ctx := context.Background()
	for name, finish := range map[string]func(p *PendingRestore){
		"cancelled":   func(p *PendingRestore) { p.Cancel() },
		"other epoch": func(p *PendingRestore) { p.Restore(ctx, 7, nil) },
	} {
		dir := t.TempDir()
		p := PrepareRestore(ctx, mem, testCell, filepath.Join(dir, "cell.db"))
		<-p.done
		if p.tmp == "" {
			t.Fatalf("%s: nothing applied ahead: %v", name, p.err)
		}
		finish(p)
		deadline := time.Now().Add(5 * time.Second)
		for {
			left, _ := filepath.Glob(filepath.Join(dir, "*.restore-*"))
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: left %v", name, left)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
