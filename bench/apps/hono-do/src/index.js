import { Hono } from "hono";
import { DurableObject } from "cloudflare:workers";

export class Room extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, title TEXT, score INTEGER)");
    const app = new Hono();
    app.post("/seed", (c) => {
      for (let i = 1; i <= 50; i++) {
        this.sql.exec("INSERT OR REPLACE INTO items (id, title, score) VALUES (?, ?, ?)", i, `item ${i}`, i * 7 % 13);
      }
      return c.json({ seeded: 50 });
    });
    app.get("/items/:id", (c) => {
      const row = this.sql.exec("SELECT id, title, score FROM items WHERE id = ?", Number(c.req.param("id"))).toArray()[0];
      return row ? c.json({ room: c.req.header("x-room"), item: row }) : c.json({ error: "no such item" }, 404);
    });
    this.app = app;
  }
  fetch(request) {
    return this.app.fetch(request);
  }
}

const app = new Hono();
app.use("*", async (c, next) => {
  await next();
  c.header("x-served-by", "worker");
});
app.all("/rooms/:name/*", (c) => {
  const name = c.req.param("name");
  const stub = c.env.ROOMS.get(c.env.ROOMS.idFromName(name));
  const url = new URL(c.req.url);
  url.pathname = url.pathname.slice(`/rooms/${name}`.length);
  const headers = new Headers(c.req.raw.headers);
  headers.set("x-room", name);
  return stub.fetch(new Request(url, { method: c.req.method, headers, body: c.req.raw.body }));
});
app.get("/", (c) => c.text("rooms"));

export default app;
