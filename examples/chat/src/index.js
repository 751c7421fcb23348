import { DurableObject } from "cloudflare:workers";
import { page } from "./page.js";

const HISTORY = 50;

export class Room extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS messages (
      id INTEGER PRIMARY KEY, name TEXT NOT NULL, text TEXT NOT NULL, at INTEGER NOT NULL)`);
    // Keep-alives are answered without waking the room.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  history() {
    return this.sql.exec("SELECT name, text, at FROM messages ORDER BY id DESC LIMIT ?", HISTORY).toArray().reverse();
  }

  // Members are the names the sockets were tagged with.
  members(except = null) {
    const names = new Set();
    for (const ws of this.ctx.getWebSockets()) {
      if (ws !== except) names.add(this.ctx.getTags(ws)[0]);
    }
    return [...names].sort();
  }

  broadcast(msg, except = null) {
    const text = JSON.stringify(msg);
    for (const ws of this.ctx.getWebSockets()) {
      if (ws !== except) ws.send(text);
    }
  }

  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname.endsWith("/history")) return Response.json(this.history());
    if (req.headers.get("Upgrade") !== "websocket") return new Response("expected a WebSocket", { status: 426 });
    const name = (url.searchParams.get("name") || "").trim().slice(0, 32) || "anonymous";
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [name]);
    server.serializeAttachment({ name, joined: Date.now() });
    server.send(JSON.stringify({ type: "history", messages: this.history() }));
    this.broadcast({ type: "members", members: this.members() });
    return new Response(null, { status: 101, webSocket: client });
  }

  webSocketMessage(ws, raw) {
    let text;
    try {
      text = String(JSON.parse(raw).text || "").slice(0, 2000);
    } catch {
      ws.send(JSON.stringify({ type: "error", error: "send JSON: {\"text\": \"...\"}" }));
      return;
    }
    if (!text) return;
    const { name } = ws.deserializeAttachment();
    const at = Date.now();
    this.sql.exec("INSERT INTO messages (name, text, at) VALUES (?, ?, ?)", name, text, at);
    this.broadcast({ type: "message", name, text, at });
  }

  webSocketClose(ws, code) {
    ws.close(code === 1005 || code === 1006 ? 1000 : code, "bye");
    this.broadcast({ type: "members", members: this.members(ws) }, ws);
  }

  webSocketError(ws) {
    this.broadcast({ type: "members", members: this.members(ws) }, ws);
  }
}

export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (url.pathname === "/") return new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } });
    const m = url.pathname.match(/^\/room\/([^/]{1,64})\/(ws|history)$/);
    if (m) return env.ROOMS.getByName(decodeURIComponent(m[1])).fetch(req);
    return new Response("not found", { status: 404 });
  },
};
