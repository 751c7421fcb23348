import { WorkerEntrypoint, DurableObject, RpcTarget } from "cloudflare:workers";

class Counter extends RpcTarget {
  constructor(start) { super(); this.n = start; }
  increment(by = 1) { this.n += by; return this.n; }
  get value() { return this.n; }
}

export class Api extends WorkerEntrypoint {
  add(a, b) { return a + b; }
  whoami() {
    return { props: this.ctx.props, greeting: this.env.GREETING, hasWaitUntil: typeof this.ctx.waitUntil };
  }
  echo(v) { return v; }
  kinds(...args) { return args.map((a) => Object.prototype.toString.call(a)); }
  async later(ms) { await new Promise((r) => setTimeout(r, ms)); return "waited"; }
  boom(kind) {
    if (kind === "type") throw new TypeError("bad type");
    if (kind === "range") throw new RangeError("out of range");
    class MyError extends Error { constructor(m) { super(m); this.name = "MyError"; } }
    throw new MyError("custom");
  }
  async callBack(fn, x) { return await fn(x * 2); }
  counter(start) { return new Counter(start); }
  get answer() { return 42; }
  fetch(request) {
    const u = new URL(request.url);
    return new Response(JSON.stringify({ path: u.pathname, method: request.method, props: this.ctx.props }), {
      headers: { "content-type": "application/json", "x-from": "Api" },
    });
  }
}

export class Plain {
  hello() { return "plain"; }
}

export class Obj extends DurableObject {
  hi() { return "obj"; }
  async viaService() {
    const c = await this.env.API.counter(7);
    await c.increment(2);
    const r = await this.env.SELF.fetch("http://x/inner", { method: "DELETE" });
    return { add: await this.env.API.add(4, 5), counter: await c.value, fetched: (await r.json()).method,
      exportsKeys: Object.keys(this.ctx.exports).sort(), viaExports: await this.ctx.exports.Api.add(1, 1) };
  }
}

const json = (v, status = 200) => new Response(JSON.stringify(v), { status, headers: { "content-type": "application/json" } });
const err = (e) => ({ name: e?.name, message: e?.message, ctor: e?.constructor?.name });
async function settle(f) {
  try { return { ok: await f() }; } catch (e) { return { err: err(e) }; }
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const p = url.pathname;
    if (p === "/inner") {
      return json({ inner: true, method: request.method, props: ctx.props, header: request.headers.get("x-test"),
        body: request.body === null ? null : await request.text() });
    }
    if (p === "/throw") throw new TypeError("thrown in the callee");
    if (p === "/self-throw") {
      return json(await settle(async () => {
        const r = await env.SELF.fetch("http://x/throw");
        return { status: r.status, body: await r.text() };
      }));
    }
    if (p === "/self-fetch") {
      const r = await env.SELF.fetch("https://example.com/inner?q=1", { method: "POST", headers: { "x-test": "yes" }, body: "payload" });
      return json({ status: r.status, body: await r.json() });
    }
    if (p === "/self-request") {
      const r = await env.SELF.fetch(new Request("http://x/inner", { headers: { "x-test": "req" } }));
      return json(await r.json());
    }
    if (p === "/api-fetch") {
      const r = await env.API.fetch("http://x/some/path", { method: "PUT" });
      return json({ status: r.status, from: r.headers.get("x-from"), body: await r.json() });
    }
    if (p === "/rpc-basic") {
      return json({
        add: await env.API.add(2, 3),
        whoami: await env.API.whoami(),
        plain: await env.PLAIN.whoami(),
        later: await env.API.later(5),
      });
    }
    if (p === "/rpc-values") {
      const v = await env.API.echo({ d: new Date(0), m: new Map([["a", 1]]), s: new Set([1, 2]), u8: new Uint8Array([1, 2]), big: 10n, nested: [null, undefined, { x: "y" }] });
      return json({
        date: v.d instanceof Date && v.d.getTime(), map: v.m instanceof Map && [...v.m], set: v.s instanceof Set && [...v.s],
        u8: v.u8 instanceof Uint8Array && [...v.u8], big: typeof v.big, nested: v.nested.length, hasUndef: 1 in v.nested,
        kinds: await env.API.kinds(new Date(0), /x/g, new ArrayBuffer(2), new Error("e")),
      });
    }
    if (p === "/rpc-errors") {
      return json({
        type: await settle(() => env.API.boom("type")),
        range: await settle(() => env.API.boom("range")),
        custom: await settle(() => env.API.boom("custom")),
        missing: await settle(() => env.API.nope()),
        ctor: await settle(() => env.API.constructor()),
        clone: await settle(() => env.API.echo(Symbol("s"))),
        // workerd answers with an "internal error; reference = <random>".
        notRpc: (await settle(() => env.NOTRPC.hello())).err.name,
        selfRpc: await settle(() => env.SELF.hello()),
      });
    }
    if (p === "/rpc-callbacks") {
      const c = await env.API.counter(10);
      const a = await c.increment();
      const b = await c.increment(5);
      const val = await c.value;
      const piped = await env.API.counter(100).increment(1);
      return json({
        callback: await env.API.callBack((x) => x + 1, 20),
        a, b, val, piped,
        answer: await env.API.answer,
        stubType: typeof env.API, fetchType: typeof env.API.fetch, connectType: typeof env.API.connect,
      });
    }
    if (p === "/from-object") {
      return json(await env.OBJ.getByName("o").viaService());
    }
    if (p === "/ctx") {
      const ex = ctx.exports;
      const out = { props: ctx.props, type: typeof ex };
      if (ex) {
        out.keys = Object.keys(ex).sort();
        out.apiAdd = await settle(() => ex.Api.add(1, 2));
        out.apiProps = await settle(() => ex.Api.whoami());
        const r = await ex.default.fetch("http://x/inner");
        out.defaultFetch = (await r.json()).inner;
        out.objType = typeof ex.Obj;
        out.obj = await settle(() => ex.Obj.get(ex.Obj.idFromName("a")).hi());
        out.plain = typeof ex.Plain;
        out.apiType = typeof ex.Api;
        out.defaultType = typeof ex.default;
        out.special = await settle(() => ex.Api({ props: { x: 1 } }).whoami());
        out.specialFetch = await settle(async () => (await ex.Api({ props: { y: 2 } }).fetch("http://x/p")).json());
      }
      return json(out);
    }
    return new Response("not found", { status: 404 });
  },
};
