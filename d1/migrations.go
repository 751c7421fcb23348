package d1

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/celldgo/celld/cell"
)

// Migrations, as `wrangler d1 migrations` keeps them: files NNNN_name.sql
// in a directory, applied in the order of their numeric prefix, each
// recorded by its file name in a bookkeeping table whose DDL is
// Wrangler's, byte for byte, so a database migrated by either tool can be
// migrated further by the other.

// DefaultMigrationsTable and DefaultMigrationsDir are Wrangler's defaults.
const (
	DefaultMigrationsTable = "d1_migrations"
	DefaultMigrationsDir   = "migrations"
)

// MigrationsTableDDL is the statement Wrangler runs before listing or
// applying migrations, with the table name in place of %s.
const MigrationsTableDDL = `CREATE TABLE IF NOT EXISTS %s(
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		name       TEXT UNIQUE,
		applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);`

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckMigrationsTable refuses a table name Wrangler would paste into its
// SQL to a different effect: only plain identifiers are accepted.
func CheckMigrationsTable(table string) error {
	if !plainIdent.MatchString(table) {
		return fmt.Errorf("migrations_table %q is not a plain SQL identifier (letters, digits and _)", table)
	}
	if strings.HasPrefix(table, "_cf_") {
		return fmt.Errorf("migrations_table %q: names starting with _cf_ are reserved", table)
	}
	return nil
}

// AppliedMigration is one row of the bookkeeping table.
type AppliedMigration struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	AppliedAt string `json:"applied_at"`
}

// MigrationsList is the answer of OpMigrationsList.
type MigrationsList struct {
	Applied []AppliedMigration `json:"applied"`
}

// MigrationApplied is the answer of OpMigrationApply. Applied is false
// when the table already named the migration (another run applied it
// meanwhile); nothing was run then.
type MigrationApplied struct {
	Applied     bool  `json:"applied"`
	Statements  int   `json:"statements"`
	RowsWritten int64 `json:"rows_written"`
}

func ensureMigrationsTable(db *cell.DB, table string) error {
	if err := CheckMigrationsTable(table); err != nil {
		return err
	}
	cur, err := db.Exec(fmt.Sprintf(MigrationsTableDDL, table))
	if err != nil {
		return fmt.Errorf("create migrations table %s: %w", table, err)
	}
	return drain(cur)
}

func handleMigrationsList(db *cell.DB, table string) ([]byte, error) {
	out := MigrationsList{Applied: []AppliedMigration{}}
	err := db.Transaction(func() error {
		if err := ensureMigrationsTable(db, table); err != nil {
			return err
		}
		cur, err := db.Exec("SELECT id, name, applied_at FROM " + table + " ORDER BY id")
		if err != nil {
			return fmt.Errorf("read migrations table %s: %w", table, err)
		}
		rows, err := cur.ToArray()
		if err != nil {
			return fmt.Errorf("read migrations table %s: %w", table, err)
		}
		for _, r := range rows {
			m := AppliedMigration{}
			m.ID, _ = r[0].(int64)
			if r[1] != nil {
				m.Name = fmt.Sprint(r[1])
			}
			if r[2] != nil {
				m.AppliedAt = fmt.Sprint(r[2])
			}
			out.Applied = append(out.Applied, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// handleMigrationApply runs one migration file and records it, in one
// transaction: either both are in the database afterwards or neither.
func handleMigrationApply(db *cell.DB, table, name, text string) ([]byte, error) {
	if name == "" {
		return nil, errors.New("d1: migration without a name")
	}
	stmts, err := SplitStatements(text)
	if err != nil {
		return nil, err
	}
	out := MigrationApplied{}
	err = db.Transaction(func() error {
		if err := ensureMigrationsTable(db, table); err != nil {
			return err
		}
		cur, err := db.Exec("SELECT count(*) FROM "+table+" WHERE name = ?", name)
		if err != nil {
			return err
		}
		row, err := cur.One()
		if err != nil {
			return err
		}
		if n, _ := row[0].(int64); n > 0 {
			return nil
		}
		var res ImportResult
		if err := runStatements(db, stmts, &res); err != nil {
			return err
		}
		cur, err = db.Exec("INSERT INTO "+table+" (name) values (?)", name)
		if err == nil {
			err = drain(cur)
		}
		if err != nil {
			return fmt.Errorf("record migration %s: %w", name, err)
		}
		out = MigrationApplied{Applied: true, Statements: res.Statements, RowsWritten: res.RowsWritten}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// MigrationFile is one file of a migrations directory.
type MigrationFile struct {
	Name string // file name, e.g. 0001_create_users.sql: what the table records
	Path string
}

// NoMigrationsDirError: the migrations directory does not exist.
type NoMigrationsDirError struct{ Dir string }

func (e *NoMigrationsDirError) Error() string {
	return fmt.Sprintf("no migrations directory at %s", e.Dir)
}

var numbered = regexp.MustCompile(`^([0-9]+)_.*\.sql$`)

// ReadMigrations lists the *.sql files of dir in the order they apply:
// by numeric prefix, then by name. A .sql file without a numeric prefix
// is an error (its place in the order would be a guess).
func ReadMigrations(dir string) ([]MigrationFile, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &NoMigrationsDirError{Dir: dir}
	}
	if err != nil {
		return nil, fmt.Errorf("read migrations directory: %w", err)
	}
	type numberedFile struct {
		MigrationFile
		num string // the prefix without leading zeros
	}
	var files []numberedFile
	var bad []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		m := numbered.FindStringSubmatch(e.Name())
		if m == nil {
			bad = append(bad, e.Name())
			continue
		}
		num := strings.TrimLeft(m[1], "0")
		files = append(files, numberedFile{MigrationFile{Name: e.Name(), Path: filepath.Join(dir, e.Name())}, num})
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("migration files without a numeric prefix in %s: %s (want NNNN_name.sql)", dir, strings.Join(bad, ", "))
	}
	sort.Slice(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if len(a.num) != len(b.num) {
			return len(a.num) < len(b.num)
		}
		if a.num != b.num {
			return a.num < b.num
		}
		return a.Name < b.Name
	})
	out := make([]MigrationFile, len(files))
	for i, f := range files {
		out[i] = f.MigrationFile
	}
	return out, nil
}

// Pending returns the files whose names the table does not record, in
// order.
func Pending(files []MigrationFile, applied []AppliedMigration) []MigrationFile {
	done := make(map[string]bool, len(applied))
	for _, a := range applied {
		done[a.Name] = true
	}
	var out []MigrationFile
	for _, f := range files {
		if !done[f.Name] {
			out = append(out, f)
		}
	}
	return out
}
