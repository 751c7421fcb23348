package fleetlog

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// BenchmarkLog_Append is a fleet proof alone: one owner's Append of a
// small segment to two followers over loopback HTTP, each fsyncing on its
// own disk, until both answered — the part of a fleet acknowledgement the
// replication group costs (BenchmarkDisk_Append is the fsync alone).
func BenchmarkLog_Append(b *testing.B) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	store := bucket.NewMem()
	ctx := context.Background()
	for _, name := range []string{"f1", "f2"} {
		d, err := OpenDisk(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		mux := http.NewServeMux()
		Routes(mux, d, &fleet.Verifier{Secret: secret}, func() bool { return true }, nil)
		srv := httptest.NewServer(mux)
		b.Cleanup(srv.Close)
		lease := core.Lease{Node: name, Session: name + "-s", Advertise: strings.TrimPrefix(srv.URL, "http://"), Expires: time.Now().Add(time.Hour).UnixMilli(), Kind: core.KindNode}
		if _, err := store.Put(ctx, core.LeaseKey(name), core.Encode(lease), bucket.Cond{}); err != nil {
			b.Fatal(err)
		}
	}
	own, err := OpenDisk(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	l := NewLog(Config{Store: store, Node: "owner", Session: "owner-s", Disk: own, Signer: &fleet.Signer{Secret: secret, Node: "owner"},
		Recruit: 20 * time.Millisecond, Delay: time.Hour})
	defer l.Close()
	for deadline := time.Now().Add(10 * time.Second); len(l.State().Followers) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("no group of two: %+v", l.State())
		}
	}
	// The record exists once the second member joined; a first proof
	// settles the rest.
	data := make([]byte, 200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		if !l.Append(ctx, cell.Segment{Cell: "C:1", Epoch: 1, Min: uint64(i), Max: uint64(i), After: uint64(i - 1), Data: data}) {
			b.Fatalf("append %d: no fleet proof (%+v)", i, l.State())
		}
	}
}
