package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
)

func TestCellList(t *testing.T) {
	dir := t.TempDir()
	s, err := bucket.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	live := time.Now().Add(time.Hour).UnixMilli()
	s.Put(ctx, core.LeaseKey("a"), core.Encode(core.Lease{Node: "a", Session: "sa", Advertise: "10.0.0.1:8081", Expires: live}), bucket.Cond{})
	s.Put(ctx, core.OwnKey("Counter:01"), core.Encode(core.Own{Node: "a", Session: "sa", Epoch: 3}), bucket.Cond{})
	s.Put(ctx, core.OwnKey("Counter:02"), core.Encode(core.Own{Node: "b", Session: "sb", Epoch: 7}), bucket.Cond{})
	s.Put(ctx, core.OwnKey("d1:db"), core.Encode(core.Own{Node: "a", Session: "sa", Epoch: 2, Released: true}), bucket.Cond{})
	s.Put(ctx, "cells/Counter:01/ltx/e0000000000000003/0000000000000001-0000000000000001.ltx", []byte("x"), bucket.Cond{})

	var out, errOut bytes.Buffer
	cmd := New("test")
	cmd.Writer, cmd.ErrWriter = &out, &errOut
	if err := cmd.Run(ctx, []string{"celld", "--bucket", "file://" + dir, "cell", "list"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"Counter:01  3      a      live at 10.0.0.1:8081", "Counter:02  7      b      owner dead", "d1:db       2      a      released"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	out.Reset()
	cmd = New("test")
	cmd.Writer = &out
	if err := cmd.Run(ctx, []string{"celld", "--bucket", "file://" + dir, "cell", "list", "--json"}); err != nil {
		t.Fatal(err)
	}
	var cells []map[string]any
	if err := json.Unmarshal(out.Bytes(), &cells); err != nil || len(cells) != 3 {
		t.Fatalf("json: %v, %d cells\n%s", err, len(cells), out.String())
	}
}
