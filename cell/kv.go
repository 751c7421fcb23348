package cell

import (
	"fmt"
	"slices"
	"strings"

	sqlite3 "modernc.org/sqlite/lib"
)

// The async KV API lives in the table workerd uses for SQLite-backed
// objects (src/workerd/util/sqlite-kv.c++), created on the first write.
// Keys are TEXT with the BINARY collation, so they sort in UTF-8 byte
// order, which is the order list() promises. The SQL API cannot reach the
// table: every name starting with "_cf_" is refused to application SQL.
const createKVTable = `CREATE TABLE IF NOT EXISTS _cf_KV (key TEXT PRIMARY KEY, value BLOB) WITHOUT ROWID`

// KV is one stored key and its value.
type KV struct {
	Key   string
	Value []byte
}

// ListOptions select a key range for List. Pointers mark options that are
// given at all: an empty Start or End is a real bound.
type ListOptions struct {
	Start      *string // first key, inclusive
	StartAfter *string // first key, exclusive; not together with Start
	End        *string // last key, exclusive
	Prefix     string  // only keys that begin with Prefix ("" = any)
	Limit      *int    // at most this many entries; must be positive
	Reverse    bool    // descending order; the bounds keep their meaning
}

// Ptr returns a pointer to v, for ListOptions.
func Ptr[T any](v T) *T { return &v }

type kvStmts struct {
	get, put, del uintptr
	list          [8]uintptr // by listShape
}

func (s *kvStmts) finalize(c *conn) {
	for _, p := range []*uintptr{&s.get, &s.put, &s.del} {
		c.finalize(*p)
		*p = 0
	}
	for i := range s.list {
		c.finalize(s.list[i])
		s.list[i] = 0
	}
}

// refreshKV learns whether the KV table exists (after Open and rollbacks).
func (db *DB) refreshKV() error {
	n, err := db.c.queryInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '_cf_KV'")
	if err != nil {
		return fmt.Errorf("find kv table: %w", err)
	}
	if n == 0 {
		db.kv.finalize(db.c)
	}
	db.kvExists = n > 0
	return nil
}

func (db *DB) ensureKV() error {
	if db.kvExists {
		return nil
	}
	if err := db.c.exec(createKVTable); err != nil {
		return fmt.Errorf("create kv table: %w", err)
	}
	db.kvExists = true
	return nil
}

// kvStmt returns the cached statement in *slot, preparing sql on first use.
func (db *DB) kvStmt(slot *uintptr, sql string) (uintptr, error) {
	if *slot == 0 {
		stmt, err := db.c.prepareString(sql)
		if err != nil {
			return 0, err
		}
		*slot = stmt
	}
	return *slot, nil
}

func (db *DB) checkKey(key string) error {
	if m := db.limits.MaxKeySize; m > 0 && len(key) > m {
		return errKeyTooLarge(m, len(key))
	}
	return nil
}

func (db *DB) checkValue(v []byte) error {
	if m := db.limits.MaxValueSize; m > 0 && len(v) > m+valueSlack {
		return errValueTooLarge(m, len(v))
	}
	return nil
}

func (db *DB) checkCount(n int) error {
	if m := db.limits.MaxKeysPerCall; m > 0 && n > m {
		return errTooManyKeys(m, n)
	}
	return nil
}

// Get returns the value stored under key and whether there is one.
func (db *DB) Get(key string) ([]byte, bool, error) {
	if err := db.checkOpen(); err != nil {
		return nil, false, err
	}
	if err := db.checkKey(key); err != nil {
		return nil, false, err
	}
	return db.get(key)
}

func (db *DB) get(key string) ([]byte, bool, error) {
	if !db.kvExists {
		return nil, false, nil
	}
	stmt, err := db.kvStmt(&db.kv.get, "SELECT value FROM _cf_KV WHERE key = ?")
	if err != nil {
		return nil, false, fmt.Errorf("get: %w", err)
	}
	b := bindings{c: db.c}
	defer func() { db.c.reset(stmt); b.release() }()
	if err := b.text(stmt, 1, key); err != nil {
		return nil, false, err
	}
	row, err := db.c.step(stmt)
	if err != nil || !row {
		return nil, false, err
	}
	return db.c.columnBlob(stmt, 0), true, nil
}

// GetMulti returns the stored entries among keys, sorted by key; missing
// keys are left out (storage.get([...]) returns a Map of those).
func (db *DB) GetMulti(keys []string) ([]KV, error) {
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	if err := db.checkCount(len(keys)); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := db.checkKey(k); err != nil {
			return nil, err
		}
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	out := []KV{}
	for _, k := range sorted {
		v, ok, err := db.get(k)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, KV{Key: k, Value: v})
		}
	}
	return out, nil
}

// Put stores value under key.
func (db *DB) Put(key string, value []byte) error {
	if err := db.checkOpen(); err != nil {
		return err
	}
	if err := db.checkKey(key); err != nil {
		return err
	}
	if err := db.checkValue(value); err != nil {
		return err
	}
	if !db.kvExists {
		// Create the table and store the first value in one commit.
		return db.Transaction(func() error { return db.put(key, value) })
	}
	return db.put(key, value)
}

func (db *DB) put(key string, value []byte) error {
	if err := db.ensureKV(); err != nil {
		return err
	}
	stmt, err := db.kvStmt(&db.kv.put, "INSERT INTO _cf_KV VALUES (?, ?) ON CONFLICT DO UPDATE SET value = excluded.value")
	if err != nil {
		return fmt.Errorf("put: %w", err)
	}
	b := bindings{c: db.c}
	defer func() { db.c.reset(stmt); b.release() }()
	if err := b.text(stmt, 1, key); err != nil {
		return err
	}
	if err := b.blob(stmt, 2, value); err != nil {
		return err
	}
	_, err = db.c.step(stmt)
	return err
}

// PutMulti stores every pair atomically (all or none).
func (db *DB) PutMulti(pairs []KV) error {
	if err := db.checkOpen(); err != nil {
		return err
	}
	if err := db.checkCount(len(pairs)); err != nil {
		return err
	}
	for _, p := range pairs {
		if err := db.checkKey(p.Key); err != nil {
			return err
		}
		if err := db.checkValue(p.Value); err != nil {
			return err
		}
	}
	return db.Transaction(func() error {
		for _, p := range pairs {
			if err := db.put(p.Key, p.Value); err != nil {
				return err
			}
		}
		return nil
	})
}

// Delete removes key and reports whether it existed.
func (db *DB) Delete(key string) (bool, error) {
	if err := db.checkOpen(); err != nil {
		return false, err
	}
	if err := db.checkKey(key); err != nil {
		return false, err
	}
	return db.delete(key)
}

func (db *DB) delete(key string) (bool, error) {
	if !db.kvExists {
		return false, nil
	}
	stmt, err := db.kvStmt(&db.kv.del, "DELETE FROM _cf_KV WHERE key = ?")
	if err != nil {
		return false, fmt.Errorf("delete: %w", err)
	}
	b := bindings{c: db.c}
	defer func() { db.c.reset(stmt); b.release() }()
	if err := b.text(stmt, 1, key); err != nil {
		return false, err
	}
	if _, err := db.c.step(stmt); err != nil {
		return false, err
	}
	return sqlite3.Xsqlite3_changes64(db.c.tls, db.c.db) > 0, nil
}

// DeleteMulti removes keys atomically and returns how many existed.
func (db *DB) DeleteMulti(keys []string) (int, error) {
	if err := db.checkOpen(); err != nil {
		return 0, err
	}
	if err := db.checkCount(len(keys)); err != nil {
		return 0, err
	}
	for _, k := range keys {
		if err := db.checkKey(k); err != nil {
			return 0, err
		}
	}
	n := 0
	err := db.Transaction(func() error {
		for _, k := range keys {
			ok, err := db.delete(k)
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// List returns the entries in a key range in UTF-8 byte order (descending
// with Reverse). The range arithmetic follows workerd's
// DurableObjectStorageOperations::list: startAfter becomes an inclusive
// start just past it, and a prefix clamps start and end to the keys that
// carry it.
func (db *DB) List(o ListOptions) ([]KV, error) {
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	start, end, empty, err := listRange(o)
	if err != nil {
		return nil, err
	}
	if empty || !db.kvExists {
		return []KV{}, nil
	}
	shape := 0
	if end != nil {
		shape |= 1
	}
	if o.Limit != nil {
		shape |= 2
	}
	if o.Reverse {
		shape |= 4
	}
	stmt, err := db.kvStmt(&db.kv.list[shape], listSQL(shape))
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	b := bindings{c: db.c}
	defer func() { db.c.reset(stmt); b.release() }()
	i := 1
	if err := b.text(stmt, i, start); err != nil {
		return nil, err
	}
	if end != nil {
		i++
		if err := b.text(stmt, i, *end); err != nil {
			return nil, err
		}
	}
	if o.Limit != nil {
		i++
		if err := b.int64(stmt, i, int64(*o.Limit)); err != nil {
			return nil, err
		}
	}
	out := []KV{}
	for {
		row, err := db.c.step(stmt)
		if err != nil {
			return nil, err
		}
		if !row {
			return out, nil
		}
		out = append(out, KV{Key: db.c.columnText(stmt, 0), Value: db.c.columnBlob(stmt, 1)})
	}
}

func listSQL(shape int) string {
	q := "SELECT key, value FROM _cf_KV WHERE key >= ?"
	if shape&1 != 0 {
		q += " AND key < ?"
	}
	if shape&4 != 0 {
		q += " ORDER BY key DESC"
	} else {
		q += " ORDER BY key"
	}
	if shape&2 != 0 {
		q += " LIMIT ?"
	}
	return q
}

// listRange turns ListOptions into [start, end) and reports an empty range.
func listRange(o ListOptions) (start string, end *string, empty bool, err error) {
	if o.Start != nil {
		if o.StartAfter != nil {
			return "", nil, false, ErrStartAndStartAfter
		}
		start = *o.Start
	}
	if o.StartAfter != nil {
		start = *o.StartAfter + "\x00"
	}
	if o.End != nil {
		e := *o.End
		end = &e
	}
	if o.Limit != nil && *o.Limit <= 0 {
		return "", nil, false, ErrListLimit
	}
	if p := o.Prefix; p != "" {
		switch {
		case start < p:
			start = p
		case strings.HasPrefix(start, p):
		default:
			return "", nil, true, nil
		}
		// The first key after every key with the prefix: drop trailing 0xff
		// bytes, then increment the last byte. A prefix of only 0xff bytes
		// runs to the end of the key space.
		// (strings.TrimRight would treat "\xff" as a UTF-8 cutset.)
		n := len(p)
		for n > 0 && p[n-1] == 0xff {
			n--
		}
		if n > 0 {
			after := p[:n-1] + string([]byte{p[n-1] + 1})
			switch {
			case end == nil:
				end = &after
			case *end <= p:
				return "", nil, true, nil
			case strings.HasPrefix(*end, p):
			default:
				end = &after
			}
		}
	}
	if end != nil && *end <= start {
		return "", nil, true, nil
	}
	return start, end, false, nil
}
