package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// dialHealth opens a connection to addr; with request it sends one
// keep-alive health request and reads the answer, leaving it idle.
func dialHealth(addr string, request bool) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if !request {
		return c, nil
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET /__celld/health HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.SetDeadline(time.Time{})
	return c, nil
}

// quickGet is a GET on a fresh connection that must answer within 2 s.
func quickGet(t *testing.T, url string) (int, string, time.Duration) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), time.Since(start)
}

// TestConns_IdleConnectionsReapedHealthAnswers: 2,000 idle connections
// (1,000 silent since connecting, 1,000 idle after a keep-alive request)
// on a listener capped at 500 displace each other oldest first; the node
// holds at most 500 (+ the overflow reserve) and health and /state answer
// at once on fresh connections.
func TestConns_IdleConnectionsReapedHealthAnswers(t *testing.T) {
	store := deployBodies(t)
	var nd atomic.Pointer[node]
	testNodeHook = func(n *node) { nd.Store(n) }
	defer func() { testNodeHook = nil }()
	n := startNodeWith(t, store, "node-a", func(o *Options) { o.MaxConns = 500 })
	addr := strings.TrimPrefix(n.public, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 2000 {
		c, err := dialHealth(addr, i%2 == 1)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	if code, body, took := quickGet(t, n.public+"/__celld/health"); code != 200 || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("health with 2,000 idle connections: %d %q (%v)", code, body, took)
	}
	if code, body, _ := quickGet(t, n.internal+"/state"); code != 200 || !strings.Contains(body, `"node"`) {
		t.Fatalf("/state: %d %q", code, body)
	}
	regular, overflow, reaped := nd.Load().pubCap.counts()
	if regular > 500 || overflow != 0 || reaped < 1500 {
		t.Fatalf("listener holds %d (+%d overflow), displaced %d; want ≤ 500, 0, ≥ 1500", regular, overflow, reaped)
	}
	// The displaced ones are closed from the server's side.
	closed := 0
	for _, c := range conns[:1000] {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed < 700 {
		t.Fatalf("%d of the 1,000 oldest connections closed by the node, want most", closed)
	}
}

// TestConns_AllBusyOperatorEndpointsAnswer: with every slot of a capped
// listener busy in a request, health still answers (an overflow
// connection), and a Worker request on one is refused 503 with
// Retry-After naming the limit.
func TestConns_AllBusyOperatorEndpointsAnswer(t *testing.T) {
	store := deployBodies(t)
	n := startNodeWith(t, store, "node-a", func(o *Options) { o.MaxConns = 8 })
	addr := strings.TrimPrefix(n.public, "http://")
	var busy []net.Conn
	defer func() {
		for _, c := range busy {
			c.Close()
		}
	}()
	for range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// A body that trickles: the Worker waits on it, the slot stays busy.
		fmt.Fprintf(c, "POST /count HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000000\r\n\r\nabc", addr)
		busy = append(busy, c)
	}
	time.Sleep(200 * time.Millisecond) // the requests reach the Worker
	if code, body, took := quickGet(t, n.public+"/__celld/health"); code != 200 || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("health with every slot busy: %d %q (%v)", code, body, took)
	}
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(n.public + "/other")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "CELLD_MAX_CONNS") {
		t.Fatalf("a Worker request past the cap: %d %q, want 503 naming CELLD_MAX_CONNS", resp.StatusCode, b)
	}
}

// TestConns_StalledBodyIsCut: a body that stops sending is cut after
// bodyIdle: the script's read fails, the request is cancelled, and the
// client gets 408 within seconds.
func TestConns_StalledBodyIsCut(t *testing.T) {
	old := bodyIdle
	bodyIdle = 300 * time.Millisecond
	defer func() { bodyIdle = old }()
	store := deployBodies(t)
	n := startNode(t, store, "node-a")
	addr := strings.TrimPrefix(n.public, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	fmt.Fprintf(c, "POST /catch HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000000\r\n\r\nabc", addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if took := time.Since(start); resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "stalled") || took > 5*time.Second {
		t.Fatalf("stalled body: %d %q after %v, want 408 within seconds", resp.StatusCode, b, took)
	}
}
