package fleet

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
)

// A preserve drain leaves the lease and the cells owned; the next process
// with the same session carries the lease on at once and resumes the
// cells at their epochs without writing their records.
func TestNode_ResumeSessionAdoptsCellsAtTheSameEpoch(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	first := startNode(t, s, "a", 10*time.Second)
	for _, c := range []string{"C:kept", "C:moved", "C:released"} {
		if o, err := first.Acquire(ctx, c); err != nil || o.Epoch != 1 {
			t.Fatalf("acquire %s: %+v %v", c, o, err)
		}
	}
	if err := first.Release(ctx, "C:released"); err != nil {
		t.Fatal(err)
	}
	session := first.Session()
	first.Abandon()
	_, keptETag, err := s.Get(ctx, core.OwnKey("C:kept"))
	if err != nil {
		t.Fatal(err)
	}

	// Another node takes C:moved over meanwhile (as if it judged the
	// lease dead): its record no longer names our session.
	other := startNode(t, s, "b", 10*time.Second)
	writeOwn(t, s, "C:moved", core.Own{Node: "b", Session: other.Session(), Epoch: 2})

	// The restart does not wait for the live lease of its own session.
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	second, err := Start(sctx, s, Config{Node: "a", Advertise: "a:8081", TTL: 10 * time.Second, ResumeSession: session})
	if err != nil {
		t.Fatalf("restart with the preserved session: %v", err)
	}
	defer second.shutdown()
	if second.Session() != session {
		t.Fatalf("session %s, want %s", second.Session(), session)
	}
	o, err := second.Adopt(ctx, "C:kept", 1)
	if err != nil || o.Epoch != 1 {
		t.Fatalf("adopt C:kept: %+v %v", o, err)
	}
	if _, etag, _ := s.Get(ctx, core.OwnKey("C:kept")); etag.ETag != keptETag.ETag {
		t.Errorf("adopting rewrote the ownership record")
	}
	if err := second.Confirm(ctx, "C:kept", 1); err != nil {
		t.Errorf("confirm after adopt: %v", err)
	}
	for _, tc := range []struct {
		cell  string
		epoch uint64
	}{{"C:moved", 1}, {"C:released", 1}, {"C:never", 1}} {
		if _, err := second.Adopt(ctx, tc.cell, tc.epoch); !errors.Is(err, ErrUnavailable) {
			t.Errorf("adopt %s at %d: %v, want ErrUnavailable", tc.cell, tc.epoch, err)
		}
	}
	// A wrong epoch is refused as well, and the cell can still be
	// acquired normally (epoch + 1) afterwards.
	if _, err := second.Adopt(ctx, "C:released", 7); !errors.Is(err, ErrUnavailable) {
		t.Errorf("adopt at a wrong epoch: %v", err)
	}
	if o, err := second.Acquire(ctx, "C:released"); err != nil || o.Epoch != 2 {
		t.Errorf("acquire after a refused adopt: %+v %v", o, err)
	}
}

// Without ResumeSession the same name still waits for (or refuses) a live
// predecessor.
func TestNode_NoResumeRefusesALiveSession(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	first := startNode(t, s, "a", 10*time.Second)
	first.Abandon()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if n, err := Start(sctx, s, Config{Node: "a", TTL: 10 * time.Second}); err == nil {
		n.shutdown()
		t.Fatal("a new session took the name of a live one")
	}
	if n, err := Start(sctx, s, Config{Node: "a", TTL: 10 * time.Second, ResumeSession: "not-the-session"}); err == nil {
		n.shutdown()
		t.Fatal("a made-up session took the name of a live one")
	}
}

func writeOwn(t *testing.T, s bucket.Store, cell string, own core.Own) {
	t.Helper()
	ctx := context.Background()
	_, o, err := s.Get(ctx, core.OwnKey(cell))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, core.OwnKey(cell), core.Encode(own), bucket.IfMatch(o.ETag)); err != nil {
		t.Fatal(err)
	}
}
