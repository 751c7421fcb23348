package server

import (
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// logBook collects a node's log records.
type logBook struct {
	mu   sync.Mutex
	recs []map[string]any
}

func (b *logBook) logger() *slog.Logger {
	return slog.New(recordHandler(func(r slog.Record) {
		a := recordAttrs(r)
		a["msg"], a["level"] = r.Message, r.Level.String()
		b.mu.Lock()
		b.recs = append(b.recs, a)
		b.mu.Unlock()
	}))
}

// find waits for a record that match accepts.
func (b *logBook) find(t *testing.T, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		for _, r := range b.recs {
			if match(r) {
				b.mu.Unlock()
				return r
			}
		}
		b.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the log", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAccessLog_RequestIDFollowsTheCallToItsOwner: a request through B
// for a cell A owns is logged by B's access log with an id, and the
// object's console line on A carries the same id, with the cell and its
// epoch.
func TestAccessLog_RequestIDFollowsTheCallToItsOwner(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, counterProject)
	var logA, logB logBook
	a := startNodeWith(t, store, "node-a", func(o *Options) { o.Logger = logA.logger(); o.AccessLog = true })
	b := startNodeWith(t, store, "node-b", func(o *Options) { o.Logger = logB.logger(); o.AccessLog = true })
	if code, body := fetchText(t, a.public+"/hit/x"); code != 200 || body != "1" {
		t.Fatalf("GET /hit/x on A: %d %q", code, body)
	}
	if code, body := fetchText(t, b.public+"/hit/x"); code != 200 || body != "2" {
		t.Fatalf("GET /hit/x through B: %d %q", code, body)
	}
	access := logB.find(t, "access line on B", func(r map[string]any) bool { return r["source"] == "access" && r["path"] == "/hit/x" })
	id, _ := access["request_id"].(string)
	if !validRequestID(id) || access["method"] != "GET" || access["status"] != int64(200) || access["bytes"] != int64(1) {
		t.Fatalf("access line %v", access)
	}
	if _, ok := access["duration_ms"].(float64); !ok {
		t.Errorf("access line without duration_ms: %v", access)
	}
	worker := logB.find(t, "worker console line on B", func(r map[string]any) bool { return r["source"] == "console" && r["msg"] == "worker hit" })
	if worker["request_id"] != id {
		t.Errorf("B's worker line %v, want request_id %s", worker, id)
	}
	obj := logA.find(t, "object console line on A", func(r map[string]any) bool { return r["source"] == "console" && r["msg"] == "counted 2" })
	if obj["request_id"] != id || obj["epoch"] != uint64(1) || obj["cell"] == nil || obj["level"] != "INFO" {
		t.Errorf("A's object line %v, want request_id %s, a cell and epoch 1", obj, id)
	}
	// A's own access log saw only its own request, under another id.
	first := logA.find(t, "access line on A", func(r map[string]any) bool { return r["source"] == "access" })
	if first["request_id"] == id {
		t.Errorf("A's access line reused B's id %s", id)
	}
}
