package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/host"
	"github.com/celldgo/celld/server/api"
)

// noteHandler is a built-in cell kind for tests: it stores its request.
func noteHandler(db *cell.DB, req []byte) ([]byte, error) {
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS notes(v TEXT)"); err != nil {
		return nil, err
	}
	if _, err := db.Exec("INSERT INTO notes(v) VALUES (?)", string(req)); err != nil {
		return nil, err
	}
	cur, err := db.Exec("SELECT COUNT(*) FROM notes")
	if err != nil {
		return nil, err
	}
	row, err := cur.One()
	if err != nil {
		return nil, err
	}
	return []byte(fmt.Sprint(row[0])), nil
}

// releaseCounter wraps a store: once armed, it counts the cells with a
// release in flight — from the first store call touching a cell's keys to
// the completed write of its released ownership record — and slows those
// writes down so that an unbounded drain would show many at once.
type releaseCounter struct {
	bucket.Store
	armed   atomic.Bool
	delay   time.Duration
	mu      sync.Mutex
	open    map[string]bool
	max     int
	release int
}

func (s *releaseCounter) touch(key string) (cellName string) {
	rest, ok := strings.CutPrefix(key, core.CellsPrefix)
	if !ok || !s.armed.Load() {
		return ""
	}
	c, _, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	if !s.open[c] {
		s.open[c] = true
		s.max = max(s.max, len(s.open))
	}
	s.mu.Unlock()
	return c
}

func (s *releaseCounter) Get(ctx context.Context, key string) ([]byte, bucket.Object, error) {
	s.touch(key)
	return s.Store.Get(ctx, key)
}

func (s *releaseCounter) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	c := s.touch(key)
	released := c != "" && strings.HasSuffix(key, "/own.json") && bytes.Contains(data, []byte(`"released":true`))
	if released {
		time.Sleep(s.delay)
	}
	o, err := s.Store.Put(ctx, key, data, cond)
	if released {
		s.mu.Lock()
		delete(s.open, c)
		s.release++
		s.mu.Unlock()
	}
	return o, err
}

func (s *releaseCounter) peak() (maxInFlight, releases int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max, s.release
}

// drainNode is a node started for a drain test; done yields Run's result.
type drainNode struct {
	testNode
	done  chan error
	store bucket.Store
}

func startDrainNode(t *testing.T, store bucket.Store, name string, tweak func(*Options)) drainNode {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ready := make(chan testNode, 1)
	done := make(chan error, 1)
	o := Options{
		Store: store, Node: name, Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0", Version: "test",
		TTL: 10 * time.Second, StateDir: filepath.Join(t.TempDir(), "state"), Logger: slog.New(slog.DiscardHandler),
		Builtins: []host.Kind{{Name: "note", Handler: noteHandler}},
		OnReady:  func(pub, in string) { ready <- testNode{public: "http://" + pub, internal: "http://" + in} },
	}
	if tweak != nil {
		tweak(&o)
	}
	go func() { done <- Run(ctx, o) }()
	select {
	case n := <-ready:
		return drainNode{testNode: n, done: done, store: store}
	case err := <-done:
		t.Fatalf("node %s exited: %v", name, err)
	}
	return drainNode{}
}

// callCell sends a signed built-in cell request to the node, as a peer or a
// command would.
func (n drainNode) callCell(t *testing.T, name, req string) (int, string) {
	t.Helper()
	secret, err := fleet.PeerSecret(context.Background(), n.store)
	if err != nil {
		t.Fatal(err)
	}
	u := n.internal + fleet.PeerCellCallPath + "?" + url.Values{"cell": {name}}.Encode()
	hr, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(req))
	(&fleet.Signer{Secret: secret, Node: "test"}).Sign(hr, []byte(req))
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (n drainNode) state(t *testing.T) api.State {
	t.Helper()
	resp, err := http.Get(n.internal + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func (n drainNode) shutdown(t *testing.T, query string) {
	t.Helper()
	resp, err := http.Post(n.internal+"/shutdown"+query, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /shutdown%s: %s", query, resp.Status)
	}
}

func (n drainNode) wait(t *testing.T, limit time.Duration) error {
	t.Helper()
	select {
	case err := <-n.done:
		return err
	case <-time.After(limit):
		t.Fatalf("node did not exit within %v of the drain", limit)
		return nil
	}
}

// drainWithLimit makes 200 cells resident, drains with CELLD_RELEASES=limit
// and returns the peak of releases in flight.
func drainWithLimit(t *testing.T, limit int) int {
	mem := bucket.NewMem()
	store := &releaseCounter{Store: mem, delay: 10 * time.Millisecond, open: map[string]bool{}}
	n := startDrainNode(t, store, "node-a", func(o *Options) { o.Releases = limit })
	const cells = 200
	for i := range cells {
		if status, body := n.callCell(t, fmt.Sprintf("note:c%03d", i), "x"); status != 200 || body != "1" {
			t.Fatalf("cell %d: %d %q", i, status, body)
		}
	}
	if st := n.state(t); st.Counters.Occupied != cells {
		t.Fatalf("occupied %d, want %d", st.Counters.Occupied, cells)
	}
	store.armed.Store(true)
	began := time.Now()
	n.shutdown(t, "")
	if err := n.wait(t, 20*time.Second); err != nil {
		t.Fatalf("drain: %v", err)
	}
	peak, releases := store.peak()
	t.Logf("CELLD_RELEASES=%d: %d cells released in %v, peak %d in flight", limit, releases, time.Since(began).Round(time.Millisecond), peak)
	if releases != cells {
		t.Fatalf("%d releases, want %d", releases, cells)
	}
	// Every record says released; the lease is gone.
	infos, err := fleet.ListCells(context.Background(), mem, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	for _, ci := range infos {
		if !ci.Own.Released || ci.Own.Epoch != 1 {
			t.Errorf("%s after the drain: %+v", ci.Cell, ci.Own)
		}
	}
	if len(infos) != cells {
		t.Errorf("%d cells recorded, want %d", len(infos), cells)
	}
	if leases, _ := fleet.ListLeases(context.Background(), mem); len(leases) != 0 {
		t.Errorf("lease left after the drain: %+v", leases)
	}
	return peak
}

func TestDrain_ReleasesInFlightAreBounded(t *testing.T) {
	if peak := drainWithLimit(t, 4); peak > 4 {
		t.Fatalf("CELLD_RELEASES=4 but %d releases were in flight at once", peak)
	}
	// The counter can see more: without the bound it does.
	if peak := drainWithLimit(t, 128); peak <= 4 {
		t.Fatalf("CELLD_RELEASES=128 peaked at %d in flight: the counter cannot tell the bound from its absence", peak)
	}
}

// During a drain: health 503, new requests 503 with Connection: close, no
// new activation, /state answers with progress; then the node exits.
func TestDrain_RefusesNewWorkAndReportsProgress(t *testing.T) {
	mem := bucket.NewMem()
	store := &releaseCounter{Store: mem, delay: 300 * time.Millisecond, open: map[string]bool{}}
	n := startDrainNode(t, store, "node-a", func(o *Options) { o.Releases = 1 })
	for i := range 4 {
		n.callCell(t, fmt.Sprintf("note:d%d", i), "x")
	}
	store.armed.Store(true)
	n.shutdown(t, "")
	// The drain is visible once /shutdown answers; wait for its first
	// release to be under way (each takes 300 ms here).
	for deadline := time.Now().Add(5 * time.Second); n.state(t).Counters.Releasing != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("no release under way 5s into the drain: %+v", n.state(t).Counters)
		}
	}

	resp, err := http.Get(n.public + "/__celld/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("health while draining: %d", resp.StatusCode)
	}
	resp, err = http.Get(n.public + "/anything")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || !resp.Close {
		t.Errorf("new request while draining: %d, connection close %v", resp.StatusCode, resp.Close)
	}
	// A cell it does not hold is not acquired: 503, retryable.
	if status, body := n.callCell(t, "note:new", "x"); status != 503 || !strings.Contains(body, "draining") {
		t.Errorf("activation while draining: %d %q", status, body)
	}
	st := n.state(t)
	if !st.Draining || st.Mode != "handoff" || st.Health != "draining" || st.DrainCells != 4 || st.DrainReleased >= 4 {
		t.Errorf("state while draining: %+v", st)
	}
	if st.Counters.Releasing != 1 || st.Counters.Occupied+st.Counters.Releasing+st.DrainReleased != 4 {
		t.Errorf("counters while draining: %+v released %d", st.Counters, st.DrainReleased)
	}
	if err := n.wait(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if ci, _ := fleet.LookupCell(context.Background(), mem, "note:new", time.Now().UnixMilli()); ci.Own.Epoch != 0 {
		t.Errorf("the draining node acquired note:new: %+v", ci.Own)
	}
}

// A drain deadline ends the drain even when a release hangs.
func TestDrain_DeadlineBoundsTheDrain(t *testing.T) {
	mem := bucket.NewMem()
	store := &releaseCounter{Store: mem, delay: 5 * time.Second, open: map[string]bool{}}
	n := startDrainNode(t, store, "node-a", func(o *Options) { o.DrainTimeout = 300 * time.Millisecond })
	n.callCell(t, "note:slow", "x")
	store.armed.Store(true)
	began := time.Now()
	n.shutdown(t, "")
	n.wait(t, 10*time.Second)
	if took := time.Since(began); took > 3*time.Second {
		t.Fatalf("drain with a 300ms deadline took %v", took)
	}
}
