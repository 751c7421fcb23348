package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/superfly/ltx"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/deploy"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A hostile object in one cell's history (well formed, checksummed, its
// header claiming 2^31 pages) leaves the node alive and serving every
// other cell; that cell's requests get 503 with Retry-After, and the
// failure is logged once, naming the object, not once per request with a
// stack.
func TestUnavailable_PoisonedCellIs503AndLoggedOnce(t *testing.T) {
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "wrangler.jsonc"), []byte(`{"name":"poison","main":"index.js","compatibility_date":"2026-04-01",
  "durable_objects":{"bindings":[{"name":"C","class_name":"Counter"}]},"migrations":[{"tag":"v1","new_sqlite_classes":["Counter"]}]}`), 0o644)
	os.WriteFile(filepath.Join(proj, "index.js"), []byte(`
import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  fetch() {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS c (n)");
    this.ctx.storage.sql.exec("INSERT INTO c VALUES (1)");
    return new Response(String(this.ctx.storage.sql.exec("SELECT count(*) AS n FROM c").one().n));
  }
}
export default {
  fetch(req, env) {
    const [, what, name] = new URL(req.url).pathname.split("/");
    if (what === "id") return new Response(env.C.idFromName(name).toString());
    return env.C.get(env.C.idFromName(name)).fetch(req);
  },
};
`), 0o644)
	tmp := t.TempDir()
	store, err := bucket.NewFile(filepath.Join(tmp, "bucket"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := deploy.Deploy(ctx, store, proj, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	base := runTestNode(t, Options{Store: store, Node: "poison", StateDir: filepath.Join(tmp, "state"),
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	get := func(path string) (int, string, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
	}
	_, _, badID := get("/id/bad")
	poisonKey := cell.LTXKey("Counter:"+badID, 1, 1, 1)
	var buf bytes.Buffer
	enc, _ := ltx.NewEncoder(&buf)
	enc.EncodeHeader(ltx.Header{Version: ltx.Version, PageSize: 4096, Commit: 1 << 31, MinTXID: 1, MaxTXID: 1, Timestamp: time.Now().UnixMilli()})
	enc.EncodePage(ltx.PageHeader{Pgno: 1}, make([]byte, 4096))
	enc.SetPostApplyChecksum(ltx.ChecksumFlag)
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Put(ctx, poisonKey, buf.Bytes(), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if st, ra, body := get("/c/bad"); st != 503 || ra == "" {
			t.Fatalf("request %d to the poisoned cell: %d (Retry-After %q) %q; want 503 with Retry-After\n%s", i, st, ra, body, logs.String())
		}
		if st, _, body := get("/c/good"); st != 200 || body != strconv.Itoa(i+1) {
			t.Fatalf("request %d to a healthy cell: %d %q", i, st, body)
		}
	}
	if st, _, _ := get("/__celld/health"); st != 200 {
		t.Fatalf("health %d", st)
	}
	out := logs.String()
	if n := strings.Count(out, "cell unavailable"); n != 1 {
		t.Errorf("the poisoned cell was logged %d times, want once:\n%s", n, out)
	}
	if !strings.Contains(out, poisonKey) {
		t.Errorf("the log does not name the object %s:\n%s", poisonKey, out)
	}
	if strings.Contains(out, "uncaught exception") {
		t.Errorf("a refusal was logged as an uncaught exception:\n%s", out)
	}
}
