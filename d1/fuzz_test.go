package d1

import (
	"strings"
	"testing"
)

// FuzzSplitStatements runs Wrangler's splitting rules on arbitrary SQL (a
// file given to `celld d1 execute --file`): an error or statements, never
// a panic, and never a statement that is only whitespace.
func FuzzSplitStatements(f *testing.F) {
	for _, s := range []string{
		"", "SELECT 1", "SELECT 1; SELECT 2;", "INSERT INTO t VALUES ('a;b'); -- c;\nSELECT \"x;\";",
		"CREATE TRIGGER t AFTER INSERT ON a BEGIN UPDATE b SET c = 1; END; SELECT 1;",
		"BEGIN TRANSACTION;\nCREATE TABLE t(x);\nCOMMIT;", "/* ; */ SELECT 1; /* unterminated",
		"SELECT $$;$$; SELECT [a;b]; SELECT `c;d`;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		stmts, err := SplitStatements(sql)
		if err != nil {
			return
		}
		for i, s := range stmts {
			if len(stmts) > 1 && strings.TrimSpace(s) == "" {
				t.Fatalf("statement %d of %d is empty: %q", i, len(stmts), stmts)
			}
		}
	})
}
