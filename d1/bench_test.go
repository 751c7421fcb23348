package d1_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/celldgo/celld/d1"
)

// exportDump generates a dump of about size bytes in the format of
// `wrangler d1 export`: a users table with text, real and blob columns, a
// posts table, an index and a trigger.
func exportDump(size int) string {
	var b strings.Builder
	b.Grow(size + 4096)
	b.WriteString("PRAGMA defer_foreign_keys=TRUE;\n")
	b.WriteString("CREATE TABLE users(id INTEGER PRIMARY KEY AUTOINCREMENT, email TEXT NOT NULL UNIQUE, name TEXT, score REAL, avatar BLOB);\n")
	b.WriteString("CREATE TABLE posts(id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), body TEXT);\n")
	users := 0
	for i := 1; b.Len() < size; i++ {
		if i%4 != 0 {
			users++
			fmt.Fprintf(&b, "INSERT INTO \"users\" VALUES(%d,'user%d@example.com','User ''%d'' of the dump; with text',%d.25,X'%08x%08x');\n", users, users, users, i%1000, i, users)
		} else {
			fmt.Fprintf(&b, "INSERT INTO \"posts\" VALUES(%d,%d,'post %d: a body with -- dashes and /* stars */ inside the string, as posts have');\n", i/4, users, i)
		}
	}
	b.WriteString("DELETE FROM sqlite_sequence;\n")
	fmt.Fprintf(&b, "INSERT INTO \"sqlite_sequence\" VALUES('users',%d);\n", users)
	b.WriteString("CREATE INDEX idx_posts_user ON posts(user_id);\n")
	b.WriteString("CREATE TRIGGER users_touch AFTER UPDATE ON users BEGIN UPDATE posts SET body = body WHERE user_id = NEW.id; END;")
	return b.String()
}

// BenchmarkClient_Import imports a generated 50 MB export into a fresh
// database per iteration, through Handle (one transaction). MB/s is of
// the dump's bytes. -benchtime=1x keeps it short.
func BenchmarkClient_Import(b *testing.B) {
	dump := exportDump(50 << 20)
	b.SetBytes(int64(len(dump)))
	b.ResetTimer()
	stmts := 0
	for range b.N {
		b.StopTimer()
		c := &d1.Client{Caller: newLocalCaller(b), Cell: testCell}
		b.StartTimer()
		res, err := c.Import(context.Background(), dump)
		if err != nil {
			b.Fatal(err)
		}
		stmts += res.Statements
	}
	b.ReportMetric(float64(stmts)/b.Elapsed().Seconds(), "stmts/s")
}

// BenchmarkSplitStatements measures Wrangler's splitting alone.
func BenchmarkSplitStatements(b *testing.B) {
	dump := exportDump(8 << 20)
	b.SetBytes(int64(len(dump)))
	for range b.N {
		if _, err := d1.SplitStatements(dump); err != nil {
			b.Fatal(err)
		}
	}
}
