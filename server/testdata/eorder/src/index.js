import { DurableObject, RpcTarget } from "cloudflare:workers";

class Counter extends RpcTarget {
  #n = 0;
  increment() { return ++this.#n; }
}

// Log records the events it receives, in arrival order: in memory and as
// AUTOINCREMENT rows.
export class Log extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec("CREATE TABLE IF NOT EXISTS log (seq INTEGER PRIMARY KEY AUTOINCREMENT, run TEXT, i INTEGER)");
    this.seen = new Map();
  }
  push(run, i) {
    if (!this.seen.has(run)) this.seen.set(run, []);
    this.seen.get(run).push(i);
    this.sql.exec("INSERT INTO log (run, i) VALUES (?, ?)", run, i);
    return i;
  }
  async fetch(request) {
    const u = new URL(request.url);
    return new Response(String(this.push(u.searchParams.get("run"), Number(u.searchParams.get("i")))));
  }
  get size() { return this.seen.size; }
  counter() { return new Counter(); }
  async callBack(fn) { return await fn(20); }
  take(run) {
    const mem = this.seen.get(run) ?? [];
    this.seen.delete(run);
    const rows = this.sql.exec("SELECT i FROM log WHERE run = ? ORDER BY seq", run).toArray().map((r) => r.i);
    this.sql.exec("DELETE FROM log WHERE run = ?", run);
    return { mem, rows };
  }
}

// GET /run?run=R&n=N: N concurrent events on one stub (every fifth a
// fetch, the rest RPC calls), then what the object saw.
export default {
  async fetch(request, env) {
    const u = new URL(request.url);
    if (u.pathname === "/rpc") {
      const stub = env.LOG.getByName("shared");
      const c = await stub.counter();
      const out = { size: await stub.size, counted: [await c.increment(), await c.increment()], pipelined: await stub.counter().increment() };
      try {
        out.callback = await stub.callBack((x) => x + 1);
      } catch (e) {
        out.callbackError = e.message;
      }
      return Response.json(out);
    }
    const run = u.searchParams.get("run");
    const n = Number(u.searchParams.get("n"));
    const stub = env.LOG.getByName("shared");
    const calls = [];
    for (let i = 0; i < n; i++) {
      calls.push(i % 5 === 4 ? stub.fetch(`http://do/?run=${run}&i=${i}`).then((r) => r.text()).then(Number) : stub.push(run, i));
    }
    const answers = await Promise.all(calls);
    return Response.json({ answers, ...(await stub.take(run)) });
  },
};
