package server

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/worker"
)

// TestPeer_OwnerHangsUpIs503: an owner whose lease stands takes a
// forwarded call and hangs up without answering (it woke from a freeze
// and fenced, or crashed mid-call). The call was sent, so it is not
// retried, but the cell cannot be served right now: the client gets 503
// with Retry-After, not 500.
func TestPeer_OwnerHangsUpIs503(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, "../examples/counter", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Read the whole request head, then hang up. Only object calls
			// count: node-b, in fleet mode, also says hello to this live
			// node as a possible follower (and is hung up on too).
			r := bufio.NewReader(c)
			first, call := true, false
			for {
				line, err := r.ReadString('\n')
				if err != nil || line == "\r\n" {
					break
				}
				if first {
					_, target, _ := strings.Cut(line, " ")
					call, first = strings.HasPrefix(target, "/peer/"), false
				}
			}
			if call {
				accepted <- struct{}{}
			}
			c.Close()
		}
	}()
	ctx := context.Background()
	owner, err := fleet.Start(ctx, store, fleet.Config{Node: "hangs-up", Advertise: ln.Addr().String(), Kind: core.KindNode, TTL: 30 * time.Second, Durability: durabilityMode(""),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Acquire(ctx, "Counter:"+worker.ObjectIDFromName("Counter", "x")); err != nil {
		t.Fatal(err)
	}
	defer owner.Abandon()

	n := startNodeWith(t, store, "node-b", nil)
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(n.public + "/?name=x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	select {
	case <-accepted:
	default:
		t.Fatalf("the call never reached the owner (answer %d %q)", resp.StatusCode, body)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("owner hung up: %d (Retry-After %q) %q, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if len(accepted) > 0 {
		t.Fatalf("the call was sent %d more times: a call that may have run was retried", len(accepted))
	}
}
