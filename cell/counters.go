package cell

import (
	"slices"

	sqlite3 "modernc.org/sqlite/lib"
)

// Row counters (cursor.rowsRead / rowsWritten, used for billing).
//
// workerd counts inside SQLite's bytecode engine with a patch
// (patches/sqlite/0001-row-counts-plain.patch): a row is read for every
// cursor seek, rewind and successful step, and written for every insert
// into a table or index b-tree and every counted row delete — schema rows
// included. The transpiled SQLite here has no such counters, so they are
// rebuilt from what the C API and the authorizer show:
//
//   - read: the rows a statement returned, or, when it scanned a table
//     from end to end, the rows it stepped over (SQLITE_STMTSTATUS_FULLSCAN_STEP
//     plus the first row), whichever is larger;
//   - written: rows changed (sqlite3_total_changes64, so trigger and
//     foreign-key actions count), plus one index entry per row for every
//     index of the INSERT target and for every index of the UPDATE target
//     that covers an assigned column (or an expression); a DELETE counts
//     only the table rows, as workerd does;
//   - schema changes: one write per sqlite_schema row added or removed;
//     CREATE TABLE and CREATE VIEW, which SQLite inserts and then updates,
//     add one more write and one read.
//
// These give workerd's numbers for the common statements (SELECT scans,
// INSERT/UPDATE/DELETE by key or scan, CREATE TABLE: see the do-sql
// conformance fixture) and stay close elsewhere; index-assisted seeks and
// count(*) read fewer rows here than in workerd.

// stmtAcct carries one statement's accounting from its first step to its end.
type stmtAcct struct {
	facts       stmtFacts
	returned    int64 // rows handed out so far
	changes0    int64 // sqlite3_total_changes64 before the statement
	schemaRows0 int64 // rows in sqlite_schema before a DDL statement
}

const countSchemaRows = "SELECT count(*) FROM sqlite_schema"

func (db *DB) startAcct(f stmtFacts) stmtAcct {
	a := stmtAcct{facts: f, changes0: db.c.totalChanges()}
	if f.ddl {
		a.schemaRows0, _ = db.c.queryInt(countSchemaRows)
	}
	return a
}

// settleAcct computes the rows a finished statement read and wrote.
func (db *DB) settleAcct(a stmtAcct, stmt uintptr) (read, written int64) {
	c := db.c
	read = a.returned
	if scanned := c.fullscanSteps(stmt); scanned > 0 && scanned+1 > read {
		read = scanned + 1
	}
	f := a.facts
	written = c.totalChanges() - a.changes0
	if written > 0 {
		changes := sqlite3.Xsqlite3_changes64(c.tls, c.db)
		switch {
		case f.insertTable != "":
			written += changes * db.indexesTouched(f.insertTable, nil)
		case f.updateTable != "":
			written += changes * db.indexesTouched(f.updateTable, f.updateCols)
		}
	}
	if f.ddl {
		db.indexes = nil
		if n, err := c.queryInt(countSchemaRows); err == nil {
			d := n - a.schemaRows0
			if d < 0 {
				d = -d
			}
			written += d
			if f.createTable && d > 0 {
				written++
				read++
			}
		}
	}
	return read, written
}

// indexInfo is one index that is stored apart from its table.
type indexInfo struct {
	cols []string // indexed columns; "" for an expression
}

// indexesTouched counts the indexes of table that a write touches: all of
// them for an insert (cols == nil), those covering one of cols for an update.
func (db *DB) indexesTouched(table string, cols []string) int64 {
	var n int64
	for _, ix := range db.indexesOf(table) {
		if cols == nil || slices.ContainsFunc(ix.cols, func(c string) bool {
			return c == "" || slices.Contains(cols, c)
		}) {
			n++
		}
	}
	return n
}

func (db *DB) indexesOf(table string) []indexInfo {
	if ix, ok := db.indexes[table]; ok {
		return ix
	}
	c := db.c
	// A WITHOUT ROWID table keeps its rows in its primary-key index: that
	// index is the table itself, not an extra write.
	withoutRowid := false
	_ = c.queryRows("SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?", table, func(stmt uintptr) {
		withoutRowid = c.columnInt64(stmt, 0) == 1
	})
	var names []string
	_ = c.queryRows("SELECT name, origin FROM pragma_index_list(?)", table, func(stmt uintptr) {
		if !(withoutRowid && c.columnText(stmt, 1) == "pk") {
			names = append(names, c.columnText(stmt, 0))
		}
	})
	out := []indexInfo{}
	for _, name := range names {
		var ix indexInfo
		_ = c.queryRows("SELECT name FROM pragma_index_info(?)", name, func(stmt uintptr) {
			ix.cols = append(ix.cols, c.columnText(stmt, 0))
		})
		out = append(out, ix)
	}
	if db.indexes == nil {
		db.indexes = map[string][]indexInfo{}
	}
	db.indexes[table] = out
	return out
}

// queryRows runs a trusted query with one text parameter and calls fn for
// every row.
func (c *conn) queryRows(sql, arg string, fn func(stmt uintptr)) error {
	stmt, err := c.prepareString(sql)
	if err != nil {
		return err
	}
	b := bindings{c: c}
	defer func() { c.finalize(stmt); b.release() }()
	if err := b.text(stmt, 1, arg); err != nil {
		return err
	}
	for {
		row, err := c.step(stmt)
		if err != nil || !row {
			return err
		}
		fn(stmt)
	}
}
