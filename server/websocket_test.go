package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/server/api"
	"github.com/gorilla/websocket"
)

// wsProject is a Worker with an echo socket of its own (/echo) and a
// Durable Object room using the Hibernation API (/room/NAME).
var wsProject = map[string]string{
	"wrangler.jsonc": `{"name":"sockets","main":"index.js","durable_objects":{"bindings":[{"name":"ROOM","class_name":"Room"}]},
		"migrations":[{"tag":"v1","new_sqlite_classes":["Room"]}]}`,
	"index.js": `import { DurableObject } from "cloudflare:workers";
export class Room extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.constructed = (ctx.storage.kv.get("constructed") || 0) + 1;
    ctx.storage.kv.put("constructed", this.constructed);
    this.ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }
  async fetch(req) {
    const u = new URL(req.url);
    if (u.pathname.endsWith("/count")) {
      return Response.json({ all: this.ctx.getWebSockets().length, a: this.ctx.getWebSockets("a").length, constructed: this.constructed,
        error: this.ctx.storage.kv.get("error") || null, abnormal: this.ctx.storage.kv.get("abnormal") || null });
    }
    if (req.headers.get("Upgrade") !== "websocket") return new Response("want a websocket", { status: 426 });
    const { 0: client, 1: server } = new WebSocketPair();
    const who = u.searchParams.get("who") || "anon";
    this.ctx.acceptWebSocket(server, [who, "all"]);
    server.serializeAttachment({ who, since: new Date(1700000000000) });
    server.send("welcome " + who);
    return new Response(null, { status: 101, webSocket: client });
  }
  async webSocketMessage(ws, msg) {
    const att = ws.deserializeAttachment();
    if (msg === "whoami") {
      ws.send(JSON.stringify({ who: att.who, date: att.since instanceof Date, tags: this.ctx.getTags(ws), constructed: this.constructed,
        auto: this.ctx.getWebSocketAutoResponseTimestamp(ws) !== null }));
      return;
    }
    if (msg === "big") { ws.send("x".repeat(200000)); return; }
    if (msg === "bye") { ws.close(4000, "bye " + att.who); return; }
    if (typeof msg !== "string") { ws.send(new Uint8Array(msg).reverse()); return; }
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS log (m TEXT)");
    this.ctx.storage.sql.exec("INSERT INTO log VALUES (?)", msg);
    for (const peer of this.ctx.getWebSockets("all")) peer.send(att.who + ": " + msg);
  }
  async webSocketClose(ws, code, reason, clean) {
    if (code === 1006) {
      this.ctx.storage.kv.put("abnormal", [code, clean, ws.readyState]);
      return;
    }
    ws.close(code === 1005 ? 1000 : code, "closed " + reason);
  }
  async webSocketError(ws, err) {
    this.ctx.storage.kv.put("error", String(err && err.message));
  }
}
export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    if (u.pathname === "/echo") {
      const pair = new WebSocketPair();
      const server = pair[1];
      server.accept();
      server.addEventListener("message", (e) => {
        if (typeof e.data === "string") server.send("echo " + e.data);
        else server.send(e.data);
      });
      server.addEventListener("close", (e) => server.close(e.code === 1005 ? 1000 : e.code, "echo " + e.reason));
      return new Response(null, { status: 101, webSocket: pair[0] });
    }
    if (u.pathname === "/badcode") {
      const pair = new WebSocketPair();
      pair[1].accept();
      const out = [];
      for (const c of [999, 1004, 1005, 1006, 1015, 5000]) {
        try { pair[1].close(c); out.push(c + ":ok"); } catch (e) { out.push(c + ":" + e.name + ": " + e.message); }
      }
      try { new WebSocketPair()[0].send("x"); } catch (e) { out.push(e.message); }
      return Response.json(out);
    }
    if (u.pathname.startsWith("/room/")) return env.ROOM.getByName(u.pathname.split("/")[2]).fetch(req);
    return new Response("no", { status: 404 });
  },
};`,
}

func deployProject(t *testing.T, store bucket.Store, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
}

func wsURL(base, path string) string { return "ws" + strings.TrimPrefix(base, "http") + path }

func dialWS(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", url, err, status)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	return c
}

func readText(t *testing.T, c *websocket.Conn) string {
	t.Helper()
	mt, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if mt != websocket.TextMessage {
		t.Fatalf("read: message type %d, want text", mt)
	}
	return string(data)
}

// expectClose reads until the server's Close and returns its code and
// reason.
func expectClose(t *testing.T, c *websocket.Conn) (int, string) {
	t.Helper()
	for {
		_, data, err := c.ReadMessage()
		if err == nil {
			t.Fatalf("read %q, want a Close", data)
		}
		var ce *websocket.CloseError
		if ok := asClose(err, &ce); !ok {
			t.Fatalf("read: %v, want a Close frame", err)
		}
		return ce.Code, ce.Text
	}
}

func asClose(err error, ce **websocket.CloseError) bool {
	c, ok := err.(*websocket.CloseError)
	if ok {
		*ce = c
	}
	return ok
}

func startWSNode(t *testing.T, tweak func(*Options)) testNode {
	t.Helper()
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, wsProject)
	return startNodeWith(t, store, "ws-node", tweak)
}

// TestWebSocket_WorkerEcho: a Worker's own WebSocketPair, accepted with
// accept(): text and binary echo, and a close handshake both ways.
func TestWebSocket_WorkerEcho(t *testing.T) {
	n := startWSNode(t, nil)
	c := dialWS(t, wsURL(n.public, "/echo"))
	if err := c.WriteMessage(websocket.TextMessage, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, c); got != "echo hi" {
		t.Fatalf("echo: %q", got)
	}
	if err := c.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	mt, data, err := c.ReadMessage()
	if err != nil || mt != websocket.BinaryMessage || string(data) != "\x01\x02\x03" {
		t.Fatalf("binary echo: %d %v %v", mt, data, err)
	}
	if err := c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(3001, "done")); err != nil {
		t.Fatal(err)
	}
	code, reason := expectClose(t, c)
	if code != 3001 || reason != "echo done" {
		t.Fatalf("close: %d %q, want 3001 \"echo done\"", code, reason)
	}
	status, body := fetchText(t, n.public+"/badcode")
	want := `["999:InvalidAccessError: Invalid WebSocket close code: 999.","1004:InvalidAccessError: Invalid WebSocket close code: 1004.",` +
		`"1005:InvalidAccessError: Invalid WebSocket close code: 1005.","1006:InvalidAccessError: Invalid WebSocket close code: 1006.",` +
		`"1015:InvalidAccessError: Invalid WebSocket close code: 1015.",` +
		`"5000:InvalidAccessError: Invalid WebSocket close code: 5000.",` +
		`"You must call one of accept() or state.acceptWebSocket() on this WebSocket before sending messages."]`
	if status != 200 || body != want {
		t.Fatalf("/badcode: %d %s\nwant %s", status, body, want)
	}
}

func roomCount(t *testing.T, n testNode, room string) (all, a, constructed int) {
	t.Helper()
	status, body := fetchText(t, n.public+"/room/"+room+"/count")
	var v struct{ All, A, Constructed int }
	if err := json.Unmarshal([]byte(body), &v); status != 200 || err != nil {
		t.Fatalf("count: %d %s", status, body)
	}
	return v.All, v.A, v.Constructed
}

func nodeState(t *testing.T, n testNode) api.State {
	t.Helper()
	resp, err := http.Get(n.internal + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.State
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestWebSocket_Hibernation: sockets accepted with ctx.acceptWebSocket
// stay open while the object drops its isolate; the auto-response is
// answered without waking it; the next message rebuilds it (constructor
// re-run) with tags and attachments intact.
func TestWebSocket_Hibernation(t *testing.T) {
	n := startWSNode(t, func(o *Options) { o.Hibernate = 300 * time.Millisecond })
	if all, _, _ := roomCount(t, n, "r1"); all != 0 {
		t.Fatalf("getWebSockets() with no sockets: %d", all)
	}
	a := dialWS(t, wsURL(n.public, "/room/r1?who=a"))
	if got := readText(t, a); got != "welcome a" {
		t.Fatalf("a: %q", got)
	}
	b := dialWS(t, wsURL(n.public, "/room/r1?who=b"))
	if got := readText(t, b); got != "welcome b" {
		t.Fatalf("b: %q", got)
	}
	if all, ta, _ := roomCount(t, n, "r1"); all != 2 || ta != 1 {
		t.Fatalf("getWebSockets: all=%d tag a=%d, want 2 and 1", all, ta)
	}
	a.WriteMessage(websocket.TextMessage, []byte("hello"))
	for _, c := range []*websocket.Conn{a, b} {
		if got := readText(t, c); got != "a: hello" {
			t.Fatalf("broadcast: %q", got)
		}
	}
	// Idle with two sockets open: the isolate goes.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := nodeState(t, n)
		if st.Counters.Hibernating == 1 && st.Counters.WebSockets == 2 && st.Counters.ClientWebSockets == 2 {
			if len(st.Cells) != 1 || st.Cells[0].WebSockets != 2 {
				t.Fatalf("cells: %+v", st.Cells)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("object did not hibernate with its sockets open: %+v", st.Counters)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The auto-response does not wake it.
	a.WriteMessage(websocket.TextMessage, []byte("ping"))
	if got := readText(t, a); got != "pong" {
		t.Fatalf("auto-response: %q", got)
	}
	if st := nodeState(t, n); st.Counters.Hibernating != 1 {
		t.Fatalf("auto-response woke the object: %+v", st.Counters)
	}
	// A message does: constructor again, attachment and tags intact.
	a.WriteMessage(websocket.TextMessage, []byte("whoami"))
	var who struct {
		Who         string
		Date, Auto  bool
		Tags        []string
		Constructed int
	}
	if err := json.Unmarshal([]byte(readText(t, a)), &who); err != nil {
		t.Fatal(err)
	}
	if who.Who != "a" || !who.Date || !who.Auto || strings.Join(who.Tags, ",") != "a,all" || who.Constructed != 2 {
		t.Fatalf("after hibernation: %+v", who)
	}
	// Binary frames, and the close handshake from the server's side.
	b.WriteMessage(websocket.BinaryMessage, []byte{1, 2, 3})
	if mt, data, err := b.ReadMessage(); err != nil || mt != websocket.BinaryMessage || string(data) != "\x03\x02\x01" {
		t.Fatalf("binary: %d %v %v", mt, data, err)
	}
	b.WriteMessage(websocket.TextMessage, []byte("bye"))
	if code, reason := expectClose(t, b); code != 4000 || reason != "bye b" {
		t.Fatalf("server close: %d %q", code, reason)
	}
	b.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4000, ""))
	// The client closes: webSocketClose answers.
	a.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1001, "away"))
	if code, reason := expectClose(t, a); code != 1001 || reason != "closed away" {
		t.Fatalf("client close: %d %q", code, reason)
	}
	deadline = time.Now().Add(5 * time.Second)
	for {
		all, _, _ := roomCount(t, n, "r1")
		if all == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("closed sockets still listed: %d", all)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWebSocket_FramesPassTheOutputGate: a frame a webSocketMessage
// handler sends after a write reaches the client only once an upload
// covering that write has landed (uploads take 300 ms here).
func TestWebSocket_FramesPassTheOutputGate(t *testing.T) {
	store := &countingLTX{Store: bucket.NewMem(), delay: 300 * time.Millisecond}
	deployProject(t, store, wsProject)
	n := startNode(t, store, "node-a")
	c := dialWS(t, wsURL(n.public, "/room/g?who=g"))
	readText(t, c)
	time.Sleep(time.Second) // whatever the activation uploads has landed
	base := store.landed.Load()
	sent := time.Now()
	c.WriteMessage(websocket.TextMessage, []byte("hello"))
	if got := readText(t, c); got != "g: hello" {
		t.Fatalf("broadcast: %q", got)
	}
	if landed := store.landed.Load() - base; landed < 1 {
		t.Fatalf("the frame after a write arrived after %v with %d uploads landed, want at least 1", time.Since(sent), landed)
	}
}

// TestWebSocket_ErrorsAndLimits: a client that vanishes without a Close
// runs webSocketError, then webSocketClose with 1006; a message past 32
// MiB closes the connection with 1009; permessage-deflate is negotiated
// when the client offers it.
func TestWebSocket_ErrorsAndLimits(t *testing.T) {
	n := startWSNode(t, nil)
	c := dialWS(t, wsURL(n.public, "/room/e?who=e"))
	readText(t, c)
	c.UnderlyingConn().Close() // no Close frame
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, body := fetchText(t, n.public+"/room/e/count")
		if status == 200 && strings.Contains(body, `"error":"WebSocket disconnected without sending Close frame."`) &&
			strings.Contains(body, `"abnormal":[1006,false,`) && strings.Contains(body, `"all":0`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after an abrupt disconnect: %d %s", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}

	big := dialWS(t, wsURL(n.public, "/echo"))
	if err := big.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", 32<<20+1))); err != nil {
		t.Fatal(err)
	}
	if code, _ := expectClose(t, big); code != websocket.CloseMessageTooBig {
		t.Fatalf("a message past 32 MiB: close %d, want 1009", code)
	}

	d := websocket.Dialer{EnableCompression: true}
	z, resp, err := d.Dial(wsURL(n.public, "/echo"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("extensions %q, want permessage-deflate", ext)
	}
	z.SetReadDeadline(time.Now().Add(10 * time.Second))
	msg := strings.Repeat("compressible ", 1000)
	z.WriteMessage(websocket.TextMessage, []byte(msg))
	if _, got, err := z.ReadMessage(); err != nil || string(got) != "echo "+msg {
		t.Fatalf("compressed echo: %d bytes, %v", len(got), err)
	}
}

// TestWebSocket_ThroughAccessLog: the access log wraps the response
// writer; an upgrade still goes through and is logged as 101.
func TestWebSocket_ThroughAccessLog(t *testing.T) {
	logged := make(chan int, 8)
	n := startWSNode(t, func(o *Options) {
		o.AccessLog = true
		o.Logger = slog.New(recordHandler(func(r slog.Record) {
			a := recordAttrs(r)
			if a["source"] == "access" && a["path"] == "/echo" {
				logged <- int(a["status"].(int64))
			}
		}))
	})
	c := dialWS(t, wsURL(n.public, "/echo"))
	c.WriteMessage(websocket.TextMessage, []byte("dev"))
	if got := readText(t, c); got != "echo dev" {
		t.Fatalf("echo: %q", got)
	}
	// Counted as a WebSocket request, and open on the client side.
	m := scrape(t, n.internal)
	if got := sample(m, "celld_requests_total", "kind", "websocket", "status", "1xx"); got != 1 {
		t.Errorf("websocket requests %v, want 1", got)
	}
	if got := sample(m, "celld_websockets", "side", "client"); got != 1 {
		t.Errorf("client websockets %v, want 1", got)
	}
	c.Close() // the line is written when the handler returns
	select {
	case status := <-logged:
		if status != http.StatusSwitchingProtocols {
			t.Fatalf("logged %d, want 101", status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the upgrade was not logged")
	}
}

// TestWebSocket_HibernatesAfterTheLastHandshake: an object whose last
// event was a handshake hibernates once the socket is attached, with no
// later event to prompt it.
func TestWebSocket_HibernatesAfterTheLastHandshake(t *testing.T) {
	n := startWSNode(t, func(o *Options) { o.Hibernate = 200 * time.Millisecond })
	c := dialWS(t, wsURL(n.public, "/room/quiet?who=q"))
	readText(t, c)
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := nodeState(t, n)
		if st.Counters.Hibernating == 1 && st.Counters.WebSockets == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the object did not hibernate after its last handshake: %+v", st.Counters)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
