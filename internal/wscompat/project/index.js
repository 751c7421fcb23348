// The Worker both runtimes serve in compare.mjs: each path is one
// scenario's server side.
import { DurableObject } from "cloudflare:workers";

const attempt = (f) => { try { const v = f(); return v === undefined ? "ok" : v; } catch (e) { return e.name + ": " + e.message; } };
const tick = () => new Promise((r) => setTimeout(r, 10));

export class Room extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }
  async fetch(req) {
    const u = new URL(req.url);
    if (u.pathname.endsWith("/probe")) {
      const out = {};
      out.none = this.ctx.getWebSockets().length;
      const p = new WebSocketPair();
      out.tagsBefore = attempt(() => this.ctx.getTags(p[1]));
      out.tooManyTags = attempt(() => this.ctx.acceptWebSocket(new WebSocketPair()[1], Array.from({ length: 11 }, (_, i) => "t" + i)));
      out.longTag = attempt(() => this.ctx.acceptWebSocket(new WebSocketPair()[1], ["x".repeat(257)]));
      this.ctx.acceptWebSocket(p[1], ["a", "b"]);
      out.tags = this.ctx.getTags(p[1]);
      out.byTag = [this.ctx.getWebSockets("a").length, this.ctx.getWebSockets("zzz").length];
      out.acceptAfter = attempt(() => p[1].accept());
      out.acceptTwice = attempt(() => this.ctx.acceptWebSocket(p[1]));
      out.autoBad = attempt(() => this.ctx.setWebSocketAutoResponse({ request: "a", response: "b" }));
      out.autoLong = attempt(() => this.ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("x".repeat(2049), "y")));
      const auto = this.ctx.getWebSocketAutoResponse();
      out.auto = auto && [auto.request, auto.response];
      out.autoTs = this.ctx.getWebSocketAutoResponseTimestamp(p[1]);
      p[1].serializeAttachment({ d: new Date(0), m: new Map([[1, 2]]) });
      const att = p[1].deserializeAttachment();
      out.attachment = [att.d instanceof Date, att.m instanceof Map];
      out.attachmentBig = attempt(() => p[1].serializeAttachment("x".repeat(20000)));
      out.attachmentFn = attempt(() => p[1].serializeAttachment(() => 1));
      out.eventTimeout = [attempt(() => this.ctx.setHibernatableWebSocketEventTimeout(1000)), this.ctx.getHibernatableWebSocketEventTimeout()];
      return Response.json(out);
    }
    const { 0: client, 1: server } = new WebSocketPair();
    const who = u.searchParams.get("who") || "anon";
    this.ctx.acceptWebSocket(server, [who]);
    server.serializeAttachment({ who });
    server.send("welcome " + who);
    return new Response(null, { status: 101, webSocket: client });
  }
  webSocketMessage(ws, msg) {
    const { who } = ws.deserializeAttachment();
    if (msg === "whoami") {
      ws.send(JSON.stringify({ who, tags: this.ctx.getTags(ws), state: ws.readyState, auto: this.ctx.getWebSocketAutoResponseTimestamp(ws) !== null }));
      return;
    }
    if (msg === "bye") { ws.close(4000, "bye " + who); return; }
    if (typeof msg !== "string") { ws.send(msg); return; }
    for (const peer of this.ctx.getWebSockets()) peer.send(who + ": " + msg);
  }
  webSocketClose(ws, code, reason, clean) {
    for (const peer of this.ctx.getWebSockets()) if (peer !== ws) peer.send(`left ${code} ${reason} ${clean} ${ws.readyState}`);
    ws.close(code === 1005 ? 1000 : code, "closed " + reason);
  }
}

export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    if (u.pathname === "/probe") {
      const out = {};
      const { 0: a, 1: b } = new WebSocketPair();
      out.initial = [a.readyState, a.binaryType, a.url, a.protocol, a.extensions];
      out.sendBefore = attempt(() => a.send("x"));
      out.closeBefore = attempt(() => a.close());
      a.accept();
      b.accept();
      const got = [];
      b.addEventListener("message", (e) => got.push(typeof e.data === "string" ? e.data : "bin:" + new Uint8Array(e.data).join(",")));
      a.send("s");
      a.send(new Uint8Array([1, 2, 3, 4]).subarray(1, 3));
      a.send(new Uint16Array([258]).buffer);
      out.syncGot = got.length;
      await tick();
      out.got = got;
      for (const c of [999, 1000, 1004, 1005, 1006, 1012, 1015, 1016, 2000, 2999, 3000, 4999, 5000]) {
        out["close" + c] = attempt(() => new WebSocketPair()[0].close(c));
      }
      { const p = new WebSocketPair(); p[0].accept(); out.close3000 = attempt(() => p[0].close(3000)); out.closeAgain = attempt(() => p[0].close(3000)); out.afterClose = attempt(() => p[0].send("x")); out.stateAfterClose = p[0].readyState; }
      { const p = new WebSocketPair(); p[0].accept(); out.longReason = attempt(() => p[0].close(1000, "x".repeat(124))); out.reason1005 = attempt(() => p[0].close(undefined, "r")); }
      out.status101 = attempt(() => new Response(null, { status: 101 }));
      out.status101ws = attempt(() => new Response(null, { status: 101, webSocket: new WebSocketPair()[0] }).status);
      out.status200ws = attempt(() => new Response(null, { status: 200, webSocket: new WebSocketPair()[0] }).status);
      out.pairKeys = Object.keys(new WebSocketPair());
      out.ctor = attempt(() => new WebSocket("ftp://x"));
      out.autoPairArgs = attempt(() => new WebSocketRequestResponsePair("a"));
      out.doProbe = await (await env.ROOM.getByName("probe").fetch("http://x/probe")).json();
      return Response.json(out);
    }
    if (u.pathname === "/echo") {
      if (req.headers.get("Upgrade") !== "websocket") return new Response("want websocket", { status: 426 });
      const { 0: client, 1: server } = new WebSocketPair();
      server.accept();
      server.addEventListener("message", (e) => server.send(typeof e.data === "string" ? "echo " + e.data : e.data));
      server.addEventListener("close", (e) => server.close(e.code === 1005 ? 1000 : e.code, "echo " + e.reason));
      return new Response(null, { status: 101, webSocket: client });
    }
    if (u.pathname === "/noreply") {
      const { 0: client, 1: server } = new WebSocketPair();
      server.accept();
      server.addEventListener("close", () => {});
      return new Response(null, { status: 101, webSocket: client });
    }
    if (u.pathname === "/accepted") {
      const { 0: client, 1: server } = new WebSocketPair();
      client.accept();
      return new Response(null, { status: 101, webSocket: client });
    }
    if (u.pathname.startsWith("/room/")) return env.ROOM.getByName(u.pathname.split("/")[2]).fetch(req);
    return new Response("not found", { status: 404 });
  },
};
