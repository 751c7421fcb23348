package cell

import (
	"fmt"
	"strconv"
)

// A cell's alarm lives in its own SQLite database, in a one-row table the
// SQL API cannot reach (the "_cf_" prefix), so it replicates and restores
// with everything else the cell stores and an alarm set inside a
// transaction commits (or rolls back) with it.
//
// Seq is the installation sequence: every change of the alarm (set,
// delete, a retry being scheduled, the alarm being consumed) takes the
// next number, and the number survives restores. With the ownership epoch
// it names one installation (a wake entry in the bucket is keyed by it),
// so a stale hint can never stand for a later installation.
const createAlarmTable = `CREATE TABLE IF NOT EXISTS _cf_alarm (
	id INTEGER PRIMARY KEY CHECK (id = 0),
	deadline INTEGER,
	retry INTEGER NOT NULL DEFAULT 0,
	seq INTEGER NOT NULL DEFAULT 0)`

// Alarm is a cell's alarm state.
type Alarm struct {
	Set      bool   // an alarm is pending
	Deadline int64  // unix ms it is due at (when Set)
	Retry    int    // failed runs so far of this alarm (0: first run)
	Seq      uint64 // installation sequence of the last change
}

// Alarm reads the alarm state (zero when none was ever set).
func (db *DB) Alarm() (Alarm, error) {
	if err := db.checkOpen(); err != nil {
		return Alarm{}, err
	}
	return db.readAlarm()
}

func (db *DB) readAlarm() (Alarm, error) {
	if db.alarmKnown {
		a := db.alarm
		a.Seq = max(a.Seq, db.alarmSeqFloor)
		return a, nil
	}
	a, err := db.queryAlarm()
	if err == nil {
		db.alarm, db.alarmKnown = a, true
	}
	return a, err
}

func (db *DB) queryAlarm() (Alarm, error) {
	n, err := db.c.queryInt("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '_cf_alarm'")
	if err != nil {
		return Alarm{}, fmt.Errorf("read alarm: %w", err)
	}
	if n == 0 {
		return Alarm{Seq: db.alarmSeqFloor}, nil
	}
	stmt, err := db.c.prepareString("SELECT deadline IS NOT NULL, coalesce(deadline, 0), retry, seq FROM _cf_alarm WHERE id = 0")
	if err != nil {
		return Alarm{}, fmt.Errorf("read alarm: %w", err)
	}
	defer db.c.finalize(stmt)
	row, err := db.c.step(stmt)
	if err != nil {
		return Alarm{}, fmt.Errorf("read alarm: %w", err)
	}
	if !row {
		return Alarm{Seq: db.alarmSeqFloor}, nil
	}
	a := Alarm{
		Set:      db.c.columnInt64(stmt, 0) != 0,
		Deadline: db.c.columnInt64(stmt, 1),
		Retry:    int(db.c.columnInt64(stmt, 2)),
		Seq:      uint64(db.c.columnInt64(stmt, 3)),
	}
	a.Seq = max(a.Seq, db.alarmSeqFloor)
	return a, nil
}

// SetAlarm sets the alarm to deadline (unix ms), replacing any alarm set,
// with no failed runs. It joins a running Transaction.
func (db *DB) SetAlarm(deadline int64) (Alarm, error) {
	return db.writeAlarm(true, deadline, 0)
}

// DeleteAlarm removes the alarm, if any. It joins a running Transaction.
func (db *DB) DeleteAlarm() (Alarm, error) {
	return db.writeAlarm(false, 0, 0)
}

// RetryAlarm keeps the alarm pending at deadline after retry failed runs.
func (db *DB) RetryAlarm(deadline int64, retry int) (Alarm, error) {
	return db.writeAlarm(true, deadline, retry)
}

func (db *DB) writeAlarm(set bool, deadline int64, retry int) (Alarm, error) {
	if err := db.checkOpen(); err != nil {
		return Alarm{}, err
	}
	var out Alarm
	err := db.Transaction(func() error {
		cur, err := db.readAlarm()
		if err != nil {
			return err
		}
		if !set && !cur.Set {
			out = cur // nothing to delete: no new installation
			return nil
		}
		if err := db.c.exec(createAlarmTable); err != nil {
			return fmt.Errorf("create alarm table: %w", err)
		}
		out = Alarm{Set: set, Deadline: deadline, Retry: retry, Seq: cur.Seq + 1}
		dl := "NULL"
		if set {
			dl = strconv.FormatInt(deadline, 10)
		}
		db.alarmKnown = false
		if err := db.c.exec("INSERT INTO _cf_alarm (id, deadline, retry, seq) VALUES (0, " + dl + ", " +
			strconv.Itoa(retry) + ", " + strconv.FormatUint(out.Seq, 10) + ") ON CONFLICT (id) DO UPDATE SET " +
			"deadline = excluded.deadline, retry = excluded.retry, seq = excluded.seq"); err != nil {
			return err
		}
		db.alarm, db.alarmKnown = out, true // a rollback forgets it (afterRollback)
		return nil
	})
	if err != nil {
		db.alarmKnown = false
		return Alarm{}, fmt.Errorf("write alarm: %w", err)
	}
	return out, nil
}
