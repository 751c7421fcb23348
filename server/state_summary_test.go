package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/celldgo/celld/server/api"
)

// The summary answer of a node with 10,000 resident cells stays small:
// the counters and the top N cells, whatever the node holds.
func TestStateSummary_BoundedAt10000Cells(t *testing.T) {
	st := api.State{Node: "n1", Session: "s", Version: "v1.2.3", Health: "ok", Deployment: "app@0123456789abcdef"}
	for i := range 10_000 {
		st.Cells = append(st.Cells, api.Cell{
			Cell: fmt.Sprintf("Counter:%064x", i), Phase: "owned", Epoch: uint64(i % 7), IdleMS: int64(10_000 - i%5000), Inflight: i % 3 / 2,
			Replication: &api.Replication{CapturedTXID: uint64(i), DurableTXID: uint64(i), Segments: 3, Bytes: 12345},
		})
	}
	st.CellCount = len(st.Cells)
	full, _ := json.Marshal(st)
	summarize(&st, 10)
	sum, _ := json.Marshal(st)
	t.Logf("/state at 10,000 cells: %d bytes in full, %d bytes as ?summary=1&top=10", len(full), len(sum))
	if len(sum) > 8<<10 {
		t.Errorf("summary is %d bytes at 10,000 cells, want at most 8 KiB", len(sum))
	}
	if len(st.Cells) != 10 || st.CellCount != 10_000 || !st.Summary {
		t.Fatalf("summary kept %d cells, count %d, summary %v", len(st.Cells), st.CellCount, st.Summary)
	}
	for i, c := range st.Cells {
		if c.Inflight != 1 || (i > 0 && c.IdleMS < st.Cells[i-1].IdleMS) {
			t.Errorf("cell %d of the summary is not among the busiest: %+v", i, c)
		}
	}
}

func TestRequestCounter_CountsFiveHundreds(t *testing.T) {
	var c requestCounter
	for _, status := range []int{200, 404, 500, 503, 0} {
		rec := httptest.NewRecorder()
		sw := &statusWriter{ResponseWriter: rec, status: http.StatusOK}
		if status != 0 {
			sw.WriteHeader(http.StatusEarlyHints) // informational: not the status
			sw.WriteHeader(status)
		}
		sw.Write([]byte("x"))
		c.count(sw.status)
	}
	if c.total.Load() != 5 || c.errors.Load() != 2 {
		t.Errorf("total %d errors %d, want 5 and 2", c.total.Load(), c.errors.Load())
	}
}

// A running node counts its Worker requests on /state and answers the
// summary form.
func TestState_RequestsAndSummaryOnANode(t *testing.T) {
	base, internal := startExampleNode(t, "counter", t.TempDir())
	for _, name := range []string{"a", "b", "c"} {
		if status, _ := fetchText(t, base+"/?name="+name); status != 200 {
			t.Fatalf("status %d", status)
		}
	}
	fetchText(t, base+"/nope")
	get := func(q string) (int, api.State) {
		resp, err := http.Get(internal + "/state" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st api.State
		json.NewDecoder(resp.Body).Decode(&st)
		return resp.StatusCode, st
	}
	if _, st := get(""); st.Requests != 4 || st.Errors != 0 || st.CellCount != 3 || len(st.Cells) != 3 || st.Summary {
		t.Errorf("full state: requests %d errors %d cells %d/%d summary %v", st.Requests, st.Errors, len(st.Cells), st.CellCount, st.Summary)
	}
	if _, st := get("?summary=1&top=2"); !st.Summary || len(st.Cells) != 2 || st.CellCount != 3 || st.Counters.Occupied != 3 {
		t.Errorf("summary: %d cells of %d, occupied %d, summary %v", len(st.Cells), st.CellCount, st.Counters.Occupied, st.Summary)
	}
	if status, _ := get("?summary=1&top=-1"); status != http.StatusBadRequest {
		t.Errorf("top=-1: status %d, want 400", status)
	}
}
