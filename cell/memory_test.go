package cell

import (
	"strconv"
	"strings"
	"testing"
)

func TestDB_ReleaseMemory(t *testing.T) {
	db := openTest(t)
	value := strings.Repeat("v", 1000)
	for i := range 200 {
		mustPut(t, db, "k"+strconv.Itoa(i), value)
	}
	if got, _ := getString(t, db, "k7"); got != value {
		t.Fatalf("get k7 = %d bytes, want %d", len(got), len(value))
	}
	before, err := db.Memory()
	if err != nil {
		t.Fatal(err)
	}
	if before.Lookaside != 0 {
		t.Errorf("lookaside slots in use = %d, want 0 (lookaside off)", before.Lookaside)
	}
	if before.PageCache < 50*4096 || before.Statements == 0 {
		t.Fatalf("before release: %+v, want a warm page cache and prepared statements", before)
	}

	db.ReleaseMemory()
	after, err := db.Memory()
	if err != nil {
		t.Fatal(err)
	}
	if after.PageCache > before.PageCache/4 {
		t.Errorf("page cache after release = %d bytes, want at most a quarter of %d", after.PageCache, before.PageCache)
	}
	if after.Statements != 0 {
		t.Errorf("statements after release = %d bytes, want 0", after.Statements)
	}

	// Everything still works, and what is read comes back.
	if got, ok := getString(t, db, "k199"); !ok || got != value {
		t.Fatalf("get k199 after release = %d bytes (found %v), want %d", len(got), ok, len(value))
	}
	mustPut(t, db, "new", "x")
	if got, _ := getString(t, db, "new"); got != "x" {
		t.Fatalf("get new = %q, want x", got)
	}
}

func TestDB_ReleaseMemoryInTransaction(t *testing.T) {
	db := openTest(t)
	mustPut(t, db, "a", "1")
	err := db.Transaction(func() error {
		mustPut(t, db, "b", "2")
		db.ReleaseMemory() // keeps the statements the transaction may still use
		mustPut(t, db, "c", "3")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"a": "1", "b": "2", "c": "3"} {
		if got, _ := getString(t, db, k); got != want {
			t.Errorf("get %s = %q, want %q", k, got, want)
		}
	}
}
