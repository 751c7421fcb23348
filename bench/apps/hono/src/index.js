import { Hono } from "hono";

const app = new Hono();

// Timing middleware, as most apps have one.
app.use("*", async (c, next) => {
  const start = Date.now();
  await next();
  c.header("x-response-time", `${Date.now() - start}ms`);
});

// An auth-ish middleware on the API: reads a header, sets a variable.
app.use("/users/*", async (c, next) => {
  const token = c.req.header("authorization") ?? "";
  c.set("viewer", { role: token.startsWith("Bearer ") ? "member" : "guest" });
  await next();
});

app.get("/", (c) => c.text("home"));
app.get("/health", (c) => c.json({ ok: true }));
app.get("/posts", (c) => c.json({ posts: [] }));
app.get("/posts/:slug", (c) => c.json({ slug: c.req.param("slug") }));
app.post("/posts", async (c) => c.json(await c.req.json(), 201));
app.get("/tags/:tag/posts", (c) => c.json({ tag: c.req.param("tag") }));
app.get("/users", (c) => c.json({ users: [] }));
app.get("/users/:id", (c) => {
  const id = c.req.param("id");
  const fields = (c.req.query("fields") ?? "").split(",").filter(Boolean);
  const tags = c.req.queries("tag") ?? [];
  const user = { id, name: `user-${id}`, email: `user-${id}@example.com`, role: c.get("viewer").role };
  const picked = fields.length ? Object.fromEntries(fields.map((f) => [f, user[f] ?? null])) : user;
  return c.json({ user: picked, tags, fields });
});
app.get("/users/:id/posts/:post", (c) => c.json(c.req.param()));
app.delete("/users/:id", (c) => c.body(null, 204));
app.notFound((c) => c.json({ error: "not found" }, 404));

export default app;
