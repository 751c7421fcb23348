package d1_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/d1"
)

// localCaller runs d1.Handle on cells opened in a temporary directory,
// one request at a time per process, as a node would.
type localCaller struct {
	t   testing.TB
	dir string
	mu  sync.Mutex
	dbs map[string]*cell.DB
}

func newLocalCaller(t testing.TB) *localCaller {
	lc := &localCaller{t: t, dir: t.TempDir(), dbs: map[string]*cell.DB{}}
	t.Cleanup(func() {
		lc.mu.Lock()
		defer lc.mu.Unlock()
		for _, db := range lc.dbs {
			db.Close()
		}
	})
	return lc
}

// db returns the database of a cell, opening it on first use.
func (lc *localCaller) db(name string) *cell.DB {
	lc.t.Helper()
	db := lc.dbs[name]
	if db == nil {
		var err error
		db, err = cell.Open(filepath.Join(lc.dir, hex.EncodeToString([]byte(name))+".sqlite"))
		if err != nil {
			lc.t.Fatal(err)
		}
		lc.dbs[name] = db
	}
	return db
}

func (lc *localCaller) Call(_ context.Context, name string, req []byte) ([]byte, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return d1.Handle(lc.db(name), req)
}

// query runs SQL directly on a cell's database (outside D1) and returns
// its rows.
func (lc *localCaller) query(name, sql string, args ...any) [][]any {
	lc.t.Helper()
	lc.mu.Lock()
	defer lc.mu.Unlock()
	cur, err := lc.db(name).Exec(sql, args...)
	if err != nil {
		lc.t.Fatalf("%s: %v", sql, err)
	}
	rows, err := cur.ToArray()
	if err != nil {
		lc.t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

func fmtAny(v any) string { return fmt.Sprint(v) }

const testCell = "d1:test-db"
