package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/gorilla/websocket"
)

// wsAPIProject exercises the WebSocket API inside one Worker: a pair
// with both ends in JavaScript, and outbound sockets (new WebSocket(url),
// fetch with Upgrade: websocket) to a test server.
var wsAPIProject = map[string]string{
	"wrangler.jsonc": `{"name":"wsapi","main":"index.js"}`,
	"index.js": `
const next = (ws, type) => new Promise((resolve) => ws.addEventListener(type, resolve, { once: true }));
const attempt = (f) => { try { f(); return "ok"; } catch (e) { return e.name + ": " + e.message; } };
export default {
  async fetch(req) {
    const u = new URL(req.url);
    const target = u.searchParams.get("url");
    if (u.pathname === "/pair") {
      const { 0: a, 1: b } = new WebSocketPair();
      const out = { states: [a.readyState, WebSocket.OPEN, WebSocket.CLOSED], binaryType: a.binaryType };
      const got = [];
      b.addEventListener("message", (e) => got.push(typeof e.data === "string" ? e.data : Array.from(new Uint8Array(e.data)).join(",")));
      a.accept();
      a.send("queued before b accepted");
      b.accept();
      a.send(new Uint8Array([1, 2, 3, 4]).subarray(1, 3));
      a.send(new Uint16Array([258]).buffer);
      await new Promise((r) => setTimeout(r, 10));
      out.got = got;
      out.longReason = attempt(() => { const p = new WebSocketPair(); p[0].accept(); p[0].close(1000, "x".repeat(124)); });
      out.reason1005 = attempt(() => a.close(undefined, "why"));
      const closed = next(b, "close");
      a.close(4001, "bye");
      const ev = await closed;
      out.close = [ev.code, ev.reason, ev.wasClean, a.readyState, b.readyState];
      out.afterClose = attempt(() => a.send("late"));
      const closedA = next(a, "close");
      b.close(4001, "bye too");
      out.closedA = (await closedA).reason;
      out.final = [a.readyState, b.readyState];
      {
        const q = new WebSocketPair();
        q[0].accept();
        q[1].accept();
        q[1].binaryType = "blob";
        const m = next(q[1], "message");
        q[0].send(new Uint8Array([5, 6]));
        const data = (await m).data;
        out.blob = [data instanceof Blob, Array.from(new Uint8Array(await data.arrayBuffer()))];
      }
      out.acceptTwice = attempt(() => { const p = new WebSocketPair(); p[0].accept(); p[0].accept(); });
      out.status101 = attempt(() => new Response(null, { status: 101 }));
      out.autoPair = attempt(() => new WebSocketRequestResponsePair("a"));
      return Response.json(out);
    }
    if (u.pathname === "/new") {
      const ws = new WebSocket(target, "chat");
      const out = { connecting: ws.readyState, url: ws.url };
      await next(ws, "open");
      out.open = ws.readyState;
      out.protocol = ws.protocol;
      out.acceptOutbound = attempt(() => ws.accept());
      ws.send("hi");
      out.echo = (await next(ws, "message")).data;
      ws.close(1000, "done");
      const ev = await next(ws, "close");
      out.close = [ev.code, ev.reason, ws.readyState];
      return Response.json(out);
    }
    if (u.pathname === "/fetch") {
      const r = await fetch(target, { headers: { Upgrade: "websocket" } });
      const ws = r.webSocket;
      const out = { status: r.status, hasSocket: ws !== null };
      ws.accept();
      ws.send(new Uint8Array([9, 8, 7]));
      const m = await next(ws, "message");
      out.echo = Array.from(new Uint8Array(m.data));
      ws.close(1000);
      await next(ws, "close");
      return Response.json(out);
    }
    if (u.pathname === "/flood") {
      // 64 MiB for a client that does not read.
      const { 0: client, 1: server } = new WebSocketPair();
      server.accept();
      const mib = new Uint8Array(1 << 20);
      // After the handshake (a timer outlives the request while the
      // socket is open), so the bytes pile up behind a full connection.
      setTimeout(() => { for (let i = 0; i < 64; i++) server.send(mib); }, 50);
      return new Response(null, { status: 101, webSocket: client });
    }
    if (u.pathname === "/refused") {
      const ws = new WebSocket(target);
      const err = await next(ws, "error");
      const ev = await next(ws, "close");
      return Response.json({ error: err.type, code: ev.code, state: ws.readyState });
    }
    return new Response("no", { status: 404 });
  },
};`,
}

// echoServer is a WebSocket echo server on 127.0.0.1 that closes back
// with the code it was sent.
func echoServer(t *testing.T) string {
	t.Helper()
	up := websocket.Upgrader{Subprotocols: []string{"chat"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			mt, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			c.WriteMessage(mt, data)
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestWebSocket_API(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, wsAPIProject)
	n := startNodeWith(t, store, "api", nil)
	echo := echoServer(t)
	get := func(path string) map[string]any {
		t.Helper()
		status, body := fetchText(t, n.public+path)
		var v map[string]any
		if err := json.Unmarshal([]byte(body), &v); status != 200 || err != nil {
			t.Fatalf("%s: %d %s", path, status, body)
		}
		return v
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }

	p := get("/pair")
	for k, want := range map[string]string{
		"states":      `[1,1,3]`,
		"binaryType":  `"arraybuffer"`,
		"got":         `["queued before b accepted","2,3","2,1"]`,
		"longReason":  `"ok"`,
		"reason1005":  `"InvalidAccessError: If you specify a WebSocket close reason, you must also specify a code."`,
		"close":       `[4001,"bye",true,2,2]`,
		"afterClose":  `"TypeError: Can't call WebSocket send() after close()."`,
		"final":       `[3,3]`,
		"closedA":     `"bye too"`,
		"blob":        `[true,[5,6]]`,
		"acceptTwice": `"ok"`,
		"status101":   `"RangeError: Responses may only be constructed with status codes in the range 200 to 599, inclusive."`,
		"autoPair":    `"TypeError: Failed to construct 'WebSocketRequestResponsePair': constructor parameter 2 is not of type 'string'."`,
	} {
		if got := js(p[k]); got != want {
			t.Errorf("/pair %s: %s, want %s", k, got, want)
		}
	}

	o := get("/new?url=" + url.QueryEscape(echo))
	if got, want := js(o), `{"acceptOutbound":"TypeError: Websockets obtained from the 'new WebSocket()' constructor cannot call accept","close":[1000,"",3],"connecting":0,"echo":"hi","open":1,"protocol":"chat","url":"`+echo+`/"}`; got != want {
		t.Errorf("/new: %s\nwant %s", got, want)
	}
	f := get("/fetch?url=" + url.QueryEscape(strings.Replace(echo, "ws:", "http:", 1)))
	if got, want := js(f), `{"echo":[9,8,7],"hasSocket":true,"status":101}`; got != want {
		t.Errorf("/fetch: %s, want %s", got, want)
	}
	r := get("/refused?url=" + url.QueryEscape("ws://127.0.0.1:1/"))
	if got, want := js(r), `{"code":1006,"error":"error","state":3}`; got != want {
		t.Errorf("/refused: %s, want %s", got, want)
	}
}

// TestWebSocket_SlowReaderIsDropped: a client that does not read while a
// script sends to it loses its connection once 32 MiB wait, instead of
// growing the node's memory without bound.
func TestWebSocket_SlowReaderIsDropped(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, wsAPIProject)
	n := startNodeWith(t, store, "flood", nil)
	c := dialWS(t, wsURL(n.public, "/flood"))
	time.Sleep(500 * time.Millisecond)
	got := 0
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			break
		}
		got++
	}
	if got >= 64 {
		t.Fatalf("all %d MiB arrived: the queue was not bounded", got)
	}
}
