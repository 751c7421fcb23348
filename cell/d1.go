package cell

import (
	sqlite3 "modernc.org/sqlite/lib"
)

// Additions for D1 databases (package d1); Durable Object behaviour is
// unchanged.

// WithStatementLimit runs fn with the longest SQL statement SQLite accepts
// (SQLITE_LIMIT_SQL_LENGTH, Limits.MaxSQLLength) raised to n bytes, then
// puts the configured limit back. A D1 import needs it: `wrangler d1
// export` writes every row as one INSERT, so a row near the 2 MB row limit
// (BLOBs in hex) makes a statement far past the 100 KB allowed to
// application SQL, and refusing it would make such an export impossible
// to load. The row limit (MaxRowSize) still applies to every value.
func (db *DB) WithStatementLimit(n int, fn func() error) error {
	if err := db.checkOpen(); err != nil {
		return err
	}
	c := db.c
	prev := sqlite3.Xsqlite3_limit(c.tls, c.db, sqlite3.SQLITE_LIMIT_SQL_LENGTH, int32(n))
	defer func() {
		if db.c != nil {
			sqlite3.Xsqlite3_limit(c.tls, c.db, sqlite3.SQLITE_LIMIT_SQL_LENGTH, prev)
		}
	}()
	return fn()
}
