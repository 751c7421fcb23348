package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/worker"
)

// logProject logs from the Worker and from a Durable Object it calls.
var logProject = map[string]string{
	"wrangler.jsonc": `{"name":"logs","main":"index.js","durable_objects":{"bindings":[{"name":"C","class_name":"Counter"}]},
		"migrations":[{"tag":"v1","new_sqlite_classes":["Counter"]}]}`,
	"index.js": `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  async incr() {
    const n = (this.ctx.storage.kv.get("n") || 0) + 1;
    this.ctx.storage.kv.put("n", n);
    await null;
    console.warn("object counted", n);
    return n;
  }
}
export default {
  async fetch(req, env) {
    console.log("worker got", new URL(req.url).pathname);
    return new Response(String(await env.C.getByName("a").incr()));
  },
};`,
}

// TestServe_JSONLogs runs celld serve with CELLD_LOG_FORMAT=json and the
// access log on, sends requests, then fences it (its lease replaced):
// every line it wrote on stderr, its last included, is a JSON object, and
// the access, console and cell lines carry their attributes.
func TestServe_JSONLogs(t *testing.T) {
	bin := buildCelld(t)
	proj, bkt := t.TempDir(), t.TempDir()
	for name, body := range logProject {
		if err := os.WriteFile(filepath.Join(proj, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command(bin, "deploy", proj, "--bucket", "file://"+bkt).CombinedOutput(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	public, internal := freePort(t), freePort(t)
	cmd := exec.Command(bin, "serve", "--bucket", "file://"+bkt, "--node", "json-node", "--listen", public, "--internal-listen", internal)
	cmd.Env = append(os.Environ(), "CELLD_LOG_FORMAT=json", "CELLD_LOG_LEVEL=debug", "CELLD_ACCESS_LOG=1",
		"CELLD_TTL_MS=2000", "CELLD_WATCH="+filepath.Join(t.TempDir(), "state"))
	stderr := &syncBuf{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + public + "/__celld/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not healthy in 30s\n%s", stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, path := range []string{"/one", "/two"} {
		if got := get(t, "http://"+public+path); got == "" {
			t.Fatalf("GET %s: empty", path)
		}
	}
	// Fence it: the next renewal finds another session's record.
	store, err := bucket.NewFile(bkt)
	if err != nil {
		t.Fatal(err)
	}
	intruder := core.Lease{Node: "json-node", Session: "intruder", Kind: "node", Expires: time.Now().Add(time.Hour).UnixMilli()}
	if _, err := store.Put(context.Background(), core.LeaseKey("json-node"), core.Encode(intruder), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if code := exitCode(err); code != 3 {
			t.Fatalf("exit code %d, want 3\n%s", code, stderr)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("node did not fence within 15s\n%s", stderr)
	}

	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("stderr line is not JSON: %v\n%s", err, sc.Text())
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("line without %q: %s", k, sc.Text())
			}
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		t.Fatal("no log lines")
	}
	cellName := "Counter:" + worker.ObjectIDFromName("Counter", "a")
	ids := map[string]string{} // path -> request id
	for _, r := range recs {
		if r["source"] == "access" {
			for _, k := range []string{"method", "path", "status", "duration_ms", "bytes", "request_id"} {
				if _, ok := r[k]; !ok {
					t.Errorf("access line without %s: %v", k, r)
				}
			}
			if r["status"] != float64(200) || r["method"] != "GET" {
				t.Errorf("access line: %v", r)
			}
			ids[r["path"].(string)], _ = r["request_id"].(string)
		}
	}
	if len(ids) != 2 || ids["/one"] == "" || ids["/one"] == ids["/two"] {
		t.Fatalf("access lines: request ids %v, want one each for /one and /two", ids)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		switch {
		case r["source"] == "console" && strings.HasPrefix(r["msg"].(string), "worker got "):
			path := strings.TrimPrefix(r["msg"].(string), "worker got ")
			if r["level"] != "INFO" || r["script"] != "logs/index.js" || r["request_id"] != ids[path] {
				t.Errorf("worker console line: %v, want INFO, script logs/index.js, request_id %s", r, ids[path])
			}
			seen["worker"] = true
		case r["source"] == "console" && strings.HasPrefix(r["msg"].(string), "object counted "):
			// console.warn at warn, with the cell, its epoch, and the id of
			// the request whose call ran it (after an await).
			if r["level"] != "WARN" || r["cell"] != cellName || r["epoch"] != float64(1) || r["script"] != "logs/index.js" {
				t.Errorf("object console line: %v, want WARN, cell %s, epoch 1", r, cellName)
			}
			want := ids["/one"]
			if r["msg"] == "object counted 2" {
				want = ids["/two"]
			}
			if r["request_id"] != want {
				t.Errorf("object console line %q: request_id %v, want %s", r["msg"], r["request_id"], want)
			}
			seen["object"] = true
		case r["msg"] == "cell activated":
			if r["cell"] != cellName || r["epoch"] != float64(1) {
				t.Errorf("activation line: %v, want cell and epoch", r)
			}
			seen["activated"] = true
		}
	}
	for _, k := range []string{"worker", "object", "activated"} {
		if !seen[k] {
			t.Errorf("no %s line in:\n%s", k, stderr)
		}
	}
	last := recs[len(recs)-1]
	if last["level"] != "ERROR" || !strings.Contains(last["msg"].(string), "SELF-FENCE: node_lease_record_mismatch_fence") || last["exit_code"] != float64(3) {
		t.Errorf("last line %v, want the fence as an ERROR with exit_code 3", last)
	}
}
