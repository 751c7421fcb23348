package core

import "testing"

// TestWatchdog_EarlyFiringIsArmedAgain: a watchdog timer that fires before
// the published expiry by this node's clock (a wall clock stepped back, a
// timer rounded down) arms itself again, and the node fences once the
// expiry has passed — never left with no timer to fence it.
func TestWatchdog_EarlyFiringIsArmedAgain(t *testing.T) {
	m := New(Config{Node: "n", Session: "s", TTL: 3000})
	fx := m.Step(Start{Now: 1000})
	w, ok := fx[0].(Write)
	if len(fx) != 1 || !ok {
		t.Fatalf("start: %#v", fx)
	}
	var dog SetTimer
	for _, f := range m.Step(Done{Now: 1010, Op: w.Op, Outcome: Applied, ETag: "e1"}) {
		if st, ok := f.(SetTimer); ok && st.Timer == TimerWatchdog {
			dog = st
		}
	}
	if dog.At != 4000 {
		t.Fatalf("watchdog armed at %d, want the expiry 4000", dog.At)
	}
	var again SetTimer
	for _, f := range m.Step(TimerFired{Now: dog.At - 1, Timer: TimerWatchdog, Gen: dog.Gen}) {
		if st, ok := f.(SetTimer); ok && st.Timer == TimerWatchdog {
			again = st
		}
		if _, ok := f.(Fence); ok {
			t.Fatal("fenced before the expiry")
		}
	}
	if again.At != dog.At || again.Gen == dog.Gen {
		t.Fatalf("early firing re-armed %+v, want a new timer at %d", again, dog.At)
	}
	fenced := false
	for _, f := range m.Step(TimerFired{Now: again.At, Timer: TimerWatchdog, Gen: again.Gen}) {
		if fe, ok := f.(Fence); ok && fe.Reason == FenceWatchdog {
			fenced = true
		}
	}
	if !fenced {
		t.Fatal("the re-armed watchdog did not fence at the expiry")
	}
}
