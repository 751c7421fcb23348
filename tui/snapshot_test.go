package tui

import (
	"errors"
	"testing"

	"github.com/celldgo/celld/server/api"
)

func TestMerge(t *testing.T) {
	const addr = "127.0.0.1:7201"
	answer := func(health string) NodeObservation {
		s := state("n", addr, 2)
		s.Health = health
		s.Draining = health == "draining"
		return NodeObservation{Addr: addr, State: s}
	}
	withLease := func(o NodeObservation) NodeObservation {
		o.Node, o.Lease = "n", &LeaseSeen{Session: "n-s1", ExpiresMS: t0 + 9_000}
		return o
	}
	quiet := NodeObservation{Addr: addr, Err: "connection refused"}
	listed := func(nodes ...NodeObservation) Observation { return Observation{AtMS: t0, Listed: true, Nodes: nodes} }
	static := func(nodes ...NodeObservation) Observation { return Observation{AtMS: t0, Static: true, Nodes: nodes} }
	listFailed := func(nodes ...NodeObservation) Observation {
		return Observation{AtMS: t0, ListErr: errors.New("bucket unavailable"), Nodes: nodes}
	}

	cases := []struct {
		name string
		obs  []Observation
		want Status
		note string
	}{
		{"answers ok", []Observation{listed(withLease(answer("ok")))}, StatusOK, ""},
		{"answers draining", []Observation{listed(withLease(answer("draining")))}, StatusDraining, ""},
		{"answers fenced", []Observation{listed(withLease(answer("fenced")))}, StatusFenced, ""},
		{"quiet with its lease is unreachable", []Observation{listed(withLease(answer("ok"))), listed(withLease(quiet))}, StatusUnreachable, ""},
		{"quiet after a drain with its lease deleted is gone", []Observation{listed(withLease(answer("draining"))), listed(quiet)}, StatusGone, "exited after drain"},
		{"quiet with its lease deleted, never draining, is gone", []Observation{listed(withLease(answer("ok"))), listed(quiet)}, StatusGone, "lease deleted"},
		{"lease deleted but still answering is not gone", []Observation{listed(withLease(answer("draining"))), listed(answer("draining"))}, StatusDraining, ""},
		{"quiet while the bucket cannot be listed is only unreachable", []Observation{listed(withLease(answer("draining"))), listFailed(quiet)}, StatusUnreachable, ""},
		{"--node: quiet after a drain is gone", []Observation{static(answer("draining")), static(quiet)}, StatusGone, "exited after drain"},
		{"--node: quiet without a drain is unreachable", []Observation{static(answer("ok")), static(quiet)}, StatusUnreachable, ""},
		{"--node: never answered is unreachable", []Observation{static(quiet)}, StatusUnreachable, ""},
		{"back after being unreachable", []Observation{static(answer("ok")), static(quiet), static(answer("ok"))}, StatusOK, ""},
		{"a new session forgets the old drain", []Observation{static(answer("draining")), static(func() NodeObservation {
			o := answer("ok")
			o.State.Session = "n-s2"
			return o
		}()), static(quiet)}, StatusUnreachable, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s Snapshot
			for _, o := range tc.obs {
				s = Merge(s, o)
			}
			if len(s.Nodes) != 1 {
				t.Fatalf("got %d rows, want 1", len(s.Nodes))
			}
			r := s.Nodes[0]
			if r.Status != tc.want || r.Note != tc.note {
				t.Errorf("status %s (note %q), want %s (note %q)", r.Status, r.Note, tc.want, tc.note)
			}
			if got, want := s.Polls, len(tc.obs); got != want {
				t.Errorf("polls = %d, want %d", got, want)
			}
		})
	}
}

func TestMerge_KeepsRowsAndLastAnswer(t *testing.T) {
	first := normalFleet(t0)
	s := Merge(Snapshot{}, first)
	// The next poll sees only node-a: the others are not in it at all (a
	// source that lost them). They are kept as they were, never dropped.
	only := normalFleet(t0 + 1000)
	only.Nodes = only.Nodes[:1]
	s = Merge(s, only)
	if got := len(s.Nodes); got != 3 {
		t.Fatalf("rows = %d, want 3", got)
	}
	quiet := Observation{AtMS: t0 + 2000, Static: true, Nodes: []NodeObservation{{Addr: "127.0.0.1:7102", Err: "timeout"}}}
	s = Merge(s, quiet)
	b, _ := s.Row("127.0.0.1:7102")
	if b.State == nil || len(b.State.Cells) != 2 {
		t.Fatalf("unreachable node lost its last answer: %+v", b.State)
	}
	if got, want := b.LastAnswerMS, t0; got != want {
		t.Errorf("last answer at %d, want %d", got, want)
	}
	if got, want := s.Totals, (Totals{Nodes: 3, OK: 2, Unreachable: 1, Cells: 3,
		Counters: api.Counters{Occupied: 3, Activating: 1, AlarmsArmed: 1, WebSockets: 21}, RSSBytes: 83 << 20}); got != want {
		t.Errorf("totals = %+v, want %+v (an unreachable node counts nothing)", got, want)
	}
}

func TestMerge_LeaseLeft(t *testing.T) {
	o := normalFleet(t0)
	o.Nodes[0].State.NowMS = t0 + 400 // the node's clock runs ahead; its own numbers win
	o.Nodes[0].State.LeaseExpiresMS = t0 + 5_400
	o.Nodes[1].State.LeaseExpiresMS = 0 // an older node that does not say
	o.Nodes[2].State = nil
	o.Nodes[2].Err = "refused"
	o.Nodes[2].Lease.ExpiresMS = t0 - 1
	s := Merge(Snapshot{}, o)
	for i, want := range []int64{5_000, 9_000, -1} {
		if got := s.Nodes[i].LeaseLeftMS; got != want {
			t.Errorf("%s: lease left %d, want %d", s.Nodes[i].Node, got, want)
		}
	}
	if got := leaseCell(s.Nodes[2]); got != "expired" {
		t.Errorf("expired lease shows %q, want expired", got)
	}
}
