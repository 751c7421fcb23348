package cell

import (
	"errors"
	"path/filepath"
	"testing"
)

// The alarm lives in the database: it survives reopening, commits and
// rolls back with a transaction, goes with DeleteAll, and its
// installation sequence only grows, across DeleteAll too.
func TestAlarmState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.sqlite")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := db.Alarm(); err != nil || a.Set || a.Seq != 0 {
		t.Fatalf("fresh alarm %+v, %v", a, err)
	}
	a1, err := db.SetAlarm(1000)
	if err != nil || !a1.Set || a1.Deadline != 1000 || a1.Seq != 1 {
		t.Fatalf("SetAlarm = %+v, %v", a1, err)
	}
	boom := errors.New("boom")
	if err := db.Transaction(func() error {
		if _, err := db.SetAlarm(2000); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if a, _ := db.Alarm(); a != a1 {
		t.Fatalf("after rollback %+v, want %+v", a, a1)
	}
	if a, err := db.RetryAlarm(3000, 2); err != nil || a.Retry != 2 || a.Seq != 2 {
		t.Fatalf("RetryAlarm = %+v, %v", a, err)
	}
	db.Close()
	if db, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if a, _ := db.Alarm(); !a.Set || a.Deadline != 3000 || a.Retry != 2 || a.Seq != 2 {
		t.Fatalf("after reopen %+v", a)
	}
	if err := db.Put("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteAll(); err != nil {
		t.Fatal(err)
	}
	if a, _ := db.Alarm(); a.Set || a.Seq < 3 {
		t.Fatalf("after DeleteAll %+v: unset, sequence past 2", a)
	}
	if a, _ := db.SetAlarm(5000); a.Seq < 4 {
		t.Fatalf("set after DeleteAll reused a sequence: %+v", a)
	}
	if n, _ := db.DeleteAlarm(); n.Set {
		t.Fatal("DeleteAlarm left it set")
	}
	before, _ := db.Alarm()
	if a, _ := db.DeleteAlarm(); a.Seq != before.Seq {
		t.Fatalf("deleting nothing made an installation: %+v", a)
	}
}

// The alarm a DB remembers (it reads its table only after a rollback, a
// deleteAll, a park or a reopen) is always the one its table holds: after
// writes, an inner rollback inside a committed transaction, an outer
// rollback, DeleteAll and a park.
func TestAlarmState_rememberedMatchesTable(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "c.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.JoinPool(NewPool(4))
	check := func(step string) {
		t.Helper()
		got, err := db.Alarm()
		if err != nil {
			t.Fatal(err)
		}
		if err := db.checkOpen(); err != nil {
			t.Fatal(err)
		}
		stored, err := db.queryAlarm()
		if err != nil {
			t.Fatal(err)
		}
		stored.Seq = max(stored.Seq, db.alarmSeqFloor)
		if got != stored {
			t.Fatalf("%s: Alarm() = %+v, the table holds %+v", step, got, stored)
		}
	}
	check("fresh")
	if _, err := db.SetAlarm(1000); err != nil {
		t.Fatal(err)
	}
	check("set")
	boom := errors.New("boom")
	if err := db.Transaction(func() error {
		if _, err := db.SetAlarm(2000); err != nil {
			return err
		}
		if err := db.Transaction(func() error {
			if _, err := db.DeleteAlarm(); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			return err
		}
		check("inner rollback")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	check("outer commit")
	if a, _ := db.Alarm(); !a.Set || a.Deadline != 2000 {
		t.Fatalf("after the committed transaction %+v, want 2000", a)
	}
	if err := db.Transaction(func() error {
		if _, err := db.RetryAlarm(3000, 1); err != nil {
			return err
		}
		return ErrRollback
	}); err != nil {
		t.Fatal(err)
	}
	check("outer rollback")
	if err := db.DeleteAll(); err != nil {
		t.Fatal(err)
	}
	check("deleteAll")
	if _, err := db.SetAlarm(4000); err != nil {
		t.Fatal(err)
	}
	if !db.Park() {
		t.Fatal("an idle database did not park")
	}
	check("reopened after a park")
}
