package server

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/celldgo/celld/server/api"
)

// /state shows a hibernated object, and its next request wakes it with
// its storage intact.
func TestState_ShowsHibernation(t *testing.T) {
	base, internal := startExampleNode(t, "counter", t.TempDir(), func(o *Options) { o.Hibernate = 100 * time.Millisecond })
	if status, body := fetchText(t, base+"/?name=h"); status != 200 || body != "1\n" {
		t.Fatalf("first: %d %q", status, body)
	}
	state := func() api.State {
		resp, err := http.Get(internal + "/state")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st api.State
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := state()
		if st.Counters.Hibernating == 1 && len(st.Cells) == 1 && st.Cells[0].Hibernating && st.Counters.Occupied == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no hibernation shown within 10s: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status, body := fetchText(t, base+"/?name=h"); status != 200 || body != "2\n" {
		t.Fatalf("after hibernation: %d %q", status, body)
	}
	st := state()
	if st.Cells[0].Hibernating && st.Cells[0].IdleMS < 50 {
		t.Errorf("still hibernating right after a request: %+v", st.Cells[0])
	}
	// Its replication: both writes captured and in the bucket.
	if rep := st.Cells[0].Replication; rep == nil || rep.DurableTXID != rep.CapturedTXID || rep.CapturedTXID < 2 || rep.Segments+rep.Snapshots < 2 || rep.Bytes == 0 {
		t.Errorf("replication of a cell with two acknowledged writes: %+v", rep)
	}
}
