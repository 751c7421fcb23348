package cell

import (
	"encoding/binary"
	"fmt"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A node keeps thousands of cells resident, most of them idle, so what one
// connection holds while nothing happens is multiplied by thousands. This
// file bounds it: SQLite's per-connection allocator (lookaside) is off,
// the page cache starts small and only grows with use, and ReleaseMemory,
// called when a cell goes idle, gives back the page cache and the cached
// statements (both are rebuilt on the next call, from the OS's file cache).

// lookasideSlots and lookasideSlotSize configure SQLite's lookaside
// allocator per connection. SQLite's default (128 slots of 1200 bytes,
// 150 KB reserved per connection) is its answer for one busy connection;
// for a thousand mostly idle ones it is a hundred megabytes of reserve.
// Without it SQLite's small allocations go to the shared allocator.
const (
	lookasideSlotSize = 0
	lookasideSlots    = 0
)

// setupMemory applies the memory settings to a freshly opened connection,
// before it reads a page (lookaside can only be changed while no lookaside
// memory is in use).
func (c *conn) setupMemory() error {
	const vaSlot = 8 // libc.VaList uses 8-byte slots on every target
	bp := sqlite3.Xsqlite3_malloc64(c.tls, 3*vaSlot)
	if bp == 0 {
		return fmt.Errorf("configure lookaside: out of memory")
	}
	defer c.free(bp)
	rc := sqlite3.Xsqlite3_db_config(c.tls, c.db, sqlite3.SQLITE_DBCONFIG_LOOKASIDE,
		libc.VaList(bp, uintptr(0), int32(lookasideSlotSize), int32(lookasideSlots)))
	if err := c.check(rc); err != nil {
		return fmt.Errorf("configure lookaside: %w", err)
	}
	return nil
}

// ReleaseMemory gives back what the connection holds only to go faster:
// page cache pages not in use, and the statements the KV API keeps
// prepared (when no transaction is open). Call it when the cell goes idle;
// the next storage call reads the pages back (from the OS's file cache,
// usually) and prepares the statements again.
func (db *DB) ReleaseMemory() {
	if db.c == nil {
		return
	}
	if db.txDepth == 0 && db.c.autocommit() {
		db.kv.finalize(db.c)
	}
	sqlite3.Xsqlite3_db_release_memory(db.c.tls, db.c.db)
}

// MemoryStats is what SQLite reports a connection uses, in bytes
// (sqlite3_db_status).
type MemoryStats struct {
	PageCache  int64 // SQLITE_DBSTATUS_CACHE_USED
	Schema     int64 // SQLITE_DBSTATUS_SCHEMA_USED
	Statements int64 // SQLITE_DBSTATUS_STMT_USED
	Lookaside  int64 // SQLITE_DBSTATUS_LOOKASIDE_USED, in slots
}

// Memory reports what the connection uses.
func (db *DB) Memory() (MemoryStats, error) {
	if db.c == nil {
		if db.parked {
			return MemoryStats{}, nil // a parked connection holds nothing
		}
		return MemoryStats{}, ErrClosed
	}
	var st MemoryStats
	for _, s := range []struct {
		op  int32
		dst *int64
	}{
		{sqlite3.SQLITE_DBSTATUS_CACHE_USED, &st.PageCache},
		{sqlite3.SQLITE_DBSTATUS_SCHEMA_USED, &st.Schema},
		{sqlite3.SQLITE_DBSTATUS_STMT_USED, &st.Statements},
		{sqlite3.SQLITE_DBSTATUS_LOOKASIDE_USED, &st.Lookaside},
	} {
		cur, hi := db.c.out, db.c.out+ptrSize
		if err := db.c.check(sqlite3.Xsqlite3_db_status(db.c.tls, db.c.db, s.op, cur, hi, 0)); err != nil {
			return MemoryStats{}, fmt.Errorf("memory stats: %w", err)
		}
		*s.dst = int64(int32(binary.NativeEndian.Uint32(libc.GoBytes(cur, 4))))
	}
	return st, nil
}
