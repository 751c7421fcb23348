package fleetlog

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet/core"
)

// TestPack_roundTrip: a pack reads back segment for segment; a cut one
// or another object is refused, never read as a shorter pack.
func TestPack_roundTrip(t *testing.T) {
	in := []cell.Segment{seg("A:1", 1, 1, 2, 0), seg("B:2", 3, 7, 9, 6)}
	data := encodePack(in)
	var out []cell.Segment
	if err := readPack(bytes.NewReader(data), func(s cell.Segment) error { out = append(out, s); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[1].Cell != "B:2" || out[1].Epoch != 3 || out[1].Min != 7 || out[1].Max != 9 || !bytes.Equal(out[1].Data, in[1].Data) {
		t.Fatalf("read back %+v", out)
	}
	for _, bad := range [][]byte{data[:len(data)-1], data[:len(packMagic)+5], []byte("not a pack at all")} {
		if err := readPack(bytes.NewReader(bad), func(cell.Segment) error { return nil }); err == nil {
			t.Fatalf("a cut or foreign pack (%d bytes) was read as whole", len(bad))
		}
	}
}

func putPack(t *testing.T, store bucket.Store, seq uint64, segs ...cell.Segment) {
	t.Helper()
	if _, err := store.Put(context.Background(), core.PackKey("n1", "s1", seq), encodePack(segs), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
}

func has(t *testing.T, store bucket.Store, key string) bool {
	t.Helper()
	_, _, err := store.Get(context.Background(), key)
	if err != nil && !errors.Is(err, bucket.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// TestRecover_packs: the recovery gate of a session whose group left
// (no members) reads its packs from the record's floor up to the first
// missing one, uploads their segments (of a cell's snapshots only the
// newest), and seals the record; a pack it cannot read fails the attempt
// and leaves the record unsealed.
func TestRecover_packs(t *testing.T) {
	store := bucket.NewMem()
	ctx := context.Background()
	rec := core.LogRecord{Node: "n1", Session: "s1", State: core.LogOpen, PackFloor: 2}
	if _, err := store.Put(ctx, core.LogKey("n1", "s1"), core.Encode(rec), bucket.IfAbsent()); err != nil {
		t.Fatal(err)
	}
	putPack(t, store, 1, seg("A:1", 1, 1, 1, 0)) // below the floor: covered, never read
	putPack(t, store, 2, seg("A:1", 1, 2, 3, 1), seg("B:1", 2, 1, 3, 0))
	putPack(t, store, 3, seg("A:1", 1, 4, 4, 3), seg("B:1", 2, 1, 5, 0))
	putPack(t, store, 5, seg("A:1", 1, 6, 6, 5)) // after a missing one: not part of the session's packs

	fail := true
	store.SetFaults(func(c bucket.Call) bucket.Fault {
		if fail && c.Method == "get" && c.Key == core.PackKey("n1", "s1", 3) {
			return bucket.Fault{Status: 503}
		}
		return bucket.Fault{}
	})
	r := &Recoverer{Store: store, Session: "s2", Retries: 1}
	if err := r.Recover(ctx, "n1", "s1"); err == nil || !strings.Contains(err.Error(), "log packs") {
		t.Fatalf("a pack that could not be read: recovery returned %v", err)
	}
	data, _, _ := store.Get(ctx, core.LogKey("n1", "s1"))
	if got, _ := core.DecodeLogRecord(data); got.State == core.LogSealed {
		t.Fatal("the record was sealed although a pack could not be read")
	}

	fail = false
	if err := r.Recover(ctx, "n1", "s1"); err != nil {
		t.Fatal(err)
	}
	data, _, _ = store.Get(ctx, core.LogKey("n1", "s1"))
	if got, _ := core.DecodeLogRecord(data); got.State != core.LogSealed || got.By != "s2" {
		t.Fatalf("record after recovery: %+v", got)
	}
	for key, want := range map[string]bool{
		cell.LTXKey("A:1", 1, 2, 3): true,
		cell.LTXKey("A:1", 1, 4, 4): true,
		cell.LTXKey("B:1", 2, 1, 5): true,  // the newest snapshot
		cell.LTXKey("B:1", 2, 1, 3): false, // superseded by it
		cell.LTXKey("A:1", 1, 1, 1): false, // below the floor
		cell.LTXKey("A:1", 1, 6, 6): false, // past the first missing pack
	} {
		if got := has(t, store, key); got != want {
			t.Errorf("%s in the bucket: %v, want %v", key, got, want)
		}
	}
	if r.Recovered() != 1 {
		t.Fatalf("Recovered() = %d, want 1", r.Recovered())
	}
}
