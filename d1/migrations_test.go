package d1_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/celldgo/celld/d1"
)

func writeMigrations(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, sql := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(sql), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func names(files []d1.MigrationFile) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Name
	}
	return out
}

func TestReadMigrations(t *testing.T) {
	t.Run("numeric order", func(t *testing.T) {
		dir := writeMigrations(t, map[string]string{
			"0010_ten.sql": "", "0002_two.sql": "", "0001_one.sql": "", "3_three.sql": "", "0002_a.sql": "", "README.md": "",
		})
		files, err := d1.ReadMigrations(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"0001_one.sql", "0002_a.sql", "0002_two.sql", "3_three.sql", "0010_ten.sql"}
		if got := names(files); !reflect.DeepEqual(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("a file without a numeric prefix", func(t *testing.T) {
		dir := writeMigrations(t, map[string]string{"0001_one.sql": "", "init.sql": ""})
		_, err := d1.ReadMigrations(dir)
		if err == nil || !strings.Contains(err.Error(), "init.sql") {
			t.Errorf("got %v, want an error naming init.sql", err)
		}
	})
	t.Run("no directory", func(t *testing.T) {
		_, err := d1.ReadMigrations(filepath.Join(t.TempDir(), "migrations"))
		var nd *d1.NoMigrationsDirError
		if !errors.As(err, &nd) {
			t.Errorf("got %v, want a NoMigrationsDirError", err)
		}
	})
}

var migrations = map[string]string{
	"0001_users.sql": "-- Migration number: 0001 \t 2026-11-29T21:46:44.888Z\n" +
		"CREATE TABLE users (id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT UNIQUE);\n" +
		"INSERT INTO users (email) VALUES ('ann@example.com');\n",
	"0002_posts.sql": "CREATE TABLE posts (id INTEGER PRIMARY KEY, user_id INTEGER REFERENCES users(id), title TEXT);\n" +
		"CREATE TRIGGER posts_touch AFTER INSERT ON posts BEGIN UPDATE users SET email = email WHERE id = NEW.user_id; END;\n",
	"0003_header_only.sql": "-- Migration number: 0003 \t 2026-11-29T21:50:00.000Z\n",
	"0010_seed.sql":        "INSERT INTO posts (user_id, title) VALUES (1, 'hello');",
}

func TestClient_Migrate(t *testing.T) {
	ctx := context.Background()
	lc := newLocalCaller(t)
	c := &d1.Client{Caller: lc, Cell: testCell}
	files, err := d1.ReadMigrations(writeMigrations(t, migrations))
	if err != nil {
		t.Fatal(err)
	}
	applied, err := c.AppliedMigrations(ctx, d1.DefaultMigrationsTable)
	if err != nil || len(applied) != 0 {
		t.Fatalf("fresh database: %v %v", applied, err)
	}
	// The bookkeeping table is Wrangler's, byte for byte as SQLite keeps it.
	ddl := lc.query(testCell, "SELECT sql FROM sqlite_schema WHERE name = 'd1_migrations'")[0][0]
	if want := "CREATE TABLE d1_migrations(\n\t\tid         INTEGER PRIMARY KEY AUTOINCREMENT,\n\t\tname       TEXT UNIQUE,\n\t\tapplied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL\n)"; ddl != want {
		t.Errorf("table DDL:\ngot  %q\nwant %q", ddl, want)
	}

	var seen []string
	n, err := c.Migrate(ctx, d1.DefaultMigrationsTable, d1.Pending(files, applied), func(f d1.MigrationFile, err error) {
		seen = append(seen, f.Name)
	})
	if err != nil || n != 4 {
		t.Fatalf("migrate: %d applied, %v", n, err)
	}
	want := []string{"0001_users.sql", "0002_posts.sql", "0003_header_only.sql", "0010_seed.sql"}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("order: got %v, want %v", seen, want)
	}
	rows := lc.query(testCell, "SELECT id, name, typeof(applied_at) FROM d1_migrations ORDER BY id")
	for i, r := range rows {
		if r[0] != int64(i+1) || r[1] != want[i] || r[2] != "text" {
			t.Errorf("row %d: %v", i, r)
		}
	}
	if got := lc.query(testCell, "SELECT title FROM posts"); len(got) != 1 || got[0][0] != "hello" {
		t.Errorf("posts: %v", got)
	}

	// Applying again finds nothing to do; a migration recorded meanwhile
	// (another run) is skipped, not run twice.
	applied, _ = c.AppliedMigrations(ctx, d1.DefaultMigrationsTable)
	if p := d1.Pending(files, applied); len(p) != 0 {
		t.Errorf("pending after apply: %v", names(p))
	}
	res, err := c.ApplyMigration(ctx, d1.DefaultMigrationsTable, files[3])
	if err != nil || res.Applied {
		t.Errorf("re-apply of a recorded migration: %+v %v", res, err)
	}
	if got := lc.query(testCell, "SELECT count(*) FROM posts")[0][0]; got != int64(1) {
		t.Errorf("posts after re-apply: %v", got)
	}
}

// TestClient_MigrateFailure: a migration that fails in the middle of a
// directory leaves the database exactly as it was after the one before:
// schema, rows, sequences and the bookkeeping table.
func TestClient_MigrateFailure(t *testing.T) {
	ctx := context.Background()
	broken := map[string]string{}
	for k, v := range migrations {
		broken[k] = v
	}
	broken["0002_posts.sql"] = "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT);\n" +
		"INSERT INTO users (email) VALUES ('bob@example.com');\n" +
		"INSERT INTO posts (title) VALUES ('one');\n" +
		"INSERT INTO users (email) VALUES ('ann@example.com');\n" + // UNIQUE fails
		"CREATE TABLE never (x);\n"
	files, err := d1.ReadMigrations(writeMigrations(t, broken))
	if err != nil {
		t.Fatal(err)
	}

	lc := newLocalCaller(t)
	c := &d1.Client{Caller: lc, Cell: testCell}
	n, err := c.Migrate(ctx, "custom_migrations", files, nil)
	var me *d1.MigrationError
	if !errors.As(err, &me) || n != 1 {
		t.Fatalf("got %d applied, %v; want 1 applied and a MigrationError", n, err)
	}
	t.Log(err)
	if me.Name != "0002_posts.sql" || !strings.Contains(me.Error(), "UNIQUE constraint failed: users.email") ||
		!strings.Contains(me.Error(), "statement 4 of 5") {
		t.Errorf("error does not name the file, the statement and the SQLite error: %v", err)
	}

	// The reference: a database that only ever saw the first migration.
	ref := newLocalCaller(t)
	rc := &d1.Client{Caller: ref, Cell: testCell}
	if _, err := rc.Migrate(ctx, "custom_migrations", files[:1], nil); err != nil {
		t.Fatal(err)
	}
	if got, want := dumpState(t, lc), dumpState(t, ref); got != want {
		t.Errorf("state after the failed migration:\n%s\nwant (after the first only):\n%s", got, want)
	}
}

// dumpState prints a database's schema and every row of every table
// (applied_at aside, which is a clock reading).
func dumpState(t *testing.T, lc *localCaller) string {
	var b strings.Builder
	for _, r := range lc.query(testCell, "SELECT type, name, sql FROM sqlite_schema ORDER BY name") {
		b.WriteString(fmtAny(r) + "\n")
		if r[0] != "table" {
			continue
		}
		cols := "*"
		if r[1] == "custom_migrations" {
			cols = "id, name"
		}
		for _, row := range lc.query(testCell, "SELECT "+cols+" FROM \""+r[1].(string)+"\" ORDER BY rowid") {
			b.WriteString("  " + fmtAny(row) + "\n")
		}
	}
	return b.String()
}
