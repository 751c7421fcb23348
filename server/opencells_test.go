package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
)

// stateFiles counts the process's descriptors open on files under dir.
func stateFiles(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, dir+string(filepath.Separator)) {
			n++
		}
	}
	return n
}

// A node whose open-cell bound (CELLD_MAX_OPEN_CELLS) is far below its
// resident cells keeps serving all of them: the idle ones close their
// files and reopen them on their next event, with what they stored and
// their alarms intact, and the node's descriptors on cell files stay
// within the bound.
func TestResidentCellsBeyondOpenBound_alarmsFireDataIntact(t *testing.T) {
	const bound, cells = 4, 24
	fs, err := bucket.NewFile(filepath.Join(t.TempDir(), "bucket"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), fs, "../cmd/celld/testdata/alarms", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	var nd *node
	testNodeHook = func(x *node) { nd = x }
	defer func() { testNodeHook = nil }()
	stateDir := filepath.Join(t.TempDir(), "state")
	base := runTestNode(t, Options{Store: fs, Node: "fds", StateDir: stateDir, MaxOpenCells: bound})
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	// Every cell gets an alarm an hour ahead, one after another: the
	// first ones park while the later ones open.
	far := time.Now().Add(time.Hour).UnixMilli()
	for i := range cells {
		get(fmt.Sprintf("/arm?name=c%d&at=%d", i, far))
		if n := stateFiles(t, stateDir); n > 2*(bound+1) {
			t.Fatalf("after %d cells: %d descriptors on cell files, bound %d cells (2 each)", i+1, n, bound)
		}
	}
	// Then each alarm moves to 1 s ahead (the bound is soft while they
	// fire: a cell busy uploading its alarm's write parks a little later).
	due := time.Now().Add(time.Second).UnixMilli()
	for i := range cells {
		get(fmt.Sprintf("/arm?name=c%d&at=%d", i, due))
	}
	// The alarms fire on parked cells too (each reopens for its handler,
	// which writes), and every cell reads back what its alarm stored.
	deadline := time.Now().Add(8 * time.Second)
	for i := range cells {
		for {
			var st struct {
				Fires []struct {
					At int64 `json:"at"`
				} `json:"fires"`
				Pending any `json:"pending"`
			}
			if err := json.Unmarshal([]byte(get(fmt.Sprintf("/status?name=c%d", i))), &st); err != nil {
				t.Fatal(err)
			}
			if len(st.Fires) == 1 && st.Pending == nil {
				if st.Fires[0].At < due {
					t.Errorf("c%d: alarm ran at %d, before its time %d", i, st.Fires[0].At, due)
				}
				break
			}
			if len(st.Fires) > 1 || time.Now().After(deadline) {
				t.Fatalf("c%d: fires %v, pending %v", i, st.Fires, st.Pending)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The last reads reopened cells; the pool parks the others again.
	c := nd.objects.counts()
	for end := time.Now().Add(3 * time.Second); c.OpenCells > bound && time.Now().Before(end); c = nd.objects.counts() {
		time.Sleep(20 * time.Millisecond)
	}
	if c.Occupied != cells || c.OpenCells > bound+1 || c.ParkedCells < cells-bound-1 || c.MaxOpenCells != bound {
		t.Errorf("counters %+v: want %d resident, at most %d open", c, cells, bound)
	}
	st := nd.objects.host.Pool().Stats()
	if st.Reopens < cells-bound {
		t.Errorf("pool %+v: want parked cells reopened for their alarms and reads", st)
	}
	if n := stateFiles(t, stateDir); n > 2*(bound+1) {
		t.Errorf("%d descriptors on cell files at the end, bound %d cells", n, bound)
	}
	// Each cell was only ever activated once: parking is no eviction.
	for i := range cells {
		if !strings.Contains(get(fmt.Sprintf("/status?name=c%d", i)), `"fires":[{`) {
			t.Errorf("c%d lost its data", i)
		}
	}
	if got := nd.objects.counts().Occupied; got != cells {
		t.Errorf("%d resident at the end, want %d", got, cells)
	}
}
