package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/server/api"
)

type testNode struct {
	public, internal string
}

// startNode runs a node named name on store; it stops with the test.
func startNode(t *testing.T, store bucket.Store, name string) testNode {
	t.Helper()
	return startNodeWith(t, store, name, nil)
}

func startNodeWith(t *testing.T, store bucket.Store, name string, tweak func(*Options)) testNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	type addrs struct{ pub, in string }
	ready := make(chan addrs, 1)
	done := make(chan error, 1)
	o := Options{
		Store: store, Node: name, Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0",
		Version: "test", TTL: 5 * time.Second, StateDir: filepath.Join(t.TempDir(), "state"),
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnReady: func(pub, in string) { ready <- addrs{pub, in} },
	}
	if tweak != nil {
		tweak(&o)
	}
	go func() { done <- Run(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("node %s did not stop", name)
		}
	})
	select {
	case a := <-ready:
		return testNode{public: "http://" + a.pub, internal: "http://" + a.in}
	case err := <-done:
		t.Fatalf("node %s exited: %v", name, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("node %s not ready", name)
	}
	return testNode{}
}

func fetchText(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestPeer_ForwardsToTheOwner: two nodes on one bucket; a cell activated
// on A is reached through B by signed peer calls, never activated twice.
func TestPeer_ForwardsToTheOwner(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, "../examples/counter", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	a := startNode(t, store, "node-a")
	b := startNode(t, store, "node-b")
	for i, n := range []testNode{a, b, a, b} {
		status, body := fetchText(t, n.public+"/?name=shared")
		if want := string(rune('1'+i)) + "\n"; status != 200 || body != want {
			t.Fatalf("request %d: %d %q, want 200 %q", i, status, body, want)
		}
	}
	cellsOf := func(n testNode) []api.Cell {
		resp, err := http.Get(n.internal + "/state")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st struct {
			Cells []api.Cell `json:"cells"`
		}
		json.NewDecoder(resp.Body).Decode(&st)
		return st.Cells
	}
	if ca, cb := cellsOf(a), cellsOf(b); len(ca) != 1 || len(cb) != 0 || ca[0].Epoch != 1 {
		t.Fatalf("cells: a=%+v b=%+v; want the one cell on a at epoch 1", ca, cb)
	}
	// An unsigned request to the peer route is refused.
	resp, err := http.Post(a.internal+peerCallPath+"?class=Counter&id=x&method=current", "application/octet-stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned peer call: %d, want 401", resp.StatusCode)
	}
}

// TestPeer_ExceptionsCrossNodes: an error thrown by an object on A reaches
// a Worker on B with its message.
func TestPeer_ExceptionsCrossNodes(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, "../examples/rpc", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	a := startNode(t, store, "node-a")
	b := startNode(t, store, "node-b")
	if status, body := fetchText(t, a.public+"/deposit?account=bob&amount=5"); status != 200 || !strings.Contains(body, `"balance":5`) {
		t.Fatalf("deposit on a: %d %s", status, body)
	}
	status, body := fetchText(t, b.public+"/withdraw?account=bob&amount=9")
	if status != 400 || !strings.Contains(body, "cannot withdraw 9") {
		t.Fatalf("withdraw via b: %d %s, want 400 naming the error", status, body)
	}
	if status, body := fetchText(t, b.public+"/?account=bob"); status != 200 || !strings.Contains(body, `"balance":5`) {
		t.Fatalf("balance via b: %d %s", status, body)
	}
}

// TestObjects_MaxResident: beyond CELLD_MAX_RESIDENT_CELLS a new
// activation is refused, naming the limit; resident cells keep serving.
func TestObjects_MaxResident(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, "../examples/counter", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	n := startNodeWith(t, store, "full", func(o *Options) { o.MaxResident = 2 })
	for _, name := range []string{"a", "b"} {
		if status, body := fetchText(t, n.public+"/?name="+name); status != 200 || body != "1\n" {
			t.Fatalf("%s: %d %q", name, status, body)
		}
	}
	if status, _ := fetchText(t, n.public+"/?name=c"); status == 200 {
		t.Fatal("third cell activated beyond the limit")
	}
	if status, body := fetchText(t, n.public+"/?name=a"); status != 200 || body != "2\n" {
		t.Fatalf("resident cell after refusal: %d %q", status, body)
	}
}
