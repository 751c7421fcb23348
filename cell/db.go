// Package cell holds one cell's durable state: its SQLite file and the
// Durable Object storage API on it (the async KV API, the SQL API,
// transactions), commit capture and replication to the bucket as LTX
// (Replicator), Restore, and a Durable Object's alarm (alarm.go). The
// output gate and a cell's ownership are package host's.
//
// This file decides how a cell's SQLite file is opened and how writes are
// grouped into transactions. It deliberately knows nothing about
// JavaScript: values are opaque bytes (the JS layer serializes them with
// structured clone) and every error that JavaScript can observe is an
// *Error or *SQLError whose text is exactly workerd's, so the binding can
// rethrow it verbatim.
//
// A DB is not safe for concurrent use: a cell is single-threaded, and all
// its storage calls run on the cell's goroutine. Commits is the exception;
// it may be read from any goroutine.
package cell

import (
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	sqlite3 "modernc.org/sqlite/lib"
)

// Limits of a cell's storage. Zero means "no limit of this package's own"
// (SQLite's built-in limits still apply).
type Limits struct {
	// MaxKeySize is the largest KV key in bytes (workerd: 2048).
	MaxKeySize int
	// MaxValueSize is the advertised largest KV value in bytes. As in
	// workerd, 34 bytes of slack are allowed on top for the serialization
	// header. Zero (the default for SQLite-backed objects) leaves the value
	// bounded only by MaxRowSize, as on Cloudflare where a SQLite-backed
	// object's key and value together may take 2 MB. Set 131072 for the
	// legacy KV-backed limit.
	MaxValueSize int
	// MaxKeysPerCall bounds GetMulti, PutMulti and DeleteMulti (128).
	MaxKeysPerCall int
	// The following are SQLite limits (sqlite3_limit), Cloudflare's SQL
	// limits for SQLite-backed Durable Objects and D1.
	MaxRowSize           int // SQLITE_LIMIT_LENGTH: a string, blob or row (2 MB)
	MaxSQLLength         int // SQLITE_LIMIT_SQL_LENGTH: one statement (100 KB)
	MaxBoundParameters   int // SQLITE_LIMIT_VARIABLE_NUMBER (100)
	MaxColumns           int // SQLITE_LIMIT_COLUMN (100)
	MaxFunctionArgs      int // SQLITE_LIMIT_FUNCTION_ARG (32)
	MaxLikePatternLength int // SQLITE_LIMIT_LIKE_PATTERN_LENGTH (50)
}

// DefaultLimits are the documented limits of a SQLite-backed Durable Object
// (reference section 4).
var DefaultLimits = Limits{
	MaxKeySize:           2048,
	MaxKeysPerCall:       128,
	MaxRowSize:           2_000_000,
	MaxSQLLength:         100_000,
	MaxBoundParameters:   100,
	MaxColumns:           100,
	MaxFunctionArgs:      32,
	MaxLikePatternLength: 50,
}

// valueSlack is what workerd allows above the advertised value size for
// the V8 serialization header and length prefixes.
const valueSlack = 34

// DB is one cell's SQLite database.
type DB struct {
	c       *conn
	path    string
	limits  Limits
	auth    authState
	commits atomic.Uint64 // committed write transactions (WAL hook)
	// afterCommit, when set, runs in the WAL hook after every commit with
	// the WAL's frame count (commit capture; see Replicator).
	afterCommit func(walFrames int64)
	// beforeCall, when set, runs at the start of every storage call on the
	// cell's goroutine, outside any transaction: the replicator uses it to
	// checkpoint a WAL whose frames are all in the bucket.
	beforeCall func()
	// beforeClose, when set, runs in Close before the connection closes:
	// a replicator still uploading stops reading through its descriptors.
	beforeClose func()
	inHook      bool

	// The descriptor budget (pool.go). parked: the connection is closed
	// until the next storage call; c is nil then.
	pool          *Pool
	parked        bool
	parkedCounted bool // counted in pool.parked (under pool.mu)
	parker        atomic.Pointer[func()]
	lastUse       atomic.Int64 // unix nanos of the last storage call
	parkAsked     atomic.Int64 // unix nanos of the pool's last request
	pinned        atomic.Bool  // kept open: never parked (Pin)
	saved         []int64      // connPragmas, while parked
	// beforePark (the replicator) agrees to a park and readies the WAL for
	// it; afterUnpark takes the reopened connection back.
	beforePark  func() bool
	afterUnpark func() error

	txDepth  int  // open Transaction calls
	kvExists bool // the _cf_KV table exists
	kv       kvStmts
	cursors  map[*Cursor]struct{} // cursors whose statement is still open
	indexes  map[string][]indexInfo
	// alarmSeqFloor is the lowest installation sequence the alarm may
	// report: DeleteAll wipes the alarm table, and the sequence must still
	// only grow.
	alarmSeqFloor uint64
	// alarm is the alarm row as last read or written, while alarmKnown:
	// forgotten whenever something else may have changed it (a rollback,
	// deleteAll, a park, a reopen).
	alarm      Alarm
	alarmKnown bool
}

// Open opens (creating if needed) the SQLite file of one cell with
// DefaultLimits.
func Open(path string) (*DB, error) {
	return OpenWith(path, DefaultLimits)
}

// OpenWith opens the SQLite file of one cell with the given limits.
//
// The file is put in WAL mode with automatic checkpoints off: commit
// capture reads each transaction's frames from the WAL and checkpoints on
// its own schedule. synchronous=NORMAL: in WAL mode a commit is then not
// fsynced on its own (the WAL is synced before each checkpoint), so a power
// loss may drop the newest transactions from the local file but never
// corrupts it. That is enough because the local file is not what makes a
// write durable: a response that reveals a write waits until the write's
// LTX segment is in the bucket, and restore rebuilds the file from there.
// FULL would add an fsync to every commit for no gain in the promise.
func OpenWith(path string, lim Limits) (*DB, error) {
	c, err := openConn(path)
	if err != nil {
		return nil, fmt.Errorf("open cell database %s: %w", path, err)
	}
	db := &DB{c: c, path: path, limits: lim, cursors: map[*Cursor]struct{}{}}
	if err := db.setup(); err != nil {
		c.close()
		return nil, fmt.Errorf("open cell database %s: %w", path, err)
	}
	return db, nil
}

func (db *DB) setup() error {
	c := db.c
	db.alarmKnown = false
	if err := c.setupMemory(); err != nil {
		return err
	}
	for _, l := range []struct {
		id int32
		v  int
	}{
		{sqlite3.SQLITE_LIMIT_LENGTH, db.limits.MaxRowSize},
		{sqlite3.SQLITE_LIMIT_SQL_LENGTH, db.limits.MaxSQLLength},
		{sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, db.limits.MaxBoundParameters},
		{sqlite3.SQLITE_LIMIT_COLUMN, db.limits.MaxColumns},
		{sqlite3.SQLITE_LIMIT_FUNCTION_ARG, db.limits.MaxFunctionArgs},
		{sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, db.limits.MaxLikePatternLength},
	} {
		if l.v > 0 {
			c.setLimit(l.id, int32(l.v))
		}
	}

	// One connection per file, ever: in exclusive locking mode SQLite
	// takes the file's lock once and keeps it, and the WAL index lives in
	// the connection's memory instead of a -shm file, so a cell holds two
	// descriptors (database and WAL), not three, and a transaction makes
	// no locking system calls. It must be set before the first read.
	if err := c.exec("PRAGMA locking_mode=EXCLUSIVE"); err != nil {
		return fmt.Errorf("set locking mode: %w", err)
	}
	mode, err := c.queryText("PRAGMA journal_mode=WAL")
	if err != nil {
		return fmt.Errorf("set journal mode: %w", err)
	}
	if mode != "wal" {
		return fmt.Errorf("set journal mode: got %q, want wal", mode)
	}
	// wal_autocheckpoint=0 also removes SQLite's own WAL hook, so ours is
	// installed after it.
	if err := c.exec("PRAGMA wal_autocheckpoint=0; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON"); err != nil {
		return fmt.Errorf("set pragmas: %w", err)
	}
	c.installHooks(register(db))
	return db.refreshKV()
}

// Path is the file the database lives in.
func (db *DB) Path() string { return db.path }

// Close finalizes every open cursor and closes the file. Closing twice is
// harmless.
func (db *DB) Close() error {
	if db.parked {
		db.parked = false
		db.pool.closed(db, false)
	}
	if db.c == nil {
		return nil
	}
	if db.pool != nil {
		db.pool.closed(db, false)
	}
	if db.beforeClose != nil {
		db.beforeClose()
		db.beforeClose = nil
	}
	db.closeStatements()
	unregister(db.c.handle)
	err := db.c.close()
	db.c, db.alarmKnown = nil, false
	if err != nil {
		return fmt.Errorf("close cell database %s: %w", db.path, err)
	}
	return nil
}

// closeStatements finalizes every prepared statement the DB holds.
func (db *DB) closeStatements() {
	for cur := range db.cursors {
		cur.finish()
	}
	db.kv.finalize(db.c)
}

// Commits counts the write transactions committed since Open (every
// autocommit write statement and every outermost Transaction that wrote).
// Commit capture uses it to notice that there is something to ship.
func (db *DB) Commits() uint64 { return db.commits.Load() }

// Sync resolves when every write made so far is durable. Writes are
// committed synchronously here, so this is a no-op; it is the hook where
// the output gate will wait for the bucket.
func (db *DB) Sync() error {
	if db.c == nil && !db.parked {
		return ErrClosed
	}
	return nil
}

// DatabaseSize is the size of the data in bytes, as workerd computes
// sql.databaseSize: pages in use (page_count minus freelist_count) times
// page_size.
func (db *DB) DatabaseSize() (int64, error) {
	if err := db.ready(); err != nil {
		return 0, err
	}
	pages, err := db.c.queryInt("SELECT (SELECT * FROM pragma_page_count) - (SELECT * FROM pragma_freelist_count)")
	if err != nil {
		return 0, fmt.Errorf("database size: %w", err)
	}
	size, err := db.c.queryInt("PRAGMA page_size")
	if err != nil {
		return 0, fmt.Errorf("database size: %w", err)
	}
	return pages * size, nil
}

// ErrRollback, returned by a Transaction callback, rolls the transaction
// back without making Transaction fail (JavaScript's txn.rollback()).
var ErrRollback = errors.New("cell: transaction rolled back")

// Transaction runs fn in a transaction: it commits when fn returns nil and
// rolls back when fn returns an error or panics (the error, or panic, is
// passed on; ErrRollback is swallowed). Every storage call made while fn
// runs — KV or SQL — joins the transaction, as in workerd's SQLite backend.
// Transactions nest (SAVEPOINTs): an inner rollback undoes only the inner
// work. This is both storage.transaction() and storage.transactionSync().
//
// Outside Transaction every write is its own autocommit transaction.
func (db *DB) Transaction(fn func() error) (err error) {
	if err := db.ready(); err != nil {
		return err
	}
	db.touch()
	name := "_cf_txn_" + strconv.Itoa(db.txDepth)
	outermost := db.c.autocommit()
	if err := db.c.exec("SAVEPOINT " + name); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	db.txDepth++
	committed := false
	defer func() {
		db.txDepth--
		if committed {
			return
		}
		// Rolling back to a savepoint keeps it open, so it is released too;
		// the outermost one is rolled back whole instead, because releasing
		// it would commit an empty transaction.
		undo := "ROLLBACK TO " + name + "; RELEASE " + name
		if db.txDepth == 0 && outermost {
			undo = "ROLLBACK"
		}
		rbErr := db.c.exec(undo)
		db.afterRollback()
		if rbErr != nil && err == nil {
			err = fmt.Errorf("roll back transaction: %w", rbErr)
		}
	}()
	if err = fn(); err != nil {
		if errors.Is(err, ErrRollback) {
			err = nil
		}
		return err
	}
	if err := db.c.exec("RELEASE " + name); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	committed = true
	return nil
}

// InTransaction reports whether a Transaction is running.
func (db *DB) InTransaction() bool { return db.txDepth > 0 }

// afterRollback forgets what a rollback may have undone: the creation of
// the KV table and schema the row counters cached.
func (db *DB) afterRollback() {
	db.indexes = nil
	db.alarmKnown = false
	if err := db.refreshKV(); err != nil {
		db.kvExists = false
		db.kv.finalize(db.c)
	}
}

// DeleteAll deletes everything the cell stores, KV and SQL alike, in one
// transaction (storage.deleteAll() on a SQLite-backed object). Open
// cursors are closed. It fails inside a Transaction, as in workerd.
func (db *DB) DeleteAll() error {
	if err := db.ready(); err != nil {
		return err
	}
	if db.txDepth > 0 {
		return ErrDeleteAllInTransaction
	}
	alarm, err := db.readAlarm()
	if err != nil {
		return fmt.Errorf("delete all: %w", err)
	}
	db.closeStatements()
	db.kvExists = false
	db.indexes = nil
	db.alarmKnown = false
	defer func() { db.alarmKnown = false }()
	// SQLite's documented reset: RESET_DATABASE plus VACUUM empties the
	// file (schema and data) atomically, whatever objects it holds.
	if err := db.c.dbConfig(sqlite3.SQLITE_DBCONFIG_RESET_DATABASE, 1); err != nil {
		return fmt.Errorf("delete all: %w", err)
	}
	vacErr := db.c.exec("VACUUM")
	if err := db.c.dbConfig(sqlite3.SQLITE_DBCONFIG_RESET_DATABASE, 0); err != nil && vacErr == nil {
		vacErr = err
	}
	if vacErr != nil {
		return fmt.Errorf("delete all: %w", vacErr)
	}
	// The alarm went with everything else (workerd's delete_all_deletes_alarm,
	// the default from 2026-02-24); its sequence must not start over.
	if alarm.Seq > 0 {
		db.alarmSeqFloor = alarm.Seq
		if alarm.Set {
			db.alarmSeqFloor = alarm.Seq + 1
			if err := db.c.exec(createAlarmTable + "; INSERT INTO _cf_alarm (id, deadline, retry, seq) VALUES (0, NULL, 0, " +
				strconv.FormatUint(db.alarmSeqFloor, 10) + ")"); err != nil {
				return fmt.Errorf("delete all: keep alarm sequence: %w", err)
			}
		}
	}
	return nil
}

func (db *DB) checkOpen() error {
	if err := db.ready(); err != nil {
		return err
	}
	db.touch()
	if db.beforeCall != nil && !db.inHook && db.txDepth == 0 {
		db.inHook = true
		db.beforeCall()
		db.inHook = false
	}
	return nil
}
