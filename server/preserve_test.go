package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// readCounter counts the store's reads of cells' replicated history (LTX
// objects and their listings): a restore makes them, a resume must not.
type readCounter struct {
	bucket.Store
	mu    sync.Mutex
	reads int
}

func (s *readCounter) history(key string) {
	if strings.HasPrefix(key, core.CellsPrefix) && !strings.HasSuffix(key, "/own.json") {
		s.mu.Lock()
		s.reads++
		s.mu.Unlock()
	}
}

func (s *readCounter) Get(ctx context.Context, key string) ([]byte, bucket.Object, error) {
	s.history(key)
	return s.Store.Get(ctx, key)
}

func (s *readCounter) GetRange(ctx context.Context, key string, r bucket.Range) ([]byte, bucket.Object, error) {
	s.history(key)
	return s.Store.GetRange(ctx, key, r)
}

func (s *readCounter) List(ctx context.Context, prefix, after string, limit int) (bucket.Page, error) {
	s.history(prefix)
	return s.Store.List(ctx, prefix, after, limit)
}

func (s *readCounter) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// Preserve mode: the node exits keeping its lease, its cells and their
// files; restarting on the same state directory resumes every cell at the
// same epoch with no read of the bucket's history, with its data.
func TestPreserve_RestartResumesCellsAtTheSameEpoch(t *testing.T) {
	ctx := context.Background()
	mem := bucket.NewMem()
	store := &readCounter{Store: mem}
	stateDir := filepath.Join(t.TempDir(), "state")
	// The restart is the same node: same name, state directory and
	// addresses.
	pub, internal := freeAddr(t), freeAddr(t)
	same := func(o *Options) {
		o.StateDir, o.WaitForPrevious = stateDir, true
		o.Listen, o.InternalListen = pub, internal
	}
	a := startDrainNode(t, store, "node-a", same)
	const cells = 5
	for i := range cells {
		if status, body := a.callCell(t, fmt.Sprintf("note:p%d", i), "first"); status != 200 || body != "1" {
			t.Fatalf("cell %d: %d %q", i, status, body)
		}
	}
	a0 := a.state(t)
	a.shutdown(t, "?handoff=preserve")
	if st := a.state(t); !st.Draining || st.Mode != "preserve" {
		t.Errorf("state during a preserve drain: %+v", st)
	}
	if err := a.wait(t, 10*time.Second); err != nil {
		t.Fatalf("preserve drain: %v", err)
	}
	// Nothing was released; the lease is still there.
	infos, _ := fleet.ListCells(ctx, mem, time.Now().UnixMilli())
	for _, ci := range infos {
		if ci.Own.Released || ci.Own.Epoch != 1 || !ci.OwnerLive {
			t.Errorf("%s after a preserve drain: %+v live %v", ci.Cell, ci.Own, ci.OwnerLive)
		}
	}
	if _, err := os.Stat(filepath.Join(stateDir, resumeFile)); err != nil {
		t.Fatalf("no resume file: %v", err)
	}

	// One cell moves on meanwhile (as if another node had taken it over).
	moved := "note:p4"
	_, o, _ := mem.Get(ctx, core.OwnKey(moved))
	if _, err := mem.Put(ctx, core.OwnKey(moved), core.Encode(core.Own{Node: "node-z", Session: "z", Epoch: 2, Released: true}), bucket.IfMatch(o.ETag)); err != nil {
		t.Fatal(err)
	}

	before := store.count()
	began := time.Now()
	b := startDrainNode(t, store, "node-a", same) // well inside the 10 s lease
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the restart waited %v (for its own lease?)", took)
	}
	if n := store.count() - before; n != 0 {
		t.Errorf("the restart read the bucket's history %d times; resuming needs none", n)
	}
	if b.internal != a.internal || b.public != a.public {
		t.Fatalf("restarted on %s/%s, was %s/%s", b.public, b.internal, a.public, a.internal)
	}
	st := b.state(t)
	if st.Session != a0.Session {
		t.Errorf("session %s after the restart, was %s", st.Session, a0.Session)
	}
	owned := map[string]uint64{}
	for _, c := range st.Cells {
		if c.Phase == "owned" {
			owned[c.Cell] = c.Epoch
		}
	}
	for i := range cells - 1 {
		if e, ok := owned[fmt.Sprintf("note:p%d", i)]; !ok || e != 1 {
			t.Errorf("note:p%d after the restart: epoch %d, resident %v", i, e, ok)
		}
	}
	if _, ok := owned[moved]; ok {
		t.Errorf("%s was resumed although its record moved on", moved)
	}
	// The data came along, and new writes continue the chain.
	for i := range cells - 1 {
		if status, body := b.callCell(t, fmt.Sprintf("note:p%d", i), "second"); status != 200 || body != "2" {
			t.Errorf("note:p%d after the restart: %d %q, want 2", i, status, body)
		}
	}
	if n := store.count() - before; n != 0 {
		t.Errorf("serving resumed cells read the bucket's history %d times", n)
	}
	// The moved cell restores from the bucket at the next epoch.
	if status, body := b.callCell(t, moved, "second"); status != 200 || body != "2" {
		t.Errorf("%s: %d %q, want 2 (restored)", moved, status, body)
	}
	b.shutdown(t, "")
	if err := b.wait(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}

	// Another node restores everything from the bucket alone.
	c := startDrainNode(t, mem, "node-c", nil)
	for i := range cells {
		if status, body := c.callCell(t, fmt.Sprintf("note:p%d", i), "third"); status != 200 || body != "3" {
			t.Errorf("note:p%d restored elsewhere: %d %q, want 3", i, status, body)
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
