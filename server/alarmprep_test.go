package server

import (
	"testing"
	"time"
)

// The preparation bounds: at most maxPreparing preparations run at once,
// at most maxWaiting are out (preparing or prepared), a ticket's room is
// given back once (however often released), and an alarm that finds no
// room is counted skipped.
func TestAlarmPrep_bounds(t *testing.T) {
	p := newAlarmPrep(400) // 100 may wait
	if p.maxWaiting != 100 || p.maxPreparing < 8 || p.maxPreparing >= p.maxWaiting {
		t.Fatalf("bounds %d waiting, %d preparing", p.maxWaiting, p.maxPreparing)
	}
	var ts []*prepTicket
	for range p.maxPreparing {
		if tk := p.acquire(time.Now(), time.Now().Add(time.Hour)); tk != nil {
			ts = append(ts, tk)
		}
	}
	if len(ts) != p.maxPreparing || p.acquire(time.Now(), time.Now().Add(time.Hour)) != nil {
		t.Fatalf("%d preparations let in, want %d and then none", len(ts), p.maxPreparing)
	}
	// Ready ones wait: room to prepare again, up to maxWaiting out.
	for _, tk := range ts {
		tk.ready()
		tk.ready()
	}
	for len(ts) < p.maxWaiting {
		tk := p.acquire(time.Now(), time.Now().Add(time.Hour))
		if tk == nil {
			t.Fatalf("refused with %d out of %d", len(ts), p.maxWaiting)
		}
		tk.ready()
		ts = append(ts, tk)
	}
	if p.acquire(time.Now(), time.Now().Add(time.Hour)) != nil {
		t.Fatalf("let in beyond %d waiting", p.maxWaiting)
	}
	ts[0].release()
	ts[0].release()
	if st := p.stats(); st.Wait != p.maxWaiting-1 || st.Preparing != 0 || st.Prepared != int64(p.maxWaiting) || st.Skipped != 2 {
		t.Fatalf("stats %+v", st)
	}
	// A ticket released unready gives back both rooms.
	tk := p.acquire(time.Now(), time.Now().Add(time.Hour))
	tk.release()
	tk.ready() // too late: not counted
	if st := p.stats(); st.Wait != p.maxWaiting-1 || st.Preparing != 0 || st.Prepared != int64(p.maxWaiting) {
		t.Fatalf("after an unready release: %+v", st)
	}
	if newAlarmPrep(3).maxWaiting != 1 || newAlarmPrep(0).maxWaiting < 1 {
		t.Fatal("a tiny open-cell bound must still let one alarm be prepared")
	}
}

// The lead follows the preparations' cost: twice the recent peak, within
// [prepMinLead, prepMaxLead]; a cost measured from a late start counts.
func TestAlarmPrep_leadAdapts(t *testing.T) {
	p := newAlarmPrep(1000)
	if l := p.lead(); l != 2*prepInitialPeak+2*time.Millisecond {
		t.Fatalf("initial lead %v", l)
	}
	p.note(time.Millisecond)
	if l := p.lead(); l < 2*prepInitialPeak-5*time.Millisecond {
		t.Fatalf("a cheap preparation dropped the lead at once to %v (the peak decays)", l)
	}
	p.note(200 * time.Millisecond)
	if l := p.lead(); l < 400*time.Millisecond || l > 403*time.Millisecond {
		t.Fatalf("after a 200 ms preparation the lead is %v, want ~402 ms", l)
	}
	tk := p.acquire(time.Now().Add(-3*time.Second), time.Now().Add(-time.Second)) // its timer went off 3 s late
	tk.ready()
	tk.release()
	if st := p.stats(); st.Late != 1 {
		t.Fatalf("a preparation ready after its alarm's time is not counted late: %+v", st)
	}
	if l := p.lead(); l != prepMaxLead {
		t.Fatalf("after a 3 s preparation the lead is %v, want the cap %v", l, prepMaxLead)
	}
	// Decay: a peak measured a half-life ago counts half.
	p.mu.Lock()
	p.peak, p.peakAt = 100*time.Millisecond, time.Now().Add(-prepHalfLife)
	p.mu.Unlock()
	if l := p.lead(); l < 99*time.Millisecond || l > 104*time.Millisecond {
		t.Fatalf("a 100 ms peak a half-life old gives lead %v, want ~102 ms", l)
	}
	p.mu.Lock()
	p.peak, p.peakAt = time.Millisecond, time.Now()
	p.mu.Unlock()
	if l := p.lead(); l != prepMinLead {
		t.Fatalf("lead %v, want the floor %v", l, prepMinLead)
	}
}
