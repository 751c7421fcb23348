package queue

import (
	"errors"
	"fmt"
	"time"

	"github.com/celldgo/celld/cell"
)

// The rules of delivery, on the cell's rows. A row is in one of these
// states: waiting (no lease, visible at or before now: ready; later:
// delayed), leased (lease set, lease_until in the future), exhausted
// (dead_to set: moving to its dead-letter queue). A lease past its end is
// a failed delivery, settled as a retry when the cell next looks.

// ErrLimit is the class of a send that breaks a Queues limit (*LimitError).
var ErrLimit = errors.New("queue limit")

// LimitError is a send refused by a limit; the binding reports it as
// workerd does, the CLI with its text.
type LimitError struct{ Reason string }

func (e *LimitError) Error() string        { return e.Reason }
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// ErrorCode names the class for host.RequestError.
func (e *LimitError) ErrorCode() string { return "QUEUE_LIMIT" }

// CheckSend checks one send or sendBatch against the limits.
func CheckSend(msgs []Message) error {
	if len(msgs) == 0 {
		return &LimitError{"sendBatch() requires at least one message"}
	}
	if len(msgs) > MaxBatchMessages {
		return &LimitError{fmt.Sprintf("batch message count of %d exceeds limit of %d", len(msgs), MaxBatchMessages)}
	}
	total := 0
	for _, m := range msgs {
		if !ValidContentType(m.ContentType) {
			return &LimitError{"Unsupported queue message content type: " + m.ContentType}
		}
		if len(m.Body) > MaxMessageBytes {
			return &LimitError{fmt.Sprintf("message length of %d bytes exceeds limit of %d", len(m.Body), MaxMessageBytes)}
		}
		if d := m.DelaySeconds; d != nil && (*d < 0 || *d > MaxDelaySeconds) {
			return &LimitError{fmt.Sprintf("message delay %d is invalid: it must be between 0 and %d seconds", *d, MaxDelaySeconds)}
		}
		total += len(m.Body)
	}
	if len(msgs) > 1 && total > MaxBatchBytes {
		return &LimitError{fmt.Sprintf("batch size of %d bytes exceeds limit of %d", total, MaxBatchBytes)}
	}
	return nil
}

// groupTimeout bounds one group commit.
const groupTimeout = 60 * time.Second

// DefaultLease is how long a batch is leased to its consumer: a handler
// that neither returns nor throws by then counts as a failed delivery.
const DefaultLease int64 = 15 * 60 * 1000

// expire settles every lease ended by nowMS as a failed delivery.
func expire(db *cell.DB, st state, nowMS int64) error {
	msgs, err := selectMessages(db, fmt.Sprintf(`lease IS NOT NULL AND lease_until <= %d ORDER BY seq LIMIT ?`, nowMS), 1<<20)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if err := retry(db, st, m, nil, nowMS); err != nil {
			return err
		}
	}
	return nil
}

// retry ends a delivery of m that failed: again after delay seconds
// (nil: the consumer's retry_delay), or, once it has been delivered
// max_retries + 1 times, exhausted — moved to the dead-letter queue, or
// deleted without one.
func retry(db *cell.DB, st state, m Message, delay *int64, nowMS int64) error {
	maxRetries, retryDelay, dlq := DefaultRetries, int64(0), ""
	if st.cfg != nil {
		maxRetries, retryDelay, dlq = st.cfg.MaxRetries, int64(st.cfg.RetryDelay), st.cfg.DeadLetterQueue
	}
	if delay != nil {
		retryDelay = *delay
	}
	var err error
	switch {
	case m.Attempts <= maxRetries:
		_, err = db.Exec(`UPDATE q_messages SET lease = NULL, lease_until = NULL, visible = ? WHERE id = ?`, nowMS+retryDelay*1000, m.ID)
	case dlq != "":
		_, err = db.Exec(`UPDATE q_messages SET lease = NULL, lease_until = NULL, dead_to = ? WHERE id = ?`, dlq, m.ID)
	default:
		_, err = db.Exec(`DELETE FROM q_messages WHERE id = ?`, m.ID)
	}
	if err != nil {
		return fmt.Errorf("retry queue message: %w", err)
	}
	return nil
}

// readyRule decides whether a batch is due at nowMS: count ready
// messages, the oldest visible since oldest.
func batchDue(cfg *Config, count, oldest, nowMS int64) bool {
	return count > 0 && (count >= int64(cfg.MaxBatchSize) || oldest+int64(cfg.MaxBatchTimeout)*1000 <= nowMS)
}

func activeLeases(db *cell.DB, nowMS int64) (int64, error) {
	n, _, err := queryInt(db, `SELECT count(DISTINCT lease) FROM q_messages WHERE lease IS NOT NULL AND lease_until > ?`, nowMS)
	return n, err
}

// lease forms the next batch, if one is due, and leases it for leaseMS.
func lease(db *cell.DB, nowMS, leaseMS int64) (*Batch, error) {
	if leaseMS <= 0 {
		leaseMS = DefaultLease
	}
	st, err := readState(db)
	if err != nil {
		return nil, err
	}
	if err := expire(db, st, nowMS); err != nil {
		return nil, err
	}
	b := &Batch{}
	if st.cfg == nil || st.paused {
		return b, nil
	}
	if st.cfg.MaxConcurrency > 0 {
		n, err := activeLeases(db, nowMS)
		if err != nil {
			return nil, err
		}
		if n >= int64(st.cfg.MaxConcurrency) {
			return b, nil
		}
	}
	count, oldest, err := ready(db, nowMS)
	if err != nil || !batchDue(st.cfg, count, oldest, nowMS) {
		return b, err
	}
	msgs, err := selectMessages(db, fmt.Sprintf(`lease IS NULL AND dead_to IS NULL AND visible <= %d ORDER BY seq LIMIT ?`, nowMS), st.cfg.MaxBatchSize)
	if err != nil {
		return nil, err
	}
	b.Lease = newID()
	for i := range msgs {
		msgs[i].Attempts++
		if _, err := db.Exec(`UPDATE q_messages SET lease = ?, lease_until = ?, attempts = attempts + 1 WHERE id = ?`, b.Lease, nowMS+leaseMS, msgs[i].ID); err != nil {
			return nil, fmt.Errorf("lease queue messages: %w", err)
		}
	}
	b.Messages = msgs
	b.Metrics, err = metrics(db)
	return b, err
}

// ready counts the ready messages and the time the oldest became visible.
func ready(db *cell.DB, nowMS int64) (count, oldest int64, err error) {
	cur, err := db.Exec(`SELECT count(*), coalesce(min(visible), 0) FROM q_messages WHERE lease IS NULL AND dead_to IS NULL AND visible <= ?`, nowMS)
	if noTable(err) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("read queue: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil || len(rows) == 0 {
		return 0, 0, err
	}
	count, _ = rows[0][0].(int64)
	oldest, _ = rows[0][1].(int64)
	return count, oldest, nil
}

// settle applies a consumer's outcomes to the messages still under lease;
// a message of the lease without an outcome is retried.
func settle(db *cell.DB, leaseID string, outs []Outcome, nowMS int64) error {
	st, err := readState(db)
	if err != nil {
		return err
	}
	msgs, err := selectMessages(db, `lease = '`+sqlQuote(leaseID)+`' ORDER BY seq LIMIT ?`, 1<<20)
	if err != nil {
		return err
	}
	byID := make(map[string]Outcome, len(outs))
	for _, o := range outs {
		if _, dup := byID[o.ID]; !dup {
			byID[o.ID] = o
		}
	}
	for _, m := range msgs {
		o, ok := byID[m.ID]
		if ok && !o.Retry {
			if _, err := db.Exec(`DELETE FROM q_messages WHERE id = ?`, m.ID); err != nil {
				return fmt.Errorf("ack queue message: %w", err)
			}
			continue
		}
		if err := retry(db, st, m, o.Delay, nowMS); err != nil {
			return err
		}
	}
	return nil
}

func sqlQuote(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// nextDue is the next instant the cell has something to do (unix ms), if
// any: a batch to deliver, a delayed message to become visible, a lease
// to expire, an exhausted message to move.
func nextDue(db *cell.DB, st state, nowMS int64) (int64, bool, error) {
	if st.cfg == nil || st.paused {
		return 0, false, nil
	}
	due, ok := int64(0), false
	take := func(t int64) {
		if !ok || t < due {
			due, ok = t, true
		}
	}
	if n, _, err := queryInt(db, `SELECT count(*) FROM q_messages WHERE dead_to IS NOT NULL`); err != nil {
		return 0, false, err
	} else if n > 0 {
		take(nowMS)
	}
	if t, found, err := queryInt(db, `SELECT min(lease_until) FROM q_messages WHERE lease IS NOT NULL`); err != nil {
		return 0, false, err
	} else if found {
		take(t)
	}
	full := false
	if st.cfg.MaxConcurrency > 0 {
		n, err := activeLeases(db, nowMS)
		if err != nil {
			return 0, false, err
		}
		full = n >= int64(st.cfg.MaxConcurrency)
	}
	if !full {
		count, oldest, err := ready(db, nowMS)
		if err != nil {
			return 0, false, err
		}
		if count > 0 {
			if count >= int64(st.cfg.MaxBatchSize) {
				take(nowMS)
			} else {
				take(oldest + int64(st.cfg.MaxBatchTimeout)*1000)
			}
		}
		if t, found, err := queryInt(db, `SELECT min(visible) FROM q_messages WHERE lease IS NULL AND dead_to IS NULL AND visible > ?`, nowMS); err != nil {
			return 0, false, err
		} else if found {
			take(t)
		}
	}
	return due, ok, nil
}

// rearm keeps the cell's alarm at or before the next due instant. A send
// (exact false) only ever brings it forward; the delivery steps (exact)
// also move an alarm that has passed. An alarm that fires early finds
// nothing due and is moved on, so the alarm never changes (a new wake
// entry) more often than deliveries happen.
func rearm(db *cell.DB, nowMS int64, exact bool) error {
	st, err := readState(db)
	if err != nil {
		return err
	}
	due, ok, err := nextDue(db, st, nowMS)
	if err != nil {
		return err
	}
	cur, err := db.Alarm()
	if err != nil {
		return err
	}
	switch {
	case !ok:
		if exact && cur.Set && cur.Deadline <= nowMS {
			_, err = db.DeleteAlarm()
		}
	case !cur.Set || due < cur.Deadline || (exact && cur.Deadline <= nowMS && due != cur.Deadline):
		_, err = db.SetAlarm(due)
	}
	return err
}

// info is the queue's state.
func info(db *cell.DB, nowMS int64) (*Info, error) {
	st, err := readState(db)
	if err != nil {
		return nil, err
	}
	in := &Info{Paused: st.paused, Consumer: st.cfg}
	m, err := metrics(db)
	if err != nil {
		return nil, err
	}
	in.Messages, in.Bytes, in.Oldest = m.BacklogCount, m.BacklogBytes, m.OldestMessageTimestamp
	counts := []struct {
		dst *int64
		q   string
	}{
		{&in.Ready, `lease IS NULL AND dead_to IS NULL AND visible <= ?`},
		{&in.Delayed, `lease IS NULL AND dead_to IS NULL AND visible > ?`},
		{&in.Leased, `lease IS NOT NULL AND lease_until > ?`},
		{&in.Dead, `dead_to IS NOT NULL AND ? = ?`},
		{&in.DLQ, `source IS NOT NULL AND dead_to IS NULL AND ? = ?`},
	}
	for _, c := range counts {
		args := []any{nowMS}
		if c.q[len(c.q)-5:] == "? = ?" {
			args = []any{0, 0}
		}
		if *c.dst, _, err = queryInt(db, `SELECT count(*) FROM q_messages WHERE `+c.q, args...); err != nil {
			return nil, err
		}
	}
	if due, ok, err := nextDue(db, st, nowMS); err != nil {
		return nil, err
	} else if ok {
		in.NextDue = due
	}
	return in, nil
}
