package cell

import (
	"slices"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"
)

// authState is the SQLite authorizer of one DB. Statements the cell issues
// itself are trusted and allowed everything; application SQL (Exec) is
// checked with workerd's rules (src/workerd/util/sqlite.c++ isAuthorized,
// src/workerd/api/sql.c++):
//
//   - no name starting with "_cf_" (the KV table and other internals);
//   - no BEGIN/COMMIT/ROLLBACK/SAVEPOINT/RELEASE: transactions go through
//     DB.Transaction, which the output gate and commit capture rely on;
//   - no ATTACH/DETACH, no database but main and temp, no sqlite_dbpage;
//   - only a short allowlist of PRAGMAs, so journal_mode, synchronous or
//     wal_autocheckpoint cannot be changed under commit capture.
//
// While application SQL is prepared it also notes what the statement will
// write, for the row counters (see counters.go).
type authState struct {
	untrusted bool
	denied    bool      // a transaction statement was refused
	facts     stmtFacts // of the statement being prepared
	// What application SQL left in the connection rather than the file
	// (a parked connection must come back with it, see pool.go): pinned
	// when it cannot be carried over (temp objects, case_sensitive_like,
	// which cannot be read back), pragmas when a setting Park saves and
	// restores was changed.
	pinned  bool
	pragmas bool
}

// connPragmas are the allowed settings that live in the connection and
// can be read back: Park carries them over to the reopened connection.
var connPragmas = []string{"foreign_keys", "ignore_check_constraints", "recursive_triggers", "reverse_unordered_selects"}

// stmtFacts are what the authorizer saw of one application statement.
type stmtFacts struct {
	ddl         bool     // changes the schema
	createTable bool     // CREATE TABLE or VIEW: SQLite writes its schema row twice
	insertTable string   // target of INSERT
	updateTable string   // target of UPDATE
	updateCols  []string // columns UPDATE assigns
}

func (a *authState) begin() {
	a.untrusted = true
	a.denied = false
	a.facts = stmtFacts{}
}

func (a *authState) end() {
	a.untrusted = false
}

func allowedName(name string) bool {
	return !strings.HasPrefix(name, "_cf_")
}

func isSchemaTable(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "sqlite_")
}

// Pragmas application SQL may run, from workerd's ALLOWED_PRAGMAS (plus
// table_list and table_info, which it handles separately).
var allowedPragmas = map[string]bool{
	"data_version": true,

	"case_sensitive_like":       true,
	"foreign_keys":              true,
	"defer_foreign_keys":        true,
	"ignore_check_constraints":  true,
	"recursive_triggers":        true,
	"reverse_unordered_selects": true,

	"foreign_key_check": true,
	"foreign_key_list":  true,
	"index_info":        true,
	"index_list":        true,
	"index_xinfo":       true,
	"table_list":        true,
}

func (a *authState) decide(action int32, p1, p2, dbName, trigger string) int32 {
	const ok, deny = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY
	if !a.untrusted {
		return ok
	}
	if dbName != "" && dbName != "main" && dbName != "temp" {
		return deny
	}
	// sqlite_dbpage reads and writes raw pages: it would reach the "_cf_"
	// tables and could corrupt the file under commit capture.
	if strings.EqualFold(p1, "sqlite_dbpage") {
		return deny
	}
	if trigger == "" {
		a.note(action, p1, p2)
	}
	if dbName == "temp" || tempAction(action) {
		a.pinned = true
	}
	allow := func(b bool) int32 {
		if b {
			return ok
		}
		return deny
	}
	switch action {
	case sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE:
		return ok
	case sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_TEMP_TABLE,
		sqlite3.SQLITE_DROP_TABLE, sqlite3.SQLITE_DROP_TEMP_TABLE,
		sqlite3.SQLITE_CREATE_VIEW, sqlite3.SQLITE_CREATE_TEMP_VIEW,
		sqlite3.SQLITE_DROP_VIEW, sqlite3.SQLITE_DROP_TEMP_VIEW,
		sqlite3.SQLITE_INSERT, sqlite3.SQLITE_DELETE, sqlite3.SQLITE_READ, sqlite3.SQLITE_UPDATE,
		sqlite3.SQLITE_ANALYZE, sqlite3.SQLITE_REINDEX,
		sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE:
		return allow(allowedName(p1))
	case sqlite3.SQLITE_ALTER_TABLE: // p1 is the database name
		return allow(allowedName(p2))
	case sqlite3.SQLITE_CREATE_INDEX, sqlite3.SQLITE_CREATE_TEMP_INDEX,
		sqlite3.SQLITE_DROP_INDEX, sqlite3.SQLITE_DROP_TEMP_INDEX,
		sqlite3.SQLITE_CREATE_TRIGGER, sqlite3.SQLITE_CREATE_TEMP_TRIGGER,
		sqlite3.SQLITE_DROP_TRIGGER, sqlite3.SQLITE_DROP_TEMP_TRIGGER:
		return allow(allowedName(p1) && allowedName(p2))
	case sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT:
		a.denied = true
		return deny
	case sqlite3.SQLITE_PRAGMA:
		name := strings.ToLower(p1)
		if name == "table_info" || name == "table_xinfo" {
			return allow(p2 != "" && allowedName(p2))
		}
		if p2 != "" && allowedPragmas[name] {
			if name == "case_sensitive_like" {
				a.pinned = true
			} else if slices.Contains(connPragmas, name) {
				a.pragmas = true
			}
		}
		return allow(allowedPragmas[name])
	default: // ATTACH, DETACH and anything new
		return deny
	}
}

// note records what a top-level action of the statement writes.
func (a *authState) note(action int32, p1, p2 string) {
	f := &a.facts
	switch action {
	case sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_TEMP_TABLE,
		sqlite3.SQLITE_CREATE_VIEW, sqlite3.SQLITE_CREATE_TEMP_VIEW:
		f.ddl, f.createTable = true, true
	case sqlite3.SQLITE_DROP_TABLE, sqlite3.SQLITE_DROP_TEMP_TABLE,
		sqlite3.SQLITE_DROP_VIEW, sqlite3.SQLITE_DROP_TEMP_VIEW,
		sqlite3.SQLITE_CREATE_INDEX, sqlite3.SQLITE_CREATE_TEMP_INDEX,
		sqlite3.SQLITE_DROP_INDEX, sqlite3.SQLITE_DROP_TEMP_INDEX,
		sqlite3.SQLITE_CREATE_TRIGGER, sqlite3.SQLITE_CREATE_TEMP_TRIGGER,
		sqlite3.SQLITE_DROP_TRIGGER, sqlite3.SQLITE_DROP_TEMP_TRIGGER,
		sqlite3.SQLITE_ALTER_TABLE, sqlite3.SQLITE_CREATE_VTABLE, sqlite3.SQLITE_DROP_VTABLE:
		f.ddl = true
	case sqlite3.SQLITE_INSERT:
		if f.insertTable == "" && !isSchemaTable(p1) {
			f.insertTable = p1
		}
	case sqlite3.SQLITE_UPDATE:
		if isSchemaTable(p1) {
			return
		}
		if f.updateTable == "" {
			f.updateTable = p1
		}
		if p1 == f.updateTable && !slices.Contains(f.updateCols, p2) {
			f.updateCols = append(f.updateCols, p2)
		}
	}
}

// tempAction reports an action creating an object in the temp database.
func tempAction(action int32) bool {
	switch action {
	case sqlite3.SQLITE_CREATE_TEMP_TABLE, sqlite3.SQLITE_CREATE_TEMP_VIEW,
		sqlite3.SQLITE_CREATE_TEMP_INDEX, sqlite3.SQLITE_CREATE_TEMP_TRIGGER:
		return true
	}
	return false
}
