package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/server/api"
)

// streamProject is a Worker and a Durable Object that answer with a body
// of n lines, one every 100 ms, each "i@<Date.now() when enqueued>": the
// Worker itself on /ticks, the object (through a stub) on /do/ticks. The
// object remembers whether its stream saw cancel (/do/state).
var streamProject = map[string]string{
	"wrangler.jsonc": `{"name":"streams","main":"index.js","durable_objects":{"bindings":[{"name":"S","class_name":"Streamer"}]},
		"migrations":[{"tag":"v1","new_sqlite_classes":["Streamer"]}]}`,
	"index.js": `import { DurableObject } from "cloudflare:workers";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function ticks(n, onCancel) {
  const enc = new TextEncoder();
  let stopped = false;
  return new ReadableStream({
    async start(c) {
      for (let i = 0; i < n && !stopped; i++) {
        if (i > 0) await sleep(100);
        if (stopped) return;
        c.enqueue(enc.encode(i + "@" + Date.now() + "\n"));
      }
      c.close();
    },
    cancel(reason) { stopped = true; onCancel((reason && reason.name) || String(reason)); },
  });
}
export class Streamer extends DurableObject {
  async fetch(req) {
    const u = new URL(req.url);
    if (u.pathname === "/do/state") return Response.json({ canceled: this.canceled || "" });
    if (u.pathname === "/do/writes") {
      // Each chunk after the first follows a write.
      const enc = new TextEncoder();
      const storage = this.ctx.storage;
      return new Response(new ReadableStream({
        async start(c) {
          c.enqueue(enc.encode("0@" + Date.now() + "\n"));
          for (let i = 1; i < 3; i++) {
            await sleep(50);
            await storage.put("n", i);
            c.enqueue(enc.encode(i + "@" + Date.now() + "\n"));
          }
          c.close();
        },
      }));
    }
    this.canceled = "";
    return new Response(ticks(Number(u.searchParams.get("n") || 5), (why) => { this.canceled = why; }));
  }
}
export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    if (u.pathname === "/ignore") {
      // The object's streamed answer is never read.
      const r = await env.S.getByName("s").fetch("http://x/do/ticks?n=1000");
      return new Response("ignored " + r.status);
    }
    if (u.pathname.startsWith("/do/")) return env.S.getByName("s").fetch(req);
    return new Response(ticks(Number(u.searchParams.get("n") || 5), () => {}));
  },
};`,
}

func deployStreams(t *testing.T) bucket.Store {
	t.Helper()
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployStreamsTo(t, store)
	return store
}

func deployStreamsTo(t *testing.T, store bucket.Store) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range streamProject {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
}

// tick is one line of a streamed body: when the script enqueued it and
// when the client had it.
type tick struct {
	enqueued, arrived time.Time
}

// readTicks reads a ticks body line by line.
func readTicks(t *testing.T, url string) []tick {
	t.Helper()
	return readTicksAt(t, url, func(tick) {})
}

// readTicksAt is readTicks calling seen as each line arrives.
func readTicksAt(t *testing.T, url string, seen func(tick)) []tick {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	var got []tick
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		arrived := time.Now()
		i, ms, ok := strings.Cut(sc.Text(), "@")
		n, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil || i != strconv.Itoa(len(got)) {
			t.Fatalf("line %d: %q", len(got), sc.Text())
		}
		got = append(got, tick{enqueued: time.UnixMilli(n), arrived: arrived})
		seen(got[len(got)-1])
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read body: %v", err)
	}
	return got
}

// checkStreamed: all five lines came, and the first reached the client
// before the script had even produced the third. A buffered body would
// bring the first only after the last was produced.
func checkStreamed(t *testing.T, got []tick) {
	t.Helper()
	if len(got) != 5 {
		t.Fatalf("got %d lines, want 5", len(got))
	}
	// Date.now() has millisecond resolution: compare in whole ms.
	if first, third := got[0].arrived.Truncate(time.Millisecond), got[2].enqueued; !first.Before(third) {
		t.Errorf("the first chunk arrived %v after the third was produced; want it before", first.Sub(third))
	}
}

func TestServe_StreamsWorkerBody(t *testing.T) {
	n := startNode(t, deployStreams(t), "node-a")
	checkStreamed(t, readTicks(t, n.public+"/ticks"))
}

// TestPeer_StreamsAcrossNodes: an object on A answers a request that came
// in on B; its streamed body reaches the client chunk by chunk.
func TestPeer_StreamsAcrossNodes(t *testing.T) {
	store := deployStreams(t)
	a := startNode(t, store, "node-a")
	b := startNode(t, store, "node-b")
	// Activate the object on A.
	if status, body := fetchText(t, a.public+"/do/state"); status != 200 {
		t.Fatalf("state on a: %d %s", status, body)
	}
	if status, body := fetchText(t, a.internal+"/state"); status != 200 || !strings.Contains(body, `"phase"`) {
		t.Fatalf("a's state shows no resident cell: %s", body)
	}
	checkStreamed(t, readTicks(t, b.public+"/do/ticks"))
	if status, body := fetchText(t, b.internal+"/state"); status != 200 || strings.Contains(body, `"phase"`) {
		t.Errorf("b's state shows a resident cell; the request was not forwarded: %s", body)
	}
}

// TestServe_StreamDisconnectCancels: a client that goes away mid-stream
// cancels the object's stream (its source sees cancel), and the object
// keeps serving.
func TestServe_StreamDisconnectCancels(t *testing.T) {
	for _, via := range []string{"local", "peer"} {
		t.Run(via, func(t *testing.T) {
			store := deployStreams(t)
			a := startNode(t, store, "node-a")
			entry := a
			if via == "peer" {
				entry = startNode(t, store, "node-b")
				if status, body := fetchText(t, a.public+"/do/state"); status != 200 {
					t.Fatalf("state on a: %d %s", status, body)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", entry.public+"/do/ticks?n=1000", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "0@") {
				t.Fatalf("first line %q, %v", line, err)
			}
			cancel()
			resp.Body.Close()
			deadline := time.Now().Add(5 * time.Second)
			for {
				status, body := fetchText(t, entry.public+"/do/state")
				if status == 200 && strings.Contains(body, `"canceled":"AbortError"`) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the object's stream never saw cancel: %d %s", status, body)
				}
				time.Sleep(20 * time.Millisecond)
			}
			checkStreamed(t, readTicks(t, entry.public+"/do/ticks"))
		})
	}
}

// countingLTX counts LTX uploads that have landed; each takes delay.
type countingLTX struct {
	bucket.Store
	delay  time.Duration
	landed atomic.Int64
}

func (s *countingLTX) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	if !strings.Contains(key, "/ltx/") {
		return s.Store.Put(ctx, key, data, cond)
	}
	time.Sleep(s.delay)
	o, err := s.Store.Put(ctx, key, data, cond)
	s.landed.Add(1)
	return o, err
}

// TestServe_StreamChunksPassTheOutputGate: a chunk an object produces
// after a write reaches the client only once an upload covering that
// write has landed (uploads take 300 ms here; the chunks follow their
// writes by 50 ms).
func TestServe_StreamChunksPassTheOutputGate(t *testing.T) {
	store := &countingLTX{Store: bucket.NewMem(), delay: 300 * time.Millisecond}
	deployStreamsTo(t, store)
	n := startNode(t, store, "node-a")
	if status, body := fetchText(t, n.public+"/do/state"); status != 200 {
		t.Fatalf("state: %d %s", status, body)
	}
	waitDurable(t, n.internal) // whatever the activation uploads has landed
	base := store.landed.Load()
	var landed []int64
	got := readTicksAt(t, n.public+"/do/writes", func(tick) { landed = append(landed, store.landed.Load()-base) })
	if len(got) != 3 {
		t.Fatalf("got %d lines, want 3", len(got))
	}
	for i := 1; i < 3; i++ {
		if landed[i] < int64(i) {
			t.Errorf("chunk %d (after write %d) arrived when %d uploads had landed, want at least %d", i, i, landed[i], i)
		}
	}
}

// TestServe_UnreadStubStreamIsCanceled: a Worker that drops an object's
// streamed answer unread frees the object: once the request is done the
// stream is canceled, as a client going away would.
func TestServe_UnreadStubStreamIsCanceled(t *testing.T) {
	n := startNode(t, deployStreams(t), "node-a")
	if status, body := fetchText(t, n.public+"/ignore"); status != 200 || body != "ignored 200" {
		t.Fatalf("ignore: %d %q", status, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, body := fetchText(t, n.public+"/do/state")
		if status == 200 && strings.Contains(body, `"canceled":"AbortError"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the object's stream was never canceled: %d %s", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDurable waits until every cell resident on the node at internal has
// everything it captured in the bucket (its /state replication).
func waitDurable(t *testing.T, internal string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(internal + "/state")
		if err != nil {
			t.Fatal(err)
		}
		var st api.State
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		pending := 0
		for _, c := range st.Cells {
			if c.Replication != nil && c.Replication.DurableTXID != c.Replication.CapturedTXID {
				pending++
			}
		}
		if pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d cells not durable after 10s: %+v", pending, st.Cells)
		}
	}
}
