package server

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/r2"
)

// slowLTXObjects is a memory store whose LTX uploads are slow, and which
// records when each R2 object write arrived.
type slowLTXObjects struct {
	*bucket.Mem
	delay time.Duration

	mu       sync.Mutex
	durable  time.Time   // the last LTX upload finished
	arrivals []time.Time // R2 object writes
}

func (s *slowLTXObjects) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	if !strings.Contains(key, "/ltx/") {
		return s.Mem.Put(ctx, key, data, cond)
	}
	time.Sleep(s.delay)
	o, err := s.Mem.Put(ctx, key, data, cond)
	s.mu.Lock()
	s.durable = time.Now()
	s.mu.Unlock()
	return o, err
}

func (s *slowLTXObjects) PutObject(ctx context.Context, key string, r io.Reader, size int64, o bucket.PutOptions) (bucket.ObjectInfo, error) {
	s.mu.Lock()
	s.arrivals = append(s.arrivals, time.Now())
	s.mu.Unlock()
	return s.Mem.PutObject(ctx, key, r, size, o)
}

// A Durable Object that writes its storage and then an R2 object: the R2
// write reaches the bucket only once the storage write is durable, so R2
// never holds data derived from a write that could still be lost.
func TestR2_MutationWaitsForObjectDurability(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"wrangler.jsonc": `{"name":"r2gate","main":"index.js","durable_objects":{"bindings":[{"name":"N","class_name":"Ledger"}]},
			"migrations":[{"tag":"v1","new_sqlite_classes":["Ledger"]}],
			"r2_buckets":[{"binding":"B","bucket_name":"exports"}]}`,
		"index.js": `import { DurableObject } from "cloudflare:workers";
export class Ledger extends DurableObject {
  async record() {
    const n = ((await this.ctx.storage.get("n")) ?? 0) + 1;
    await this.ctx.storage.put("n", n);
    await this.env.B.put("ledger/" + n, String(n));
    return n;
  }
}
export default {
  async fetch(req, env) {
    const n = await env.N.getByName("x").record();
    const o = await env.B.get("ledger/" + n);
    return new Response(n + ":" + (await o.text()));
  },
};`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store := &slowLTXObjects{Mem: bucket.NewMem(), delay: 300 * time.Millisecond}
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	n := startDrainNode(t, store, "node-a", nil)
	for want := 1; want <= 2; want++ {
		status, body := fetchText(t, n.public+"/")
		if w := string(rune('0'+want)) + ":" + string(rune('0'+want)); status != 200 || body != w {
			t.Fatalf("call %d: %d %q, want %q", want, status, body, w)
		}
		store.mu.Lock()
		got, durable := store.arrivals[len(store.arrivals)-1], store.durable
		store.mu.Unlock()
		if got.Before(durable) {
			t.Errorf("call %d: the R2 write arrived %v before the object's write was in the bucket", want, durable.Sub(got))
		}
	}
}

// An R2 object's body leaves the node with its Content-Length, as workerd
// sends it, not chunked; a request body of known length reaches R2 with
// its length, so the put is one request (a plain MD5 ETag, not a
// multipart one) and its bytes come back whole.
func TestR2_BodiesKeepTheirLength(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"wrangler.jsonc": `{"name":"r2len","main":"index.js","r2_buckets":[{"binding":"B","bucket_name":"media"}]}`,
		"index.js": `export default {
  async fetch(req, env) {
    const key = new URL(req.url).pathname.slice(1);
    if (req.method === "PUT") {
      const o = await env.B.put(key, req.body);
      return new Response(o.size + " " + o.etag);
    }
    const o = await env.B.get(key);
    return new Response(o.body);
  },
};`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store := bucket.NewMem()
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	n := startDrainNode(t, store, "node-a", nil)
	// Past one part: of unknown length it would be a multipart upload.
	data := bytes.Repeat([]byte("0123456789abcdef"), (r2.PartSize+300<<10)/16)
	req, _ := http.NewRequest("PUT", n.public+"/clip.bin", bytes.NewReader(data))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sum := md5.Sum(data)
	if want := fmt.Sprintf("%d %x", len(data), sum); resp.StatusCode != 200 || string(answer) != want {
		t.Fatalf("put: %d %q, want %q (one request: the plain MD5 ETag)", resp.StatusCode, answer, want)
	}
	resp, err = http.Get(n.public + "/clip.bin")
	if err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(back, data) {
		t.Fatalf("get: %d bytes (%v), want the %d put", len(back), err, len(data))
	}
	if resp.ContentLength != int64(len(data)) || len(resp.TransferEncoding) != 0 {
		t.Errorf("get: Content-Length %d, Transfer-Encoding %v; want %d and none", resp.ContentLength, resp.TransferEncoding, len(data))
	}
}
