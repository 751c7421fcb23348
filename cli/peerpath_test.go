package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/d1"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/kv"
)

// The data-plane commands with a node running that owns the cell: the work
// goes over signed peer HTTP to the owner, and the command acquires
// nothing (the owner and its epoch do not change).

// ownOnNode makes the node at dir's bucket take cellName, by having use
// send a request through a Caller that goes to the node's peer route as
// another node would, and returns the owner record.
func ownOnNode(t *testing.T, dir, cellName string, use func(cell.Caller) error) fleet.CellInfo {
	t.Helper()
	ctx := context.Background()
	g := &globals{Bucket: "file://" + filepath.Join(dir, "bucket")}
	s, _ := g.openStore()
	leases, err := fleet.ListLeases(ctx, s)
	if err != nil || len(leases) != 1 {
		t.Fatalf("leases: %+v %v", leases, err)
	}
	c, done, _ := g.cellCaller(ctx)
	defer done(ctx)
	toNode := cell.CallerFunc(func(ctx context.Context, name string, req []byte) ([]byte, error) {
		out, _, err := c.(*reach).remote(ctx, name, leases[0].Lease.Node, leases[0].Lease.Advertise, req)
		return out, err
	})
	if err := use(toNode); err != nil {
		t.Fatalf("first request on the node: %v", err)
	}
	return lookup(t, s, cellName)
}

func lookup(t *testing.T, s bucket.Store, cellName string) fleet.CellInfo {
	t.Helper()
	ci, err := fleet.LookupCell(context.Background(), s, cellName, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	return ci
}

func TestD1Migrate_ThroughTheOwningNode(t *testing.T) {
	dir := newD1Project(t, d1Entry, d1Migrations1)
	cellName := "d1:" + d1TestID
	s, _ := (&globals{Bucket: "file://" + filepath.Join(dir, "bucket")}).openStore()

	// No node: the tool lease path applies the directory.
	if out, _, err := runD1(t, dir, "migrate", "ledger", dir); err != nil {
		t.Fatalf("migrate without a node: %v\n%s", err, out)
	}
	if ci := lookup(t, s, cellName); !ci.Own.Released || ci.Own.Epoch != 1 {
		t.Fatalf("after the tool path: %+v", ci)
	}

	// A node takes the database over (epoch 2) and keeps it.
	_, stop := startTestNode(t, filepath.Join(dir, "bucket"), "n1")
	defer stop()
	owned := ownOnNode(t, dir, cellName, func(c cell.Caller) error {
		_, err := (&d1.Client{Caller: c, Cell: cellName}).Query(context.Background(), []string{"SELECT 1"})
		return err
	})
	if !owned.OwnerLive || owned.Own.Node != "n1" || owned.Own.Epoch != 2 {
		t.Fatalf("node does not own the database: %+v", owned)
	}

	// A new migration, applied with the node running.
	if err := os.WriteFile(filepath.Join(dir, "db/migrations/0011_more.sql"), []byte("ALTER TABLE posts ADD COLUMN body TEXT;\nUPDATE posts SET body = 'b';"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runD1(t, dir, "migrate", "ledger", dir)
	if err != nil || !strings.Contains(out, "✅ 0011_more.sql") {
		t.Fatalf("migrate through the node: %v\n%s", err, out)
	}
	if ci := lookup(t, s, cellName); ci.Own != owned.Own {
		t.Fatalf("the command changed ownership: %+v, was %+v", ci.Own, owned.Own)
	}
	out, _, err = runD1(t, dir, "migrations", "list", "ledger", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Applied []d1.AppliedMigration `json:"applied"`
		Pending []string              `json:"pending"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var names []string
	for _, a := range listed.Applied {
		names = append(names, a.Name)
	}
	table := d1Rows(t, dir, cellName, "SELECT name FROM schema_history ORDER BY id")
	var fromTable []string
	for _, r := range table {
		var row []string
		json.Unmarshal([]byte(r), &row)
		fromTable = append(fromTable, row[0])
	}
	want := []string{"0001_users.sql", "0002_posts.sql", "0010_seed.sql", "0011_more.sql"}
	if !reflect.DeepEqual(names, want) || !reflect.DeepEqual(fromTable, want) || len(listed.Pending) != 0 {
		t.Fatalf("list says %v (pending %v); the table holds %v; want %v", names, listed.Pending, fromTable, want)
	}
	if got := d1Rows(t, dir, cellName, "SELECT body FROM posts"); !reflect.DeepEqual(got, []string{`["b"]`}) {
		t.Errorf("posts.body: %v", got)
	}
	if ci := lookup(t, s, cellName); ci.Own != owned.Own {
		t.Fatalf("reading changed ownership: %+v", ci.Own)
	}
}

func TestKVBulkPut_ThroughTheOwningNode(t *testing.T) {
	dir := newKVDir(t)
	cellName := kv.CellName(kvTestNS)
	s, _ := (&globals{Bucket: "file://" + filepath.Join(dir, "bucket")}).openStore()
	_, stop := startTestNode(t, filepath.Join(dir, "bucket"), "n1")
	defer stop()
	owned := ownOnNode(t, dir, cellName, func(c cell.Caller) error {
		_, err := kv.NewClient(c, kvTestNS).Get(context.Background(), "nothing")
		return err
	})
	if !owned.OwnerLive || owned.Own.Node != "n1" {
		t.Fatalf("node does not own the namespace: %+v", owned)
	}

	before := time.Now().Unix()
	items := genBulk(10_000, 11, before)
	file := writeBulkFile(t, dir, items)
	if _, errOut, err := runKV(t, dir, "kv", "bulk", "put", file, "--namespace-id", kvTestNS); err != nil {
		t.Fatalf("bulk put through the node: %v\n%s", err, errOut)
	}
	if ci := lookup(t, s, cellName); ci.Own != owned.Own {
		t.Fatalf("the command changed ownership: %+v, was %+v", ci.Own, owned.Own)
	}
	checkStored(t, kvClient(t, dir), items, before, time.Now().Unix())
}

// A live owner this machine cannot reach: exit 1, a message that says so
// and what to do, and nothing taken over.
func TestKV_UnreachableOwnerFailsClearly(t *testing.T) {
	ctx := context.Background()
	dir := newKVDir(t)
	s, _ := (&globals{Bucket: "file://" + filepath.Join(dir, "bucket")}).openStore()
	if err := fleet.EnsureFormat(ctx, s); err != nil {
		t.Fatal(err)
	}
	far, err := fleet.Start(ctx, s, fleet.Config{Node: "far", Advertise: "127.0.0.1:1", TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer far.Close(ctx)
	if _, err := far.Acquire(ctx, kv.CellName(kvTestNS)); err != nil {
		t.Fatal(err)
	}
	_, _, err = runKV(t, dir, "kv", "key", "put", "k", "v", "--namespace-id", kvTestNS)
	if ExitCode(err) != ExitFailure {
		t.Fatalf("exit %d (%v), want 1", ExitCode(err), err)
	}
	if msg := err.Error(); !strings.Contains(msg, "owned by live node far at 127.0.0.1:1, which is unreachable from here") {
		t.Errorf("message: %s", msg)
	}
	if hint := HintOf(err); !strings.Contains(hint, "inside the fleet's network") || !strings.Contains(hint, "drain node far") {
		t.Errorf("hint: %q", hint)
	}
	if ci := lookup(t, s, kv.CellName(kvTestNS)); ci.Own.Node != "far" || ci.Own.Epoch != 1 {
		t.Errorf("ownership changed: %+v", ci.Own)
	}
}
