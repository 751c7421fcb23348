package cell

import (
	"strconv"
	"testing"
)

// BenchmarkPut measures one autocommit KV write (one WAL commit each).
func BenchmarkPut(b *testing.B) {
	db := openTest(b)
	value := make([]byte, 100)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := db.Put("key:"+strconv.Itoa(i%1000), value); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutTransaction measures KV writes grouped 100 to a commit.
func BenchmarkPutTransaction(b *testing.B) {
	db := openTest(b)
	value := make([]byte, 100)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		err := db.Transaction(func() error {
			for j := range 100 {
				if err := db.Put("key:"+strconv.Itoa(j), value); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet measures one KV read of a present key.
func BenchmarkGet(b *testing.B) {
	db := openTest(b)
	value := make([]byte, 100)
	for i := range 1000 {
		if err := db.Put("key:"+strconv.Itoa(i), value); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, ok, err := db.Get("key:" + strconv.Itoa(i%1000)); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkExecSelect measures a one-row SQL query with a binding.
func BenchmarkExecSelect(b *testing.B) {
	db := openTest(b)
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?)", i, "value"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		cur, err := db.Exec("SELECT v FROM t WHERE id = ?", i%1000)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cur.One(); err != nil {
			b.Fatal(err)
		}
	}
}
