import { DurableObject, RpcTarget } from "cloudflare:workers";

class Counter extends RpcTarget {
  #n = 0;
  constructor(start) { super(); this.#n = start; }
  increment(by = 1) { this.#n += by; return this.#n; }
  get value() { return this.#n; }
}

class Local extends RpcTarget {
  hello(who) { return "hello " + who; }
}

class MyError extends Error {
  constructor(message) { super(message); this.name = "MyError"; this.code = 7; }
}

export class Obj extends DurableObject {
  constructor(ctx, env) { super(ctx, env); this.field = "own"; }
  get answer() { return 42; }
  get asyncAnswer() { return Promise.resolve(43); }
  plain() { return "plain"; }
  counter(start) { return new Counter(start ?? 0); }
  adder(k) { return (x) => x + k; }
  async callBack(fn, x) { return await fn(x); }
  async callTarget(t) { return [typeof t, await t.hello("there")]; }
  throwMine() { throw new MyError("mine"); }
  throwCause() { throw new TypeError("outer", { cause: new RangeError("inner") }); }
  throwProps() { const e = new RangeError("with props"); e.code = "E_X"; throw e; }
}

const out = async (f) => {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    const r = { ok: false, name: e?.name, message: e?.message, ctor: e?.constructor?.name };
    if (e && "cause" in e) r.cause = e.cause === undefined ? "undefined" : { name: e.cause?.name, message: e.cause?.message, ctor: e.cause?.constructor?.name };
    if (e && "code" in e) r.code = e.code;
    return r;
  }
};

export default {
  async fetch(request, env) {
    const u = new URL(request.url);
    const stub = env.OBJ.getByName(u.searchParams.get("name") ?? "x");
    const probes = {
      "/properties": {
        getter: () => stub.answer,
        asyncGetter: () => stub.asyncAnswer,
        ownField: () => stub.field,
        missing: () => stub.nothingHere,
        methodAsValue: async () => typeof (await stub.plain),
        thenIsUndefined: () => typeof stub.then,
      },
      "/targets": {
        rpcTarget: async () => { const c = await stub.counter(5); return [await c.increment(), await c.increment(2), await c.value]; },
        targetType: async () => { const c = await stub.counter(1); return typeof c; },
        pipeline: () => stub.counter(10).increment(3),
        pipelineGetter: () => stub.counter(8).value,
        returnedFunction: async () => { const f = await stub.adder(5); return [typeof f, await f(3)]; },
        functionArgument: () => stub.callBack((x) => x * 2, 21),
        targetArgument: () => stub.callTarget(new Local()),
      },
      "/dispose": {
        symbolDispose: () => typeof Symbol.dispose,
        stubDispose: () => typeof stub[Symbol.dispose],
        targetDispose: async () => { const c = await stub.counter(1); const t = typeof c[Symbol.dispose]; c[Symbol.dispose](); return t; },
        resultDispose: async () => { const c = await stub.counter(1); const r = await c.increment(); return typeof r; },
      },
      "/errors": {
        subclass: () => stub.throwMine(),
        cause: () => stub.throwCause(),
        props: () => stub.throwProps(),
      },
    }[u.pathname];
    if (!probes) return new Response("not found", { status: 404 });
    const res = {};
    for (const [k, f] of Object.entries(probes)) res[k] = await out(f);
    return Response.json(res);
  },
};
