package server

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// queueTestWorker logs every delivery into KV (d:<queue>:<tag>:<attempts>
// -> {batch size, time}) and settles by the message's body.
const queueTestWorker = `
export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (url.pathname === "/send") {
      const q = env[url.searchParams.get("q")];
      const tags = url.searchParams.get("tags").split(",");
      if (url.searchParams.get("batch")) await q.sendBatch(tags.map((tag) => ({ body: { tag } })));
      else for (const tag of tags) await q.send({ tag });
      return new Response("sent");
    }
    const list = await env.LOG.list({ prefix: "d:" });
    const out = {};
    for (const k of list.keys) out[k.name] = JSON.parse(await env.LOG.get(k.name));
    return Response.json(out);
  },
  async queue(batch, env) {
    for (const m of batch.messages) {
      await env.LOG.put("d:" + batch.queue + ":" + m.body.tag + ":" + m.attempts, JSON.stringify({ size: batch.messages.length, at: Date.now() }));
    }
    const tags = batch.messages.map((m) => m.body.tag);
    if (tags.includes("hang") && batch.messages.find((m) => m.body.tag === "hang").attempts === 1) await new Promise(() => {});
    for (const m of batch.messages) if (m.body.tag.startsWith("ack")) m.ack();
    // Each rule looks at its own message's attempts: the two sends may
    // land in one batch with a redelivered message first.
    const first = (tag) => batch.messages.some((m) => m.body.tag === tag && m.attempts === 1);
    if (first("retryall")) batch.retryAll();
    if (first("throw")) throw new Error("boom");
  },
};`

const queueTestConfig = `{"name":"qtest","main":"index.js","compatibility_date":"2026-04-01",
  "kv_namespaces":[{"binding":"LOG","id":"log"}],
  "queues":{
    "producers":[{"binding":"SIZED","queue":"sized"},{"binding":"TIMED","queue":"timed"},{"binding":"SETTLE","queue":"settle"},{"binding":"HANG","queue":"hang"}],
    "consumers":[
      {"queue":"sized","max_batch_size":5,"max_batch_timeout":60},
      {"queue":"timed","max_batch_size":100,"max_batch_timeout":1},
      {"queue":"settle","max_batch_size":10,"max_batch_timeout":0,"max_retries":3},
      {"queue":"hang","max_batch_size":10,"max_batch_timeout":0,"max_retries":3}
    ]}}`

type delivery struct {
	Size int   `json:"size"`
	At   int64 `json:"at"`
}

func startQueueNode(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	store, err := bucket.NewFile(filepath.Join(tmp, "bucket"))
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, map[string]string{"wrangler.jsonc": queueTestConfig, "index.js": queueTestWorker})
	return runTestNode(t, Options{Store: store, Node: "queue-node", StateDir: filepath.Join(tmp, "state")})
}

func queueLog(t *testing.T, base string) map[string]delivery {
	t.Helper()
	status, body := fetchText(t, base+"/log")
	if status != 200 {
		t.Fatalf("log: %d %s", status, body)
	}
	var out map[string]delivery
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("log: %v: %s", err, body)
	}
	return out
}

// waitLog polls the delivery log until every key in want is there.
func waitLog(t *testing.T, base string, within time.Duration, want ...string) map[string]delivery {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		log := queueLog(t, base)
		missing := ""
		for _, k := range want {
			if _, ok := log[k]; !ok {
				missing = k
				break
			}
		}
		if missing == "" {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("no delivery %s within %v; log: %v", missing, within, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func send(t *testing.T, base, q, tags string, batch bool) time.Time {
	t.Helper()
	url := base + "/send?q=" + q + "&tags=" + tags
	if batch {
		url += "&batch=1"
	}
	if status, body := fetchText(t, url); status != 200 {
		t.Fatalf("send: %d %s", status, body)
	}
	return time.Now()
}

func TestQueue_BatchBySizeAndByTimeout(t *testing.T) {
	base := startQueueNode(t)
	// Five sends fill a batch of max_batch_size 5 long before its 60 s timeout.
	sent := send(t, base, "SIZED", "s1,s2,s3,s4,s5", false)
	log := waitLog(t, base, 10*time.Second, "d:sized:s1:1", "d:sized:s5:1")
	for _, k := range []string{"d:sized:s1:1", "d:sized:s3:1", "d:sized:s5:1"} {
		if log[k].Size != 5 {
			t.Errorf("%s came in a batch of %d, want 5", k, log[k].Size)
		}
	}
	// Three messages never fill a batch of 100: they go after max_batch_timeout (1 s), together.
	sent = send(t, base, "TIMED", "t1,t2,t3", true)
	log = waitLog(t, base, 10*time.Second, "d:timed:t1:1", "d:timed:t3:1")
	d := log["d:timed:t1:1"]
	if d.Size != 3 {
		t.Errorf("the timed batch held %d messages, want 3", d.Size)
	}
	if wait := time.UnixMilli(d.At).Sub(sent); wait < 900*time.Millisecond {
		t.Errorf("the timed batch came %v after the send, before its 1 s timeout", wait)
	}
}

// Cloudflare's rule (not Miniflare's): a message acked explicitly stays
// acked when the handler then calls retryAll() or throws.
func TestQueue_ExplicitAckSurvivesRetryAllAndThrow(t *testing.T) {
	base := startQueueNode(t)
	send(t, base, "SETTLE", "ack-a,retryall", true)
	send(t, base, "SETTLE", "ack-b,throw", true)
	log := waitLog(t, base, 15*time.Second, "d:settle:retryall:2", "d:settle:throw:2")
	time.Sleep(500 * time.Millisecond)
	log = queueLog(t, base)
	for _, k := range []string{"d:settle:ack-a:2", "d:settle:ack-b:2"} {
		if _, again := log[k]; again {
			t.Errorf("%s: an acked message was delivered again", k)
		}
	}
}

// A batch whose handler never settles keeps its lease until the lease
// ends; then its messages are delivered again, attempts 2.
func TestQueue_RedeliveryAfterLeaseExpires(t *testing.T) {
	old := queueLease
	queueLease = 2 * time.Second
	t.Cleanup(func() { queueLease = old })
	base := startQueueNode(t)
	sent := send(t, base, "HANG", "hang", false)
	log := waitLog(t, base, 15*time.Second, "d:hang:hang:1", "d:hang:hang:2")
	if wait := time.UnixMilli(log["d:hang:hang:2"].At).Sub(sent); wait < 1900*time.Millisecond {
		t.Errorf("redelivered %v after the send, before the 2 s lease ended", wait)
	}
}

// A queue owner with more requests waiting than it takes refuses the
// excess as overloaded: a script that lets the send's error escape is
// answered 503 with Retry-After.
func TestQueue_OverloadedOwnerAnswers503(t *testing.T) {
	old := queueMaxCalls
	queueMaxCalls = 1
	t.Cleanup(func() { queueMaxCalls = old })
	base := startQueueNode(t)
	var mu sync.Mutex
	codes := map[int]int{}
	retryAfter := ""
	var wg sync.WaitGroup
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Get(base + "/send?q=TIMED&tags=x" + strconv.Itoa(i))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			codes[resp.StatusCode]++
			if resp.StatusCode == 503 {
				retryAfter = resp.Header.Get("Retry-After")
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[200] == 0 || codes[503] == 0 || len(codes) != 2 {
		t.Fatalf("status codes %v: want some sends accepted and the excess refused with 503", codes)
	}
	if retryAfter != "1" {
		t.Errorf("503 without Retry-After: 1 (%q)", retryAfter)
	}
}
