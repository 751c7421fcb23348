package kv

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/celldgo/celld/cell"
)

// now is the namespace's clock; tests move it.
var now = time.Now

// The tables. A value is split so that no row outgrows the cell's SQLite
// row limit (2 MB by default) while a KV value may take 25 MiB: the first
// chunkSize bytes live in kv_entries, the rest in kv_chunks rows of
// chunkSize. expiration is epoch seconds (NULL: never), metadata JSON text.
const (
	schema = `CREATE TABLE IF NOT EXISTS kv_entries (
  key        TEXT PRIMARY KEY NOT NULL,
  value      BLOB NOT NULL,
  chunks     INTEGER NOT NULL DEFAULT 0,
  expiration INTEGER,
  metadata   TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kv_chunks (
  key  TEXT NOT NULL,
  seq  INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (key, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS kv_entries_expiration ON kv_entries (expiration) WHERE expiration IS NOT NULL;
CREATE TRIGGER IF NOT EXISTS kv_entries_replaced AFTER UPDATE OF value ON kv_entries WHEN old.chunks > 0
BEGIN DELETE FROM kv_chunks WHERE key = old.key; END;
CREATE TRIGGER IF NOT EXISTS kv_entries_deleted AFTER DELETE ON kv_entries WHEN old.chunks > 0
BEGIN DELETE FROM kv_chunks WHERE key = old.key; END`

	chunkSize = 1 << 20
	// purgeLimit bounds the expired pairs one write request deletes, so a
	// write never pays for a namespace's whole backlog at once.
	purgeLimit = 100
)

var _ cell.Handler = Handle

// Handle is the cell.Handler of a KV namespace cell: it decodes one
// request, runs it on the namespace's database and encodes the answer. A
// request that writes several pairs is one transaction. A refused request
// returns an *Error whose text is workerd's.
func Handle(db *cell.DB, req []byte) ([]byte, error) { return handle(db, req, now().Unix()) }

// HandleAt is Handle on another clock than the package's (a test's),
// which decides what has expired.
func HandleAt(clock func() time.Time) cell.Handler {
	return func(db *cell.DB, req []byte) ([]byte, error) { return handle(db, req, clock().Unix()) }
}

func handle(db *cell.DB, req []byte, nowSec int64) ([]byte, error) {
	var r request
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, fmt.Errorf("decode kv request: %w", err)
	}
	var a answer
	var err error
	switch r.Op {
	case opGet:
		var e Entry
		e, err = get(db, "GET", r.Key, nowSec)
		a.Entry = &e
	case opGetBulk:
		a.Entries, err = getBulk(db, r.Keys, nowSec)
	case opPut:
		err = tables.Write(db, func() error { return putPairs(db, "PUT", []Pair{r.Pair}, nowSec) })
		a.Written = 1
	case opPutBatch:
		if err = checkBatch("PUT_BULK", len(r.Pairs)); err == nil {
			err = tables.Write(db, func() error { return putPairs(db, "PUT_BULK", r.Pairs, nowSec) })
			a.Written = len(r.Pairs)
		}
	case opDelete:
		err = tables.Write(db, func() error { return deleteKeys(db, "DELETE", []string{r.Key}, nowSec) })
		a.Written = 1
	case opDeleteBatch:
		if err = checkBatch("DELETE_BULK", len(r.Keys)); err == nil {
			err = tables.Write(db, func() error { return deleteKeys(db, "DELETE_BULK", r.Keys, nowSec) })
			a.Written = len(r.Keys)
		}
	case opList:
		var l ListResult
		l, err = list(db, r.Prefix, r.Cursor, r.Limit, nowSec)
		a.List = &l
	default:
		return nil, fmt.Errorf("kv: unknown op %q", r.Op)
	}
	if err != nil {
		return nil, err
	}
	return encode(a)
}

func checkBatch(op string, n int) error {
	if n > MaxBatchPairs {
		return kvErr(op, 413, "A bulk request may hold at most %d pairs, got %d.", MaxBatchPairs, n)
	}
	return nil
}

// tables: a kv nobody has written to has none; reads answer
// "nothing" then, and writes create them, so a read never writes.
var tables = cell.LazySchema{Name: "kv", Prefix: "kv_", DDL: schema}

func get(db *cell.DB, op, key string, nowSec int64) (Entry, error) {
	e := Entry{Key: key}
	if err := checkKey(op, key); err != nil {
		return e, err
	}
	cur, err := db.Exec(`SELECT value, chunks, expiration, metadata FROM kv_entries
WHERE key = ? AND (expiration IS NULL OR expiration > ?)`, key, nowSec)
	if tables.Missing(err) {
		return e, nil
	}
	if err != nil {
		return e, fmt.Errorf("read kv pair: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil {
		return e, fmt.Errorf("read kv pair: %w", err)
	}
	if len(rows) == 0 {
		return e, nil
	}
	row := rows[0]
	e.Found = true
	e.Value = blob(row[0])
	if n, _ := row[1].(int64); n > 0 {
		if e.Value, err = readChunks(db, key, e.Value, n); err != nil {
			return e, err
		}
	}
	e.Expiration, _ = row[2].(int64)
	if m, ok := row[3].(string); ok {
		e.Metadata = json.RawMessage(m)
	}
	return e, nil
}

func readChunks(db *cell.DB, key string, first []byte, n int64) ([]byte, error) {
	cur, err := db.Exec(`SELECT data FROM kv_chunks WHERE key = ? ORDER BY seq`, key)
	if err != nil {
		return nil, fmt.Errorf("read kv value chunks: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil {
		return nil, fmt.Errorf("read kv value chunks: %w", err)
	}
	if int64(len(rows)) != n {
		return nil, fmt.Errorf("read kv value chunks of %q: %d of %d", key, len(rows), n)
	}
	v := make([]byte, 0, len(first)+len(rows)*chunkSize)
	v = append(v, first...)
	for _, r := range rows {
		v = append(v, blob(r[0])...)
	}
	return v, nil
}

func blob(v any) []byte {
	switch b := v.(type) {
	case []byte:
		return b
	case string:
		return []byte(b)
	}
	return []byte{}
}

func getBulk(db *cell.DB, keys []string, nowSec int64) ([]Entry, error) {
	if len(keys) > MaxBulkGetKeys {
		return nil, kvErr("GET_BULK", 400, "You can request a maximum of %d keys", MaxBulkGetKeys)
	}
	if len(keys) < 1 {
		return nil, kvErr("GET_BULK", 400, "You must request a minimum of 1 key")
	}
	out := make([]Entry, 0, len(keys))
	for _, k := range keys {
		e, err := get(db, "GET_BULK", k, nowSec)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// putPairs checks every pair before writing any (a batch is all or
// nothing; the transaction undoes a write that fails midway anyway).
//
// Pairs are written set-wise: a group of pairs travels as one JSON text
// bound to one statement (json_each), because preparing a statement per
// pair would cost more than the writes themselves. A value too large for a
// group is written on its own, split into chunks.
func putPairs(db *cell.DB, op string, pairs []Pair, nowSec int64) error {
	exps := make([]int64, len(pairs))
	metas := make([]any, len(pairs))
	for i := range pairs {
		p := &pairs[i]
		if err := checkPair(op, i, len(pairs), p, nowSec, &exps[i], &metas[i]); err != nil {
			return err
		}
	}
	var g jsonGroup
	flush := func() error {
		if g.n == 0 {
			return nil
		}
		text := g.close()
		if _, err := db.Exec(`INSERT INTO kv_entries (key, value, chunks, expiration, metadata)
SELECT j.value->>0, unhex(j.value->>1), 0, j.value->>2, j.value->>3 FROM json_each(?) AS j WHERE true
ON CONFLICT (key) DO UPDATE SET value = excluded.value, chunks = 0,
  expiration = excluded.expiration, metadata = excluded.metadata`, text); err != nil {
			return fmt.Errorf("write kv pairs: %w", err)
		}
		return nil
	}
	for i := range pairs {
		p := &pairs[i]
		if len(p.Value) > groupValueMax {
			// Written in order: what was grouped before it goes first.
			if err := flush(); err != nil {
				return err
			}
			if err := putLarge(db, p, exps[i], metas[i]); err != nil {
				return err
			}
			continue
		}
		g.add(p.Key, p.Value, exps[i], metas[i])
		if g.size() >= groupMax {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return purgeExpired(db, nowSec)
}

// Group bounds: a bound text must stay under the cell's row limit (2 MB
// by default), and a value travels in hex (twice its size).
const (
	groupMax      = 900_000
	groupValueMax = 64 << 10
)

// jsonGroup builds [[key, hexValue, expiration|null, metadata|null], ...].
type jsonGroup struct {
	b bytes.Buffer
	n int
}

func (g *jsonGroup) add(key string, value []byte, exp int64, meta any) {
	if g.n == 0 {
		g.b.WriteByte('[')
	} else {
		g.b.WriteByte(',')
	}
	g.n++
	g.b.WriteByte('[')
	k, _ := encode(key)
	g.b.Write(k)
	g.b.WriteString(`,"`)
	hx := make([]byte, hex.EncodedLen(len(value)))
	hex.Encode(hx, value)
	g.b.Write(hx)
	g.b.WriteString(`",`)
	if exp != 0 {
		g.b.WriteString(strconv.FormatInt(exp, 10))
	} else {
		g.b.WriteString("null")
	}
	g.b.WriteByte(',')
	if m, ok := meta.(string); ok {
		mt, _ := encode(m)
		g.b.Write(mt)
	} else {
		g.b.WriteString("null")
	}
	g.b.WriteByte(']')
}

func (g *jsonGroup) size() int { return g.b.Len() }

// close returns the group's text and empties it.
func (g *jsonGroup) close() string {
	g.b.WriteByte(']')
	s := g.b.String()
	g.b.Reset()
	g.n = 0
	return s
}

// putLarge writes one pair whose value is split: the first chunkSize
// bytes in kv_entries, the rest in kv_chunks. The triggers drop the chunks
// of the value it replaces.
func putLarge(db *cell.DB, p *Pair, exp int64, meta any) error {
	var expArg any
	if exp != 0 {
		expArg = exp
	}
	first, rest := p.Value, []byte(nil)
	if len(first) > chunkSize {
		first, rest = p.Value[:chunkSize], p.Value[chunkSize:]
	}
	nChunks := (len(rest) + chunkSize - 1) / chunkSize
	if _, err := db.Exec(`INSERT INTO kv_entries (key, value, chunks, expiration, metadata) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, chunks = excluded.chunks,
  expiration = excluded.expiration, metadata = excluded.metadata`, p.Key, first, nChunks, expArg, meta); err != nil {
		return fmt.Errorf("write kv pair: %w", err)
	}
	for seq := 0; len(rest) > 0; seq++ {
		n := min(len(rest), chunkSize)
		if _, err := db.Exec(`INSERT INTO kv_chunks (key, seq, data) VALUES (?, ?, ?)`, p.Key, seq, rest[:n]); err != nil {
			return fmt.Errorf("write kv value chunk: %w", err)
		}
		rest = rest[n:]
	}
	return nil
}

// checkPair validates one pair; in a batch the error names the item.
func checkPair(op string, i, n int, p *Pair, nowSec int64, exp *int64, meta *any) error {
	err := checkKey(op, p.Key)
	if err == nil {
		err = checkValue(op, p.Value)
	}
	if err == nil {
		*exp, err = resolveExpiration(op, p.Expiration, p.ExpirationTTL, nowSec)
	}
	if m := metadataOf(p.Metadata); err == nil && m != nil {
		if c, cerr := canonicalJSON(m); cerr != nil {
			err = kvErr(op, 400, "Metadata is not valid JSON.")
		} else if err = checkMetadata(op, c); err == nil {
			*meta = string(c)
		}
	}
	if err != nil && n > 1 {
		var ke *Error
		if errors.As(err, &ke) {
			c := *ke
			c.Text = fmt.Sprintf("%s (item %d, key %q)", strings.TrimSuffix(c.Text, "."), i, p.Key)
			return &c
		}
	}
	return err
}

func deleteKeys(db *cell.DB, op string, keys []string, nowSec int64) error {
	for _, k := range keys {
		if err := checkKey(op, k); err != nil {
			return err
		}
	}
	var b bytes.Buffer
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		b.WriteByte(']')
		text := b.String()
		b.Reset()
		if _, err := db.Exec(`DELETE FROM kv_entries WHERE key IN (SELECT value FROM json_each(?))`, text); err != nil {
			return fmt.Errorf("delete kv pairs: %w", err)
		}
		return nil
	}
	for _, k := range keys {
		if b.Len() == 0 {
			b.WriteByte('[')
		} else {
			b.WriteByte(',')
		}
		e, _ := encode(k)
		b.Write(e)
		if b.Len() >= groupMax {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return purgeExpired(db, nowSec)
}

// purgeExpired deletes up to purgeLimit expired pairs. Reads already skip
// them; this only returns their space.
func purgeExpired(db *cell.DB, nowSec int64) error {
	if _, err := db.Exec(`DELETE FROM kv_entries WHERE key IN (SELECT key FROM kv_entries
WHERE expiration IS NOT NULL AND expiration <= ? ORDER BY expiration LIMIT ?)`, nowSec, purgeLimit); err != nil {
		return fmt.Errorf("purge expired kv pairs: %w", err)
	}
	return nil
}

func list(db *cell.DB, prefix, cursor string, limit int, nowSec int64) (ListResult, error) {
	res := ListResult{Keys: []ListedKey{}, ListComplete: true}
	if limit == 0 {
		limit = MaxListLimit
	}
	if limit < 1 {
		return res, kvErr("GET", 400, "Invalid key_count_limit of %d. Please specify an integer greater than 0.", limit)
	}
	if limit > MaxListLimit {
		return res, kvErr("GET", 400, "Invalid key_count_limit of %d. Please specify an integer less than %d.", limit, MaxListLimit)
	}
	if len(prefix) > MaxKeySize {
		return res, kvErr("GET", 414, "UTF-8 encoded length of %d exceeds key length limit of %d.", len(prefix), MaxKeySize)
	}
	after := ""
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil {
			return res, kvErr("GET", 400, "Invalid cursor.")
		}
		after = string(b)
	}
	// Keys compare as bytes (SQLite's BINARY collation on UTF-8 text is
	// memcmp), which is KV's order. The prefix is a range on the key so
	// the primary key index serves it.
	q := `SELECT key, expiration, metadata FROM kv_entries
WHERE key > ? AND key >= ? AND (expiration IS NULL OR expiration > ?)`
	args := []any{after, prefix, nowSec}
	if end, ok := prefixEnd(prefix); ok {
		q += ` AND key < ?`
		args = append(args, end)
	}
	q += ` ORDER BY key LIMIT ?`
	args = append(args, limit+1)
	cur, err := db.Exec(q, args...)
	if tables.Missing(err) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("list kv keys: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil {
		return res, fmt.Errorf("list kv keys: %w", err)
	}
	for i, r := range rows {
		if i == limit {
			res.ListComplete = false
			res.Cursor = base64.RawURLEncoding.EncodeToString([]byte(res.Keys[limit-1].Name))
			break
		}
		k := ListedKey{}
		k.Name, _ = r[0].(string)
		k.Expiration, _ = r[1].(int64)
		if m, ok := r[2].(string); ok {
			k.Metadata = json.RawMessage(m)
		}
		res.Keys = append(res.Keys, k)
	}
	return res, nil
}

// prefixEnd is the smallest string greater than every string with the
// prefix; ok is false when there is none (empty prefix, or all 0xff).
func prefixEnd(prefix string) (string, bool) {
	b := []byte(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}
