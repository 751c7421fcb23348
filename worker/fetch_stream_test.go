package worker_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/worker"
)

// A Worker that returns fetch()'s Response passes the body on as the
// origin sends it: the first chunk reaches the caller while the origin is
// still holding back the second.
func TestRuntime_OutboundFetchStreams(t *testing.T) {
	release := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("first;"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		w.Write([]byte("second"))
	}))
	defer origin.Close()
	rt := newRuntime(t, `
module.exports.default = {
  fetch(request) { return fetch(new URL(request.url).searchParams.get("origin")); },
};`, worker.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := rt.Fetch(ctx, &worker.Request{Method: "GET", URL: "http://localhost/?origin=" + origin.URL})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || resp.Stream == nil {
		t.Fatalf("status %d, stream %v: the body should stream", resp.Status, resp.Stream != nil)
	}
	defer resp.Stream.Close()
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(resp.Stream, buf, len("first;"))
	if err != nil || string(buf[:n]) != "first;" {
		t.Fatalf("first chunk %q, %v", buf[:n], err)
	}
	close(release)
	rest, err := io.ReadAll(resp.Stream)
	if err != nil || string(rest) != "second" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

// A body the script reads to its end, in part, or not at all: the text
// is whole; an aborted one fails with the abort's reason; and the
// connection of one it dropped unread is closed, not left to pile up.
func TestRuntime_OutboundFetchBodies(t *testing.T) {
	var open atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write([]byte(strings.Repeat("x", 3<<20)))
		case "/endless":
			open.Add(1)
			defer open.Add(-1)
			chunk := []byte(strings.Repeat("y", 32<<10))
			for stop := time.Now().Add(15 * time.Second); time.Now().Before(stop); {
				if _, err := w.Write(chunk); err != nil {
					return // the reader closed the connection
				}
				w.(http.Flusher).Flush()
				time.Sleep(time.Millisecond)
			}
		}
	}))
	defer origin.Close()
	rt := newRuntime(t, `
module.exports.default = {
  async fetch(request, env, ctx) {
    const u = new URL(request.url);
    if (u.pathname === "/dropped-busy") {
      // The isolate stays busy (a waitUntil) long after: only the
      // garbage collector can find the dropped body.
      ctx.waitUntil(new Promise((resolve) => setTimeout(resolve, 4000)));
    }
    const origin = u.searchParams.get("origin");
    if (u.pathname === "/big") return new Response(String((await (await fetch(origin + "/big")).text()).length));
    if (u.pathname === "/abort") {
      const ac = new AbortController();
      const r = await fetch(origin + "/endless", { signal: ac.signal });
      const reader = r.body.getReader();
      await reader.read();
      ac.abort(new Error("enough"));
      try { for (;;) { if ((await reader.read()).done) return new Response("ended"); } }
      catch (e) { return new Response("aborted: " + e.message); }
    }
    const r = await fetch(origin + "/endless");
    return new Response("status " + r.status);
  },
};`, worker.Config{})
	if resp := fetch(t, rt, "GET", "/big?origin="+origin.URL, nil); string(resp.Body) != "3145728" {
		t.Fatalf("a 3 MiB body read whole: %q", resp.Body)
	}
	if resp := fetch(t, rt, "GET", "/abort?origin="+origin.URL, nil); string(resp.Body) != "aborted: enough" {
		t.Fatalf("an aborted body: %q", resp.Body)
	}
	for range 5 {
		if resp := fetch(t, rt, "GET", "/dropped?origin="+origin.URL, nil); string(resp.Body) != "status 200" {
			t.Fatalf("a dropped body: %q", resp.Body)
		}
	}
	// Every endless body was dropped or aborted: their connections close.
	waitClosed := func(within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for open.Load() > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d origin responses still being read %v after the script dropped them", open.Load(), within)
			}
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitClosed(10 * time.Second)
	// The same while the isolate stays busy: closed well before it idles.
	for range 3 {
		if resp := fetch(t, rt, "GET", "/dropped-busy?origin="+origin.URL, nil); string(resp.Body) != "status 200" {
			t.Fatalf("a dropped body: %q", resp.Body)
		}
	}
	waitClosed(3 * time.Second)
}

// A body past 128 MiB cannot be read whole (the script's memory is not
// the node's), but streams through.
func TestRuntime_OutboundFetchHugeBody(t *testing.T) {
	const size = 129 << 20
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer origin.Close()
	rt := newRuntime(t, `
module.exports.default = {
  async fetch(request) {
    const u = new URL(request.url);
    const r = await fetch(u.searchParams.get("origin"));
    if (u.pathname === "/whole") {
      try { await r.arrayBuffer(); return new Response("read whole"); }
      catch (e) { return new Response(e.name + ": " + e.message); }
    }
    const reader = r.body.getReader();
    let n = 0;
    for (;;) { const { value, done } = await reader.read(); if (done) break; n += value.byteLength; }
    return new Response(String(n));
  },
};`, worker.Config{})
	if resp := fetch(t, rt, "GET", "/whole?origin="+origin.URL, nil); !strings.HasPrefix(string(resp.Body), "RangeError: celld: a body larger than 134217728 bytes") {
		t.Fatalf("a 129 MiB body read whole: %q", resp.Body)
	}
	if resp := fetch(t, rt, "GET", "/stream?origin="+origin.URL, nil); string(resp.Body) != "135266304" {
		t.Fatalf("a 129 MiB body streamed: %q", resp.Body)
	}
}
