package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/celldgo/celld/d1"
)

// The d1 commands run here in-process against a file:// bucket, through
// the real cellCaller: each command acquires the database's cell under a
// tool lease, restores it from the bucket, replicates its commits there
// and releases it, so a later command sees only what reached the bucket.

const d1TestID = "00000000-0000-4000-8000-0000000000d1"

// newD1Project writes a project (wrangler.jsonc with one database) and its
// migrations; it returns the project directory. The bucket is dir/bucket.
func newD1Project(t testing.TB, entry string, migrations map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bucket"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := `{
  // a comment, as wrangler.jsonc allows
  "name": "app",
  "main": "index.js",
  "observability": { "enabled": true },
  "d1_databases": [` + entry + `],
}`
	if err := os.WriteFile(filepath.Join(dir, "wrangler.jsonc"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, sql := range migrations {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runD1(t testing.TB, dir string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := New("test")
	cmd.Writer, cmd.ErrWriter, cmd.Reader = &out, &errOut, strings.NewReader("")
	full := append([]string{"celld", "--bucket", "file://" + filepath.Join(dir, "bucket"), "d1"}, args...)
	err := cmd.Run(context.Background(), full)
	return out.String(), errOut.String(), err
}

// d1Rows reads a query's rows through a separate command's reach of the
// cell, as compact JSON per row.
func d1Rows(t testing.TB, dir, cellName, sql string) []string {
	t.Helper()
	g := &globals{Bucket: "file://" + filepath.Join(dir, "bucket")}
	c, done, err := g.cellCaller(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := done(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	res, err := (&d1.Client{Caller: c, Cell: cellName}).Query(context.Background(), []string{sql})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range res[0].Rows {
		b, _ := json.Marshal(r)
		out = append(out, string(b))
	}
	return out
}

var d1Migrations1 = map[string]string{
	"db/migrations/0001_users.sql": "-- Migration number: 0001 \t 2026-11-29T21:46:44.888Z\n" +
		"CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT UNIQUE);\n" +
		"INSERT INTO users (email) VALUES ('ann@example.com');\n",
	"db/migrations/0002_posts.sql": "CREATE TABLE posts (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(id), title TEXT);\n" +
		"CREATE TRIGGER posts_touch AFTER INSERT ON posts BEGIN UPDATE users SET email = email WHERE id = NEW.user_id; END;\n",
	"db/migrations/0010_seed.sql": "INSERT INTO posts (user_id, title) VALUES (1, 'hello');",
	"db/migrations/notes.txt":     "not a migration",
}

const d1Entry = `{ "binding": "DB", "database_name": "ledger", "database_id": "` + d1TestID + `",
  "migrations_dir": "db/migrations", "migrations_table": "schema_history" }`

// TestD1Migrations applies a migrations directory and checks that
// `d1 migrations list` agrees with the table's contents, read back from
// the bucket by another command.
func TestD1Migrations(t *testing.T) {
	dir := newD1Project(t, d1Entry, d1Migrations1)
	cellName := "d1:" + d1TestID

	out, _, err := runD1(t, dir, "migrations", "list", "ledger", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Migrations to be applied:", "│ Name           │", "│ 0001_users.sql │", "│ 0010_seed.sql  │"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}

	out, _, err = runD1(t, dir, "migrations", "apply", "DB", dir) // by binding
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	for _, want := range []string{"About to apply 3 migration(s)", "✅ 0001_users.sql", "✅ 0010_seed.sql", "│ 0002_posts.sql │ ✅     │"} {
		if !strings.Contains(out, want) {
			t.Errorf("apply output lacks %q:\n%s", want, out)
		}
	}

	out, _, err = runD1(t, dir, "migrations", "list", "ledger", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Database string                `json:"database"`
		Cell     string                `json:"cell"`
		Applied  []d1.AppliedMigration `json:"applied"`
		Pending  []string              `json:"pending"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	table := d1Rows(t, dir, cellName, "SELECT id, name, applied_at FROM schema_history ORDER BY id")
	var fromList []string
	for _, a := range listed.Applied {
		b, _ := json.Marshal([]any{a.ID, a.Name, a.AppliedAt})
		fromList = append(fromList, string(b))
	}
	if !reflect.DeepEqual(fromList, table) {
		t.Errorf("list says applied %v; the table holds %v", fromList, table)
	}
	if want := []string{`[1,"0001_users.sql"`, `[2,"0002_posts.sql"`, `[3,"0010_seed.sql"`}; len(table) != 3 ||
		!strings.HasPrefix(table[0], want[0]) || !strings.HasPrefix(table[1], want[1]) || !strings.HasPrefix(table[2], want[2]) {
		t.Errorf("table rows %v, want names in order %v", table, want)
	}
	if len(listed.Pending) != 0 || listed.Cell != cellName || listed.Database != "ledger" {
		t.Errorf("list after apply: %+v", listed)
	}
	if got := d1Rows(t, dir, cellName, "SELECT title FROM posts"); !reflect.DeepEqual(got, []string{`["hello"]`}) {
		t.Errorf("posts: %v", got)
	}

	// Nothing to do is success; a new file shows up as pending.
	out, _, err = runD1(t, dir, "migrate", "ledger", dir)
	if err != nil || !strings.Contains(out, "✅ No migrations to apply!") {
		t.Errorf("migrate with nothing to do: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "db/migrations/0011_more.sql"), []byte("ALTER TABLE posts ADD COLUMN body TEXT;"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, _ = runD1(t, dir, "migrations", "list", "ledger", "--config", filepath.Join(dir, "wrangler.jsonc"))
	if !strings.Contains(out, "0011_more.sql") || strings.Contains(out, "0010_seed.sql") {
		t.Errorf("list after adding a file:\n%s", out)
	}
}

// TestD1Migrate_failure: a failing migration in the middle exits 1, names
// the file and the SQLite error, and leaves the database exactly at the
// migration before it.
func TestD1Migrate_failure(t *testing.T) {
	files := map[string]string{}
	for k, v := range d1Migrations1 {
		files[k] = v
	}
	files["db/migrations/0002_posts.sql"] = "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT);\n" +
		"INSERT INTO users (email) VALUES ('bob@example.com');\n" +
		"INSERT INTO users (email) VALUES ('ann@example.com');\n"
	dir := newD1Project(t, d1Entry, files)
	cellName := "d1:" + d1TestID

	out, _, err := runD1(t, dir, "migrate", "ledger", dir)
	if code := ExitCode(err); code != ExitFailure {
		t.Fatalf("exit %d (%v), want 1\n%s", code, err, out)
	}
	for _, want := range []string{"Migration 0002_posts.sql failed", "UNIQUE constraint failed: users.email: SQLITE_CONSTRAINT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if !strings.Contains(out, "│ 0002_posts.sql │ ❌     │") || strings.Contains(out, "0010_seed.sql │") {
		t.Errorf("status table:\n%s", out)
	}
	if got := d1Rows(t, dir, cellName, "SELECT name FROM schema_history ORDER BY id"); !reflect.DeepEqual(got, []string{`["0001_users.sql"]`}) {
		t.Errorf("recorded: %v", got)
	}
	if got := d1Rows(t, dir, cellName, "SELECT type || ' ' || name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name"); !reflect.DeepEqual(got,
		[]string{`["table schema_history"]`, `["table users"]`}) {
		t.Errorf("schema: %v", got)
	}
	if got := d1Rows(t, dir, cellName, "SELECT email FROM users"); !reflect.DeepEqual(got, []string{`["ann@example.com"]`}) {
		t.Errorf("users: %v", got)
	}

	out, _, err = runD1(t, dir, "migrations", "apply", "ledger", dir, "--json")
	if ExitCode(err) != ExitFailure {
		t.Fatalf("second run: %v", err)
	}
	var res struct {
		Applied []string          `json:"applied"`
		Failed  map[string]string `json:"failed"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Applied) != 0 || res.Failed["name"] != "0002_posts.sql" || !strings.Contains(res.Failed["error"], "UNIQUE") {
		t.Errorf("--json: %s", out)
	}
}

func TestD1_usageErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry string
		files map[string]string
		cmd   []string // the command, then --config, then rest
		rest  []string
		want  string
	}{
		{"unknown database", d1Entry, nil, []string{"migrations", "list"}, []string{"nope"}, `couldn't find a D1 DB with the name or binding "nope"`},
		{"a file without a numeric prefix", d1Entry, map[string]string{"db/migrations/init.sql": ""}, []string{"migrate"}, []string{"ledger"}, "init.sql"},
		{"no migrations directory", d1Entry, nil, []string{"migrations", "apply"}, []string{"ledger"}, "no migrations directory"},
		{"bad migrations_table", `{"binding": "DB", "database_name": "ledger", "migrations_table": "x; DROP TABLE y"}`,
			map[string]string{"migrations/0001_a.sql": ""}, []string{"migrate"}, []string{"ledger"}, "not a plain SQL identifier"},
		{"no DB", d1Entry, nil, []string{"migrations", "list"}, nil, "takes DB [DIR]"},
		{"neither command nor file", d1Entry, nil, []string{"execute"}, []string{"ledger"}, "must provide --command or --file."},
		{"both command and file", d1Entry, nil, []string{"execute"}, []string{"ledger", "--command", "SELECT 1", "--file", "x.sql"}, "not both"},
		{"bad flag", d1Entry, nil, []string{"migrations", "list"}, []string{"ledger", "--nope"}, "nope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newD1Project(t, tc.entry, tc.files)
			args := append(append(append([]string{}, tc.cmd...), "--config", filepath.Join(dir, "wrangler.jsonc")), tc.rest...)
			_, _, err := runD1(t, dir, args...)
			if code := ExitCode(err); code != ExitUsage {
				t.Errorf("exit %d (%v), want 2", code, err)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v lacks %q", err, tc.want)
			}
		})
	}
}

var regexpDuration = regexp.MustCompile(`"duration": [0-9.e+-]+`)

func TestD1Execute(t *testing.T) {
	dir := newD1Project(t, `{"binding": "DB", "database_name": "ledger"}`, nil) // no database_id: the cell is d1:ledger
	out, errOut, err := runD1(t, dir, "execute", "ledger", dir, "--command",
		"CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, b BLOB, r REAL);\n"+
			"INSERT INTO t VALUES (1, 'x<&>', X'0102', 1.5), (2, NULL, NULL, 1e21);\n"+
			"SELECT name, id, b, r FROM t ORDER BY id;")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	// meta.duration varies: compare everything else verbatim.
	got := regexpDuration.ReplaceAllString(out, `"duration": D`)
	want := `[
  {
    "results": [],
    "success": true,
    "meta": {
      "duration": D
    }
  },
  {
    "results": [],
    "success": true,
    "meta": {
      "duration": D
    }
  },
  {
    "results": [
      {
        "name": "x<&>",
        "id": 1,
        "b": "[1, 2]",
        "r": 1.5
      },
      {
        "name": null,
        "id": 2,
        "b": null,
        "r": 1e+21
      }
    ],
    "success": true,
    "meta": {
      "duration": D
    }
  }
]
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if rows := d1Rows(t, dir, "d1:ledger", "SELECT count(*) FROM t"); rows[0] != "[2]" {
		t.Errorf("rows: %v", rows)
	}

	// A failing statement fails the whole command, with Wrangler's --json
	// error shape, and leaves nothing of it.
	out, _, err = runD1(t, dir, "execute", "ledger", dir, "--json", "--command", "INSERT INTO t (id) VALUES (3); INSERT INTO t (id) VALUES (1);")
	if ExitCode(err) != ExitFailure {
		t.Fatalf("exit %d: %v", ExitCode(err), err)
	}
	if want := "{\n  \"error\": {\n    \"text\": \"UNIQUE constraint failed: t.id: SQLITE_CONSTRAINT (extended: SQLITE_CONSTRAINT_PRIMARYKEY)\"\n  }\n}\n"; out != want {
		t.Errorf("--json error:\n%s\nwant\n%s", out, want)
	}
	if rows := d1Rows(t, dir, "d1:ledger", "SELECT count(*) FROM t"); rows[0] != "[2]" {
		t.Errorf("after a failed execute: %v rows", rows)
	}
}

func TestD1ExecuteFile(t *testing.T) {
	dir := newD1Project(t, `{"binding": "DB", "database_name": "ledger", "database_id": "`+d1TestID+`"}`, map[string]string{
		"migrations/0001_init.sql": "CREATE TABLE never_run (x);", // recorded as applied by the dump
		"migrations/0002_next.sql": "CREATE TABLE next (x);",
	})
	cellName := "d1:" + d1TestID

	bin := filepath.Join(dir, "data.sqlite")
	if err := os.WriteFile(bin, append([]byte("SQLite format 3\x00"), make([]byte, 100)...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runD1(t, dir, "execute", "ledger", dir, "--file", bin)
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "binary SQLite database") || !strings.Contains(HintOf(err), ".dump") {
		t.Errorf("binary file: exit %d, %v (hint %q)", ExitCode(err), err, HintOf(err))
	}

	dump, err := filepath.Abs("../d1/testdata/export.sql")
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runD1(t, dir, "execute", "ledger", dir, "--file", dump, "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	var res []struct {
		Results       []map[string]any `json:"results"`
		Success       bool             `json:"success"`
		FinalBookmark string           `json:"finalBookmark"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 1 || len(res[0].Results) != 1 {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := res[0].Results[0]["Total queries executed"]; n != float64(18) || !res[0].Success || res[0].FinalBookmark == "" {
		t.Errorf("summary: %s", out)
	}
	if !strings.Contains(errOut, "Importing") || !strings.Contains(errOut, "🚣 Executed 18 queries") {
		t.Errorf("progress: %s", errOut)
	}
	if got := d1Rows(t, dir, cellName, "SELECT id, email, avatar FROM users ORDER BY id"); !reflect.DeepEqual(got,
		[]string{`[1,"ann@example.com",[137,80,78,71]]`, `[2,"bob@example.com",[]]`, `[3,"cy@example.com",null]`}) {
		t.Errorf("users after import: %v", got)
	}
	// The dump carried its migration history: only 0002 is pending.
	out, _, err = runD1(t, dir, "migrations", "list", "ledger", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Applied []d1.AppliedMigration `json:"applied"`
		Pending []string              `json:"pending"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Applied) != 1 || listed.Applied[0].Name != "0001_init.sql" || !reflect.DeepEqual(listed.Pending, []string{"0002_next.sql"}) {
		t.Errorf("list after import: %s", out)
	}
}

// BenchmarkD1ExecuteFile runs `celld d1 execute --file` of a generated
// 50 MB Wrangler export: the whole command, acquiring the cell under a
// tool lease on a file:// bucket, importing in one transaction,
// replicating to the bucket and releasing. MB/s is of the dump's bytes.
// Run with -benchtime=1x.
func BenchmarkD1ExecuteFile(b *testing.B) {
	dir := newD1Project(b, d1Entry, nil)
	dump := filepath.Join(dir, "dump.sql")
	size := d1WriteDump(b, dump, 50<<20)
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		// A fresh database each time: the dump creates its tables.
		id := fmt.Sprintf("bench-%d", i)
		entry := `{"binding": "DB", "database_name": "ledger", "database_id": "` + id + `"}`
		if err := os.WriteFile(filepath.Join(dir, "wrangler.jsonc"), []byte(`{"d1_databases": [`+entry+`]}`), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, errOut, err := runD1(b, dir, "execute", "ledger", dir, "--file", dump, "--json"); err != nil {
			b.Fatalf("%v\n%s", err, errOut)
		}
	}
}

// d1WriteDump writes a dump of about size bytes in Wrangler's export format.
func d1WriteDump(t testing.TB, path string, size int) int64 {
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString(d1ExportHeader + "\n")
	b.WriteString("CREATE TABLE users(id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT, score REAL, avatar BLOB);\n")
	b.WriteString("CREATE TABLE posts(id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), body TEXT);\n")
	users := 0
	for i := 1; b.Len() < size; i++ {
		if i%4 != 0 {
			users++
			fmt.Fprintf(&b, "INSERT INTO \"users\" VALUES(%d,'user%d@example.com','User ''%d''; of the dump',%d.25,X'%08x');\n", users, users, users, i%1000, i)
		} else {
			fmt.Fprintf(&b, "INSERT INTO \"posts\" VALUES(%d,%d,'post %d: a body with -- dashes and /* stars */ inside');\n", i/4, users, i)
		}
	}
	b.WriteString("DELETE FROM sqlite_sequence;\n")
	fmt.Fprintf(&b, "INSERT INTO \"sqlite_sequence\" VALUES('users',%d);\n", users)
	b.WriteString("CREATE INDEX idx_posts_user ON posts(user_id);")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return int64(b.Len())
}

func TestD1RenderTables(t *testing.T) {
	var b bytes.Buffer
	res := []d1.Result{
		{Columns: []string{"id"}},
		{Columns: []string{"id", "name", "b"}, Rows: [][]any{{json.Number("1"), "añb", []any{json.Number("1"), json.Number("2")}}, {json.Number("22"), nil, nil}}},
	}
	stmts := []string{"CREATE TABLE t (id)", "SELECT id, name, b FROM a_table_with_a_long_name   WHERE id > 0 ORDER BY id"}
	if err := renderD1Tables(&b, stmts, res); err != nil {
		t.Fatal(err)
	}
	want := `SELECT id, name, b FROM a_table_with_a_long_name...
┌────┬──────┬────────┐
│ id │ name │ b      │
├────┼──────┼────────┤
│ 1  │ añb  │ [1, 2] │
│ 22 │ null │ null   │
└────┴──────┴────────┘
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
