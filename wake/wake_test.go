package wake

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

func TestKeyRoundTrip(t *testing.T) {
	e := Entry{Cell: "Timer:" + fmt.Sprintf("%064x", 7), ID: ID{Epoch: 3, Seq: 42}, Deadline: time.Date(2026, 12, 1, 17, 4, 59, 0, time.UTC).UnixMilli()}
	key := e.Key()
	if want := "wake/entries/2026-12-01T17:04/" + e.Cell + "/0000000000000003-000000000000002a"; key != want {
		t.Fatalf("key %q, want %q", key, want)
	}
	got, err := ParseKey(key)
	if err != nil || got.Cell != e.Cell || got.ID != e.ID || got.Minute != "2026-12-01T17:04" {
		t.Fatalf("ParseKey = %+v, %v", got, err)
	}
	for _, bad := range []string{"wake/entries/x/c/0000000000000003-000000000000002a", "wake/entries/2026-12-01T17:04/c/3-42", "wake/retired/c.json", "wake/entries/2026-12-01T17:04/0000000000000003-000000000000002a"} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

func TestDecisions(t *testing.T) {
	now := time.Date(2026, 12, 1, 17, 4, 30, 0, time.UTC).UnixMilli()
	if !Claimable(nil, "s", now) || !Claimable(&WakerLease{Session: "s", Expires: now + 1}, "s", now) ||
		!Claimable(&WakerLease{Session: "x", Expires: now}, "s", now) || Claimable(&WakerLease{Session: "x", Expires: now + 1}, "s", now) {
		t.Fatal("Claimable: held by us, or expired (exactly expired too), and nothing else")
	}
	if !Due("2026-12-01T17:04", now) || Due("2026-12-01T17:05", now) || !Due("2026-11-30T23:59", now) {
		t.Fatal("Due: a minute is due once it has begun")
	}
	e := Entry{Cell: "c", ID: ID{Epoch: 2, Seq: 5}}
	for _, tc := range []struct {
		retired *Retired
		owner   Owner
		want    Action
	}{
		{nil, Owner{Live: true}, Skip},
		{nil, Owner{}, Wake},
		{&Retired{Below: ID{Epoch: 3}}, Owner{Live: true}, Delete},
		{&Retired{Below: ID{Epoch: 2, Seq: 5}}, Owner{}, Wake}, // not below: itself
		{&Retired{Below: ID{Epoch: 2, Seq: 6}}, Owner{}, Delete},
	} {
		if got := Decide(e, tc.retired, tc.owner); got != tc.want {
			t.Errorf("Decide(%+v, %+v) = %v, want %v", tc.retired, tc.owner, got, tc.want)
		}
	}
}

// A publisher's Wait holds until the installation's entry is in the
// bucket; Confirmed deletes the superseded one; Retire only moves forward.
func TestPublisher(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	p := NewPublisher(s, nil)
	c := p.Cell("c", 4)
	due := time.Now().Add(time.Hour).UnixMilli()
	c.Report(Alarm{Set: true, Deadline: due, Seq: 1})
	if err := c.Wait(ctx, c.Mark()); err != nil {
		t.Fatal(err)
	}
	first := Entry{Cell: "c", ID: ID{Epoch: 4, Seq: 1}, Deadline: due}.Key()
	if _, err := s.Head(ctx, first); err != nil {
		t.Fatalf("entry not published: %v", err)
	}
	c.Report(Alarm{Set: true, Deadline: due + 120_000, Seq: 2})
	m := c.Mark()
	if err := c.Wait(ctx, m); err != nil {
		t.Fatal(err)
	}
	c.Confirmed(m)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := s.Head(ctx, first); bucket.OutcomeOf(err) == bucket.NotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("superseded entry not deleted")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := p.Counts(); got.Puts != 2 || got.Armed != 1 {
		t.Fatalf("counts %+v, want 2 puts and 1 armed", got)
	}
	if err := p.Retire(ctx, "c", ID{Epoch: 5}); err != nil {
		t.Fatal(err)
	}
	if err := p.Retire(ctx, "c", ID{Epoch: 3}); err != nil {
		t.Fatal(err)
	}
	w := NewWaker(WakerConfig{Store: s, Session: "s"})
	r, err := w.readRetired(ctx, "c")
	if err != nil || r == nil || r.Below != (ID{Epoch: 5}) {
		t.Fatalf("retired %+v, %v: the frontier must not move back", r, err)
	}
}

// The waker wakes the cell of a due entry whose owner is gone, skips a
// live owner's, deletes retired ones, and leaves future ones alone.
func TestWakerTick(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	now := time.Now()
	past, future := now.Add(-2*time.Minute).UnixMilli(), now.Add(10*time.Minute).UnixMilli()
	put := func(cell string, id ID, at int64) string {
		k := Entry{Cell: cell, ID: id, Deadline: at}.Key()
		if _, err := s.Put(ctx, k, []byte("{}"), bucket.Cond{}); err != nil {
			t.Fatal(err)
		}
		return k
	}
	put("gone", ID{1, 1}, past)
	put("live", ID{1, 1}, past)
	oldKey := put("moved", ID{1, 1}, past)
	put("later", ID{1, 1}, future)
	if err := NewPublisher(s, nil).Retire(ctx, "moved", ID{Epoch: 2}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var woken []string
	w := NewWaker(WakerConfig{Store: s, Node: "n", Session: "s", Tick: time.Second,
		Lookup: func(_ context.Context, cell string, _ int64) (Owner, error) { return Owner{Live: cell == "live"}, nil },
		Wake: func(_ context.Context, cell string) error {
			mu.Lock()
			woken = append(woken, cell)
			mu.Unlock()
			return nil
		}})
	if err := w.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(woken) != "[gone]" {
		t.Fatalf("woken %v, want [gone]", woken)
	}
	if _, err := s.Head(ctx, oldKey); bucket.OutcomeOf(err) != bucket.NotFound {
		t.Fatalf("retired entry still there: %v", err)
	}
	st := w.Stats()
	if !st.Holder || st.Due != 3 || st.Pages != 1 {
		t.Fatalf("stats %+v", st)
	}
	// Another session cannot take the role while it is held.
	w2 := NewWaker(WakerConfig{Store: s, Node: "m", Session: "s2", Tick: time.Second, Wake: func(context.Context, string) error { return nil }})
	if err := w2.Tick(ctx); err != nil || w2.Stats().Holder {
		t.Fatalf("second waker took a held role: %v", err)
	}
	// Once the holder resigns (it drains), the other takes the role at its
	// next tick, and the resigned one never claims it again.
	if err := w.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w2.Tick(ctx); err != nil || !w2.Stats().Holder {
		t.Fatalf("role not taken after the holder resigned: %v", err)
	}
	if err := w.Tick(ctx); err != nil || w.Stats().Holder {
		t.Fatalf("a resigned waker claimed the role again: %v", err)
	}
}

// BenchmarkWakerTick100kFuture: the waker's cost per tick with 100,000
// future entries in the bucket: LIST pages read (reported as pages/tick).
func BenchmarkWakerTick100kFuture(b *testing.B) {
	ctx := context.Background()
	s := bucket.NewMem()
	base := time.Now().Add(time.Hour).UnixMilli()
	for i := range 100_000 {
		k := Entry{Cell: fmt.Sprintf("T:%064x", i), ID: ID{1, 1}, Deadline: base + int64(i)*100}.Key()
		if _, err := s.Put(ctx, k, []byte("{}"), bucket.Cond{}); err != nil {
			b.Fatal(err)
		}
	}
	w := NewWaker(WakerConfig{Store: s, Node: "n", Session: "s", Tick: time.Minute, Wake: func(context.Context, string) error { return nil }})
	b.ResetTimer()
	var pages int64
	for range b.N {
		if err := w.Tick(ctx); err != nil {
			b.Fatal(err)
		}
		pages += w.Stats().Pages
	}
	b.ReportMetric(float64(pages)/float64(b.N), "pages/tick")
}
