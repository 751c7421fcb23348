package cell

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// fakeFleet proves every segment (or none) and keeps them, as a follower
// would.
type fakeFleet struct {
	mu       sync.Mutex
	prove    bool
	delay    time.Duration
	segs     []Segment
	uploaded uint64
}

func (f *fakeFleet) Append(_ context.Context, s Segment) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.segs = append(f.segs, s)
	return f.prove
}

func (f *fakeFleet) Uploaded(_ string, _ uint64, txid uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uploaded = max(f.uploaded, txid)
}

func (f *fakeFleet) Delay() time.Duration { return f.delay }

func (f *fakeFleet) Urgent() <-chan struct{} { return nil }

// TestReplicator_fleetProvesBeforeTheBucket: with a group that proves each
// segment, writes are proven long before the (delayed) upload; the upload
// merges them; and a restore from the bucket plus the follower's segments
// uploaded over it (what a recovery does) gives the same database.
func TestReplicator_fleetProvesBeforeTheBucket(t *testing.T) {
	store := bucket.NewMem()
	f := &fakeFleet{prove: true, delay: time.Hour}
	db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.Fleet = f })
	writeMix(t, db, 0, 120)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fleet, err := r.WaitProof(ctx, r.Captured())
	if err != nil || !fleet {
		t.Fatalf("WaitProof = %v, %v; want a fleet proof", fleet, err)
	}
	if d := r.Durable(); d != 0 {
		t.Fatalf("Durable = %d before the write-behind delay; want nothing uploaded", d)
	}
	if keys := ltxKeys(t, store); len(keys) != 0 {
		t.Fatalf("bucket holds %v before the delay", keys)
	}
	want := contents(t, db)
	closeReplicated(t, db, r) // Close uploads at once
	keys := ltxKeys(t, store)
	f.mu.Lock()
	nsegs, up := len(f.segs), f.uploaded
	f.mu.Unlock()
	if up != r.Captured() {
		t.Errorf("Uploaded reported through %d, want %d", up, r.Captured())
	}
	if len(keys) >= nsegs {
		t.Errorf("%d objects for %d segments: the upload did not merge", len(keys), nsegs)
	}
	got, _ := restored(t, store)
	sameContents(t, contents(t, got), want)

	// A recovery uploads a follower's segments beside the merged object:
	// they nest inside it, and the restore is the same.
	for _, s := range f.segs {
		if _, err := store.Put(context.Background(), LTXKey(s.Cell, s.Epoch, s.Min, s.Max), s.Data, bucket.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	got2, _ := restored(t, store)
	sameContents(t, contents(t, got2), want)
}

// TestReplicator_fleetWithoutProofUploadsAtOnce: a group that cannot prove
// a segment leaves the proof to the bucket, at once, not after the delay.
func TestReplicator_fleetWithoutProofUploadsAtOnce(t *testing.T) {
	store := bucket.NewMem()
	f := &fakeFleet{prove: false, delay: time.Hour}
	db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.Fleet = f })
	mustPut(t, db, "k", "v")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fleet, err := r.WaitProof(ctx, r.Captured())
	if err != nil || fleet {
		t.Fatalf("WaitProof = %v, %v; want a bucket proof", fleet, err)
	}
	if r.Durable() < r.Captured() {
		t.Fatalf("Durable %d < Captured %d", r.Durable(), r.Captured())
	}
}

// TestReplicator_fleetRecoveredTailRestores: segments only a follower has
// (the owner died before its upload) restore from the bucket once a
// recovery uploads them.
func TestReplicator_fleetRecoveredTailRestores(t *testing.T) {
	store := bucket.NewMem()
	f := &fakeFleet{prove: true, delay: time.Hour}
	db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.Fleet = f })
	writeMix(t, db, 0, 60)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.WaitProof(ctx, r.Captured()); err != nil {
		t.Fatal(err)
	}
	want := contents(t, db)
	f.mu.Lock()
	segs := append([]Segment(nil), f.segs...)
	f.mu.Unlock()
	// The owner dies here: nothing reached the bucket.
	for _, s := range segs {
		if _, err := store.Put(context.Background(), LTXKey(s.Cell, s.Epoch, s.Min, s.Max), s.Data, bucket.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	got, info := restored(t, store)
	sameContents(t, contents(t, got), want)
	if info.TXID != r.Captured() {
		t.Errorf("restored TXID %d, want %d", info.TXID, r.Captured())
	}
}
