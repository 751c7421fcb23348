// (Miniflare's broker retries a whole batch on retryAll() or a throw, explicit acks
// included, unlike Cloudflare's documented rule; those cases are tested in Go.)
// Every delivery is logged in KV as d:<queue>:<kind>:<attempts> -> {id, at}.
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/send") {
      await env.WORK.sendBatch(["ack", "retry", "ack-then-retry", "retry-then-ack", "implicit", "delay"].map((kind) => ({ body: { kind } })));
      await env.THROWS.send({ kind: "throws-once" });
      return Response.json({ ok: true });
    }
    if (url.pathname === "/log") {
      const list = await env.LOG.list({ prefix: "d:" });
      const log = {};
      for (const k of list.keys) log[k.name] = JSON.parse(await env.LOG.get(k.name));
      const names = Object.keys(log).sort();
      const first = (q, kind) => log[`d:${q}:${kind}:1`];
      const delay = log["d:retry-work:delay:2"] && log["d:retry-work:delay:2"].at - first("retry-work", "delay").at;
      return Response.json({
        deliveries: names,
        retry_same_id_in_dlq: !!first("retry-dlq", "retry") && first("retry-dlq", "retry").id === first("retry-work", "retry").id,
        dlq_attempts_restart: !!first("retry-dlq", "retry") && !log["d:retry-dlq:retry:2"],
        delay_at_least_2s: delay >= 1900,
        delay_under_6s: delay < 6000,
      });
    }
    return new Response("no such route", { status: 404 });
  },

  async queue(batch, env) {
    for (const msg of batch.messages) {
      await env.LOG.put(`d:${batch.queue}:${msg.body.kind}:${msg.attempts}`, JSON.stringify({ id: msg.id, at: Date.now() }));
    }
    if (batch.queue === "retry-throws") {
      if (batch.messages.some((m) => m.attempts === 1)) throw new Error("fail the first delivery");
      return;
    }
    if (batch.queue === "retry-dlq") return;
    for (const msg of batch.messages) {
      switch (msg.body.kind) {
        case "ack": msg.ack(); break;
        case "retry": msg.retry(); break;
        case "ack-then-retry": msg.ack(); msg.retry(); break;
        case "retry-then-ack": if (msg.attempts === 1) { msg.retry(); msg.ack(); } break;
        case "delay": if (msg.attempts === 1) msg.retry({ delaySeconds: 2 }); else msg.ack(); break;
      }
    }
  },
};
