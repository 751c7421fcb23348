package cell

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"testing"

	"github.com/celldgo/celld/bucket"
)

// history writes the keys of a made-up LTX history of testCell to a Mem
// store the way owners write them: per epoch, contiguous segments, merges
// over runs of them (laminar, as compact.go makes them), snapshots now
// and then; epochs that restore from the one before, some that wrote
// nothing, fenced owners writing on after their successor began, lost
// objects, retired epochs.
type history struct {
	rng  *mrand.Rand
	mem  *bucket.Mem
	keys []string
	ends []uint64 // the segment ends of the last epoch written
}

func (h *history) put(epoch, lo, hi uint64) string {
	key := LTXKey(testCell, epoch, lo, hi)
	if _, err := h.mem.Put(context.Background(), key, nil, bucket.Cond{}); err != nil {
		panic(err)
	}
	h.keys = append(h.keys, key)
	return key
}

// epoch writes n segments in epoch e after TXID from and returns the last
// TXID written. fan is the merge fan-in (0: none); snapEvery a snapshot
// every so many segments (0: none).
func (h *history) epoch(e, from uint64, n, fan, snapEvery int) uint64 {
	type run struct {
		from uint64
		runs int
	}
	levels := make([]run, 4)
	reset := func(k int, from uint64) {
		for i := range k {
			levels[i] = run{from: from}
		}
	}
	reset(len(levels), from+1)
	h.ends = h.ends[:0]
	txid := from
	if from == 0 {
		txid = uint64(1 + h.rng.IntN(3))
		h.put(e, 1, txid)
		h.ends = append(h.ends, txid)
		reset(len(levels), txid+1)
	}
	for i := range n {
		lo := txid + 1
		txid += uint64(1 + h.rng.IntN(3))
		h.put(e, lo, txid)
		h.ends = append(h.ends, txid)
		levels[0].runs++
		if snapEvery > 0 && (i+1)%snapEvery == 0 {
			h.put(e, 1, txid)
			reset(len(levels), txid+1)
			continue
		}
		if fan > 0 && levels[0].runs >= fan {
			k := 0
			for k+1 < len(levels) && levels[k+1].runs+1 >= fan {
				k++
			}
			h.put(e, levels[k].from, txid)
			if k+1 < len(levels) {
				levels[k+1].runs++
			}
			reset(k+1, txid+1)
		}
	}
	return txid
}

// randomHistory builds one history.
func randomHistory(rng *mrand.Rand, mem *bucket.Mem) *history {
	h := &history{rng: rng, mem: mem}
	var end uint64
	epochs := 1 + rng.IntN(5)
	for e := uint64(1); e <= uint64(epochs); e++ {
		fan, snaps := rng.IntN(2)*(2+rng.IntN(3)), rng.IntN(2)*(4+rng.IntN(20))
		switch rng.IntN(6) {
		case 0: // an activation that wrote nothing
		case 1: // a fenced owner: its successor restored only up to a
			// segment end, and it wrote on after that
			h.epoch(e, end, 1+rng.IntN(20), fan, snaps)
			end = h.ends[rng.IntN(len(h.ends))]
		default:
			end = h.epoch(e, end, 1+rng.IntN(40), fan, snaps)
		}
	}
	// Lose an object now and then.
	if len(h.keys) > 0 && rng.IntN(4) == 0 {
		k := h.keys[rng.IntN(len(h.keys))]
		if err := mem.Delete(context.Background(), k); err != nil {
			panic(err)
		}
	}
	// Retire the first epoch now and then.
	if epochs > 2 && rng.IntN(4) == 0 {
		if _, err := mem.Put(context.Background(), LTXPrefix(testCell)+fmt.Sprintf("e%016x/", 1)+RetiredMarker, nil, bucket.Cond{}); err != nil {
			panic(err)
		}
	}
	return h
}

// The searched plan is the listed plan: same error or a chain of the same
// length between the same TXIDs, on thousands of made-up histories.
func TestPlan_searchMatchesListing(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(42, 7))
	ctx := context.Background()
	prefix := LTXPrefix(testCell)
	var ok, broken, empty int
	for trial := range 1500 {
		mem := bucket.NewMem()
		randomHistory(rng, mem)
		objs, err := bucket.ListAll(ctx, mem, prefix)
		if err != nil {
			t.Fatal(err)
		}
		segs, err := segmentsOf(prefix, objs)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := planRestore(segs)
		s := &scanner{ctx: ctx, store: mem, prefix: prefix}
		got, gotErr := s.plan()
		switch {
		case wantErr != nil || gotErr != nil:
			if !errors.Is(wantErr, ErrBrokenHistory) || !errors.Is(gotErr, ErrBrokenHistory) {
				t.Fatalf("trial %d: listing: %v; search: %v\nkeys: %v", trial, wantErr, gotErr, keysOf(objs))
			}
			broken++
		case len(want) == 0 || len(got) == 0:
			if len(want) != len(got) {
				t.Fatalf("trial %d: listing plans %v, search %v", trial, want, got)
			}
			empty++
		default:
			if len(got) != len(want) || got[0].min != 1 || got[len(got)-1].max != want[len(want)-1].max || got[len(got)-1].epoch != want[len(want)-1].epoch {
				t.Fatalf("trial %d: listing plans %v, search %v\nkeys: %v", trial, want, got, keysOf(objs))
			}
			for i := 1; i < len(got); i++ {
				if got[i].min != got[i-1].max+1 {
					t.Fatalf("trial %d: search plan %v is not contiguous at %d", trial, got, i)
				}
			}
			ok++
		}
	}
	t.Logf("1500 histories: %d planned alike, %d broken alike, %d empty", ok, broken, empty)
	if ok < 500 || broken < 50 {
		t.Errorf("the generator made too few of a kind: %d ok, %d broken", ok, broken)
	}
}

func keysOf(objs []bucket.Object) []string {
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key[len(LTXPrefix(testCell)):])
	}
	return keys
}

// A long history is planned with a bounded number of LISTs: a restore of
// a cell does not get slower the longer it lives.
func TestPlan_longHistoryFewLists(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{2000, 20000} {
		mem := bucket.NewMem()
		h := &history{rng: mrand.New(mrand.NewPCG(uint64(n), 1)), mem: mem}
		end := h.epoch(1, 0, n/2, 4, 300)
		end = h.epoch(2, end, n/2, 4, 0) // the newest epoch has no snapshot
		objs, err := bucket.ListAll(ctx, mem, LTXPrefix(testCell))
		if err != nil {
			t.Fatal(err)
		}
		counting := &listCounter{Store: mem}
		chain, err := planChain(ctx, counting, testCell)
		if err != nil {
			t.Fatal(err)
		}
		segs, _ := segmentsOf(LTXPrefix(testCell), objs)
		want, err := planRestore(segs)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d objects: %d LISTs, chain of %d (listing plans %d)", len(objs), counting.n, len(chain), len(want))
		if len(chain) != len(want) || chain[len(chain)-1].max != end {
			t.Fatalf("chain %v, want %d objects to TXID %d", chain, len(want), end)
		}
		if counting.n > 150 {
			t.Errorf("%d objects planned with %d LISTs, want at most 150", len(objs), counting.n)
		}
	}
}

type listCounter struct {
	bucket.Store
	n int
}

func (c *listCounter) List(ctx context.Context, prefix, startAfter string, limit int) (bucket.Page, error) {
	c.n++
	return c.Store.List(ctx, prefix, startAfter, limit)
}

// A real replicator's long history restores through the search to
// exactly the cell's contents.
func TestPlan_restoreLongHistory(t *testing.T) {
	mem := bucket.NewMem()
	db, r := replicated(t, mem, 1, RestoreInfo{})
	rng := mrand.New(mrand.NewPCG(5, 5))
	rows := loadBlobs(t, db, rng, 200<<10)
	for i := range 1300 {
		smallWrite(t, db, rng, rows, i)
		waitDurable(t, r)
	}
	waitBackground(t, r)
	objs, err := bucket.ListAll(context.Background(), mem, LTXPrefix(testCell))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) <= planPage {
		t.Fatalf("only %d objects: the search is not exercised", len(objs))
	}
	counting := &listCounter{Store: mem}
	got, info := restored(t, counting)
	sameContents(t, contents(t, got), contents(t, db))
	t.Logf("%d objects in the bucket; restore: %d LISTs, %d objects applied", len(objs), counting.n, info.Objects)
	if counting.n > 150 || info.Objects > chainBound(DefaultMergeSegments) {
		t.Errorf("restore made %d LISTs and applied %d objects", counting.n, info.Objects)
	}
}

// The search relies on how a real S3 lists (byte order, startAfter at a
// key that does not exist, one-key pages): on MinIO it plans what the
// listing plans.
func TestPlan_searchOnMinIO(t *testing.T) {
	ctx := context.Background()
	mem := bucket.NewMem()
	h := &history{rng: mrand.New(mrand.NewPCG(11, 3)), mem: mem}
	end := h.epoch(3, 0, 500, 4, 120)
	end = h.epoch(5, end, 300, 4, 0)
	h.epoch(6, end, 40, 2, 0) // a third epoch, restored from the second
	store := minioStore(t)
	keys := h.keys
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	sem := make(chan struct{}, 32)
	for _, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := store.Put(ctx, k, nil, bucket.Cond{}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	objs, err := bucket.ListAll(ctx, store, LTXPrefix(testCell))
	if err != nil || len(objs) != len(keys) {
		t.Fatalf("listed %d of %d keys: %v", len(objs), len(keys), err)
	}
	segs, err := segmentsOf(LTXPrefix(testCell), objs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := planRestore(segs)
	if err != nil {
		t.Fatal(err)
	}
	s := &scanner{ctx: ctx, store: store, prefix: LTXPrefix(testCell)}
	got, err := s.plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[0].key != want[0].key || got[len(got)-1].key != want[len(want)-1].key {
		t.Fatalf("MinIO: search planned %v, the listing %v", got, want)
	}
	t.Logf("%d objects on MinIO: the search planned the same %d-object chain with %d LISTs", len(objs), len(got), s.lists)
}
