package cell

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// pooled is one replicated database in a pool. These tests run every
// database on the test goroutine, which is the cells' goroutine: the
// pool's requests (from any goroutine) queue up in parks until the test
// serves them.
type pooled struct {
	db    *DB
	r     *Replicator
	store *bucket.Mem
}

type parkQueue struct {
	mu  sync.Mutex
	dbs []*DB
}

func (q *parkQueue) ask(db *DB) func() {
	return func() {
		q.mu.Lock()
		q.dbs = append(q.dbs, db)
		q.mu.Unlock()
	}
}

// settle serves the pool's requests until at most max databases are open
// (one asked while a background upload ran refuses; the pool asks again
// parkRetry later), for up to 5 s.
func (q *parkQueue) settle(p *Pool, max int) {
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		q.serve()
		if p.Stats().Open <= max || time.Now().After(end) {
			return
		}
	}
}

// serve parks the databases asked so far (on the test goroutine).
func (q *parkQueue) serve() {
	q.mu.Lock()
	dbs := q.dbs
	q.dbs = nil
	q.mu.Unlock()
	for _, db := range dbs {
		db.Park()
	}
}

func openPooled(t *testing.T, p *Pool, q *parkQueue, dir string, i int) pooled {
	t.Helper()
	store := bucket.NewMem()
	path := filepath.Join(dir, "cell"+string(rune('a'+i))+".db")
	db, r := replicatedAt(t, path, store, 1, RestoreInfo{})
	db.JoinPool(p)
	db.OnParkRequest(q.ask(db))
	return pooled{db, r, store}
}

// openFiles counts the descriptors of the process open on files in dir.
func openFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, dir+"/") {
			n++
		}
	}
	return n
}

func TestPool_parksLeastRecentlyUsedAndReopens(t *testing.T) {
	const max, n = 3, 8
	p := NewPool(max)
	q := &parkQueue{}
	dir := t.TempDir()
	var cells []pooled
	want := make([]map[string]any, n)
	for i := range n {
		c := openPooled(t, p, q, dir, i)
		writeMix(t, c.db, 0, 20)
		waitDurable(t, c.r)
		want[i] = contents(t, c.db)
		cells = append(cells, c)
		q.settle(p, max)
		if st := p.Stats(); st.Open > max {
			t.Fatalf("after %d cells: %d open, bound %d", i+1, st.Open, max)
		}
	}
	st := p.Stats()
	if st.Open+st.Parked != n || st.Parked < n-max {
		t.Fatalf("stats %+v, want %d cells, at least %d parked", st, n, n-max)
	}
	// Two descriptors per open database (file and WAL), none for a parked
	// one and none of the replicator's own.
	if got := openFiles(t, dir); got > 2*max {
		t.Errorf("%d descriptors open in the state directory, want at most %d", got, 2*max)
	}
	// Every cell, parked or not, reads what it wrote and goes on
	// replicating from where it was: the bucket restores all of it.
	for i, c := range cells {
		sameContents(t, contents(t, c.db), want[i])
		writeMix(t, c.db, 20, 15)
		waitDurable(t, c.r)
		want[i] = contents(t, c.db)
		q.settle(p, max)
	}
	if st := p.Stats(); st.Reopens == 0 || st.Open > max {
		t.Errorf("stats %+v: want reopens, at most %d open", st, max)
	}
	for i, c := range cells {
		closeReplicated(t, c.db, c.r)
		got, info := restored(t, c.store)
		sameContents(t, contents(t, got), want[i])
		if info.TXID != c.r.Captured() {
			t.Errorf("cell %d: restored TXID %d, captured %d", i, info.TXID, c.r.Captured())
		}
	}
	if st := p.Stats(); st.Open != 0 || st.Parked != 0 {
		t.Errorf("after closing every cell: %+v", st)
	}
}

func TestPool_parkKeepsConnectionSettings(t *testing.T) {
	p := NewPool(10)
	c := openPooled(t, p, &parkQueue{}, t.TempDir(), 0)
	exec(t, c.db, "CREATE TABLE a (id INTEGER PRIMARY KEY)")
	exec(t, c.db, "CREATE TABLE b (a INTEGER REFERENCES a(id))")
	exec(t, c.db, "PRAGMA foreign_keys = OFF")
	exec(t, c.db, "PRAGMA recursive_triggers = ON")
	waitDurable(t, c.r)
	if !c.db.Park() {
		t.Fatal("an idle database did not park")
	}
	if !c.db.Parked() || p.Stats().Parked != 1 {
		t.Fatalf("parked %v, stats %+v", c.db.Parked(), p.Stats())
	}
	// Without foreign keys enforced (as the application set it), the
	// insert passes.
	exec(t, c.db, "INSERT INTO b (a) VALUES (42)")
	if got := exec(t, c.db, "PRAGMA recursive_triggers"); len(got) != 1 || got[0][0] != int64(1) {
		t.Errorf("recursive_triggers after reopening = %v, want 1", got)
	}
	if c.db.Parked() {
		t.Error("still parked after a storage call")
	}
}

func TestPool_noParkWhileBusy(t *testing.T) {
	p := NewPool(10)
	c := openPooled(t, p, &parkQueue{}, t.TempDir(), 0)
	mustPut(t, c.db, "k", "v")
	waitDurable(t, c.r)
	// An open transaction, an open cursor and temp objects keep the
	// connection.
	c.db.Transaction(func() error {
		if c.db.Park() {
			t.Error("parked inside a transaction")
		}
		return nil
	})
	exec(t, c.db, "CREATE TABLE t (v)")
	exec(t, c.db, "INSERT INTO t VALUES (1), (2)")
	waitDurable(t, c.r)
	cur, err := c.db.Exec("SELECT v FROM t")
	if err != nil {
		t.Fatal(err)
	}
	if c.db.Park() {
		t.Error("parked with a cursor open")
	}
	cur.ToArray()
	exec(t, c.db, "CREATE TEMP TABLE scratch (v)")
	if c.db.Park() {
		t.Error("parked with a temp table, which lives in the connection")
	}
	if v, _ := getString(t, c.db, "k"); v != "v" {
		t.Errorf("k = %q", v)
	}
}
