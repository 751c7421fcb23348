package cell

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// twoEpochs writes in epoch 1, then restores into epoch 2, writes more and
// snapshots there. It returns the store.
func twoEpochs(t *testing.T) *bucket.Mem {
	t.Helper()
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
	for i := 0; i < 5; i++ {
		if err := db.Put(fmt.Sprintf("a%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()
	path2 := filepath.Join(t.TempDir(), "c2.sqlite")
	info, err := Restore(ctx, store, "C", path2)
	if err != nil {
		t.Fatal(err)
	}
	db2, err := Open(path2)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := NewReplicator(db2, ReplicatorConfig{Store: store, Cell: "C", Epoch: 2, From: info})
	if err != nil {
		t.Fatal(err)
	}
	if err := db2.Put("b", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if err := r2.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	db2.Close()
	return store
}

func keysUnder(t *testing.T, s bucket.Store, prefix string) []string {
	objs, err := bucket.ListAll(context.Background(), s, prefix)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		out = append(out, o.Key)
	}
	return out
}

func TestRetire_DropsEpochsBelowTheNewestSnapshot(t *testing.T) {
	ctx := context.Background()
	store := twoEpochs(t)
	ok := func(context.Context) error { return nil }

	// Too young: nothing goes.
	if n, err := Retire(ctx, store, "C", time.Hour, time.Now(), ok); err != nil || n != 0 {
		t.Fatalf("retire young history = %d, %v", n, err)
	}
	// Not the owner any more: nothing is written or deleted.
	before := keysUnder(t, store, LTXPrefix("C"))
	notOwner := func(context.Context) error { return errors.New("own.json names another node") }
	if _, err := Retire(ctx, store, "C", 0, time.Now(), notOwner); err == nil {
		t.Fatal("retire without ownership succeeded")
	}
	if after := keysUnder(t, store, LTXPrefix("C")); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("retire without ownership changed the bucket:\n%v\n%v", before, after)
	}
	n, err := Retire(ctx, store, "C", 0, time.Now(), ok)
	if err != nil || n == 0 {
		t.Fatalf("retire = %d, %v; want epoch 1 deleted", n, err)
	}
	for _, k := range keysUnder(t, store, LTXPrefix("C")+"e0000000000000001/") {
		if !strings.HasSuffix(k, "/"+RetiredMarker) {
			t.Fatalf("epoch 1 still holds %s", k)
		}
	}
	// The history still restores completely from epoch 2's snapshot.
	out := filepath.Join(t.TempDir(), "r.sqlite")
	if _, err := Restore(ctx, store, "C", out); err != nil {
		t.Fatal(err)
	}
	db, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"a0", "a4", "b"} {
		if _, ok, _ := db.Get(k); !ok {
			t.Fatalf("%s missing after retire + restore", k)
		}
	}
}

// A retire cut short (marker written, some objects left) is ignored by
// restore rather than read as a gap.
func TestRestore_IgnoresARetiredEpoch(t *testing.T) {
	ctx := context.Background()
	store := twoEpochs(t)
	marker := LTXPrefix("C") + "e0000000000000001/" + RetiredMarker
	if _, err := store.Put(ctx, marker, []byte("retired\n"), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	keys := keysUnder(t, store, LTXPrefix("C")+"e0000000000000001/")
	if err := store.Delete(ctx, keys[0]); err != nil { // a partial deletion
		t.Fatal(err)
	}
	if _, err := Restore(ctx, store, "C", filepath.Join(t.TempDir(), "r.sqlite")); err != nil {
		t.Fatalf("restore with a half-retired old epoch: %v", err)
	}
}
