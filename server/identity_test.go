package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// A second process under a live node's name is refused within a second,
// naming the holder; it never waits forever with listeners that do not
// answer.
func TestIdentity_DuplicateLiveNameRefused(t *testing.T) {
	mem := bucket.NewMem()
	a := startDrainNode(t, mem, "same", nil)
	start := time.Now()
	err := Run(context.Background(), Options{
		Store: mem, Node: "same", Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0", Version: "test",
		TTL: 10 * time.Second, StateDir: filepath.Join(t.TempDir(), "state"), Logger: slog.New(slog.DiscardHandler),
		WaitForPrevious: true,
	})
	took := time.Since(start)
	if !errors.Is(err, fleet.ErrDuplicateNode) {
		t.Fatalf("second node under a live name: %v, want ErrDuplicateNode", err)
	}
	if took > 2*time.Second {
		t.Errorf("refused after %v, want well under the 10 s TTL", took)
	}
	if !strings.Contains(err.Error(), strings.TrimPrefix(a.internal, "http://")) {
		t.Errorf("error does not name the holder's address %s: %v", a.internal, err)
	}
	t.Logf("refused in %v: %v", took.Round(time.Millisecond), err)
	// The first node is untouched.
	resp, err := http.Get(a.public + "/__celld/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first node's health after the refusal: %v %v", resp, err)
	}
	resp.Body.Close()
}

// A predecessor that died (its lease still unexpired, nothing answering at
// its address) is waited for, and the new process answers health 503
// "starting" meanwhile, then takes the name over once the lease has stood
// unchanged for a TTL.
func TestIdentity_WaitsForADeadPredecessor(t *testing.T) {
	mem := bucket.NewMem()
	// A lease left by a process that died: live for 30 s more, advertising
	// an address nothing listens on.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	ttl := 2 * time.Second
	rec := core.Lease{Node: "n", Session: "old-session", Advertise: deadAddr, Generation: 7, Kind: core.KindNode,
		Expires: time.Now().Add(30 * time.Second).UnixMilli()}
	data, _ := json.Marshal(rec)
	if _, err := mem.Put(context.Background(), core.LeaseKey("n"), data, bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	pubL, _ := net.Listen("tcp", "127.0.0.1:0")
	ready := make(chan struct{})
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	go func() {
		done <- Run(ctx, Options{
			Store: mem, Node: "n", Listener: pubL, InternalListen: "127.0.0.1:0", Version: "test",
			TTL: ttl, StateDir: filepath.Join(t.TempDir(), "state"), Logger: slog.New(slog.DiscardHandler),
			WaitForPrevious: true, OnReady: func(string, string) { close(ready) },
		})
	}()
	health := "http://" + pubL.Addr().String() + "/__celld/health"
	var body map[string]any
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(health)
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if resp.StatusCode == 503 && body["phase"] == "starting" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("health while waiting: %v %v", body, err)
		}
	}
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("node exited while waiting: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("still waiting 10 s after start; the dead predecessor's lease stood unchanged for a TTL of 2 s")
	}
	took := time.Since(start)
	// Taken over by observation (about one TTL), long before the record's
	// published expiry of 30 s.
	if took > ttl+3*time.Second {
		t.Errorf("took the name over after %v, want about the TTL (%v)", took, ttl)
	}
	t.Logf("took the name over after %v (predecessor's lease published 30 s)", took.Round(time.Millisecond))
	resp, err := http.Get(health)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health once serving: %v %v", resp, err)
	}
	resp.Body.Close()
}
