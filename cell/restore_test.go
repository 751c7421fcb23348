package cell

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/celldgo/celld/bucket"
)

func TestRestore_noHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cell.db")
	db, err := Open(path) // a stale local file is not the cell's state
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, "stale", "x")
	db.Close()
	info, err := Restore(context.Background(), bucket.NewMem(), testCell, path)
	if err != nil || info.Epoch != 0 || info.TXID != 0 || info.Objects != 0 || len(info.Chain) != 0 {
		t.Fatalf("Restore = %+v, %v; want nothing", info, err)
	}
	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, ok := getString(t, db, "stale"); ok {
		t.Error("the stale local file survived a restore of an empty history")
	}
}

func TestRestore_acrossEpochs(t *testing.T) {
	store := bucket.NewMem()
	db, r := replicated(t, store, 1, RestoreInfo{})
	writeMix(t, db, 0, 100)
	closeReplicated(t, db, r)

	// Epoch 2 restores, writes more.
	path := filepath.Join(t.TempDir(), "cell.db")
	info, err := Restore(context.Background(), store, testCell, path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Epoch != 1 {
		t.Fatalf("restore before epoch 2 wrote: %+v", info)
	}
	db, r = replicatedAt(t, path, store, 2, info)
	writeMix(t, db, 100, 100)
	want := contents(t, db)
	captured := r.Captured()
	closeReplicated(t, db, r)

	// Epoch 3 has nothing yet; a restore follows epoch 2 back into epoch 1.
	got, info := restored(t, store)
	sameContents(t, contents(t, got), want)
	if info.Epoch != 2 || info.TXID != captured {
		t.Errorf("restore info = %+v, want epoch 2 at TXID %d", info, captured)
	}
}

func TestRestore_ignoresFencedOwnersTail(t *testing.T) {
	store := bucket.NewMem()
	db1, r1 := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
	writeMix(t, db1, 0, 50)
	waitDurable(t, r1)

	// Epoch 2 takes over while epoch 1's owner still runs.
	path := filepath.Join(t.TempDir(), "cell.db")
	info, err := Restore(context.Background(), store, testCell, path)
	if err != nil {
		t.Fatal(err)
	}
	db2, r2 := replicatedAt(t, path, store, 2, info)
	mustPut(t, db2, "epoch", "2")
	want := contents(t, db2)
	closeReplicated(t, db2, r2)

	// The fenced owner keeps writing into its superseded prefix.
	mustPut(t, db1, "epoch", "1 (fenced)")
	writeMix(t, db1, 50, 20)
	closeReplicated(t, db1, r1)

	got, _ := restored(t, store)
	sameContents(t, contents(t, got), want)
}

func TestRestore_corruptObject(t *testing.T) {
	for _, where := range []string{"header", "middle", "trailer"} {
		t.Run(where, func(t *testing.T) {
			store := bucket.NewMem()
			db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
			for i := range 5 {
				mustPut(t, db, "k", strings.Repeat("x", i*100))
				waitDurable(t, r)
			}
			closeReplicated(t, db, r)
			keys := ltxKeys(t, store)
			key := keys[2]
			ctx := context.Background()
			data, _, err := store.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			i := map[string]int{"header": 20, "middle": len(data) / 2, "trailer": len(data) - 3}[where]
			data[i] ^= 0x40
			if _, err := store.Put(ctx, key, data, bucket.Cond{}); err != nil {
				t.Fatal(err)
			}
			_, err = Restore(ctx, store, testCell, filepath.Join(t.TempDir(), "cell.db"))
			if err == nil || !strings.Contains(err.Error(), key) || !errors.Is(err, ErrBrokenHistory) {
				t.Fatalf("Restore with %s corrupt = %v; want ErrBrokenHistory naming it", key, err)
			}
			t.Log(err)
		})
	}
}

func TestRestore_missingSegment(t *testing.T) {
	store := bucket.NewMem()
	db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.SnapshotSegments = 1 << 30 })
	for i := range 6 {
		mustPut(t, db, "k", strings.Repeat("x", i))
		waitDurable(t, r)
	}
	closeReplicated(t, db, r)
	keys := ltxKeys(t, store)
	ctx := context.Background()
	if err := store.Delete(ctx, keys[3]); err != nil {
		t.Fatal(err)
	}
	_, err := Restore(ctx, store, testCell, filepath.Join(t.TempDir(), "cell.db"))
	if err == nil || !errors.Is(err, ErrBrokenHistory) || !strings.Contains(err.Error(), "no object holds TXID 4") ||
		!strings.Contains(err.Error(), keys[2]) || !strings.Contains(err.Error(), keys[4]) {
		t.Fatalf("Restore without %s = %v; want the gap named", keys[3], err)
	}
	t.Log(err)
}

func TestRestore_missingPredecessor(t *testing.T) {
	store := bucket.NewMem()
	db, r := replicated(t, store, 1, RestoreInfo{})
	mustPut(t, db, "a", "1")
	closeReplicated(t, db, r)
	path := filepath.Join(t.TempDir(), "cell.db")
	info, err := Restore(context.Background(), store, testCell, path)
	if err != nil {
		t.Fatal(err)
	}
	db, r = replicatedAt(t, path, store, 2, info)
	mustPut(t, db, "b", "2")
	closeReplicated(t, db, r)
	// Epoch 1 disappears (a careless lifecycle rule).
	for _, k := range ltxKeys(t, store) {
		if strings.Contains(k, "/e0000000000000001/") {
			store.Delete(context.Background(), k)
		}
	}
	_, err = Restore(context.Background(), store, testCell, filepath.Join(t.TempDir(), "x.db"))
	if err == nil || !errors.Is(err, ErrBrokenHistory) || !strings.Contains(err.Error(), "no older epoch holds TXIDs up to 1") {
		t.Fatalf("Restore without epoch 1 = %v", err)
	}
	t.Log(err)
}

func TestPlanRestore(t *testing.T) {
	seg := func(epoch, lo, hi uint64) segment {
		return segment{key: LTXKey("c", epoch, lo, hi), epoch: epoch, min: lo, max: hi}
	}
	tests := []struct {
		name string
		segs []segment
		want []segment
		err  string
	}{
		{"empty", nil, nil, ""},
		{"one epoch", []segment{seg(1, 1, 1), seg(1, 2, 4), seg(1, 5, 5)},
			[]segment{seg(1, 1, 1), seg(1, 2, 4), seg(1, 5, 5)}, ""},
		{"newest snapshot wins", []segment{seg(1, 1, 1), seg(1, 2, 4), seg(1, 1, 4), seg(1, 5, 5), seg(1, 1, 3)},
			[]segment{seg(1, 1, 4), seg(1, 5, 5)}, ""},
		{"chain through epochs", []segment{seg(1, 1, 3), seg(1, 4, 6), seg(3, 7, 9), seg(4, 10, 10)},
			[]segment{seg(1, 1, 3), seg(1, 4, 6), seg(3, 7, 9), seg(4, 10, 10)}, ""},
		{"fenced tail ignored", []segment{seg(1, 1, 3), seg(1, 4, 6), seg(1, 7, 8), seg(2, 7, 7)},
			[]segment{seg(1, 1, 3), seg(1, 4, 6), seg(2, 7, 7)}, ""},
		{"superseded epoch skipped", []segment{seg(1, 1, 5), seg(2, 6, 8), seg(3, 6, 6)},
			[]segment{seg(1, 1, 5), seg(3, 6, 6)}, ""},
		{"snapshot in a later epoch", []segment{seg(1, 1, 5), seg(2, 6, 8), seg(2, 1, 8), seg(2, 9, 9)},
			[]segment{seg(2, 1, 8), seg(2, 9, 9)}, ""},
		{"gap", []segment{seg(1, 1, 3), seg(1, 6, 7)}, nil, "no object holds TXIDs 4-5"},
		{"predecessor ends elsewhere", []segment{seg(1, 1, 3), seg(1, 4, 7), seg(2, 6, 7)}, nil, "no object holds TXID 4"},
		{"no snapshot", []segment{seg(2, 3, 4)}, nil, "no older epoch holds TXIDs up to 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planRestore(tt.segs)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("chain = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("chain = %v, want %v", got, tt.want)
				}
			}
		})
	}
}
