package fleet

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
)

func startNode(t testing.TB, s bucket.Store, name string, ttl time.Duration) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := Start(ctx, s, Config{Node: name, Advertise: name + ":8081", TTL: ttl, Margin: ttl / 2})
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() { n.shutdown() })
	return n
}

func TestNode_AcquireForwardRelease(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	a := startNode(t, s, "a", 3*time.Second)
	b := startNode(t, s, "b", 3*time.Second)

	oa, err := a.Acquire(ctx, "Counter:01")
	if err != nil || oa.Epoch != 1 {
		t.Fatalf("a acquire = %+v, %v; want epoch 1", oa, err)
	}
	_, err = b.Acquire(ctx, "Counter:01")
	var else_ *ElsewhereError
	if !errors.As(err, &else_) || else_.Node != "a" || else_.Advertise != "a:8081" {
		t.Fatalf("b acquire of a's live cell = %v, want ElsewhereError naming a", err)
	}
	if err := a.Release(ctx, "Counter:01"); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(context.Cause(oa.Context()), ErrNotOwner) {
		t.Fatalf("owner context after release: cause %v", context.Cause(oa.Context()))
	}
	ob, err := b.Acquire(ctx, "Counter:01")
	if err != nil || ob.Epoch != 2 {
		t.Fatalf("b acquire after release = %+v, %v; want epoch 2", ob, err)
	}
	// A is reactivated later: a fresh epoch again.
	if err := b.Release(ctx, "Counter:01"); err != nil {
		t.Fatal(err)
	}
	oa2, err := a.Acquire(ctx, "Counter:01")
	if err != nil || oa2.Epoch != 3 {
		t.Fatalf("a reacquire = %+v, %v; want epoch 3", oa2, err)
	}
}

func TestNode_TakeoverAfterOwnerDies(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	a := startNode(t, s, "a", time.Second)
	if _, err := a.Acquire(ctx, "C"); err != nil {
		t.Fatal(err)
	}
	a.shutdown() // crash: no release, the lease is left to expire
	b := startNode(t, s, "b", time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		o, err := b.Acquire(ctx, "C")
		if err == nil {
			if o.Epoch != 2 {
				t.Fatalf("takeover epoch = %d, want 2", o.Epoch)
			}
			return
		}
		var else_ *ElsewhereError
		if !errors.As(err, &else_) || time.Now().After(deadline) {
			t.Fatalf("takeover: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestNode_FencesWhenTheBucketIsGone(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	n := startNode(t, s, "a", 900*time.Millisecond)
	o, err := n.Acquire(ctx, "C")
	if err != nil {
		t.Fatal(err)
	}
	var writes atomic.Int32
	s.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" {
			writes.Add(1)
		}
		return bucket.Fault{Status: 503}
	})
	select {
	case <-n.Fenced():
	case <-time.After(10 * time.Second):
		t.Fatal("node did not fence")
	}
	if got := n.FenceReason(); got != core.FenceWatchdog {
		t.Fatalf("reason = %q", got)
	}
	if !errors.Is(context.Cause(o.Context()), ErrNotOwner) {
		t.Fatalf("owner context not cancelled: %v", context.Cause(o.Context()))
	}
	if writes.Load() < 2 {
		t.Fatalf("renewal retried %d times before the watchdog, want several", writes.Load())
	}
	before := writes.Load()
	time.Sleep(300 * time.Millisecond)
	if writes.Load() != before {
		t.Fatal("a fenced node kept writing")
	}
}

func TestNode_MismatchAndMissingFence(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(s bucket.Store)
		want   string
	}{
		{"record replaced", func(s bucket.Store) {
			s.Put(context.Background(), core.LeaseKey("a"), core.Encode(core.Lease{Node: "a", Session: "intruder", Expires: 1 << 50}), bucket.Cond{})
		}, core.FenceMismatch},
		{"record deleted", func(s bucket.Store) { s.Delete(context.Background(), core.LeaseKey("a")) }, core.FenceMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := bucket.NewMem()
			n := startNode(t, s, "a", 900*time.Millisecond)
			tc.tamper(s)
			select {
			case <-n.Fenced():
			case <-time.After(5 * time.Second):
				t.Fatal("node did not fence")
			}
			if got := n.FenceReason(); got != tc.want {
				t.Fatalf("reason = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNode_SecondSessionOfALiveNameRefused(t *testing.T) {
	s := bucket.NewMem()
	startNode(t, s, "dev", 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := Start(ctx, s, Config{Node: "dev", TTL: 5 * time.Second})
	if err == nil || !contains(err.Error(), "held by a live session") {
		t.Fatalf("second start = %v, want refusal", err)
	}
}

func TestNode_CloseDeletesLeaseAndReleases(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	n := startNode(t, s, "tool-1", 3*time.Second)
	if _, err := n.Acquire(ctx, "d1:db"); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(ctx, core.LeaseKey("tool-1")); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("lease after close: %v", err)
	}
	data, _, _ := s.Get(ctx, core.OwnKey("d1:db"))
	own, _ := core.DecodeOwn(data)
	if !own.Released || own.Epoch != 1 {
		t.Fatalf("own.json after close = %+v, want released at epoch 1", own)
	}
}

func TestRecords_FormatAndSecret(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	if err := EnsureFormat(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := EnsureFormat(ctx, s); err != nil {
		t.Fatalf("second EnsureFormat: %v", err)
	}
	s.Put(ctx, core.FormatKey, []byte(`{"format":2}`), bucket.Cond{})
	if err := EnsureFormat(ctx, s); err == nil || !contains(err.Error(), "format 2 is not supported") {
		t.Fatalf("unknown format: %v", err)
	}
	a, err := PeerSecret(ctx, s)
	if err != nil || len(a) != 32 {
		t.Fatal(err)
	}
	b, err := PeerSecret(ctx, s)
	if err != nil || string(a) != string(b) {
		t.Fatalf("second PeerSecret differs: %v", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestNode_AbandonedAcquireIsHandedBack(t *testing.T) {
	s := bucket.NewMem()
	n := startNode(t, s, "a", 3*time.Second)
	s.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" && strings.HasPrefix(c.Key, "cells/") {
			return bucket.Fault{Latency: 300 * time.Millisecond}
		}
		return bucket.Fault{}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := n.Acquire(ctx, "C"); err == nil {
		t.Fatal("acquire with a short deadline succeeded")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, _, err := s.Get(context.Background(), core.OwnKey("C"))
		if err == nil {
			if own, _ := core.DecodeOwn(data); own.Released {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("abandoned claim not released: %s %v", data, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestNode_Confirm(t *testing.T) {
	ctx := context.Background()
	s := bucket.NewMem()
	n := startNode(t, s, "a", 3*time.Second)
	o, err := n.Acquire(ctx, "C")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Confirm(ctx, "C", o.Epoch); err != nil {
		t.Fatalf("confirm while owner: %v", err)
	}
	// Someone took the cell (as after our lease lapsed): confirm fails
	// and the owner context ends.
	s.Put(ctx, core.OwnKey("C"), core.Encode(core.Own{Node: "b", Session: "sb", Epoch: o.Epoch + 1}), bucket.Cond{})
	if err := n.Confirm(ctx, "C", o.Epoch); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("confirm after takeover = %v, want ErrNotOwner", err)
	}
	select {
	case <-o.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("owner context not cancelled after a failed confirm")
	}
}

// readCountingStore counts reads of ownership records by kind.
type readCountingStore struct {
	bucket.Store
	heads, gets atomic.Int64
}

func (r *readCountingStore) Head(ctx context.Context, key string) (bucket.Object, error) {
	if isOwnKey(key) {
		r.heads.Add(1)
	}
	return r.Store.Head(ctx, key)
}

func (r *readCountingStore) Get(ctx context.Context, key string) ([]byte, bucket.Object, error) {
	if isOwnKey(key) {
		r.gets.Add(1)
	}
	return r.Store.Get(ctx, key)
}

// Confirm settles an unchanged record with a HEAD; any other ETag — even
// the same bytes written again — is read and judged by its content.
func TestNode_ConfirmByETag(t *testing.T) {
	ctx := context.Background()
	mem := bucket.NewMem()
	s := &readCountingStore{Store: mem}
	n := startNode(t, s, "a", 3*time.Second)
	o, err := n.Acquire(ctx, "C")
	if err != nil {
		t.Fatal(err)
	}
	h0, g0 := s.heads.Load(), s.gets.Load()
	for range 3 {
		if err := n.Confirm(ctx, "C", o.Epoch); err != nil {
			t.Fatalf("confirm while owner: %v", err)
		}
	}
	if h, g := s.heads.Load()-h0, s.gets.Load()-g0; h != 3 || g != 0 {
		t.Fatalf("3 confirms of an unchanged record: %d HEAD, %d GET; want 3, 0", h, g)
	}
	// Our own record, written again (a new ETag, same content): read,
	// still ours.
	data, _, err := mem.Get(ctx, core.OwnKey("C"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Put(ctx, core.OwnKey("C"), data, bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	g1 := s.gets.Load()
	if err := n.Confirm(ctx, "C", o.Epoch); err != nil {
		t.Fatalf("confirm after a rewrite of the same record: %v", err)
	}
	if s.gets.Load() != g1+1 {
		t.Fatalf("a changed ETag was not read: %d GETs", s.gets.Load()-g1)
	}
	// That ETag, read and found ours, is what the next HEAD compares with.
	if err := n.Confirm(ctx, "C", o.Epoch); err != nil || s.gets.Load() != g1+1 {
		t.Fatalf("confirm after adopting the rewritten record's ETag: %v, %d more GETs", err, s.gets.Load()-g1-1)
	}
	// The wrong epoch is never confirmed, whatever the ETag says.
	if err := n.Confirm(ctx, "C", o.Epoch+1); err == nil {
		t.Fatal("confirm of an epoch we never held succeeded")
	}
	// A deleted record is no confirmation.
	if err := mem.Delete(ctx, core.OwnKey("C")); err != nil {
		t.Fatal(err)
	}
	if err := n.Confirm(ctx, "C", o.Epoch); err == nil {
		t.Fatal("confirm of a deleted ownership record succeeded")
	}
}
