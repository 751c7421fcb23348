package server

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// runTestNode runs a node with o (loopback listeners, a 5 s TTL, a temp
// state directory and a silent logger unless o says otherwise) until the
// test ends, and returns its public base URL once it serves.
func runTestNode(t *testing.T, o Options) string {
	t.Helper()
	if o.Listen == "" && o.Listener == nil {
		o.Listen = "127.0.0.1:0"
	}
	if o.InternalListen == "" && o.InternalListener == nil {
		o.InternalListen = "127.0.0.1:0"
	}
	if o.Version == "" {
		o.Version = "test"
	}
	if o.TTL == 0 {
		o.TTL = 5 * time.Second
	}
	if o.StateDir == "" {
		o.StateDir = filepath.Join(t.TempDir(), "state")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	o.OnReady = func(public, _ string) { ready <- public }
	go func() { done <- Run(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("node did not stop")
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr
	case err := <-done:
		t.Fatalf("node exited: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("node not ready in 30s")
	}
	return ""
}
