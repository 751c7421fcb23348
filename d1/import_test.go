package d1_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/celldgo/celld/d1"
)

// TestClient_Import loads testdata/export.sql, a dump in the format of
// `wrangler d1 export` (header pragma, no BEGIN/COMMIT, no final newline,
// tables with their rows, the sqlite_sequence reset, then indexes,
// triggers and views), and reads everything back.
func TestClient_Import(t *testing.T) {
	src, err := os.ReadFile("testdata/export.sql")
	if err != nil {
		t.Fatal(err)
	}
	lc := newLocalCaller(t)
	c := &d1.Client{Caller: lc, Cell: testCell}
	ctx := context.Background()
	res, err := c.Import(ctx, string(src))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Statements, strings.Count(string(src), ";\n")+1; got != want {
		t.Errorf("statements: got %d, want %d", got, want)
	}
	if res.RowsWritten == 0 || res.SizeAfter == 0 {
		t.Errorf("counters not reported: %+v", res)
	}

	rows, err := c.Query(ctx, []string{
		"SELECT id, email, name, score, avatar FROM users ORDER BY id",
		"SELECT id, user_id, title, body FROM posts ORDER BY id",
		"SELECT name, seq FROM sqlite_sequence ORDER BY name",
		"SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
		"SELECT * FROM v_users ORDER BY email",
	})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(rows))
	for i, r := range rows {
		got[i] = render(r.Rows)
	}
	want := []string{
		`[1 ann@example.com Ann 3.5 [137 80 78 71]] [2 bob@example.com Bob 'the builder'; of -- things <nil> []] [3 cy@example.com <nil> -1.25e+100 <nil>]`,
		`[1 2 first line one` + "\n" + `line two; with a semicolon /* not a comment */] [2 1 second BEGIN and END inside a string]`,
		`[audit 40] [d1_migrations 1] [users 3]`,
		`[table audit] [table d1_migrations] [index idx_posts_user] [table posts] [table users] [trigger users_audit] [view v_users]`,
		`[ann@example.com] [bob@example.com] [cy@example.com]`,
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("query %d:\ngot  %s\nwant %s", i, got[i], want[i])
		}
	}

	// The trigger and the restored sequences work: the next user is 4
	// and its audit row 41.
	if _, err := c.Query(ctx, []string{"INSERT INTO users (email) VALUES ('dee@example.com')"}); err != nil {
		t.Fatal(err)
	}
	rows, err = c.Query(ctx, []string{"SELECT (SELECT max(id) FROM users), id, what FROM audit"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := render(rows[0].Rows), `[4 41 user dee@example.com]`; got != want {
		t.Errorf("after insert: got %s, want %s", got, want)
	}

	// The migration history came along.
	applied, err := c.AppliedMigrations(ctx, d1.DefaultMigrationsTable)
	if err != nil {
		t.Fatal(err)
	}
	if want := []d1.AppliedMigration{{ID: 1, Name: "0001_init.sql", AppliedAt: "2026-11-29 21:46:44"}}; !reflect.DeepEqual(applied, want) {
		t.Errorf("applied migrations: got %+v, want %+v", applied, want)
	}
}

// A dump that fails part-way leaves nothing behind.
func TestClient_ImportAllOrNothing(t *testing.T) {
	lc := newLocalCaller(t)
	c := &d1.Client{Caller: lc, Cell: testCell}
	ctx := context.Background()
	_, err := c.Import(ctx, "CREATE TABLE a(x);\nINSERT INTO a VALUES(1);\nINSERT INTO nope VALUES(2);\nCREATE TABLE b(y);")
	if err == nil {
		t.Fatal("import of a broken dump succeeded")
	}
	if want := "no such table: nope: SQLITE_ERROR (statement 3 of 4: INSERT INTO nope VALUES(2))"; err.Error() != want {
		t.Errorf("error:\ngot  %s\nwant %s", err, want)
	}
	if n := lc.query(testCell, "SELECT count(*) FROM sqlite_schema")[0][0]; n != int64(0) {
		t.Errorf("%v schema objects left after a failed import", n)
	}
}

// render prints rows compactly: BLOBs as their byte values.
func render(rows [][]any) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		vals := make([]string, len(r))
		for j, v := range r {
			vals[j] = fmtAny(v)
		}
		parts[i] = "[" + strings.Join(vals, " ") + "]"
	}
	return strings.Join(parts, " ")
}

// An export row near the 2 MB row limit is one statement far past the
// 100 KB limit of application SQL; the import takes it, a query does not.
func TestClient_ImportLargeRow(t *testing.T) {
	lc := newLocalCaller(t)
	c := &d1.Client{Caller: lc, Cell: testCell}
	ctx := context.Background()
	blob := strings.Repeat("ab", 1_500_000)
	dump := "PRAGMA defer_foreign_keys=TRUE;\nCREATE TABLE f(id INTEGER PRIMARY KEY, data BLOB);\nINSERT INTO \"f\" VALUES(1,X'" + blob + "');"
	if _, err := c.Import(ctx, dump); err != nil {
		t.Fatal(err)
	}
	if got := lc.query(testCell, "SELECT length(data) FROM f")[0][0]; got != int64(1_500_000) {
		t.Errorf("length: got %v", got)
	}
	_, err := c.Query(ctx, []string{"INSERT INTO f VALUES(2, X'" + blob + "')"})
	if err == nil || !strings.Contains(err.Error(), "SQLITE_TOOBIG") {
		t.Errorf("a long application statement: got %v, want SQLITE_TOOBIG", err)
	}
}
