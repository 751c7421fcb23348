package cli

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestFloorPercent(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name        string
		live, floor uint64
		want        int
	}{
		{"small heap grows to the floor", 4 * mb, 64 * mb, 1501},
		{"heap near the floor keeps the base", 30 * mb, 64 * mb, 200},
		{"heap past the floor keeps the base", 500 * mb, 64 * mb, 200},
		{"tiny heap is capped", 1024, 64 * mb, maxGCPercent},
		{"no heap yet is capped", 0, 64 * mb, maxGCPercent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := floorPercent(tc.live, tc.floor, 200); got != tc.want {
				t.Errorf("floorPercent(%d, %d, 200) = %d, want %d", tc.live, tc.floor, got, tc.want)
			}
		})
	}
}

func TestTuneGC(t *testing.T) {
	orig := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(orig) })

	t.Run("GOGC set wins", func(t *testing.T) {
		t.Setenv("GOGC", "100")
		tuneGC(64)()
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("GOGC after tuneGC with GOGC=100 set = %d, want 100", got)
		}
	})
	t.Run("no floor", func(t *testing.T) {
		stop := tuneGC(0)
		defer stop()
		if got := debug.SetGCPercent(defaultGCPercent); got != defaultGCPercent {
			t.Errorf("GOGC = %d, want %d", got, defaultGCPercent)
		}
	})
	t.Run("floor raises GOGC after a collection", func(t *testing.T) {
		// The test binary's live heap is a few MB: a 1 GB floor asks for
		// more than the base.
		stop := tuneGC(1024)
		defer stop()
		deadline := time.Now().Add(10 * time.Second)
		for {
			runtime.GC()
			got := debug.SetGCPercent(-1)
			debug.SetGCPercent(got)
			if got > defaultGCPercent {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GOGC = %d after collections, want > %d", got, defaultGCPercent)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
