package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/superfly/ltx"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/d1"
)

// sqliteRows reads query's rows from a plain SQLite file (a second
// reader, independent of the cell code) as compact JSON per row.
func sqliteRows(t *testing.T, path, query string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("PRAGMA integrity_check").Scan(new(string)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := []string{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok { // a BLOB, as D1 prints it: an array of bytes
				n := make([]int, len(b))
				for j, c := range b {
					n[j] = int(c)
				}
				vals[i] = n
			}
		}
		b, _ := json.Marshal(vals)
		out = append(out, string(b))
	}
	return out
}

func runCell(t *testing.T, dir string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := New("test")
	cmd.Writer, cmd.ErrWriter, cmd.Reader = &out, &errOut, strings.NewReader("")
	err := cmd.Run(context.Background(), append([]string{"celld", "--bucket", "file://" + filepath.Join(dir, "bucket"), "cell"}, args...))
	return out.String(), errOut.String(), err
}

const (
	exportUsers = "SELECT id, email FROM users ORDER BY id"
	exportPosts = "SELECT id, user_id, title FROM posts ORDER BY id"
)

func TestCellExport_SQLiteFileHasTheLiveRows(t *testing.T) {
	dir := newD1Project(t, d1Entry, d1Migrations1)
	cellName := "d1:" + d1TestID
	s, _ := (&globals{Bucket: "file://" + filepath.Join(dir, "bucket")}).openStore()
	if out, _, err := runD1(t, dir, "migrate", "ledger", dir); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}

	// Nobody owns it: the export holds it under a tool lease (epoch 2)
	// and releases it.
	a := filepath.Join(dir, "a.sqlite")
	if out, errOut, err := runCell(t, dir, "export", cellName, "-o", a); err != nil || !strings.Contains(out, "tool lease") {
		t.Fatalf("export: %v %q %q", err, out, errOut)
	}
	if ci := lookup(t, s, cellName); !ci.Own.Released || ci.Own.Epoch != 2 {
		t.Fatalf("after an export under the tool lease: %+v", ci)
	}
	if got, want := sqliteRows(t, a, exportUsers), d1Rows(t, dir, cellName, exportUsers); !reflect.DeepEqual(got, want) || len(got) != 1 {
		t.Errorf("exported users %v, the cell has %v", got, want)
	}

	// A node owns it and writes more: the export leaves the owner alone
	// and still has every acknowledged write.
	_, stop := startTestNode(t, filepath.Join(dir, "bucket"), "n1")
	defer stop()
	ownOnNode(t, dir, cellName, func(c cell.Caller) error {
		_, err := (&d1.Client{Caller: c, Cell: cellName}).Query(context.Background(), []string{
			"INSERT INTO users (email) VALUES ('bo@example.com'), ('cy@example.com')",
			"INSERT INTO posts (user_id, title) VALUES (2, x'00ff'), (3, 'third')",
		})
		return err
	})
	before := lookup(t, s, cellName)
	if !before.OwnerLive || before.Own.Node != "n1" {
		t.Fatalf("node does not own it: %+v", before)
	}
	b := filepath.Join(dir, "b.sqlite")
	out, errOut, err := runCell(t, dir, "export", cellName, "-o", b, "--json")
	if err != nil {
		t.Fatalf("export from a live owner: %v %q", err, errOut)
	}
	var res cellExport
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Output != b || !strings.Contains(res.Source, "n1") {
		t.Errorf("--json printed %q (%v)", out, err)
	}
	if after := lookup(t, s, cellName); after.Own != before.Own || !after.OwnerLive {
		t.Errorf("the export disturbed the owner: %+v, was %+v", after.Own, before.Own)
	}
	for _, q := range []string{exportUsers, exportPosts} {
		got, want := sqliteRows(t, b, q), d1Rows(t, dir, cellName, q)
		if len(got) != 3 && q == exportUsers || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: exported %v, the live cell has %v", q, got, want)
		}
	}

	// The LTX chain in Litestream's layout restores with the ltx library,
	// as `litestream restore` does it: compact the files in TXID order.
	ltxDir := filepath.Join(dir, "ltx-export")
	if _, errOut, err := runCell(t, dir, "export", cellName, "--ltx", ltxDir); err != nil {
		t.Fatalf("export --ltx: %v %q", err, errOut)
	}
	restored := restoreLitestreamDir(t, ltxDir)
	for _, q := range []string{exportUsers, exportPosts} {
		if got, want := sqliteRows(t, restored, q), sqliteRows(t, b, q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: LTX export restores %v, want %v", q, got, want)
		}
	}

	// The ltx tool applies the files in TXID order, checking every file's
	// pre- and post-apply checksum against the database it builds.
	ltxTool := filepath.Join(t.TempDir(), "ltx")
	if out, err := exec.Command("go", "build", "-o", ltxTool, "github.com/superfly/ltx/cmd/ltx").CombinedOutput(); err != nil {
		t.Fatalf("build the ltx tool: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(ltxDir, "ltx", "9", "*.ltx"))
	changes, _ := filepath.Glob(filepath.Join(ltxDir, "ltx", "0", "*.ltx")) // zero-padded hex: TXID order
	t.Logf("exported chain: %d snapshot, %d change files", len(files), len(changes))
	applied := filepath.Join(t.TempDir(), "applied.sqlite")
	if out, err := exec.Command(ltxTool, append([]string{"apply", "-db", applied}, append(files, changes...)...)...).CombinedOutput(); err != nil {
		t.Fatalf("ltx apply: %v\n%s", err, out)
	}
	if out, err := exec.Command(ltxTool, append([]string{"verify"}, append(files, changes...)...)...).CombinedOutput(); err != nil {
		t.Errorf("ltx verify: %v\n%s", err, out)
	}
	for _, q := range []string{exportUsers, exportPosts} {
		if got, want := sqliteRows(t, applied, q), sqliteRows(t, b, q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ltx apply of the export gives %v, want %v", q, got, want)
		}
	}

	if _, _, err := runCell(t, dir, "export", "d1:nope", "-o", filepath.Join(dir, "c.sqlite")); ExitCode(err) != ExitUsage {
		t.Errorf("export of a cell with no history: exit %d (%v)", ExitCode(err), err)
	}
	if _, _, err := runCell(t, dir, "export", cellName); ExitCode(err) != ExitUsage {
		t.Errorf("export without -o or --ltx: exit %d (%v)", ExitCode(err), err)
	}
}

// restoreLitestreamDir rebuilds a database from a Litestream file
// replica's ltx/<level>/ files: the newest snapshot at level 9, then the
// level 0 files after it, compacted and decoded as Litestream's restore
// does.
func restoreLitestreamDir(t *testing.T, dir string) string {
	t.Helper()
	type file struct {
		path     string
		min, max ltx.TXID
	}
	read := func(level string) []file {
		ents, _ := os.ReadDir(filepath.Join(dir, "ltx", level))
		var fs []file
		for _, e := range ents {
			min, max, err := ltx.ParseFilename(e.Name())
			if err != nil {
				t.Fatalf("%s/%s: %v", level, e.Name(), err)
			}
			fs = append(fs, file{filepath.Join(dir, "ltx", level, e.Name()), min, max})
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].min < fs[j].min })
		return fs
	}
	snaps := read("9")
	if len(snaps) != 1 || snaps[0].min != 1 {
		t.Fatalf("snapshot level: %+v", snaps)
	}
	chain := []file{snaps[0]}
	for _, f := range read("0") {
		if f.min != chain[len(chain)-1].max+1 {
			t.Fatalf("level 0 file %d-%d does not follow %d", f.min, f.max, chain[len(chain)-1].max)
		}
		chain = append(chain, f)
	}
	var rdrs []io.Reader
	for _, f := range chain {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := ltx.NewDecoder(bytes.NewReader(data)).Verify(); err != nil {
			t.Fatalf("%s: %v", f.path, err)
		}
		rdrs = append(rdrs, bytes.NewReader(data))
	}
	var compacted bytes.Buffer
	c, err := ltx.NewCompactor(&compacted, rdrs)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Compact(context.Background()); err != nil {
		t.Fatalf("compact the exported chain: %v", err)
	}
	out := filepath.Join(t.TempDir(), "restored.sqlite")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := ltx.NewDecoder(&compacted).DecodeDatabaseTo(f); err != nil {
		t.Fatalf("decode the compacted chain: %v", err)
	}
	f.Close()
	return out
}
