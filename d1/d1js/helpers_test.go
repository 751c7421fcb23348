package d1js_test

import (
	"context"
	"encoding/hex"
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

func (lc *localCaller) Call(_ context.Context, name string, req []byte) ([]byte, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	db := lc.dbs[name]
	if db == nil {
		var err error
		db, err = cell.Open(filepath.Join(lc.dir, hex.EncodeToString([]byte(name))+".sqlite"))
		if err != nil {
			return nil, err
		}
		lc.dbs[name] = db
	}
	return d1.Handle(db, req)
}
