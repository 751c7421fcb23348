package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
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
	// The Worker's stub call is refused and the Worker throws: the client
	// sees the refusal (503, retry), not the runtime's 500.
	resp, err := http.Get(n.public + "/?name=c")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(body), "CELLD_MAX_RESIDENT_CELLS=2") {
		t.Fatalf("third cell beyond the limit: %s, Retry-After %q, %q; want 503 naming the limit",
			resp.Status, resp.Header.Get("Retry-After"), body)
	}
	if status, body := fetchText(t, n.public+"/?name=a"); status != 200 || body != "2\n" {
		t.Fatalf("resident cell after refusal: %d %q", status, body)
	}
}

// fullProject's Worker catches a refused call on /caught and throws an
// error of its own on /bug: neither is turned into a refusal.
var fullProject = map[string]string{
	"wrangler.jsonc": `{"name":"full","main":"index.js","durable_objects":{"bindings":[{"name":"C","class_name":"C"}]},
		"migrations":[{"tag":"v1","new_sqlite_classes":["C"]}]}`,
	"index.js": `import { DurableObject } from "cloudflare:workers";
export class C extends DurableObject {
  async hi() { return "hi " + this.ctx.id.name; }
}
export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    const name = u.searchParams.get("name");
    if (u.pathname === "/caught") {
      try {
        return new Response(await env.C.getByName(name).hi());
      } catch (e) {
        return new Response("caught: " + e.message, { status: 299 });
      }
    }
    if (u.pathname === "/bug") {
      await env.C.getByName(name).hi();
      throw new Error("a bug of the script's own");
    }
    return new Response(await env.C.getByName(name).hi());
  },
};`,
}

// A refusal the Worker handled is its answer; a Worker's own exception on
// a full node stays a 500.
func TestObjects_MaxResidentRefusalIsTheWorkersToHandle(t *testing.T) {
	store := bucket.NewMem()
	dir := t.TempDir()
	for name, body := range fullProject {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	n := startNodeWith(t, store, "full", func(o *Options) { o.MaxResident = 1 })
	if status, body := fetchText(t, n.public+"/?name=a"); status != 200 || body != "hi a" {
		t.Fatalf("first cell: %d %q", status, body)
	}
	if status, body := fetchText(t, n.public+"/caught?name=b"); status != 299 || !strings.Contains(body, "caught: ") || !strings.Contains(body, "node is full") {
		t.Fatalf("a refusal the Worker caught: %d %q; want its own 299", status, body)
	}
	if status, body := fetchText(t, n.public+"/bug?name=a"); status != 500 {
		t.Fatalf("the Worker's own exception on a full node: %d %q; want 500", status, body)
	}
	if status, _ := fetchText(t, n.public+"/?name=b"); status != 503 {
		t.Fatalf("an uncaught refusal: %d; want 503", status)
	}
}
