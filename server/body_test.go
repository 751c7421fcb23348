package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet"
)

var bodyProject = map[string]string{
	"wrangler.jsonc": `{"name":"bodies","main":"index.js"}`,
	"index.js": `
let calls = 0;
export default {
  async fetch(req) {
    const u = new URL(req.url);
    calls++;
    if (u.pathname === "/calls") return new Response(String(calls - 1));
    if (u.pathname === "/count") {
      // Read the body as it arrives, keeping nothing.
      let n = 0;
      const r = req.body.getReader();
      for (;;) {
        const { done, value } = await r.read();
        if (done) break;
        n += value.byteLength;
      }
      return new Response(String(n));
    }
    if (u.pathname === "/text") {
      const t = await req.text();
      return new Response(t.length + ":" + t.slice(0, 3));
    }
    if (u.pathname === "/catch") {
      try { await req.arrayBuffer(); } catch (e) { return new Response("caught " + e.message); }
      return new Response("read whole");
    }
    return new Response("ignored");
  },
};
`,
}

func deployBodies(t *testing.T) bucket.Store {
	t.Helper()
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, writeProject(t, bodyProject), deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	return store
}

// pattern is an endless body that allocates nothing as it is read.
type pattern struct{ left int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	p.left -= int64(len(b))
	return len(b), nil
}

// post sends size bytes to url; chunked (no Content-Length) unless
// withLength.
func post(t *testing.T, url string, size int64, withLength bool) (int, string) {
	t.Helper()
	var body io.Reader = &pattern{left: size}
	if !withLength {
		body = io.MultiReader(body) // hides the length: chunked
	}
	req, _ := http.NewRequest(http.MethodPost, url, body)
	if withLength {
		req.ContentLength = size
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// rssBytes is the process's resident set now.
func rssBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skip("no /proc/self/statm")
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestBody_ConcurrentLargeBodiesStream: eight 32 MiB bodies sent at once
// (256 MiB) reach a Worker that reads them as streams; the node never
// holds them whole. Bound: the process's peak heap grows by less than
// 96 MiB and its peak RSS by less than 160 MiB over the run (reading each
// body whole would take 256 MiB of heap at the least).
func TestBody_ConcurrentLargeBodiesStream(t *testing.T) {
	store := deployBodies(t)
	n := startNode(t, store, "node-a")
	if code, body := post(t, n.public+"/count", 1000, true); code != 200 || body != "1000" {
		t.Fatalf("warm-up: %d %q", code, body)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap0, rss0 := ms.HeapInuse, rssBytes(t)
	var peakHeap uint64
	var peakRSS int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peakHeap = max(peakHeap, m.HeapInuse)
			peakRSS = max(peakRSS, rssBytes(t))
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	const bodies, size = 8, 32 << 20
	var wg sync.WaitGroup
	errs := make(chan string, bodies)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := post(t, n.public+"/count", size, i%2 == 0) // half chunked
			if code != 200 || body != strconv.Itoa(size) {
				errs <- fmt.Sprintf("body %d: %d %q, want 200 %d", i, code, body, size)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	heapGrowth := int64(peakHeap) - int64(heap0)
	rssGrowth := peakRSS - rss0
	t.Logf("%d×%d MiB bodies: peak heap +%d MiB, peak RSS +%d MiB", bodies, size>>20, heapGrowth>>20, rssGrowth>>20)
	if heapGrowth > 96<<20 {
		t.Errorf("peak heap grew by %d MiB, want < 96 MiB", heapGrowth>>20)
	}
	if rssGrowth > 160<<20 {
		t.Errorf("peak RSS grew by %d MiB, want < 160 MiB", rssGrowth>>20)
	}
}

// TestBody_StreamedBodyWhole: a streamed body read whole by the script
// (text()) arrives complete; one the script ignores does not hold up the
// answer.
func TestBody_StreamedBodyWhole(t *testing.T) {
	store := deployBodies(t)
	n := startNode(t, store, "node-a")
	if code, body := post(t, n.public+"/text", 1<<20, false); code != 200 || body != "1048576:abc" {
		t.Fatalf("text() of a 1 MiB chunked body: %d %q", code, body)
	}
	if code, body := post(t, n.public+"/text", 100, true); code != 200 || body != "100:abc" {
		t.Fatalf("text() of a small body: %d %q", code, body)
	}
	if code, body := post(t, n.public+"/ignored", 4<<20, false); code != 200 || body != "ignored" {
		t.Fatalf("an ignored body: %d %q", code, body)
	}
}

// TestBody_CapIs413: past the cap, a declared length is refused before
// the Worker runs or the body is read; a chunked body is refused with 413
// when the script's reading passes the cap, whatever the script answers.
func TestBody_CapIs413(t *testing.T) {
	store := deployBodies(t)
	n := startNodeWith(t, store, "node-a", func(o *Options) { o.MaxRequestBody = 1 << 20 })
	// Declared too large: answered from the headers alone (the body
	// is never sent in full).
	addr := strings.TrimPrefix(n.public, "http://")
	status := rawPostHead(t, addr, "/count", 2<<20, nil)
	if status != http.StatusRequestEntityTooLarge {
		t.Fatalf("Content-Length past the cap: %d, want 413", status)
	}
	if code, body := fetchText(t, n.public+"/calls"); code != 200 || body != "0" {
		t.Fatalf("the Worker ran for a refused body: /calls = %d %q", code, body)
	}
	for _, path := range []string{"/count", "/catch"} {
		if code, body := post(t, n.public+path, 2<<20, false); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than 1048576 bytes") {
			t.Errorf("chunked %s past the cap: %d %q, want 413", path, code, body)
		}
	}
	if code, body := post(t, n.public+"/count", 1<<20, false); code != 200 || body != "1048576" {
		t.Errorf("a body of exactly the cap: %d %q", code, body)
	}
}

// rawPostHead sends a POST's head declaring length bytes, and then only
// sends (at most 10 bytes of a body), and returns the status the server
// answers without waiting for the rest.
func rawPostHead(t *testing.T, addr, path string, length int64, hdr http.Header) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var sb strings.Builder
	fmt.Fprintf(&sb, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", path, addr, length)
	for k, vs := range hdr {
		for _, v := range vs {
			fmt.Fprintf(&sb, "%s: %s\r\n", k, v)
		}
	}
	sb.WriteString("\r\n0123456789")
	if _, err := io.WriteString(c, sb.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBody_BudgetRefusesWhenFull: a node whose body budget is held by a
// request in flight refuses another (503, Retry-After) after waiting, and
// takes it once the first is done.
func TestBody_BudgetRefusesWhenFull(t *testing.T) {
	store := deployBodies(t)
	var budget atomic.Pointer[bodyBudget]
	testNodeHook = func(n *node) {
		n.objects.peer.bodies.wait = 300 * time.Millisecond
		budget.Store(n.objects.peer.bodies)
	}
	defer func() { testNodeHook = nil }()
	n := startNodeWith(t, store, "node-a", func(o *Options) {
		o.MaxRequestBody = 2 << 20
		o.BodyMemory = 2 << 20
	})
	// The first holds 1.5 MiB of budget while its body trickles.
	pr, pw := io.Pipe()
	first := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, n.public+"/count", pr)
		req.ContentLength = 3 << 19
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		first <- strconv.Itoa(resp.StatusCode) + " " + string(b)
	}()
	pw.Write([]byte("abc"))
	deadline := time.Now().Add(5 * time.Second)
	for budget.Load().inUse() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	req, _ := http.NewRequest(http.MethodPost, n.public+"/count", &pattern{left: 3 << 19})
	req.ContentLength = 3 << 19
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "CELLD_BODY_MEMORY_MB") {
		t.Fatalf("a body past the budget: %d %q (Retry-After %q), want 503 naming CELLD_BODY_MEMORY_MB", resp.StatusCode, b, resp.Header.Get("Retry-After"))
	}
	io.Copy(pw, &pattern{left: 3<<19 - 3})
	pw.Close()
	if got := <-first; got != "200 "+strconv.Itoa(3<<19) {
		t.Fatalf("first request: %q", got)
	}
	if code, body := post(t, n.public+"/count", 3<<19, true); code != 200 || body != strconv.Itoa(3<<19) {
		t.Fatalf("once the budget is free: %d %q", code, body)
	}
	if u := budget.Load().inUse(); u != 0 {
		t.Fatalf("budget in use after every request ended: %d bytes", u)
	}
}

// TestBody_PeerUnsignedRefusedUnread: on the internal listener an
// unsigned (or wrongly signed) request declaring a 99 MiB body is refused
// from its headers alone, and a signed request whose body does not match
// its signed hash is refused after reading it; nothing stays reserved.
func TestBody_PeerUnsignedRefusedUnread(t *testing.T) {
	store := deployBodies(t)
	var budget atomic.Pointer[bodyBudget]
	testNodeHook = func(n *node) { budget.Store(n.objects.peer.bodies) }
	defer func() { testNodeHook = nil }()
	n := startNode(t, store, "node-a")
	addr := strings.TrimPrefix(n.internal, "http://")
	for _, path := range []string{peerFetchPath, peerCallPath, fleet.PeerCellCallPath} {
		if status := rawPostHead(t, addr, path+"?class=X&id=y", 99<<20, nil); status != http.StatusUnauthorized {
			t.Errorf("unsigned 99 MiB %s: %d, want 401 before the body", path, status)
		}
		forged := http.Header{fleet.HeaderPeerVersion: {fleet.PeerProtocol}, fleet.HeaderPeerSignature: {strings.Repeat("ab", 32)}}
		if status := rawPostHead(t, addr, path+"?class=X&id=y", 99<<20, forged); status != http.StatusUnauthorized {
			t.Errorf("badly signed 99 MiB %s: %d, want 401 before the body", path, status)
		}
	}
	secret, err := fleet.PeerSecret(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	signer := &fleet.Signer{Secret: secret, Node: "node-b"}
	req, _ := http.NewRequest(http.MethodPost, n.internal+fleet.PeerCellCallPath+"?cell=kv:x", strings.NewReader("tampered"))
	signer.Sign(req, []byte("original"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "does not match its signed hash") {
		t.Fatalf("a body altered after signing: %d %q, want 401", resp.StatusCode, b)
	}
	if u := budget.Load().inUse(); u != 0 {
		t.Fatalf("budget in use after refusals: %d bytes", u)
	}
}
