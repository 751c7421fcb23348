export default {
  async fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/state") {
      const a = new Response("hello bytes", { headers: { "x-a": "1" } });
      const before = a.body.locked;
      const b = new Response(a.body, a);
      const after = { locked: a.body.locked, aUsed: a.bodyUsed, bUsed: b.bodyUsed };
      const text = await b.text();
      let again = "";
      try { await a.text(); } catch (e) { again = e.name; }
      return Response.json({ before, after, text, again, aUsedEnd: a.bodyUsed, bUsedEnd: b.bodyUsed, type: b.headers.get("content-type") });
    }
    if (path === "/request") {
      const r = new Request("http://x/", { method: "POST", body: "req body" });
      const s = r.body;
      const r2 = new Request("http://x/", { method: "POST", body: s });
      return Response.json({ locked: s.locked, text: await r2.text(), usedOld: r.bodyUsed });
    }
    if (path === "/wire") {
      const inner = new Response("on the wire", { status: 202, headers: { "x-inner": "1" } });
      const outer = new Response(inner.body, inner);
      outer.headers.set("x-outer", "2");
      return outer;
    }
    return new Response("not found", { status: 404 });
  },
};
