package queue

import (
	"errors"
	"fmt"
	"sync"
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
	msgs, err := selectMessages(db, `lease IS NOT NULL AND lease_until <= ? ORDER BY seq LIMIT ?`, nowMS, 1<<20)
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
	msgs, err := selectMessages(db, `lease IS NULL AND dead_to IS NULL AND visible <= ? ORDER BY seq LIMIT ?`, nowMS, st.cfg.MaxBatchSize)
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
	if tables.Missing(err) {
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
	msgs, err := selectMessages(db, `lease = ? ORDER BY seq LIMIT ?`, leaseID, 1<<20)
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

// nextDue is the next instant the cell has something to do (unix ms), if
// any: a batch to deliver, a delayed message to become visible, a lease
// to expire, an exhausted message to move. One statement: the cell runs
// it after every change.
func nextDue(db *cell.DB, st state, nowMS int64) (int64, bool, error) {
	if st.cfg == nil || st.paused {
		return 0, false, nil
	}
	cur, err := db.Exec(`SELECT
  (SELECT count(*) FROM q_messages WHERE dead_to IS NOT NULL),
  (SELECT min(lease_until) FROM q_messages WHERE lease IS NOT NULL),
  (SELECT count(DISTINCT lease) FROM q_messages WHERE lease IS NOT NULL AND lease_until > ?),
  (SELECT count(*) FROM q_messages WHERE lease IS NULL AND dead_to IS NULL AND visible <= ?),
  (SELECT min(visible) FROM q_messages WHERE lease IS NULL AND dead_to IS NULL AND visible <= ?),
  (SELECT min(visible) FROM q_messages WHERE lease IS NULL AND dead_to IS NULL AND visible > ?)`, nowMS, nowMS, nowMS, nowMS)
	if tables.Missing(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read queue: %w", err)
	}
	rows, err := cur.ToArray()
	if err != nil || len(rows) == 0 {
		return 0, false, err
	}
	v := func(i int) (int64, bool) {
		n, ok := rows[0][i].(int64)
		return n, ok
	}
	due, ok := int64(0), false
	take := func(t int64) {
		if !ok || t < due {
			due, ok = t, true
		}
	}
	if n, _ := v(0); n > 0 {
		take(nowMS)
	}
	if t, found := v(1); found {
		take(t)
	}
	leases, _ := v(2)
	if st.cfg.MaxConcurrency <= 0 || leases < int64(st.cfg.MaxConcurrency) {
		count, _ := v(3)
		oldest, _ := v(4)
		if count > 0 {
			if count >= int64(st.cfg.MaxBatchSize) {
				take(nowMS)
			} else {
				take(oldest + int64(st.cfg.MaxBatchTimeout)*1000)
			}
		}
		if t, found := v(5); found {
			take(t)
		}
	}
	return due, ok, nil
}

// AlarmSlack is how much later than the next due instant the cell's
// alarm may stand. The alarm is the durable timer that brings a queue
// back after its owner dies (its wake entry in the bucket, the waker);
// the owner itself delivers on time with a local timer at NextDue. So a
// send moves the alarm only when it is unset or more than AlarmSlack
// late — not once per send, each a wake entry written before the send
// may resolve.
const AlarmSlack int64 = 30 * 1000

// rearm keeps the cell's alarm within AlarmSlack of the next due
// instant. A send (exact false) only ever brings it forward; the
// delivery steps (exact) also move an alarm that has fired.
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
	rememberDue(db, due, ok)
	due = max(due, nowMS)
	// An alarm at or before now has fired or is firing: the pass it runs
	// leases until nothing is due, and a settled batch starts another, so
	// it is left alone until a delivery step finds the next instant.
	fired := cur.Set && cur.Deadline <= nowMS
	switch {
	case !ok:
		if exact && fired {
			_, err = db.DeleteAlarm()
		}
	case fired:
		if exact && due > nowMS {
			_, err = db.SetAlarm(due)
		}
	case !cur.Set || due+AlarmSlack < cur.Deadline:
		_, err = db.SetAlarm(due)
	}
	return err
}

// dues holds, per open queue database, the next due instant its last
// change found (NextDue), so the owner's local timer needs no query.
var dues sync.Map // *cell.DB -> dueAt

type dueAt struct {
	at int64
	ok bool
}

func rememberDue(db *cell.DB, at int64, ok bool) { dues.Store(db, dueAt{at, ok}) }

// NextDue is the next instant (unix ms) the queue cell on db has
// something to do, as its last change found it (the owner's local timer);
// known is false before the first change. Forget drops it.
func NextDue(db *cell.DB) (at int64, ok, known bool) {
	v, found := dues.Load(db)
	if !found {
		return 0, false, false
	}
	d := v.(dueAt)
	return d.at, d.ok, true
}

// Forget drops what NextDue knows of db (the cell stopped).
func Forget(db *cell.DB) { dues.Delete(db) }

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
