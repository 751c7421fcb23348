package sim

import (
	"flag"
	"os"
	"testing"
	"time"

	"github.com/celldgo/celld/fleet/core"
)

var (
	seed  = flag.Uint64("sim.seed", 0, "replay one seed with a readable trace")
	seeds = flag.Int("sim.seeds", 30000, "how many seeds the sweep runs")
	first = flag.Uint64("sim.first", 1, "first seed of the sweep")
)

// TestSim_Sweep runs -sim.seeds schedules of the real core: every safety
// check after every step, liveness at quiescence. With -sim.seed=N it
// replays that one schedule and prints its trace.
func TestSim_Sweep(t *testing.T) {
	if *seed != 0 {
		r := Run(Options{Seed: *seed, Trace: os.Stdout})
		t.Logf("seed %d: %d nodes, %d steps, %d activations", r.Seed, r.Nodes, r.Steps, r.Acquired)
		if r.Violation != "" {
			t.Fatal(r.Violation)
		}
		return
	}
	start := time.Now()
	steps, acquired := 0, 0
	for s := *first; s < *first+uint64(*seeds); s++ {
		r := Run(Options{Seed: s})
		steps += r.Steps
		acquired += r.Acquired
		if r.Violation != "" {
			t.Fatalf("seed %d: %s\nreplay: go test ./fleet/sim -run TestSim_Sweep -sim.seed=%d", s, r.Violation, s)
		}
	}
	t.Logf("%d schedules, %d steps, %d activations, 0 violations in %v", *seeds, steps, acquired, time.Since(start).Round(time.Millisecond))
}

// TestSim_CatchesBrokenCores proves the checker: each deliberately broken
// core must fail within the CI sweep's seeds.
func TestSim_CatchesBrokenCores(t *testing.T) {
	for _, m := range []struct {
		name string
		mut  core.Mutation
	}{
		{"skip epoch bump", core.MutSkipEpochBump},
		{"acquire without checking the owner's lease", core.MutSkipOwnerLeaseCheck},
		{"ambiguous write treated as rejected", core.MutAmbiguousAsRejected},
		{"owner counted dead after its lease was seen unchanged for half a TTL", core.MutObserveTooShort},
	} {
		t.Run(m.name, func(t *testing.T) {
			for s := *first; s < *first+uint64(*seeds); s++ {
				if r := Run(Options{Seed: s, Mutation: m.mut}); r.Violation != "" {
					t.Logf("caught at seed %d: %s", s, r.Violation)
					return
				}
			}
			t.Fatalf("no violation in %d seeds: the checker misses this bug", *seeds)
		})
	}
}

// TestSim_ObservationRuleUnderWideSkew runs schedules whose clocks are
// minutes apart, far past any margin, with the margin so large that the
// expiry rule never fires: takeover rests on the observation rule alone
// (a lease seen unchanged for a TTL and 1% on the observer's own clock),
// and safety and liveness must still hold.
func TestSim_ObservationRuleUnderWideSkew(t *testing.T) {
	n := *seeds / 10
	for s := *first; s < *first+uint64(n); s++ {
		if r := Run(Options{Seed: s, SkewMS: 120_000, Margin: 86_400_000}); r.Violation != "" {
			t.Fatalf("seed %d (replay: go test ./fleet/sim -run ObservationRule -sim.seed=%d -v): %s", s, s, r.Violation)
		}
	}
	t.Logf("%d schedules with clocks up to ±120 s apart, 0 violations", n)
}

// TestSim_MixedTTLs runs the wide-skew schedules with nodes whose lease
// TTLs differ (3, 10 and 30 s): each must watch a peer's lease for the
// TTL that peer's record states. Watching for its own TTL (a 3 s node
// judging a 30 s peer) must be caught.
func TestSim_MixedTTLs(t *testing.T) {
	n := *seeds / 30
	for s := *first; s < *first+uint64(n); s++ {
		if r := Run(Options{Seed: s, SkewMS: 120_000, Margin: 86_400_000, MixedTTL: true}); r.Violation != "" {
			t.Fatalf("seed %d (replay: go test ./fleet/sim -run MixedTTLs -sim.seed=%d -v): %s", s, s, r.Violation)
		}
	}
	t.Logf("%d schedules with mixed TTLs and clocks up to ±120 s apart, 0 violations", n)
	for s := *first; s < *first+uint64(*seeds); s++ {
		if r := Run(Options{Seed: s, SkewMS: 120_000, Margin: 86_400_000, MixedTTL: true, Mutation: core.MutObserveOwnTTL}); r.Violation != "" {
			t.Logf("observing by the node's own TTL caught at seed %d: %s", s, r.Violation)
			return
		}
	}
	t.Fatalf("no violation in %d seeds: the checker misses a node that observes a peer's lease for its own TTL", *seeds)
}

// TestSim_RecoveryGate runs the lease schedules with the takeover
// recovery gate in the acquisition path (fleet durability): one writer per
// epoch and liveness must hold with the extra step, failures included.
func TestSim_RecoveryGate(t *testing.T) {
	n := *seeds / 30
	for s := *first; s < *first+uint64(n); s++ {
		if r := Run(Options{Seed: s, RecoveryGate: true}); r.Violation != "" {
			t.Fatalf("seed %d: %s", s, r.Violation)
		}
	}
	t.Logf("%d schedules with the recovery gate, 0 violations", n)
}
