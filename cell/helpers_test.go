package cell

import (
	"errors"
	"path/filepath"
	"testing"
)

// openTest opens a cell database in a fresh directory and closes it when
// the test ends.
func openTest(t testing.TB) *DB {
	t.Helper()
	return openTestWith(t, DefaultLimits)
}

func openTestWith(t testing.TB, lim Limits) *DB {
	t.Helper()
	db, err := OpenWith(filepath.Join(t.TempDir(), "cell.db"), lim)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mustPut(t testing.TB, db *DB, key, value string) {
	t.Helper()
	if err := db.Put(key, []byte(value)); err != nil {
		t.Fatalf("put %q: %v", key, err)
	}
}

func getString(t testing.TB, db *DB, key string) (string, bool) {
	t.Helper()
	v, ok, err := db.Get(key)
	if err != nil {
		t.Fatalf("get %q: %v", key, err)
	}
	return string(v), ok
}

// exec runs query and returns all its rows.
func exec(t testing.TB, db *DB, query string, args ...any) []Row {
	t.Helper()
	cur, err := db.Exec(query, args...)
	if err != nil {
		t.Fatalf("exec %q: %v", query, err)
	}
	rows, err := cur.ToArray()
	if err != nil {
		t.Fatalf("read %q: %v", query, err)
	}
	return rows
}

// wantErrText checks that err is a JS-visible error with exactly the text
// and class workerd throws.
func wantErrText(t testing.TB, err error, name, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s: %s", name, text)
	}
	var js interface{ JSName() string }
	if !errors.As(err, &js) {
		t.Fatalf("error %v (%T) has no JSName", err, err)
	}
	if got := js.JSName(); got != name {
		t.Errorf("JSName = %q, want %q", got, name)
	}
	if got := err.Error(); got != text {
		t.Errorf("error text\n got: %s\nwant: %s", got, text)
	}
}
