package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
)

// slowLTX delays the upload of every LTX object and remembers when the
// last one finished.
type slowLTX struct {
	bucket.Store
	delay time.Duration
	mu    sync.Mutex
	last  time.Time
}

func (s *slowLTX) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	if !strings.Contains(key, "/ltx/") {
		return s.Store.Put(ctx, key, data, cond)
	}
	time.Sleep(s.delay)
	o, err := s.Store.Put(ctx, key, data, cond)
	s.mu.Lock()
	s.last = time.Now()
	s.mu.Unlock()
	return o, err
}

// A Durable Object that writes and then calls out: the outbound request
// leaves only once the write is in the bucket.
func TestOutboundFetchWaitsForDurability(t *testing.T) {
	var mu sync.Mutex
	var arrived []time.Time
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived = append(arrived, time.Now())
		mu.Unlock()
		w.Write([]byte("seen"))
	}))
	defer ext.Close()

	dir := t.TempDir()
	files := map[string]string{
		"wrangler.jsonc": `{"name":"out","main":"index.js","durable_objects":{"bindings":[{"name":"N","class_name":"Notifier"}]},
			"migrations":[{"tag":"v1","new_sqlite_classes":["Notifier"]}]}`,
		"index.js": `import { DurableObject } from "cloudflare:workers";
export class Notifier extends DurableObject {
  async notify(url) {
    const n = ((await this.ctx.storage.get("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    const r = await fetch(url + "?n=" + n);
    return n + ":" + (await r.text());
  }
}
export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    return new Response(await env.N.getByName("x").notify(u.searchParams.get("to")));
  },
};`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store := &slowLTX{Store: bucket.NewMem(), delay: 300 * time.Millisecond}
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	n := startDrainNode(t, store, "node-a", nil)
	for want := 1; want <= 2; want++ {
		status, body := fetchText(t, n.public+"/?to="+ext.URL)
		if status != 200 || body != string(rune('0'+want))+":seen" {
			t.Fatalf("call %d: %d %q", want, status, body)
		}
		mu.Lock()
		got := arrived[len(arrived)-1]
		mu.Unlock()
		store.mu.Lock()
		durable := store.last
		store.mu.Unlock()
		if got.Before(durable) {
			t.Errorf("call %d: the outbound request arrived %v before its write was in the bucket", want, durable.Sub(got))
		}
	}
}
