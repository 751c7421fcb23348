package cell

import (
	"context"
	"errors"
	mrand "math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// PruneEpoch leaves exactly the chain a restore applies, which still
// restores the cell; the epoch goes on, and its sealed head still needs no
// listing. Young covering objects, a failed confirmation and other epochs
// stop it.
func TestPruneEpoch(t *testing.T) {
	ctx := context.Background()
	mem := bucket.NewMem()
	// An older epoch that must not be touched.
	old := &history{rng: mrand.New(mrand.NewPCG(1, 2)), mem: mem}
	old.epoch(7, 0, 30, 0, 0)
	oldKeys, _ := bucket.ListAll(ctx, mem, LTXPrefix(testCell)+"e0000000000000007/")

	db, r := replicated(t, mem, 9, RestoreInfo{})
	rng := mrand.New(mrand.NewPCG(8, 8))
	rows := loadBlobs(t, db, rng, 300<<10)
	for i := range 400 {
		smallWrite(t, db, rng, rows, i)
		waitDurable(t, r)
	}
	waitBackground(t, r)
	epochDir := LTXPrefix(testCell) + "e0000000000000009/"
	before, _ := bucket.ListAll(ctx, mem, epochDir)
	ok := func(context.Context) error { return nil }

	// Everything is younger than an hour from an hour ago: nothing goes.
	if n, err := PruneEpoch(ctx, mem, testCell, 9, time.Hour, time.Now(), ok); err != nil || n != 0 {
		t.Fatalf("prune with everything too young: %d, %v", n, err)
	}
	notOwner := errors.New("own.json names another node")
	if n, err := PruneEpoch(ctx, mem, testCell, 9, 0, time.Now(), func(context.Context) error { return notOwner }); !errors.Is(err, notOwner) || n != 0 {
		t.Fatalf("prune without ownership: %d, %v; want the confirmation's error and nothing deleted", n, err)
	}
	n, err := PruneEpoch(ctx, mem, testCell, 9, 0, time.Now(), ok)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := bucket.ListAll(ctx, mem, epochDir)
	got, info := restored(t, mem)
	sameContents(t, contents(t, got), contents(t, db))
	var left []string
	for _, o := range after {
		left = append(left, o.Key)
	}
	if !slices.Equal(left, info.Chain) {
		t.Errorf("after pruning %d of %d objects, %v remain; the restore applied %v", n, len(before), left, info.Chain)
	}
	t.Logf("epoch of %d objects pruned to %d (the restore chain)", len(before), len(after))
	if still, _ := bucket.ListAll(ctx, mem, LTXPrefix(testCell)+"e0000000000000007/"); len(still) != len(oldKeys) {
		t.Errorf("the older epoch went from %d objects to %d", len(oldKeys), len(still))
	}

	// The epoch goes on after a prune, and seals a chain that is all there.
	for i := range 50 {
		smallWrite(t, db, rng, rows, 1000+i)
		waitDurable(t, r)
	}
	waitBackground(t, r)
	if _, err := PruneEpoch(ctx, mem, testCell, 9, 0, time.Now(), ok); err != nil {
		t.Fatal(err)
	}
	want := contents(t, db)
	sealed(t, db, r)
	store := &listingStore{Store: mem}
	got2, _ := pendingRestore(t, store, 10)
	sameContents(t, contents(t, got2), want)
	if store.lists.Load() != 0 {
		t.Errorf("restore after pruning and sealing listed %d times; the head's chain should all be there", store.lists.Load())
	}
}
