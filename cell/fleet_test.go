package cell

import (
	"context"
	"strings"
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

func (f *fakeFleet) Send(_ context.Context, s Segment) func() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.segs = append(f.segs, s)
	prove := f.prove
	return func() bool { return prove }
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

// heldFleet answers each Send only when the test says so.
type heldFleet struct {
	mu       sync.Mutex
	sent     []Segment
	verdict  []chan bool
	answered []bool
	changed  chan struct{}
	// rest, once set, answers every later Send at once.
	rest *bool
}

func (f *heldFleet) Send(_ context.Context, s Segment) func() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := make(chan bool, 1)
	f.sent, f.verdict = append(f.sent, s), append(f.verdict, v)
	f.answered = append(f.answered, f.rest != nil)
	if f.rest != nil {
		v <- *f.rest
	}
	select {
	case f.changed <- struct{}{}:
	default:
	}
	return func() bool { return <-v }
}

func (f *heldFleet) Uploaded(string, uint64, uint64) {}
func (f *heldFleet) Delay() time.Duration            { return time.Hour }
func (f *heldFleet) Urgent() <-chan struct{}         { return nil }

// waitSent waits until n segments were sent (none answered meanwhile).
func (f *heldFleet) waitSent(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		k := len(f.sent)
		f.mu.Unlock()
		if k >= n {
			return
		}
		select {
		case <-f.changed:
		case <-deadline:
			t.Fatalf("%d segments sent, want %d before any answer: the batches are not pipelined", k, n)
		}
	}
}

func (f *heldFleet) answer(i int, proven bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.answered[i] {
		panic("segment answered twice")
	}
	f.answered[i] = true
	f.verdict[i] <- proven
}

// answerRest answers every unanswered segment, and every later one at once.
func (f *heldFleet) answerRest(proven bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rest = &proven
	for i, done := range f.answered {
		if !done {
			f.answered[i] = true
			f.verdict[i] <- proven
		}
	}
}

// heldStore holds every LTX upload until released.
type heldStore struct {
	bucket.Store
	release chan struct{}
}

func (s *heldStore) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	if strings.Contains(key, "/ltx/") {
		select {
		case <-s.release:
		case <-ctx.Done():
			return bucket.Object{}, ctx.Err()
		}
	}
	return s.Store.Put(ctx, key, data, cond)
}

// TestReplicator_fleetPipelined: a batch goes to the group while the one
// before it is still unanswered, and a proof counts in batch order — the
// group proving batch 2 while batch 1 has no proof (and is not in the
// bucket yet) leaves batch 2 to the bucket's proof: the group's answer
// never stands in for an earlier batch. With both proven, both count.
func TestReplicator_fleetPipelined(t *testing.T) {
	for _, first := range []bool{false, true} {
		store := &heldStore{Store: bucket.NewMem(), release: make(chan struct{})}
		f := &heldFleet{changed: make(chan struct{}, 1)}
		db, r := replicated(t, store, 1, RestoreInfo{}, func(c *ReplicatorConfig) { c.Fleet = f })
		mustPut(t, db, "a", "1")
		f.waitSent(t, 1)
		t1 := r.Captured()
		mustPut(t, db, "b", "2") // batch 1 is on its way: this one follows at once
		f.waitSent(t, 2)
		t2 := r.Captured()
		if f.sent[0].Max != t1 || f.sent[1].Min != t1+1 || f.sent[1].Max != t2 {
			t.Fatalf("sent %d-%d and %d-%d, want 1-%d and %d-%d", f.sent[0].Min, f.sent[0].Max, f.sent[1].Min, f.sent[1].Max, t1, t1+1, t2)
		}
		f.answer(1, true)
		f.answer(0, first)
		// A proof may take as long as a slow machine needs; the absence of
		// one is judged after a short wait (it cannot come while the
		// bucket holds every upload and batch 1 is unproven).
		wait := 10 * time.Second
		if !first {
			wait = 300 * time.Millisecond
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		fleet, err := r.WaitProof(ctx, t2)
		cancel()
		if first && (err != nil || !fleet) {
			t.Fatalf("both batches proven by the group: WaitProof = %v, %v; want a fleet proof", fleet, err)
		}
		if !first && err == nil {
			t.Fatalf("batch 1 unproven and not in the bucket: batch 2's WaitProof = %v, want no proof yet", fleet)
		}
		close(store.release)
		if !first {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			fleet, err := r.WaitProof(ctx, t2)
			cancel()
			if err != nil || fleet || r.Durable() < t2 {
				t.Fatalf("after the uploads: WaitProof = %v, %v (durable %d); want batch 2 proven by the bucket", fleet, err, r.Durable())
			}
		}
		// Whatever the close's flush sends is answered at once.
		f.answerRest(false)
		closeReplicated(t, db, r)
	}
}
