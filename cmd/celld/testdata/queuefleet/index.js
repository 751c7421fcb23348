export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (url.pathname === "/send") {
      const from = Number(url.searchParams.get("from")), n = Number(url.searchParams.get("n"));
      const seqs = Array.from({ length: n }, (_, i) => from + i);
      const results = await Promise.allSettled(seqs.map((seq) => env.JOBS.send({ seq })));
      return Response.json(seqs.filter((_, i) => results[i].status === "fulfilled"));
    }
    if (url.pathname === "/seen") {
      const seqs = [];
      let cursor;
      do {
        const page = await env.SEEN.list({ prefix: "b:", cursor });
        for (const k of page.keys) seqs.push(...JSON.parse(await env.SEEN.get(k.name)));
        cursor = page.list_complete ? undefined : page.cursor;
      } while (cursor);
      return Response.json(seqs);
    }
    return new Response("not found", { status: 404 });
  },
  async queue(batch, env) {
    await env.SEEN.put("b:" + crypto.randomUUID(), JSON.stringify(batch.messages.map((m) => m.body.seq)));
  },
};
