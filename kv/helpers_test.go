package kv

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
)

// localCaller runs Handle on one database per cell, in a temp dir, one
// request at a time per cell (as a node runs a cell's handlers).
type localCaller struct {
	t     testing.TB
	dir   string
	mu    sync.Mutex
	dbs   map[string]*cell.DB
	calls int
}

func newLocalCaller(t testing.TB) *localCaller {
	t.Helper()
	c := &localCaller{t: t, dir: t.TempDir(), dbs: map[string]*cell.DB{}}
	t.Cleanup(func() {
		for _, db := range c.dbs {
			db.Close()
		}
	})
	return c
}

func (c *localCaller) db(name string) *cell.DB {
	db := c.dbs[name]
	if db == nil {
		var err error
		db, err = cell.Open(filepath.Join(c.dir, filepath.Base(name)+".sqlite"))
		if err != nil {
			c.t.Fatal(err)
		}
		c.dbs[name] = db
	}
	return db
}

func (c *localCaller) Call(_ context.Context, name string, req []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	return Handle(c.db(name), req)
}

// setClock fixes the package clock at t until the test ends.
func setClock(tb testing.TB, t time.Time) *time.Time {
	tb.Helper()
	cur := t
	old := now
	now = func() time.Time { return cur }
	tb.Cleanup(func() { now = old })
	return &cur
}

func i64(v int64) *int64 { return &v }
