package cell

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

const testCell = "Counter:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// countingStore counts the objects read through it.
type countingStore struct {
	bucket.Store
	gets atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, key string) ([]byte, bucket.Object, error) {
	s.gets.Add(1)
	return s.Store.Get(ctx, key)
}

// replicated opens a new cell database at a fresh path with a replicator
// writing epoch; both are closed when the test ends.
func replicated(t testing.TB, store bucket.Store, epoch uint64, from RestoreInfo, tune ...func(*ReplicatorConfig)) (*DB, *Replicator) {
	t.Helper()
	return replicatedAt(t, filepath.Join(t.TempDir(), "cell.db"), store, epoch, from, tune...)
}

func replicatedAt(t testing.TB, path string, store bucket.Store, epoch uint64, from RestoreInfo, tune ...func(*ReplicatorConfig)) (*DB, *Replicator) {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	cfg := ReplicatorConfig{Store: store, Cell: testCell, Epoch: epoch, From: from}
	for _, f := range tune {
		f(&cfg)
	}
	r, err := NewReplicator(db, cfg)
	if err != nil {
		db.Close()
		t.Fatalf("new replicator: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Close(ctx)
		db.Close()
	})
	return db, r
}

// closeReplicated flushes and closes r, then db.
func closeReplicated(t testing.TB, db *DB, r *Replicator) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatalf("close replicator: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close db: %v", err)
	}
}

// restored restores the test cell into a fresh path and opens it.
func restored(t testing.TB, store bucket.Store) (*DB, RestoreInfo) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "restored.db")
	info, err := Restore(context.Background(), store, testCell, path)
	if err != nil {
		t.Fatalf("restore: %v", err)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatalf("open restored: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if got, err := db.c.queryText("PRAGMA integrity_check"); err != nil || got != "ok" {
		t.Fatalf("integrity_check of the restored file: %q, %v", got, err)
	}
	return db, info
}

// contents is everything a cell stores: every KV pair and every row of
// every application table, in a stable order.
func contents(t testing.TB, db *DB) map[string]any {
	t.Helper()
	out := map[string]any{}
	kvs, err := db.List(ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	out["kv"] = kvs
	for _, tbl := range exec(t, db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name") {
		name := fmt.Sprint(tbl[0])
		out["table "+name] = exec(t, db, "SELECT * FROM "+name+" ORDER BY rowid")
	}
	return out
}

func sameContents(t testing.TB, got, want map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		for k := range want {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("%s differs after restore:\n got: %.300v\nwant: %.300v", k, got[k], want[k])
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("restore has %s, the original does not", k)
			}
		}
	}
}

// ltxKeys lists the LTX objects of the test cell.
func ltxKeys(t testing.TB, store bucket.Store) []string {
	t.Helper()
	objs, err := bucket.ListAll(context.Background(), store, LTXPrefix(testCell))
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	return keys
}

func waitDurable(t testing.TB, r *Replicator) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.WaitDurable(ctx, r.Captured()); err != nil {
		t.Fatalf("wait durable: %v", err)
	}
}
