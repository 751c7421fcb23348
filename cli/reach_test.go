package cli

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/fleet/core"
)

// counterHandler is a built-in cell kind for tests: each request adds its
// body (an integer) to a counter and answers the new total; "fail" makes a
// write and then fails, so the test sees whether the write survived.
func counterHandler(db *cell.DB, req []byte) ([]byte, error) {
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS c(n INTEGER NOT NULL)"); err != nil {
		return nil, err
	}
	if string(req) == "fail" {
		return nil, errors.New("refused on purpose")
	}
	add, err := strconv.Atoi(string(req))
	if err != nil {
		return nil, err
	}
	var total int64
	err = db.Transaction(func() error {
		if _, err := db.Exec("INSERT INTO c(n) VALUES (?)", int64(add)); err != nil {
			return err
		}
		cur, err := db.Exec("SELECT SUM(n) FROM c")
		if err != nil {
			return err
		}
		row, err := cur.One()
		if err != nil {
			return err
		}
		total = row[0].(int64)
		return nil
	})
	return []byte(strconv.FormatInt(total, 10)), err
}

func init() { builtinHandlers["testc:"] = counterHandler }

func TestReach_ToolLeasePathIsDurableAndReleases(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g := &globals{Bucket: "file://" + dir}
	s, err := g.openStore()
	if err != nil {
		t.Fatal(err)
	}
	for round, want := range []string{"3", "6"} {
		c, done, err := g.cellCaller(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for range 3 {
			if got, err = c.Call(ctx, "testc:one", []byte("1")); err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != want {
			t.Fatalf("round %d: total %s, want %s", round, got, want)
		}
		// While held, the record names the tool's live lease.
		ci, err := fleet.LookupCell(ctx, s, "testc:one", time.Now().UnixMilli())
		if err != nil || !ci.OwnerLive || ci.Own.Epoch != uint64(round+1) {
			t.Fatalf("while held: %+v %v", ci, err)
		}
		if err := done(ctx); err != nil {
			t.Fatal(err)
		}
		ci, err = fleet.LookupCell(ctx, s, "testc:one", time.Now().UnixMilli())
		if err != nil || !ci.Own.Released || ci.OwnerLive {
			t.Fatalf("after done: %+v %v", ci, err)
		}
		leases, err := fleet.ListLeases(ctx, s)
		if err != nil || len(leases) != 0 {
			t.Fatalf("tool lease left behind: %+v %v", leases, err)
		}
	}
}

func TestReach_HandlerErrorIsARequestError(t *testing.T) {
	ctx := context.Background()
	g := &globals{Bucket: "file://" + t.TempDir()}
	c, done, err := g.cellCaller(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done(ctx)
	_, err = c.Call(ctx, "testc:x", []byte("fail"))
	var re *RequestError
	if !errors.As(err, &re) || re.Message != "refused on purpose" {
		t.Fatalf("err = %v", err)
	}
	if _, err := c.Call(ctx, "nokind:x", nil); err == nil {
		t.Fatal("an unknown cell kind was accepted")
	}
}

func TestReach_UnreachableLiveOwnerIsNamed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := bucket.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.EnsureFormat(ctx, s); err != nil {
		t.Fatal(err)
	}
	// A live node whose advertised address refuses connections owns it.
	n, err := fleet.Start(ctx, s, fleet.Config{Node: "far", Advertise: "127.0.0.1:1", Kind: core.KindNode, TTL: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(ctx)
	if _, err := n.Acquire(ctx, "testc:held"); err != nil {
		t.Fatal(err)
	}
	g := &globals{Bucket: "file://" + dir}
	c, done, err := g.cellCaller(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer done(ctx)
	_, err = c.Call(ctx, "testc:held", []byte("1"))
	var ue *UnreachableOwnerError
	if !errors.As(err, &ue) || ue.Node != "far" || ue.Advertise != "127.0.0.1:1" {
		t.Fatalf("err = %v", err)
	}
	// Nothing was taken over: the live owner still owns it.
	ci, _ := fleet.LookupCell(ctx, s, "testc:held", time.Now().UnixMilli())
	if ci.Own.Node != "far" || ci.Own.Epoch != 1 {
		t.Fatalf("ownership changed: %+v", ci)
	}
}
