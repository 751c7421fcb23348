package cell

import (
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"

	"modernc.org/libc"
	// The driver package is imported for its init: it applies platform
	// patches to the transpiled library (for example the page-size fix that
	// WAL needs on linux/arm64). Everything here talks to the C API directly.
	_ "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// conn is one SQLite connection driven through the C API of the transpiled
// library. The cell needs what database/sql hides: statement tails (to run
// several ';'-separated statements with bindings for the last one only),
// the byte offset of a syntax error, extended result codes, the parameter
// count of a statement, an authorizer and the WAL hook.
//
// A conn is not safe for concurrent use; a cell is single-threaded.
type conn struct {
	tls    *libc.TLS
	db     uintptr
	out    uintptr // two pointer-sized out-parameters: *ppStmt and *pzTail
	handle uintptr // key of this conn in the callback registry
}

const ptrSize = unsafe.Sizeof(uintptr(0))

// registry maps the pArg of a C callback back to its Go state. C memory
// must not hold Go pointers, so callbacks receive a small integer instead.
var registry = struct {
	sync.RWMutex
	next uintptr
	m    map[uintptr]*DB
}{m: map[uintptr]*DB{}}

func register(db *DB) uintptr {
	registry.Lock()
	defer registry.Unlock()
	registry.next++
	registry.m[registry.next] = db
	return registry.next
}

func unregister(h uintptr) {
	registry.Lock()
	delete(registry.m, h)
	registry.Unlock()
}

func lookup(h uintptr) *DB {
	registry.RLock()
	defer registry.RUnlock()
	return registry.m[h]
}

// cfunc turns a top-level Go function into the function-pointer value the
// transpiled C code calls. Only pass top-level functions: their function
// values live in read-only data and never move.
func cfunc[T any](f T) uintptr {
	return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f}))
}

func openConn(path string) (*conn, error) {
	c := &conn{tls: libc.NewTLS()}
	c.out = sqlite3.Xsqlite3_malloc64(c.tls, uint64(2*ptrSize))
	if c.out == 0 {
		c.tls.Close()
		return nil, fmt.Errorf("open %s: out of memory", path)
	}
	zPath := c.cstring(path)
	flags := int32(sqlite3.SQLITE_OPEN_READWRITE | sqlite3.SQLITE_OPEN_CREATE | sqlite3.SQLITE_OPEN_FULLMUTEX)
	rc := sqlite3.Xsqlite3_open_v2(c.tls, zPath, c.out, flags, 0)
	c.free(zPath)
	c.db = c.outPtr(0)
	if rc != sqlite3.SQLITE_OK {
		err := c.lastError(rc)
		c.close()
		return nil, err
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	return c, nil
}

func (c *conn) close() error {
	var err error
	if c.db != 0 {
		if rc := sqlite3.Xsqlite3_close_v2(c.tls, c.db); rc != sqlite3.SQLITE_OK {
			err = c.lastError(rc)
		}
		c.db = 0
	}
	if c.out != 0 {
		c.free(c.out)
		c.out = 0
	}
	if c.tls != nil {
		c.tls.Close()
		c.tls = nil
	}
	return err
}

// cstring copies s into C memory with a terminating NUL; free it with free.
func (c *conn) cstring(s string) uintptr {
	p := sqlite3.Xsqlite3_malloc64(c.tls, uint64(len(s)+1))
	if p == 0 {
		panic("cell: sqlite3_malloc64 failed")
	}
	b := libc.GoBytes(p, len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	return p
}

// cbytes copies b into C memory (at least one byte is allocated so that an
// empty value still has a non-NULL pointer: a NULL pointer binds as NULL).
func (c *conn) cbytes(b []byte) uintptr {
	p := c.calloc(len(b))
	copy(libc.GoBytes(p, len(b)), b)
	return p
}

// ctext is cbytes for a string, without an intermediate Go copy.
func (c *conn) ctext(s string) uintptr {
	p := c.calloc(len(s))
	copy(libc.GoBytes(p, len(s)), s)
	return p
}

func (c *conn) calloc(n int) uintptr {
	p := sqlite3.Xsqlite3_malloc64(c.tls, uint64(max(n, 1)))
	if p == 0 {
		panic("cell: sqlite3_malloc64 failed")
	}
	return p
}

func (c *conn) free(p uintptr) {
	if p != 0 {
		sqlite3.Xsqlite3_free(c.tls, p)
	}
}

// outPtr reads the i-th pointer-sized out-parameter.
func (c *conn) outPtr(i int) uintptr {
	b := libc.GoBytes(c.out+uintptr(i)*ptrSize, int(ptrSize))
	if ptrSize == 4 {
		return uintptr(binary.NativeEndian.Uint32(b))
	}
	return uintptr(binary.NativeEndian.Uint64(b))
}

// prepare compiles the first statement of the C text at z (n bytes, not
// NUL-terminated necessarily) and returns the statement (0 when the text
// holds only whitespace or comments) and the offset of the unused tail.
func (c *conn) prepare(z uintptr, n int) (stmt uintptr, tail int, err error) {
	rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, int32(n), 0, c.out, c.out+ptrSize)
	if rc != sqlite3.SQLITE_OK {
		return 0, 0, c.lastError(rc)
	}
	stmt = c.outPtr(0)
	tail = int(c.outPtr(1) - z)
	return stmt, tail, nil
}

// prepareString prepares a single trusted statement given as Go text.
func (c *conn) prepareString(sql string) (uintptr, error) {
	z := c.cstring(sql)
	defer c.free(z)
	stmt, _, err := c.prepare(z, len(sql))
	if err == nil && stmt == 0 {
		err = fmt.Errorf("prepare %q: no statement", sql)
	}
	return stmt, err
}

func (c *conn) finalize(stmt uintptr) {
	if stmt != 0 {
		sqlite3.Xsqlite3_finalize(c.tls, stmt)
	}
}

// reset makes a cached statement ready for its next run.
func (c *conn) reset(stmt uintptr) {
	sqlite3.Xsqlite3_reset(c.tls, stmt)
	sqlite3.Xsqlite3_clear_bindings(c.tls, stmt)
}

// step runs stmt to its next row; it reports whether a row is available.
func (c *conn) step(stmt uintptr) (bool, error) {
	switch rc := sqlite3.Xsqlite3_step(c.tls, stmt); rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	default:
		return false, c.lastError(rc)
	}
}

// bindings holds the C copies of bound text and blobs until the statement
// no longer needs them (they are bound SQLITE_STATIC to avoid a second copy).
type bindings struct {
	c     *conn
	alloc []uintptr
}

func (b *bindings) release() {
	for _, p := range b.alloc {
		b.c.free(p)
	}
	b.alloc = b.alloc[:0]
}

func (b *bindings) text(stmt uintptr, i int, s string) error {
	p := b.c.ctext(s)
	b.alloc = append(b.alloc, p)
	return b.c.check(sqlite3.Xsqlite3_bind_text64(b.c.tls, stmt, int32(i), p, uint64(len(s)), sqlite3.SQLITE_STATIC, sqlite3.SQLITE_UTF8))
}

func (b *bindings) blob(stmt uintptr, i int, v []byte) error {
	p := b.c.cbytes(v)
	b.alloc = append(b.alloc, p)
	return b.c.check(sqlite3.Xsqlite3_bind_blob64(b.c.tls, stmt, int32(i), p, uint64(len(v)), sqlite3.SQLITE_STATIC))
}

func (b *bindings) int64(stmt uintptr, i int, v int64) error {
	return b.c.check(sqlite3.Xsqlite3_bind_int64(b.c.tls, stmt, int32(i), v))
}

func (b *bindings) float64(stmt uintptr, i int, v float64) error {
	return b.c.check(sqlite3.Xsqlite3_bind_double(b.c.tls, stmt, int32(i), v))
}

func (b *bindings) null(stmt uintptr, i int) error {
	return b.c.check(sqlite3.Xsqlite3_bind_null(b.c.tls, stmt, int32(i)))
}

func (c *conn) check(rc int32) error {
	if rc == sqlite3.SQLITE_OK {
		return nil
	}
	return c.lastError(rc)
}

// lastError builds the error for result code rc from the connection state.
func (c *conn) lastError(rc int32) *SQLError {
	e := &SQLError{Code: int(rc & 0xff), ExtendedCode: int(rc), Offset: -1}
	if c.db == 0 {
		e.Message = libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))
		return e
	}
	e.Message = libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))
	if ext := sqlite3.Xsqlite3_extended_errcode(c.tls, c.db); ext&0xff == rc&0xff {
		e.ExtendedCode = int(ext)
	}
	e.Offset = int(sqlite3.Xsqlite3_error_offset(c.tls, c.db))
	return e
}

func (c *conn) columnCount(stmt uintptr) int {
	return int(sqlite3.Xsqlite3_column_count(c.tls, stmt))
}

func (c *conn) columnName(stmt uintptr, i int) string {
	return libc.GoString(sqlite3.Xsqlite3_column_name(c.tls, stmt, int32(i)))
}

// column returns column i of the current row as int64, float64, string,
// []byte (never nil, also when empty) or nil for NULL.
func (c *conn) column(stmt uintptr, i int) any {
	switch sqlite3.Xsqlite3_column_type(c.tls, stmt, int32(i)) {
	case sqlite3.SQLITE_INTEGER:
		return sqlite3.Xsqlite3_column_int64(c.tls, stmt, int32(i))
	case sqlite3.SQLITE_FLOAT:
		return sqlite3.Xsqlite3_column_double(c.tls, stmt, int32(i))
	case sqlite3.SQLITE_TEXT:
		return c.columnText(stmt, i)
	case sqlite3.SQLITE_BLOB:
		return c.columnBlob(stmt, i)
	default:
		return nil
	}
}

func (c *conn) columnBlob(stmt uintptr, i int) []byte {
	p := sqlite3.Xsqlite3_column_blob(c.tls, stmt, int32(i))
	n := int(sqlite3.Xsqlite3_column_bytes(c.tls, stmt, int32(i)))
	out := make([]byte, n)
	if n > 0 {
		copy(out, libc.GoBytes(p, n))
	}
	return out
}

func (c *conn) columnText(stmt uintptr, i int) string {
	p := sqlite3.Xsqlite3_column_text(c.tls, stmt, int32(i))
	n := int(sqlite3.Xsqlite3_column_bytes(c.tls, stmt, int32(i)))
	if n == 0 {
		return ""
	}
	return string(libc.GoBytes(p, n))
}

func (c *conn) columnInt64(stmt uintptr, i int) int64 {
	return sqlite3.Xsqlite3_column_int64(c.tls, stmt, int32(i))
}

func (c *conn) paramCount(stmt uintptr) int {
	return int(sqlite3.Xsqlite3_bind_parameter_count(c.tls, stmt))
}

func (c *conn) totalChanges() int64 {
	return sqlite3.Xsqlite3_total_changes64(c.tls, c.db)
}

func (c *conn) fullscanSteps(stmt uintptr) int64 {
	return int64(sqlite3.Xsqlite3_stmt_status(c.tls, stmt, sqlite3.SQLITE_STMTSTATUS_FULLSCAN_STEP, 0))
}

func (c *conn) autocommit() bool {
	return sqlite3.Xsqlite3_get_autocommit(c.tls, c.db) != 0
}

func (c *conn) setLimit(id, v int32) {
	sqlite3.Xsqlite3_limit(c.tls, c.db, id, v)
}

// dbConfig calls sqlite3_db_config(db, op, v, (int*)0).
func (c *conn) dbConfig(op int32, v int32) error {
	const vaSlot = 8 // libc.VaList uses 8-byte slots on every target
	bp := sqlite3.Xsqlite3_malloc64(c.tls, 2*vaSlot)
	if bp == 0 {
		return fmt.Errorf("db config: out of memory")
	}
	defer c.free(bp)
	return c.check(sqlite3.Xsqlite3_db_config(c.tls, c.db, op, libc.VaList(bp, v, uintptr(0))))
}

// exec runs trusted SQL (one or more statements, no bindings, rows ignored).
func (c *conn) exec(sql string) error {
	z := c.cstring(sql)
	defer c.free(z)
	off := 0
	for off < len(sql) {
		stmt, tail, err := c.prepare(z+uintptr(off), len(sql)-off)
		if err != nil {
			return err
		}
		if stmt == 0 {
			return nil
		}
		for {
			row, err := c.step(stmt)
			if err != nil {
				c.finalize(stmt)
				return err
			}
			if !row {
				break
			}
		}
		c.finalize(stmt)
		off += tail
	}
	return nil
}

// queryInt runs a trusted single-value query.
func (c *conn) queryInt(sql string) (int64, error) {
	stmt, err := c.prepareString(sql)
	if err != nil {
		return 0, err
	}
	defer c.finalize(stmt)
	row, err := c.step(stmt)
	if err != nil || !row {
		return 0, err
	}
	return c.columnInt64(stmt, 0), nil
}

// queryText runs a trusted single-value query.
func (c *conn) queryText(sql string) (string, error) {
	stmt, err := c.prepareString(sql)
	if err != nil {
		return "", err
	}
	defer c.finalize(stmt)
	row, err := c.step(stmt)
	if err != nil || !row {
		return "", err
	}
	return c.columnText(stmt, 0), nil
}

// installHooks registers the authorizer and the WAL hook. The WAL hook must
// be installed after PRAGMA wal_autocheckpoint, which replaces it.
func (c *conn) installHooks(h uintptr) {
	c.handle = h
	sqlite3.Xsqlite3_set_authorizer(c.tls, c.db, cfunc(authorizerCallback), h)
	sqlite3.Xsqlite3_wal_hook(c.tls, c.db, cfunc(walHookCallback), h)
}

// walHookCallback runs after every commit of a write transaction to the
// WAL, which is exactly the event Commits counts. nFrame is the number of
// frames the WAL now holds, the last of them the commit frame. It runs on
// the goroutine that committed (the cell's), after the write lock is
// released; it must return SQLITE_OK, or the caller would see an error for
// a transaction that did commit.
func walHookCallback(_ *libc.TLS, h, _, _ uintptr, nFrame int32) int32 {
	if db := lookup(h); db != nil {
		db.commits.Add(1)
		if db.afterCommit != nil {
			db.afterCommit(int64(nFrame))
		}
	}
	return sqlite3.SQLITE_OK
}

func authorizerCallback(_ *libc.TLS, h uintptr, action int32, z1, z2, zDB, zTrigger uintptr) int32 {
	db := lookup(h)
	if db == nil {
		return sqlite3.SQLITE_DENY
	}
	return db.auth.decide(action, libc.GoString(z1), libc.GoString(z2), libc.GoString(zDB), libc.GoString(zTrigger))
}
