package worker

import (
	"context"
	"testing"
	"time"
)

func TestStubSeq_FloorIsTheLowestUnfinished(t *testing.T) {
	s := newStubSeq()
	for range 4 {
		s.take()
	}
	if o := s.order(4); o.Floor != 1 || o.Seq != 4 {
		t.Fatalf("order(4) = %+v, want floor 1", o)
	}
	s.finish(2)
	s.finish(3)
	if s.low != 1 {
		t.Fatalf("low %d after finishing 2 and 3, want 1", s.low)
	}
	s.finish(1)
	if s.low != 4 || len(s.done) != 0 {
		t.Fatalf("low %d done %v after finishing 1..3, want 4 and none", s.low, s.done)
	}
	var nilSeq *stubSeq
	nilSeq.finish(1) // a stub event without numbering orders nothing
	if _, ok := CallOrderFrom(nilSeq.context(context.Background(), 1)); ok {
		t.Fatal("a nil numbering attached an order")
	}
}

func TestParseCallOrder(t *testing.T) {
	o := CallOrder{Stub: "ab12", Seq: 7, Floor: 3}
	if got, err := ParseCallOrder(o.String()); err != nil || got != o {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	for _, bad := range []string{"", "ab12 7", "ab12 0 0", "ab12 3 7", "ab12 x 1", "ab12 1 1 1"} {
		if _, err := ParseCallOrder(bad); err == nil {
			t.Errorf("ParseCallOrder(%q) accepted", bad)
		}
	}
}

// TestOrderGate_HoldsALaterEventForItsPredecessor: event 2 waits until
// event 1 is let in; an event whose predecessor is below the floor goes
// at once; a cancelled wait fails.
func TestOrderGate_HoldsALaterEventForItsPredecessor(t *testing.T) {
	var g orderGate
	ctx := context.Background()
	order := func(seq, floor uint64) context.Context {
		return WithCallOrder(ctx, CallOrder{Stub: "s", Seq: seq, Floor: floor})
	}
	entered := make(chan struct{})
	go func() {
		done, err := g.enter(order(2, 1))
		if err != nil {
			t.Error(err)
		}
		done.done()
		close(entered)
	}()
	select {
	case <-entered:
		t.Fatal("event 2 entered before event 1")
	case <-time.After(50 * time.Millisecond):
	}
	done1, err := g.enter(order(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	done1.done()
	select {
	case <-entered:
	case <-time.After(2 * time.Second):
		t.Fatal("event 2 still held after event 1 entered")
	}
	// Predecessor 9 finished at the caller (floor 10): no wait.
	if done, err := g.enter(order(10, 10)); err != nil {
		t.Fatal(err)
	} else {
		done.done()
	}
	cctx, cancel := context.WithCancel(order(20, 12))
	cancel()
	if _, err := g.enter(cctx); err == nil {
		t.Fatal("a cancelled wait entered")
	}
}
