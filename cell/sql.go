package cell

import "math"

// Cursor is the result of Exec (ctx.storage.sql.exec): the rows of the
// last statement, read one at a time. Like workerd, Exec runs the statement
// to its first row before returning, so a statement that returns no rows
// (INSERT, CREATE ...) is complete — and its errors reported — without
// reading the cursor, and the cursor always holds the next row ahead:
// reading the last row finishes the statement.
//
// Read a cursor to the end (or Close it) before the event that made it
// ends: an open cursor keeps its statement open, and with it a read
// snapshot that holds back checkpoints. DB.Close and DB.DeleteAll close
// every open cursor (a row already read ahead can still be taken).
type Cursor struct {
	db      *DB
	stmt    uintptr // 0 once the statement finished
	names   []string
	next    []any // the row ahead, valid when hasNext
	hasNext bool
	err     error // a step error met while reading ahead

	read, written int64 // of the statements finished so far
	acct          stmtAcct
	mem           []uintptr // C copies of bound text and blobs
}

// Row is one result row: int64, float64, string, []byte or nil per column.
type Row = []any

// Exec runs query (one statement, or several separated by ';') with args
// bound to the '?' parameters of the last statement; the statements before
// it are run to completion first and may not have parameters. Arguments
// may be nil, bool (stored as 1/0), any integer type, float32/float64,
// string or []byte (a BLOB, never NULL).
func (db *DB) Exec(query string, args ...any) (*Cursor, error) {
	if err := db.checkOpen(); err != nil {
		return nil, err
	}
	c := db.c
	z := c.ctext(query)
	defer c.free(z)
	cur := &Cursor{db: db}
	off, ran := 0, false
	for {
		db.auth.begin()
		stmt, tail, err := c.prepare(z+uintptr(off), len(query)-off)
		facts, denied := db.auth.facts, db.auth.denied
		db.auth.end()
		if err != nil {
			if denied {
				return nil, ErrTransactionStatement
			}
			return nil, err
		}
		rest := query[off+tail:]
		if stmt == 0 {
			if tail == 0 || onlyTrivia(rest) {
				if !ran {
					return nil, ErrNoStatement
				}
				return cur, nil // the last statement was an empty one
			}
			off += tail
			continue
		}
		ran = true
		if !onlyTrivia(rest) {
			// Not the last statement: run it now, discard its rows.
			if c.paramCount(stmt) != 0 {
				c.finalize(stmt)
				return nil, ErrMultiStatementBindings
			}
			cur.stmt = stmt
			cur.acct = db.startAcct(facts)
			for {
				if _, ok, err := cur.step(); err != nil {
					return nil, err
				} else if !ok {
					break
				}
			}
			off += tail
			for off < len(query) && (query[off] == ' ' || query[off] == '\n') {
				off++
			}
			continue
		}
		if c.paramCount(stmt) != len(args) {
			c.finalize(stmt)
			return nil, ErrBindingCount
		}
		cur.stmt = stmt
		if err := cur.bind(stmt, args); err != nil {
			cur.finish()
			return nil, err
		}
		cur.names = make([]string, c.columnCount(stmt))
		for i := range cur.names {
			cur.names[i] = c.columnName(stmt, i)
		}
		cur.acct = db.startAcct(facts)
		db.cursors[cur] = struct{}{}
		row, ok, err := cur.step()
		if err != nil {
			return nil, err
		}
		cur.next, cur.hasNext = row, ok
		return cur, nil
	}
}

func (cur *Cursor) bind(stmt uintptr, args []any) error {
	b := bindings{c: cur.db.c}
	// Text and blobs are bound without a copy by SQLite (SQLITE_STATIC):
	// their memory lives until the statement is finalized.
	defer func() { cur.mem = b.alloc }()
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case nil:
			err = b.null(stmt, i+1)
		case bool:
			n := int64(0)
			if v {
				n = 1
			}
			err = b.int64(stmt, i+1, n)
		case int:
			err = b.int64(stmt, i+1, int64(v))
		case int8:
			err = b.int64(stmt, i+1, int64(v))
		case int16:
			err = b.int64(stmt, i+1, int64(v))
		case int32:
			err = b.int64(stmt, i+1, int64(v))
		case int64:
			err = b.int64(stmt, i+1, v)
		case uint8:
			err = b.int64(stmt, i+1, int64(v))
		case uint16:
			err = b.int64(stmt, i+1, int64(v))
		case uint32:
			err = b.int64(stmt, i+1, int64(v))
		case uint:
			if uint64(v) > math.MaxInt64 {
				return errUnsupportedArgument(i, v)
			}
			err = b.int64(stmt, i+1, int64(v))
		case uint64:
			if v > math.MaxInt64 {
				return errUnsupportedArgument(i, v)
			}
			err = b.int64(stmt, i+1, int64(v))
		case float32:
			err = b.float64(stmt, i+1, float64(v))
		case float64:
			err = b.float64(stmt, i+1, v)
		case string:
			err = b.text(stmt, i+1, v)
		case []byte:
			err = b.blob(stmt, i+1, v)
		default:
			return errUnsupportedArgument(i, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// step advances the current statement; at its end it settles the row
// counters and finalizes it.
func (cur *Cursor) step() (Row, bool, error) {
	c := cur.db.c
	if c == nil {
		cur.stmt = 0
		return nil, false, ErrClosed
	}
	row, err := c.step(cur.stmt)
	if err != nil {
		cur.finish()
		return nil, false, err
	}
	if !row {
		r, w := cur.db.settleAcct(cur.acct, cur.stmt)
		cur.read += r
		cur.written += w
		cur.acct = stmtAcct{}
		cur.finish()
		return nil, false, nil
	}
	cur.acct.returned++
	out := make(Row, c.columnCount(cur.stmt))
	for i := range out {
		out[i] = c.column(cur.stmt, i)
	}
	return out, true, nil
}

// finish finalizes the statement, if it is still open.
func (cur *Cursor) finish() {
	if cur.stmt == 0 {
		return
	}
	if c := cur.db.c; c != nil {
		c.finalize(cur.stmt)
		for _, p := range cur.mem {
			c.free(p)
		}
	}
	cur.stmt, cur.mem = 0, nil
	delete(cur.db.cursors, cur)
}

// ColumnNames are the result columns of the last statement (empty for a
// statement that returns no rows).
func (cur *Cursor) ColumnNames() []string { return cur.names }

// Next returns the next row; ok is false at the end.
func (cur *Cursor) Next() (row Row, ok bool, err error) {
	if cur.err != nil {
		err, cur.err = cur.err, nil
		return nil, false, err
	}
	if !cur.hasNext {
		return nil, false, nil
	}
	row = cur.next
	cur.next, cur.hasNext = nil, false
	if cur.stmt != 0 {
		cur.next, cur.hasNext, cur.err = cur.step()
	}
	return row, true, nil
}

// ToArray returns the remaining rows.
func (cur *Cursor) ToArray() ([]Row, error) {
	rows := []Row{}
	for {
		row, ok, err := cur.Next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return rows, nil
		}
		rows = append(rows, row)
	}
}

// Raw returns the remaining rows as arrays (cursor.raw().toArray()). Rows
// are arrays here anyway; the JS layer turns them into objects keyed by
// ColumnNames for the non-raw iteration.
func (cur *Cursor) Raw() ([]Row, error) { return cur.ToArray() }

// One returns the only row, or ErrOneNoResults / ErrOneMultipleResults.
func (cur *Cursor) One() (Row, error) {
	row, ok, err := cur.Next()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrOneNoResults
	}
	if cur.hasNext {
		cur.Close()
		return nil, ErrOneMultipleResults
	}
	if cur.err != nil {
		err, cur.err = cur.err, nil
		return nil, err
	}
	return row, nil
}

// RowsRead is the number of rows read so far (see counters.go for how it
// approximates workerd's count).
func (cur *Cursor) RowsRead() int64 { return cur.read + cur.acct.returned }

// RowsWritten is the number of rows written so far; it is known once the
// statement has finished.
func (cur *Cursor) RowsWritten() int64 { return cur.written }

// Close abandons the rest of the rows and releases the statement.
func (cur *Cursor) Close() error {
	cur.next, cur.hasNext, cur.err = nil, false, nil
	cur.finish()
	return nil
}

// CloseCursors closes every cursor still open (their statements
// finalized): the code that could read on is gone, as when a Durable
// Object drops its isolate, and an open statement would keep the
// database from parking. Call it on the cell's goroutine.
func (db *DB) CloseCursors() {
	for cur := range db.cursors {
		cur.Close()
	}
}

// onlyTrivia reports whether s holds no further statement: only
// whitespace, comments and semicolons.
func onlyTrivia(s string) bool {
	for i := 0; i < len(s); {
		switch ch := s[i]; {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == ';':
			i++
		case ch == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case ch == '/' && i+1 < len(s) && s[i+1] == '*':
			end := indexFrom(s, "*/", i+2)
			if end < 0 {
				return true // an unterminated comment runs to the end
			}
			i = end + 2
		default:
			return false
		}
	}
	return true
}

func indexFrom(s, sub string, from int) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
