// GET  /notes            the latest notes, newest first (D1)
// POST /notes            {"author": "…", "body": "…"} adds one (D1)
// GET  /notes?author=ann one author's notes
// GET  /visits           counts this visit and returns the total (KV)
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/notes" && request.method === "POST") {
      const { author, body } = await request.json();
      if (typeof author !== "string" || typeof body !== "string" || !author || !body) {
        return Response.json({ error: "author and body are required strings" }, { status: 400 });
      }
      const { meta } = await env.DB.prepare("INSERT INTO notes (author, body) VALUES (?, ?)").bind(author, body).run();
      return Response.json({ id: meta.last_row_id }, { status: 201 });
    }
    if (url.pathname === "/notes") {
      const author = url.searchParams.get("author");
      const stmt = author
        ? env.DB.prepare("SELECT id, author, body FROM notes WHERE author = ? ORDER BY id DESC LIMIT 50").bind(author)
        : env.DB.prepare("SELECT id, author, body FROM notes ORDER BY id DESC LIMIT 50");
      const { results } = await stmt.all();
      return Response.json(results);
    }
    if (url.pathname === "/visits") {
      const n = Number((await env.VISITS.get("visits")) ?? "0") + 1;
      await env.VISITS.put("visits", String(n), { metadata: { last: new Date().toISOString() } });
      return new Response(`${n}\n`);
    }
    return new Response("not found\n", { status: 404 });
  },
};
