package kvjs

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/kv"
)

const testNS = "0123456789abcdef0123456789abcdef"

// localCaller runs a namespace's handler on one database per cell, in a
// temp dir, one request at a time (as a node runs a cell's handlers).
type localCaller struct {
	t      testing.TB
	dir    string
	handle cell.Handler // default kv.Handle
	mu     sync.Mutex
	dbs    map[string]*cell.DB
}

func newLocalCaller(t testing.TB) *localCaller {
	t.Helper()
	c := &localCaller{t: t, dir: t.TempDir(), handle: kv.Handle, dbs: map[string]*cell.DB{}}
	t.Cleanup(func() {
		for _, db := range c.dbs {
			db.Close()
		}
	})
	return c
}

func (c *localCaller) Call(_ context.Context, name string, req []byte) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	db := c.dbs[name]
	if db == nil {
		var err error
		db, err = cell.Open(filepath.Join(c.dir, filepath.Base(name)+".sqlite"))
		if err != nil {
			return nil, err
		}
		c.dbs[name] = db
	}
	return c.handle(db, req)
}
