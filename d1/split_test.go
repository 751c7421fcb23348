package d1

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"one statement is kept as it is", "/* c */ SELECT 1;\n", []string{"/* c */ SELECT 1;\n"}},
		{"a comment after the last semicolon splits", "SELECT 1; -- done\n", []string{"SELECT 1"}},
		{"two statements", "SELECT 1; SELECT 2;", []string{"SELECT 1", "SELECT 2"}},
		{"quotes hide semicolons", `INSERT INTO t VALUES('a;b','it''s'); SELECT "x;y", ` + "`z;`;",
			[]string{`INSERT INTO t VALUES('a;b','it''s')`, `SELECT "x;y", ` + "`z;`"}},
		{"comments are dropped", "-- c;\nSELECT 1; /* ; */ SELECT 2 -- tail", []string{"SELECT 1", "SELECT 2"}},
		{"trigger body", "CREATE TRIGGER tr AFTER INSERT ON users BEGIN SELECT 1; SELECT 2; END; SELECT 3",
			[]string{"CREATE TRIGGER tr AFTER INSERT ON users BEGIN SELECT 1; SELECT 2; END", "SELECT 3"}},
		{"case inside a trigger", "CREATE TRIGGER tr AFTER INSERT ON t\nBEGIN\n UPDATE t SET x = CASE WHEN 1 THEN 2 END;\nEND;\nSELECT 3;",
			[]string{"CREATE TRIGGER tr AFTER INSERT ON t\nBEGIN\n UPDATE t SET x = CASE WHEN 1 THEN 2 END;\nEND", "SELECT 3"}},
		{"lower-case end does not close (as in Wrangler)", "select case when 1 then 2 end; select 3; select 4",
			[]string{"select case when 1 then 2 end; select 3; select 4"}},
		{"dollar quotes", "SELECT $$a;b$$; SELECT $t$c;$t$; SELECT 2", []string{"SELECT $$a;b$$", "SELECT $t$c;$t$", "SELECT 2"}},
		{"a $name swallows the character after it (as in Wrangler)", "SELECT $a; SELECT 2", []string{"SELECT $a; SELECT 2"}},
		{"empty pieces are dropped", ";;SELECT 1;; ;\n", []string{"SELECT 1"}},
		{"sqlite3 .dump wrapper", "PRAGMA foreign_keys=OFF;\nBEGIN TRANSACTION;\nCREATE TABLE t(x);\nINSERT INTO t VALUES('COMMIT;');\nCOMMIT;\n",
			[]string{"PRAGMA foreign_keys=OFF", "CREATE TABLE t(x)", "INSERT INTO t VALUES('COMMIT;')"}},
		{"multi-byte text", "INSERT INTO t VALUES('é;😀'); SELECT 'ü'", []string{"INSERT INTO t VALUES('é;😀')", "SELECT 'ü'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SplitStatements(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
	t.Run("several transactions", func(t *testing.T) {
		_, err := SplitStatements("BEGIN TRANSACTION; SELECT 1; COMMIT; BEGIN TRANSACTION; SELECT 2; COMMIT;")
		if !errors.Is(err, ErrSeveralTransactions) {
			t.Errorf("got %v, want ErrSeveralTransactions", err)
		}
	})
}

func TestIsTrivia(t *testing.T) {
	for in, want := range map[string]bool{
		"":     true,
		" ;\n": true,
		"-- Migration number: 0001 \t 2026-11-29T21:46:44.888Z\n": true,
		"/* x */ -- y":     true,
		"/* x */ SELECT 1": false,
		"- 1":              false,
	} {
		if got := isTrivia(in); got != want {
			t.Errorf("isTrivia(%q) = %v, want %v", in, got, want)
		}
	}
}
