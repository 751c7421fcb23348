package cell

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpen_pragmas(t *testing.T) {
	db := openTest(t)
	text := func(q string) string {
		t.Helper()
		v, err := db.c.queryText(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return v
	}
	tests := []struct{ pragma, want string }{
		{"PRAGMA journal_mode", "wal"},
		{"PRAGMA wal_autocheckpoint", "0"},
		{"PRAGMA synchronous", "1"}, // NORMAL
		{"PRAGMA foreign_keys", "1"},
	}
	for _, tt := range tests {
		if got := text(tt.pragma); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.pragma, got, tt.want)
		}
	}
}

func TestOpen_noAutomaticCheckpoint(t *testing.T) {
	db := openTest(t)
	// Far past SQLite's default of 1000 pages: the WAL keeps growing.
	for i := range 300 {
		if err := db.Put(string(rune('a'+i%26))+string(rune(i)), make([]byte, 20_000)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(db.Path() + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if pages := st.Size() / 4096; pages < 1500 {
		t.Errorf("WAL holds about %d pages; an automatic checkpoint ran", pages)
	}
}

func TestOpen_badPath(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing", "dir", "cell.db"))
	if err == nil {
		t.Fatal("opened a database in a directory that does not exist")
	}
}

func TestDB_reopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cell.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, "k", "v")
	exec(t, db, "CREATE TABLE t (x)")
	exec(t, db, "INSERT INTO t VALUES (42)")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, ok := getString(t, db, "k"); !ok || got != "v" {
		t.Errorf("after reopen get k = %q, %v", got, ok)
	}
	if rows := exec(t, db, "SELECT x FROM t"); len(rows) != 1 || rows[0][0] != int64(42) {
		t.Errorf("after reopen rows = %v", rows)
	}
	mustPut(t, db, "k2", "v2") // the KV statements work on a reopened file
}

func TestDB_useAfterClose(t *testing.T) {
	db := openTest(t)
	cur, err := db.Exec("SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3")
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	checks := map[string]error{}
	_, _, checks["Get"] = db.Get("k")
	checks["Put"] = db.Put("k", nil)
	_, checks["List"] = db.List(ListOptions{})
	_, checks["Exec"] = db.Exec("SELECT 1")
	checks["Transaction"] = db.Transaction(func() error { return nil })
	checks["DeleteAll"] = db.DeleteAll()
	_, checks["DatabaseSize"] = db.DatabaseSize()
	checks["Sync"] = db.Sync()
	for name, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	// The cursor's statement was finalized by Close; the row read ahead is
	// still there, then the cursor ends.
	if row, ok, err := cur.Next(); err != nil || !ok || row[0] != int64(1) {
		t.Errorf("first row after Close = %v, %v, %v", row, ok, err)
	}
	if _, ok, _ := cur.Next(); ok {
		t.Error("cursor went on after Close")
	}
}

func TestDB_Commits(t *testing.T) {
	db := openTest(t)
	step := func(name string, want uint64, fn func()) {
		t.Helper()
		before := db.Commits()
		fn()
		if got := db.Commits() - before; got != want {
			t.Errorf("%s: %d commits, want %d", name, got, want)
		}
	}
	step("put", 1, func() { mustPut(t, db, "a", "1") })
	step("get", 0, func() { getString(t, db, "a") })
	step("list", 0, func() { db.List(ListOptions{}) })
	step("delete of a missing key", 0, func() { db.Delete("nope") })
	step("transaction of three puts", 1, func() {
		db.Transaction(func() error {
			mustPut(t, db, "b", "2")
			mustPut(t, db, "c", "3")
			return db.Put("d", nil)
		})
	})
	step("rolled back transaction", 0, func() {
		db.Transaction(func() error {
			mustPut(t, db, "e", "5")
			return errors.New("no")
		})
	})
	step("read-only transaction", 0, func() {
		db.Transaction(func() error { _, _, err := db.Get("a"); return err })
	})
	step("SQL insert", 2, func() {
		exec(t, db, "CREATE TABLE t (x)")
		exec(t, db, "INSERT INTO t VALUES (1)")
	})
	step("SQL select", 0, func() { exec(t, db, "SELECT * FROM t") })
	step("delete multi", 1, func() { db.DeleteMulti([]string{"a", "b"}) })
}

func TestDB_Transaction(t *testing.T) {
	db := openTest(t)
	mustPut(t, db, "balance", "100")

	t.Run("error rolls back and is returned", func(t *testing.T) {
		boom := errors.New("abort the transfer")
		err := db.Transaction(func() error {
			mustPut(t, db, "balance", "50")
			mustPut(t, db, "note", "inside transaction")
			return boom
		})
		if err != boom {
			t.Fatalf("Transaction = %v, want the callback's error", err)
		}
		if got, _ := getString(t, db, "balance"); got != "100" {
			t.Errorf("balance = %q, want 100", got)
		}
		if _, ok := getString(t, db, "note"); ok {
			t.Error("note survived the rollback")
		}
	})
	t.Run("nil commits", func(t *testing.T) {
		if err := db.Transaction(func() error { return db.Put("balance", []byte("101")) }); err != nil {
			t.Fatal(err)
		}
		if got, _ := getString(t, db, "balance"); got != "101" {
			t.Errorf("balance = %q, want 101", got)
		}
	})
	t.Run("ErrRollback rolls back quietly", func(t *testing.T) {
		err := db.Transaction(func() error {
			mustPut(t, db, "balance", "0")
			return ErrRollback
		})
		if err != nil {
			t.Fatalf("Transaction = %v, want nil", err)
		}
		if got, _ := getString(t, db, "balance"); got != "101" {
			t.Errorf("balance = %q, want 101", got)
		}
	})
	t.Run("panic rolls back and panics on", func(t *testing.T) {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("panic was swallowed")
				}
			}()
			db.Transaction(func() error {
				mustPut(t, db, "balance", "-1")
				panic("boom")
			})
		}()
		if got, _ := getString(t, db, "balance"); got != "101" {
			t.Errorf("balance = %q, want 101", got)
		}
		if db.InTransaction() {
			t.Error("still in a transaction after the panic")
		}
	})
	t.Run("nested rollback undoes only the inner work", func(t *testing.T) {
		err := db.Transaction(func() error {
			mustPut(t, db, "outer", "1")
			inner := db.Transaction(func() error {
				mustPut(t, db, "inner", "1")
				return errors.New("inner fails")
			})
			if inner == nil {
				t.Error("inner Transaction = nil")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := getString(t, db, "outer"); !ok {
			t.Error("outer write lost")
		}
		if _, ok := getString(t, db, "inner"); ok {
			t.Error("inner write survived")
		}
	})
	t.Run("SQL joins the transaction", func(t *testing.T) {
		exec(t, db, "CREATE TABLE items (name TEXT)")
		db.Transaction(func() error {
			exec(t, db, "INSERT INTO items VALUES ('grape')")
			return errors.New("undo the grape")
		})
		if rows := exec(t, db, "SELECT count(*) FROM items"); rows[0][0] != int64(0) {
			t.Errorf("rows after rollback = %v", rows[0][0])
		}
	})
}

func TestDB_Transaction_kvTableCreationRolledBack(t *testing.T) {
	db := openTest(t)
	db.Transaction(func() error {
		mustPut(t, db, "a", "1") // creates _cf_KV inside the transaction
		return ErrRollback
	})
	if _, ok := getString(t, db, "a"); ok {
		t.Fatal("rolled back key found")
	}
	if got, err := db.List(ListOptions{}); err != nil || len(got) != 0 {
		t.Fatalf("list = %v, %v", got, err)
	}
	mustPut(t, db, "b", "2")
	if got, ok := getString(t, db, "b"); !ok || got != "2" {
		t.Fatalf("get b = %q, %v", got, ok)
	}
}

func TestDB_DeleteAll(t *testing.T) {
	db := openTest(t)
	mustPut(t, db, "k1", "1")
	mustPut(t, db, "k2", "2")
	exec(t, db, "CREATE TABLE parent (id INTEGER PRIMARY KEY)")
	exec(t, db, "CREATE TABLE child (p REFERENCES parent(id))")
	exec(t, db, "CREATE VIEW v AS SELECT * FROM parent")
	exec(t, db, "INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1)")
	open, err := db.Exec("SELECT 1 UNION ALL SELECT 2")
	if err != nil {
		t.Fatal(err)
	}

	wantErrText(t, db.Transaction(db.DeleteAll), "Error", "Cannot call deleteAll() within a transaction")

	before := db.Commits()
	if err := db.DeleteAll(); err != nil {
		t.Fatal(err)
	}
	if db.Commits() == before {
		t.Error("DeleteAll made no commit")
	}
	if got, _ := db.List(ListOptions{}); len(got) != 0 {
		t.Errorf("keys after DeleteAll: %v", kvKeys(got))
	}
	if _, ok := getString(t, db, "k1"); ok {
		t.Error("k1 after DeleteAll")
	}
	if rows := exec(t, db, "SELECT name FROM sqlite_schema"); len(rows) != 0 {
		t.Errorf("schema after DeleteAll: %v", rows)
	}
	if _, ok, _ := open.Next(); !ok {
		t.Error("row read ahead before DeleteAll lost")
	}
	if _, ok, _ := open.Next(); ok {
		t.Error("open cursor went on after DeleteAll")
	}
	if mode, _ := db.c.queryText("PRAGMA journal_mode"); mode != "wal" {
		t.Errorf("journal_mode after DeleteAll = %q", mode)
	}
	mustPut(t, db, "again", "yes")
	exec(t, db, "CREATE TABLE parent (id)")
	if got, ok := getString(t, db, "again"); !ok || got != "yes" {
		t.Errorf("get after DeleteAll = %q, %v", got, ok)
	}
}

func TestDB_DatabaseSize(t *testing.T) {
	db := openTest(t)
	size0, err := db.DatabaseSize()
	if err != nil {
		t.Fatal(err)
	}
	exec(t, db, "CREATE TABLE blobs (b BLOB)")
	for range 20 {
		exec(t, db, "INSERT INTO blobs VALUES (?)", make([]byte, 10_000))
	}
	size1, _ := db.DatabaseSize()
	if size1 <= size0 || size1 < 200_000 {
		t.Errorf("size went from %d to %d after 200 KB of rows", size0, size1)
	}
	if size1%4096 != 0 {
		t.Errorf("size %d is not a whole number of pages", size1)
	}
	exec(t, db, "DELETE FROM blobs")
	if size2, _ := db.DatabaseSize(); size2 >= size1 {
		t.Errorf("size did not drop after deleting (freelist pages count): %d -> %d", size1, size2)
	}
}

func TestDB_Sync(t *testing.T) {
	db := openTest(t)
	if err := db.Sync(); err != nil {
		t.Fatal(err)
	}
}
