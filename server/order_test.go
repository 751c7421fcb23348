package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
)

// TestOrder_StubCallsArriveInCallOrder: 100 concurrent events (RPC calls
// and fetch()) on one stub reach the object in call order, as in workerd,
// both when the object is on the caller's node and when it is owned by a
// peer (each event forwarded by its own HTTP request), over many runs on
// the same two nodes.
func TestOrder_StubCallsArriveInCallOrder(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, "testdata/eorder", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	a := startNode(t, store, "node-a")
	b := startNode(t, store, "node-b")
	const n = 100
	// CELLD_EORDER_RUNS=100 runs the full check (about a minute on a
	// loaded machine: every event writes a row behind the output gate).
	runs := 20
	if v, err := strconv.Atoi(os.Getenv("CELLD_EORDER_RUNS")); err == nil && v > 0 {
		runs = v
	} else if testing.Short() {
		runs = 3
	}
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	// The first run on a activates the object there: a's runs are local,
	// b's go through the peer hop.
	for _, side := range []struct {
		name string
		node testNode
	}{{"local", a}, {"remote", b}} {
		start := time.Now()
		for run := range runs {
			status, body := fetchText(t, fmt.Sprintf("%s/run?run=%s-%d&n=%d", side.node.public, side.name, run, n))
			if status != 200 {
				t.Fatalf("%s run %d: %d %s", side.name, run, status, body)
			}
			var got struct{ Answers, Mem, Rows []int }
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("%s run %d: %v in %s", side.name, run, err, body)
			}
			if !slices.Equal(got.Answers, want) {
				t.Fatalf("%s run %d: answers %v", side.name, run, got.Answers)
			}
			if !slices.Equal(got.Mem, want) || !slices.Equal(got.Rows, want) {
				t.Fatalf("%s run %d: arrival order\n in memory %v\n rows      %v\nwant call order", side.name, run, got.Mem, got.Rows)
			}
		}
		t.Logf("%s: %d runs of %d events in %v", side.name, runs, n, time.Since(start))
	}
	if ca, cb := cellsOn(t, a), cellsOn(t, b); ca != 1 || cb != 0 {
		t.Fatalf("cells: a=%d b=%d; want the object on a only (b's runs crossed the peer hop)", ca, cb)
	}
}

func cellsOn(t *testing.T, n testNode) int {
	t.Helper()
	_, body := fetchText(t, n.internal+"/state")
	var st struct {
		Cells []json.RawMessage `json:"cells"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("state: %v", err)
	}
	return len(st.Cells)
}

// TestRPC_TargetsAcrossNodes: an RpcTarget an object returns is callable
// from the object's node and through the peer hop, and promise pipelining
// works on both; a function passed to the object calls back on the
// object's node and fails clearly from another node.
func TestRPC_TargetsAcrossNodes(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, "testdata/eorder", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	a := startNode(t, store, "node-a")
	b := startNode(t, store, "node-b")
	type answer struct {
		Size          *int
		Counted       []int
		Pipelined     int
		Callback      int
		CallbackError string
	}
	get := func(n testNode) answer {
		status, body := fetchText(t, n.public+"/rpc")
		var got answer
		if err := json.Unmarshal([]byte(body), &got); status != 200 || err != nil {
			t.Fatalf("/rpc: %d %s (%v)", status, body, err)
		}
		return got
	}
	local := get(a) // activates the object on a
	if local.Size == nil || *local.Size != 0 || !slices.Equal(local.Counted, []int{1, 2}) || local.Pipelined != 1 || local.Callback != 21 || local.CallbackError != "" {
		t.Fatalf("on the owner's node: %+v", local)
	}
	remote := get(b)
	if remote.Size == nil || !slices.Equal(remote.Counted, []int{1, 2}) || remote.Pipelined != 1 {
		t.Fatalf("through the peer hop: %+v", remote)
	}
	if remote.Callback != 0 || !strings.Contains(remote.CallbackError, "callbacks across nodes are not supported") {
		t.Fatalf("a callback across nodes: %+v, want a clear error", remote)
	}
	if ca, cb := cellsOn(t, a), cellsOn(t, b); ca != 1 || cb != 0 {
		t.Fatalf("cells: a=%d b=%d; want the object on a only", ca, cb)
	}
}
