package queue

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/celldgo/celld/cell"
)

var now = time.Now

var _ cell.Handler = Handle

// Handle is the cell.Handler of a queue cell: one encoded request, one
// encoded answer, at the wall clock.
func Handle(db *cell.DB, req []byte) ([]byte, error) { return handle(db, req, now().UnixMilli()) }

// HandleAt is Handle on another clock (tests).
func HandleAt(clock func() time.Time) cell.Handler {
	return func(db *cell.DB, req []byte) ([]byte, error) { return handle(db, req, clock().UnixMilli()) }
}

const schema = `
CREATE TABLE IF NOT EXISTS q_messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  body BLOB NOT NULL,
  ct TEXT NOT NULL,
  sent INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  visible INTEGER NOT NULL,
  lease TEXT,
  lease_until INTEGER,
  dead_to TEXT,
  source TEXT
);
CREATE INDEX IF NOT EXISTS q_ready ON q_messages (visible, seq) WHERE lease IS NULL AND dead_to IS NULL;
CREATE INDEX IF NOT EXISTS q_leases ON q_messages (lease) WHERE lease IS NOT NULL;
CREATE TABLE IF NOT EXISTS q_meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);`

func handle(db *cell.DB, raw []byte, nowMS int64) ([]byte, error) {
	var r request
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("decode queue request: %w", err)
	}
	var a answer
	var err error
	switch r.Op {
	case opSend:
		err = tables.Write(db, func() error {
			if err := insert(db, r.Messages, nowMS); err != nil {
				return err
			}
			m, err := metrics(db)
			a.Metrics = &m
			if err != nil {
				return err
			}
			return rearm(db, nowMS, false)
		})
	case opSendGroup:
		a.Refused = make([]string, len(r.Groups))
		err = tables.Write(db, func() error {
			for i, g := range r.Groups {
				if err := CheckSend(g); err != nil {
					a.Refused[i] = err.Error()
					continue
				}
				if err := insert(db, g, nowMS); err != nil {
					return err
				}
			}
			m, err := metrics(db)
			a.Metrics = &m
			if err != nil {
				return err
			}
			return rearm(db, nowMS, false)
		})
	case opConfigure:
		err = tables.Write(db, func() error {
			if err := setMeta(db, "config", r.Config); err != nil {
				return err
			}
			return rearm(db, nowMS, true)
		})
	case opLease:
		err = tables.Write(db, func() error {
			b, err := lease(db, nowMS, r.LeaseMS)
			a.Batch = b
			if err != nil {
				return err
			}
			return rearm(db, nowMS, true)
		})
	case opSettle:
		err = tables.Write(db, func() error {
			if err := settle(db, r.Lease, r.Outcomes, nowMS); err != nil {
				return err
			}
			return rearm(db, nowMS, true)
		})
	case opTakeDead:
		a.Messages, err = selectMessages(db, `dead_to IS NOT NULL ORDER BY seq LIMIT ?`, MaxBatchMessages)
	case opTakeDLQ:
		limit := r.Limit
		if limit <= 0 || limit > MaxRedrive {
			limit = MaxRedrive
		}
		a.Messages, err = selectMessages(db, `source IS NOT NULL AND dead_to IS NULL AND (lease IS NULL OR lease_until <= ?) ORDER BY seq LIMIT ?`, nowMS, limit)
	case opDropDead, opDrop:
		cond := "1"
		if r.Op == opDropDead {
			cond = "dead_to IS NOT NULL"
		}
		err = tables.Write(db, func() error {
			ids, _ := json.Marshal(r.IDs)
			if _, err := db.Exec(`DELETE FROM q_messages WHERE `+cond+` AND id IN (SELECT value FROM json_each(?))`, string(ids)); err != nil {
				return fmt.Errorf("delete queue messages: %w", err)
			}
			return rearm(db, nowMS, true)
		})
	case opInfo:
		a.Info, err = info(db, nowMS)
	case opPeek:
		limit := r.Limit
		if limit <= 0 {
			limit = DefaultPeek
		}
		if limit > MaxPeek {
			return nil, fmt.Errorf("peek at most %d messages, not %d", MaxPeek, limit)
		}
		a.Messages, err = selectMessages(db, `dead_to IS NULL ORDER BY seq LIMIT ?`, limit)
	case opPurge:
		err = tables.Write(db, func() error {
			cur, err := db.Exec(`DELETE FROM q_messages`)
			if err != nil {
				return fmt.Errorf("purge queue: %w", err)
			}
			a.Count = cur.RowsWritten()
			return rearm(db, nowMS, true)
		})
	case opPause:
		err = tables.Write(db, func() error {
			if err := setMeta(db, "paused", r.Paused); err != nil {
				return err
			}
			return rearm(db, nowMS, true)
		})
	default:
		return nil, fmt.Errorf("unknown queue op %q", r.Op)
	}
	if err != nil {
		return nil, err
	}
	return encode(a)
}

// tables: a queue nobody has written to has none; reads answer
// "nothing" then, and writes create them, so a read never writes.
var tables = cell.LazySchema{Name: "queue", Prefix: "q_", DDL: schema}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// insert stores messages sent at nowMS. A message that carries an id (a
// move to a dead-letter queue, a redrive) keeps it and its timestamp, and
// a second copy of the same id is ignored, so a move interrupted and
// replayed does not duplicate.
func insert(db *cell.DB, msgs []Message, nowMS int64) error {
	if err := CheckSend(msgs); err != nil {
		return err
	}
	// A cell binds at most 100 parameters per statement: 16 rows of 6.
	const rows = 16
	for len(msgs) > 0 {
		n := min(len(msgs), rows)
		if err := insertRows(db, msgs[:n], nowMS); err != nil {
			return err
		}
		msgs = msgs[n:]
	}
	return nil
}

func insertRows(db *cell.DB, msgs []Message, nowMS int64) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO q_messages (id, body, ct, sent, visible, source) VALUES `)
	args := make([]any, 0, 6*len(msgs))
	for i, m := range msgs {
		id, sent := m.ID, m.Timestamp
		if id == "" {
			id = newID()
		}
		if sent == 0 {
			sent = nowMS
		}
		visible := nowMS
		if m.DelaySeconds != nil {
			visible += *m.DelaySeconds * 1000
		}
		var source any
		if m.Source != "" {
			source = m.Source
		}
		if i > 0 {
			q.WriteByte(',')
		}
		q.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, id, m.Body, m.ContentType, sent, visible, source)
	}
	q.WriteString(" ON CONFLICT (id) DO NOTHING")
	if _, err := db.Exec(q.String(), args...); err != nil {
		return fmt.Errorf("store queue messages: %w", err)
	}
	return nil
}

func setMeta(db *cell.DB, k string, v any) error {
	text, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := db.Exec(`INSERT INTO q_meta (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`, k, string(text)); err != nil {
		return fmt.Errorf("write queue state: %w", err)
	}
	return nil
}

func getMeta(db *cell.DB, k string, v any) (bool, error) {
	cur, err := db.Exec(`SELECT v FROM q_meta WHERE k = ?`, k)
	if tables.Missing(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read queue state: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil || len(rows) == 0 {
		return false, err
	}
	s, _ := rows[0][0].(string)
	return true, json.Unmarshal([]byte(s), v)
}

// state is what delivery decisions need of the cell.
type state struct {
	cfg    *Config
	paused bool
}

func readState(db *cell.DB) (state, error) {
	var st state
	cur, err := db.Exec(`SELECT k, v FROM q_meta WHERE k IN ('config', 'paused')`)
	if tables.Missing(err) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("read queue state: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil {
		return st, fmt.Errorf("read queue state: %w", err)
	}
	for _, row := range rows {
		k, _ := row[0].(string)
		v, _ := row[1].(string)
		switch k {
		case "config":
			var cfg Config
			if err := json.Unmarshal([]byte(v), &cfg); err == nil && cfg.MaxBatchSize > 0 {
				st.cfg = &cfg
			}
		case "paused":
			_ = json.Unmarshal([]byte(v), &st.paused)
		}
	}
	return st, nil
}

func queryInt(db *cell.DB, q string, args ...any) (int64, bool, error) {
	cur, err := db.Exec(q, args...)
	if tables.Missing(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read queue: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil {
		return 0, false, fmt.Errorf("read queue: %w", err)
	}
	if len(rows) == 0 || rows[0][0] == nil {
		return 0, false, nil
	}
	switch v := rows[0][0].(type) {
	case int64:
		return v, true, nil
	case float64:
		return int64(v), true, nil
	}
	return 0, false, nil
}

func metrics(db *cell.DB) (Metrics, error) {
	var m Metrics
	cur, err := db.Exec(`SELECT count(*), coalesce(sum(length(body)), 0), coalesce(min(sent), 0) FROM q_messages WHERE dead_to IS NULL`)
	if tables.Missing(err) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("read queue metrics: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil || len(rows) == 0 {
		return m, err
	}
	m.BacklogCount, _ = rows[0][0].(int64)
	m.BacklogBytes, _ = rows[0][1].(int64)
	m.OldestMessageTimestamp, _ = rows[0][2].(int64)
	return m, nil
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

// selectMessages reads messages WHERE where (with its parameters args).
func selectMessages(db *cell.DB, where string, args ...any) ([]Message, error) {
	cur, err := db.Exec(`SELECT id, body, ct, sent, attempts, coalesce(source, ''), coalesce(dead_to, '') FROM q_messages WHERE `+where, args...)
	if tables.Missing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read queue messages: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil {
		return nil, fmt.Errorf("read queue messages: %w", err)
	}
	out := make([]Message, 0, len(rows))
	for _, row := range rows {
		m := Message{Body: blob(row[1])}
		m.ID, _ = row[0].(string)
		m.ContentType, _ = row[2].(string)
		m.Timestamp, _ = row[3].(int64)
		n, _ := row[4].(int64)
		m.Attempts = int(n)
		m.Source, _ = row[5].(string)
		m.DeadTo, _ = row[6].(string)
		out = append(out, m)
	}
	return out, nil
}
