package cell

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDB_Exec_fixture replays the do-sql conformance fixture (recorded on
// workerd) step by step: rows, column names, row counters and errors.
func TestDB_Exec_fixture(t *testing.T) {
	db := openTest(t)
	counts := func(cur *Cursor) [2]int64 { return [2]int64{cur.RowsRead(), cur.RowsWritten()} }

	t.Run("create", func(t *testing.T) {
		cur, err := db.Exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, qty INTEGER, price REAL, data BLOB)")
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := cur.ToArray()
		if len(rows) != 0 || len(cur.ColumnNames()) != 0 {
			t.Errorf("rows %v, columns %v; want none", rows, cur.ColumnNames())
		}
		if got := counts(cur); got != [2]int64{1, 3} {
			t.Errorf("read/written = %v, want [1 3]", got)
		}
	})
	t.Run("insert", func(t *testing.T) {
		for _, args := range [][]any{
			{"apple", 3, 0.5, nil},
			{"banana", 12, 0.25, []byte{1, 2, 3}},
			{"cherry", nil, 10, []byte{255}},
		} {
			cur, err := db.Exec("INSERT INTO items (name, qty, price, data) VALUES (?, ?, ?, ?)", args...)
			if err != nil {
				t.Fatal(err)
			}
			cur.ToArray()
			if got := counts(cur); got != [2]int64{0, 2} {
				t.Errorf("insert %v: read/written = %v, want [0 2]", args[0], got)
			}
		}
		cur, err := db.Exec("INSERT INTO items (name, qty) VALUES (?, ?), (?, ?) RETURNING id, name", "date", 1, "elder", 2)
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := cur.ToArray()
		if want := []Row{{int64(4), "date"}, {int64(5), "elder"}}; !reflect.DeepEqual(rows, want) {
			t.Errorf("returning = %v, want %v", rows, want)
		}
		if cur.RowsWritten() != 4 {
			t.Errorf("returning rows written = %d, want 4", cur.RowsWritten())
		}
	})
	t.Run("select", func(t *testing.T) {
		cur, _ := db.Exec("SELECT id, name, qty, price, data FROM items ORDER BY id")
		rows, _ := cur.ToArray()
		want := []Row{
			{int64(1), "apple", int64(3), 0.5, nil},
			{int64(2), "banana", int64(12), 0.25, []byte{1, 2, 3}},
			{int64(3), "cherry", nil, 10.0, []byte{255}},
			{int64(4), "date", int64(1), nil, nil},
			{int64(5), "elder", int64(2), nil, nil},
		}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("rows = %v\nwant %v", rows, want)
		}
		if cur.RowsRead() != 5 {
			t.Errorf("rows read = %d, want 5", cur.RowsRead())
		}
		one, err := mustExec(t, db, "SELECT name, qty FROM items WHERE id = ?", 2).One()
		if err != nil || !reflect.DeepEqual(one, Row{"banana", int64(12)}) {
			t.Errorf("one = %v, %v", one, err)
		}
		raw := mustExec(t, db, "SELECT id, name FROM items WHERE qty > ? ORDER BY id", 1)
		rawRows, _ := raw.Raw()
		if want := []Row{{int64(1), "apple"}, {int64(2), "banana"}, {int64(5), "elder"}}; !reflect.DeepEqual(rawRows, want) {
			t.Errorf("raw = %v", rawRows)
		}
		if !slices.Equal(raw.ColumnNames(), []string{"id", "name"}) {
			t.Errorf("raw column names = %v", raw.ColumnNames())
		}
		agg, _ := mustExec(t, db, "SELECT count(*) AS n, sum(qty) AS total, avg(price) AS avg_price FROM items").One()
		if want := (Row{int64(5), int64(18), 3.5833333333333335}); !reflect.DeepEqual(agg, want) {
			t.Errorf("aggregate = %v, want %v", agg, want)
		}
	})
	t.Run("cursor", func(t *testing.T) {
		cur := mustExec(t, db, "SELECT name FROM items ORDER BY name DESC LIMIT 3")
		first, ok, err := cur.Next()
		if err != nil || !ok || first[0] != "elder" {
			t.Errorf("first = %v, %v, %v", first, ok, err)
		}
		rest, _ := cur.ToArray()
		if !reflect.DeepEqual(rest, []Row{{"date"}, {"cherry"}}) {
			t.Errorf("rest = %v", rest)
		}
		if row, ok, err := cur.Next(); ok || row != nil || err != nil {
			t.Errorf("after end = %v, %v, %v", row, ok, err)
		}
		types, _ := mustExec(t, db, "SELECT 1 AS i, 1.5 AS r, 'x' AS t, NULL AS n, x'0a0b' AS b, 9007199254740991 AS big, 1 = 1 AS truth").One()
		if want := (Row{int64(1), 1.5, "x", nil, []byte{10, 11}, int64(9007199254740991), int64(1)}); !reflect.DeepEqual(types, want) {
			t.Errorf("types = %#v", types)
		}
		bound, _ := mustExec(t, db, "SELECT ? AS s, ? AS n, ? AS f, ? AS nul, ? AS blob", "str", 7, 2.5, nil, []byte{9, 9}).One()
		if want := (Row{"str", int64(7), 2.5, nil, []byte{9, 9}}); !reflect.DeepEqual(bound, want) {
			t.Errorf("bound = %#v", bound)
		}
	})
	t.Run("update and delete", func(t *testing.T) {
		up := mustExec(t, db, "UPDATE items SET qty = coalesce(qty, 0) + 1 WHERE price IS NOT NULL")
		del := mustExec(t, db, "DELETE FROM items WHERE name = ?", "elder")
		if up.RowsWritten() != 3 || del.RowsWritten() != 1 {
			t.Errorf("rows written: update %d (want 3), delete %d (want 1)", up.RowsWritten(), del.RowsWritten())
		}
		rows := exec(t, db, "SELECT name, qty FROM items ORDER BY id")
		want := []Row{{"apple", int64(4)}, {"banana", int64(13)}, {"cherry", int64(1)}, {"date", int64(1)}}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("remaining = %v", rows)
		}
	})
	t.Run("errors", func(t *testing.T) {
		tests := []struct{ query, want string }{
			{"SELEC * FROM items", `near "SELEC": syntax error at offset 0: SQLITE_ERROR`},
			{"SELECT * FROM nope", "no such table: nope: SQLITE_ERROR"},
			{"INSERT INTO items (name) VALUES ('apple')", "UNIQUE constraint failed: items.name: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_UNIQUE)"},
			{"INSERT INTO items (name) VALUES (NULL)", "NOT NULL constraint failed: items.name: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_NOTNULL)"},
			{"CREATE TABLE items (x)", "table items already exists at offset 13: SQLITE_ERROR"},
		}
		for _, tt := range tests {
			_, err := db.Exec(tt.query)
			wantErrText(t, err, "Error", tt.want)
			var se *SQLError
			if !errors.As(err, &se) {
				t.Errorf("%q: %T is not a *SQLError", tt.query, err)
			}
		}
		_, err := mustExec(t, db, "SELECT * FROM items WHERE id = -1").One()
		wantErrText(t, err, "Error", "Expected exactly one result from SQL query, but got no results.")
		_, err = mustExec(t, db, "SELECT * FROM items").One()
		wantErrText(t, err, "Error", "Expected exactly one result from SQL query, but got multiple results.")
		_, err = db.Exec("SELECT ? + ?", 1)
		wantErrText(t, err, "Error", "Wrong number of parameter bindings for SQL query.")
		_, err = db.Exec("SELECT ?", 1, 2)
		wantErrText(t, err, "Error", "Wrong number of parameter bindings for SQL query.")
		_, err = db.Exec("BEGIN TRANSACTION")
		wantErrText(t, err, "Error", ErrTransactionStatement.Message)
		if n, _ := mustExec(t, db, "SELECT count(*) AS n FROM items").One(); n[0] != int64(4) {
			t.Errorf("count after errors = %v, want 4", n[0])
		}
	})
	t.Run("multi", func(t *testing.T) {
		rows := exec(t, db, "CREATE TABLE IF NOT EXISTS log (msg TEXT); INSERT INTO log VALUES ('a'); INSERT INTO log VALUES ('b'); SELECT count(*) AS n FROM log")
		if !reflect.DeepEqual(rows, []Row{{int64(2)}}) {
			t.Errorf("last statement rows = %v", rows)
		}
	})
}

func mustExec(t testing.TB, db *DB, query string, args ...any) *Cursor {
	t.Helper()
	cur, err := db.Exec(query, args...)
	if err != nil {
		t.Fatalf("exec %q: %v", query, err)
	}
	return cur
}

func TestDB_Exec_statements(t *testing.T) {
	db := openTest(t)
	t.Run("bindings go to the last statement", func(t *testing.T) {
		rows := exec(t, db, "CREATE TABLE t (a, b); INSERT INTO t VALUES (1, 2);\n SELECT a + ? FROM t", 10)
		if !reflect.DeepEqual(rows, []Row{{int64(11)}}) {
			t.Errorf("rows = %v", rows)
		}
	})
	t.Run("only the last statement may have parameters", func(t *testing.T) {
		_, err := db.Exec("INSERT INTO t VALUES (?, 0); SELECT 1", 5)
		wantErrText(t, err, "Error", "When executing multiple SQL statements in a single call, only the last statement can have parameters.")
	})
	t.Run("no statement", func(t *testing.T) {
		for _, q := range []string{"", "   ", "-- just a comment", "/* c */ ;"} {
			_, err := db.Exec(q)
			wantErrText(t, err, "Error", "SQL code did not contain a statement.")
		}
	})
	t.Run("trailing comments and semicolons", func(t *testing.T) {
		for _, q := range []string{"SELECT 7;", "SELECT 7 ;\t", "SELECT 7; -- done", "SELECT 7; /* done */ ;;", "SELECT 1; ; SELECT 7"} {
			if rows := exec(t, db, q); !reflect.DeepEqual(rows, []Row{{int64(7)}}) {
				t.Errorf("%q: rows = %v", q, rows)
			}
		}
	})
	t.Run("earlier statements stay applied when a later one fails", func(t *testing.T) {
		_, err := db.Exec("INSERT INTO t VALUES (3, 4); SELECT * FROM nope")
		if err == nil {
			t.Fatal("no error")
		}
		if n, _ := mustExec(t, db, "SELECT count(*) FROM t").One(); n[0] != int64(2) {
			t.Errorf("rows in t = %v, want 2", n[0])
		}
	})
	t.Run("rows read and written add up over the statements", func(t *testing.T) {
		cur := mustExec(t, db, "INSERT INTO t VALUES (5, 6); INSERT INTO t VALUES (7, 8)")
		if cur.RowsWritten() != 2 {
			t.Errorf("rows written = %d, want 2", cur.RowsWritten())
		}
	})
	t.Run("rows read grows while iterating", func(t *testing.T) {
		cur := mustExec(t, db, "SELECT a FROM t")
		var seen []int64
		for {
			seen = append(seen, cur.RowsRead())
			if _, ok, _ := cur.Next(); !ok {
				break
			}
		}
		if !slices.IsSorted(seen) || seen[len(seen)-1] != 4 {
			t.Errorf("rows read while iterating = %v, want growing to 4", seen)
		}
	})
}

func TestDB_Exec_arguments(t *testing.T) {
	db := openTest(t)
	row, err := mustExec(t, db, "SELECT ?, ?, ?, ?, ?, typeof(?), ?, ?",
		true, false, int32(-3), uint16(9), float32(0.5), []byte{}, int8(1), uint64(1<<62)).One()
	if err != nil {
		t.Fatal(err)
	}
	want := Row{int64(1), int64(0), int64(-3), int64(9), 0.5, "blob", int64(1), int64(1 << 62)}
	if !reflect.DeepEqual(row, want) {
		t.Errorf("row = %#v\nwant  %#v", row, want)
	}
	if row, _ := mustExec(t, db, "SELECT ?", "a\x00b").One(); row[0] != "a\x00b" {
		t.Errorf("text with NUL = %q", row[0])
	}
	for _, bad := range []any{uint64(1 << 63), struct{}{}, []int{1}} {
		_, err := db.Exec("SELECT ?", bad)
		if !errors.Is(err, ErrUnsupportedArgument) {
			t.Errorf("argument %T: %v, want ErrUnsupportedArgument", bad, err)
		}
	}
}

func TestDB_Exec_authorizer(t *testing.T) {
	db := openTest(t)
	mustPut(t, db, "k", "v")
	exec(t, db, "CREATE TABLE t (x)")
	auth := func(msg string) string { return msg + ": SQLITE_AUTH" }
	denied := []struct{ query, want string }{
		{"SELECT * FROM _cf_KV", auth("access to _cf_KV.key is prohibited")},
		{"SELECT value FROM _cf_KV", auth("access to _cf_KV.value is prohibited")},
		{"INSERT INTO _cf_KV VALUES ('a', x'00')", auth("not authorized")},
		{"DELETE FROM _cf_KV", auth("not authorized")},
		{"DROP TABLE _cf_KV", auth("not authorized")},
		{"CREATE TABLE _cf_mine (x)", auth("not authorized")},
		{"CREATE INDEX i ON _cf_KV (value)", auth("not authorized")},
		{"ALTER TABLE _cf_KV RENAME TO kv", auth("not authorized")},
		{"PRAGMA journal_mode=DELETE", auth("not authorized")},
		{"PRAGMA wal_autocheckpoint=1000", auth("not authorized")},
		{"PRAGMA synchronous=OFF", auth("not authorized")},
		{"PRAGMA table_info(_cf_KV)", auth("not authorized")},
		{"ATTACH 'other.db' AS other", auth("not authorized")},
		{"SELECT data FROM sqlite_dbpage", auth("access to sqlite_dbpage.data is prohibited")},
		{"UPDATE sqlite_dbpage SET data = zeroblob(4096) WHERE pgno = 2", auth("not authorized")},
	}
	for _, tt := range denied {
		_, err := db.Exec(tt.query)
		wantErrText(t, err, "Error", tt.want)
	}
	for _, q := range []string{"COMMIT", "ROLLBACK", "SAVEPOINT sp", "RELEASE sp", "BEGIN IMMEDIATE"} {
		_, err := db.Exec(q)
		if !errors.Is(err, ErrTransactionStatement) {
			t.Errorf("%s: %v, want ErrTransactionStatement", q, err)
		}
	}
	allowed := []string{
		"PRAGMA table_list",
		"PRAGMA table_info(t)",
		"PRAGMA foreign_keys = ON",
		"PRAGMA data_version",
		"PRAGMA index_list(t)",
		"SELECT name FROM sqlite_schema",
		"CREATE TEMP TABLE scratch (y)",
		"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 3) SELECT sum(n) FROM c",
	}
	for _, q := range allowed {
		if _, err := db.Exec(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	// The KV API keeps working beside the denied statements.
	if got, ok := getString(t, db, "k"); !ok || got != "v" {
		t.Errorf("get k = %q, %v", got, ok)
	}
}

func TestDB_Exec_limits(t *testing.T) {
	db := openTest(t)
	params := strings.TrimSuffix(strings.Repeat("?,", 101), ",")
	args := make([]any, 101)
	_, err := db.Exec("SELECT "+params, args...)
	var se *SQLError
	if !errors.As(err, &se) || !strings.HasPrefix(se.Message, "too many SQL variables") {
		t.Errorf("101 parameters: %v", err)
	}
	_, err = db.Exec("SELECT '" + strings.Repeat("x", 100_001) + "'")
	if !errors.As(err, &se) || se.Code != 18 { // SQLITE_TOOBIG
		t.Errorf("statement over 100 KB: %v", err)
	}
	_, err = db.Exec("SELECT zeroblob(2000001)")
	wantErrText(t, err, "Error", "string or blob too big: SQLITE_TOOBIG")
}

func TestCursor_Close(t *testing.T) {
	db := openTest(t)
	exec(t, db, "CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3)")
	cur := mustExec(t, db, "SELECT x FROM t")
	cur.Next()
	if err := cur.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := cur.Next(); ok {
		t.Error("rows after Close")
	}
	if len(db.cursors) != 0 {
		t.Errorf("%d cursors still open", len(db.cursors))
	}
	// With no statement left open, a transaction commits normally.
	if err := db.Transaction(func() error { _, err := db.Exec("DELETE FROM t"); return err }); err != nil {
		t.Fatal(err)
	}
}

func TestOnlyTrivia(t *testing.T) {
	tests := map[string]bool{
		"": true, " \n\t;": true, "-- c": true, "-- c\n;": true, "/* c */": true, "/* open": true,
		"x": false, "-- c\nSELECT 1": false, "/* c */ SELECT": false, "-": false, "/": false,
	}
	for s, want := range tests {
		if got := onlyTrivia(s); got != want {
			t.Errorf("onlyTrivia(%q) = %v, want %v", s, got, want)
		}
	}
}
