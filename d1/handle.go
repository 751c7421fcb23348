// Package d1 is Cloudflare D1 on celld: a database is a built-in cell
// named d1:<database_id or database_name> holding one SQLite database.
//
// It decides how D1's operations map onto a cell's database — every
// query, batch, exec, import and migration is one transaction — and what
// the caller sees: results and meta shaped as workerd's D1 binding returns
// them, errors carrying workerd's exact prefixes (D1_ERROR:,
// D1_EXEC_ERROR:, D1_TYPE_ERROR:, D1_COLUMN_NOTFOUND:), Wrangler's SQL
// splitting and its migrations bookkeeping table.
//
// The same code serves the d1_databases binding (Binding, a JavaScript
// D1Database over a cell.Caller) and the `celld d1` commands (Client).
// Handle runs on the cell's owner.
//
// It deliberately does not decide where the cell lives, how it is
// replicated, or when an answer may leave (the caller's output gate); nor
// does it emulate D1's read replication: every session reads the primary,
// so bookmarks only ever name the newest state.
package d1

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/celldgo/celld/cell"
)

// Limits of one answer. D1 streams larger results on Cloudflare; here an
// answer is built in memory on the cell's owner, so a result past these is
// refused rather than allowed to exhaust the node.
const (
	MaxResultRows  = 100_000
	MaxResultBytes = 32 << 20
)

// ImportStatementLimit is the longest statement an import accepts. An
// export writes each row as one INSERT, and a row may take 2 MB, which
// hex-encoded (BLOBs) or with quotes doubled (text) is at most 4 MB of
// SQL; application statements stay limited to 100 KB.
const ImportStatementLimit = 16 << 20

// Error prefixes of workerd's D1 binding.
const (
	PrefixError        = "D1_ERROR: "
	PrefixExecError    = "D1_EXEC_ERROR: "
	PrefixTypeError    = "D1_TYPE_ERROR: "
	PrefixColumnNotFnd = "D1_COLUMN_NOTFOUND: "
)

// Error is a D1 refusal whose text starts with one of workerd's prefixes
// ("D1_ERROR: no such table: t"): the binding throws it as it is, and its
// code travels between nodes with the refusal (host.Coded), so callers
// classify it by type, never by reading its text.
type Error struct {
	Prefix string // PrefixError, PrefixExecError, …
	Msg    string // the rest
}

func (e *Error) Error() string { return e.Prefix + e.Msg }

// ErrorCode is the prefix without its ": " ("D1_ERROR").
func (e *Error) ErrorCode() string { return strings.TrimSuffix(e.Prefix, ": ") }

// ErrResultTooLarge is the error of a result past MaxResultRows or
// MaxResultBytes.
var ErrResultTooLarge = fmt.Errorf("result too large: celld refuses D1 results above %d rows or %d MiB; add a LIMIT or page through the rows", MaxResultRows, MaxResultBytes>>20)

// ErrNoStatements is miniflare's error for a request whose statements are
// all empty or comments.
var ErrNoStatements = errors.New("No SQL statements detected.") //nolint:staticcheck // workerd's text, verbatim

// CellName is the built-in cell of a d1_databases entry: its database_id
// when it has one, its database_name otherwise.
func CellName(databaseID, databaseName string) string {
	if databaseID != "" {
		return "d1:" + databaseID
	}
	return "d1:" + databaseName
}

// Handle runs one encoded request (see Request) on the database of a D1
// cell and returns the encoded answer. It is a cell.Handler. Every op is
// one transaction. An error is user-facing: for the binding's ops its text
// starts with workerd's prefix and is thrown as it is; for the CLI's ops it
// is SQLite's message with the statement or migration it came from.
func Handle(db *cell.DB, req []byte) ([]byte, error) {
	r, payload, err := decodeRequest(req)
	if err != nil {
		return nil, err
	}
	switch r.Op {
	case OpQuery:
		return handleQuery(db, r.Stmts)
	case OpExec:
		return handleExec(db, payload)
	case OpImport:
		return handleImport(db, payload)
	case OpMigrationsList:
		return handleMigrationsList(db, r.Table)
	case OpMigrationApply:
		return handleMigrationApply(db, r.Table, r.Name, payload)
	default:
		return nil, fmt.Errorf("d1: unknown op %q", r.Op)
	}
}

var _ cell.Handler = Handle

// commentOnly matches what miniflare strips before deciding that a
// statement is empty: lines that start with whitespace and then "--".
var commentOnly = regexp.MustCompile(`(?m)^\s+--.*`)

func emptyStatement(sql string) bool {
	return strings.TrimSpace(commentOnly.ReplaceAllString(sql, "")) == ""
}

// answer accumulates the JSON of an answer and enforces the limits.
type answer struct {
	b    []byte
	rows int
}

func (a *answer) row(vals []any) error {
	a.rows++
	if a.rows > MaxResultRows {
		return ErrResultTooLarge
	}
	a.b = append(a.b, '[')
	for i, v := range vals {
		if i > 0 {
			a.b = append(a.b, ',')
		}
		a.b = appendValue(a.b, v)
	}
	a.b = append(a.b, ']')
	if len(a.b) > MaxResultBytes {
		return ErrResultTooLarge
	}
	return nil
}

// counters are what a statement's meta is computed from.
type counters struct {
	changes, lastRowID, size int64
}

func readCounters(db *cell.DB) (counters, error) {
	cur, err := db.Exec("SELECT total_changes(), last_insert_rowid()")
	if err != nil {
		return counters{}, err
	}
	row, err := cur.One()
	if err != nil {
		return counters{}, err
	}
	size, err := db.DatabaseSize()
	if err != nil {
		return counters{}, err
	}
	return counters{changes: row[0].(int64), lastRowID: row[1].(int64), size: size}, nil
}

// Meta is the meta object of a D1 result.
type Meta struct {
	ServedBy        string  `json:"served_by"`
	ServedByPrimary bool    `json:"served_by_primary"`
	Timings         Timings `json:"timings"`
	Duration        float64 `json:"duration"`
	Changes         int64   `json:"changes"`
	LastRowID       int64   `json:"last_row_id"`
	ChangedDB       bool    `json:"changed_db"`
	SizeAfter       int64   `json:"size_after"`
	RowsRead        int64   `json:"rows_read"`
	RowsWritten     int64   `json:"rows_written"`
}

// Timings is meta.timings.
type Timings struct {
	SQLDurationMs float64 `json:"sql_duration_ms"`
}

// millis is a duration in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// handleQuery runs statements in one transaction and answers
// {"results":[{"columns","rows","meta"}...],"bookmark"}. As in miniflare,
// statements that are empty or only comments are left out, and a request
// left with none fails.
func handleQuery(db *cell.DB, stmts []Statement) ([]byte, error) {
	run := make([]Statement, 0, len(stmts))
	for _, s := range stmts {
		if !emptyStatement(s.SQL) {
			run = append(run, s)
		}
	}
	if len(run) == 0 {
		return nil, &Error{Prefix: PrefixError, Msg: ErrNoStatements.Error()}
	}
	a := &answer{b: append(make([]byte, 0, 256), `{"results":[`...)}
	err := db.Transaction(func() error {
		for i, s := range run {
			if i > 0 {
				a.b = append(a.b, ',')
			}
			if err := runStatement(db, s, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, &Error{Prefix: PrefixError, Msg: err.Error()}
	}
	a.b = append(a.b, `],"bookmark":`...)
	a.b = appendString(a.b, bookmark(db))
	return append(a.b, '}'), nil
}

func runStatement(db *cell.DB, s Statement, a *answer) error {
	args := make([]any, len(s.Params))
	for i, p := range s.Params {
		v, err := param(p)
		if err != nil {
			return fmt.Errorf("parameter %d: %w", i+1, err)
		}
		args[i] = v
	}
	before, err := readCounters(db)
	if err != nil {
		return err
	}
	start := time.Now()
	cur, err := db.Exec(s.SQL, args...)
	if err != nil {
		return err
	}
	a.b = append(a.b, `{"columns":[`...)
	for i, n := range cur.ColumnNames() {
		if i > 0 {
			a.b = append(a.b, ',')
		}
		a.b = appendString(a.b, n)
	}
	a.b = append(a.b, `],"rows":[`...)
	for first := true; ; first = false {
		row, ok, err := cur.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if !first {
			a.b = append(a.b, ',')
		}
		if err := a.row(row); err != nil {
			cur.Close()
			return err
		}
	}
	elapsed := millis(time.Since(start))
	after, err := readCounters(db)
	if err != nil {
		return err
	}
	changes := after.changes - before.changes
	m := Meta{
		ServedBy:        "celld",
		ServedByPrimary: true,
		Timings:         Timings{SQLDurationMs: elapsed},
		Duration:        elapsed,
		Changes:         changes,
		LastRowID:       after.lastRowID,
		ChangedDB:       changes != 0 || after.lastRowID != before.lastRowID || after.size != before.size,
		SizeAfter:       after.size,
		RowsRead:        cur.RowsRead(),
		RowsWritten:     cur.RowsWritten(),
	}
	mj, err := json.Marshal(m)
	if err != nil {
		return err
	}
	a.b = append(a.b, `],"meta":`...)
	a.b = append(a.b, mj...)
	a.b = append(a.b, '}')
	return nil
}

// ExecResult is the answer of OpExec.
type ExecResult struct {
	Count    int     `json:"count"`
	Duration float64 `json:"duration"`
	Bookmark string  `json:"bookmark"`
}

// handleExec is D1Database.exec as workerd runs it locally: the text is
// trimmed and cut into lines, each line (which may hold several
// statements) runs as one sql.exec, all in one transaction. A failure
// names line 1 whichever line failed: miniflare answers a failed
// transaction with a single error, which workerd's binding attributes to
// the first line (the d1-basics conformance fixture records this).
func handleExec(db *cell.DB, text string) ([]byte, error) {
	lines := strings.Split(strings.TrimFunc(text, isJSSpace), "\n")
	fail := func(err error) ([]byte, error) {
		return nil, &Error{Prefix: PrefixExecError, Msg: fmt.Sprintf("Error in line 1: %s: %s", lines[0], err.Error())}
	}
	var run []string
	for _, l := range lines {
		if !emptyStatement(l) {
			run = append(run, l)
		}
	}
	if len(run) == 0 {
		return fail(ErrNoStatements)
	}
	var total time.Duration
	err := db.Transaction(func() error {
		for _, l := range run {
			start := time.Now()
			cur, err := db.Exec(l)
			if err != nil {
				return err
			}
			if err := drain(cur); err != nil {
				return err
			}
			total += time.Since(start)
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	return json.Marshal(ExecResult{Count: len(run), Duration: millis(total), Bookmark: bookmark(db)})
}

// drain runs a statement to its end, discarding its rows.
func drain(cur *cell.Cursor) error {
	for {
		_, ok, err := cur.Next()
		if err != nil || !ok {
			return err
		}
	}
}

// ImportResult is the answer of OpImport.
type ImportResult struct {
	Statements  int     `json:"statements"`
	RowsRead    int64   `json:"rows_read"`
	RowsWritten int64   `json:"rows_written"`
	SizeAfter   int64   `json:"size_after"`
	Duration    float64 `json:"duration"`
	Bookmark    string  `json:"bookmark"`
}

// handleImport runs a SQL file — typically a `wrangler d1 export` dump —
// split by Wrangler's rules, in one transaction: all of it or nothing.
func handleImport(db *cell.DB, text string) ([]byte, error) {
	stmts, err := SplitStatements(text)
	if err != nil {
		return nil, err
	}
	res := ImportResult{}
	start := time.Now()
	err = db.WithStatementLimit(ImportStatementLimit, func() error {
		return db.Transaction(func() error {
			return runStatements(db, stmts, &res)
		})
	})
	if err != nil {
		return nil, err
	}
	if res.SizeAfter, err = db.DatabaseSize(); err != nil {
		return nil, err
	}
	res.Duration = millis(time.Since(start))
	res.Bookmark = bookmark(db)
	return json.Marshal(res)
}

// runStatements runs split statements, skipping empty ones, and names the
// statement a failure came from.
func runStatements(db *cell.DB, stmts []string, res *ImportResult) error {
	for i, s := range stmts {
		if isTrivia(s) {
			continue
		}
		cur, err := db.Exec(s)
		if err == nil {
			err = drain(cur)
		}
		if err != nil {
			return &StatementError{Index: i + 1, Of: len(stmts), SQL: s, Err: err}
		}
		res.Statements++
		res.RowsRead += cur.RowsRead()
		res.RowsWritten += cur.RowsWritten()
	}
	return nil
}

// StatementError is a failure of one statement of a file.
type StatementError struct {
	Index, Of int // 1-based position among the file's statements
	SQL       string
	Err       error
}

func (e *StatementError) Error() string {
	return fmt.Sprintf("%v (statement %d of %d: %s)", e.Err, e.Index, e.Of, excerpt(e.SQL, 80))
}

func (e *StatementError) Unwrap() error { return e.Err }

// excerpt is the start of s on one line, cut to n bytes at a rune boundary.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
