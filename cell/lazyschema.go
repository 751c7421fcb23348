package cell

import (
	"errors"
	"fmt"
	"strings"
)

// LazySchema is the tables of a built-in kind (KV, queues) that exist
// only once something was written: a cell nobody wrote to stays empty,
// reads answer "nothing", and the first write creates them.
type LazySchema struct {
	Name   string // what the tables are, for errors ("kv", "queue")
	Prefix string // every table's name starts with it ("kv_", "q_")
	DDL    string // creates them
}

// Missing reports whether err is SQLite's "no such table" for one of the
// schema's tables: the cell has none yet.
func (s LazySchema) Missing(err error) bool {
	var se *SQLError
	return errors.As(err, &se) && strings.Contains(se.Message, "no such table: "+s.Prefix)
}

// Write runs fn in one transaction, creating the tables first when they
// are missing.
func (s LazySchema) Write(db *DB, fn func() error) error {
	err := db.Transaction(fn)
	if !s.Missing(err) {
		return err
	}
	if _, err := db.Exec(s.DDL); err != nil {
		return fmt.Errorf("create %s tables: %w", s.Name, err)
	}
	return db.Transaction(fn)
}
