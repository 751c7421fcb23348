import { DurableObject } from "cloudflare:workers";

const errInfo = (e) => ({ name: e?.name, message: e?.message });
const far = () => Date.now() + 3600_000;

export class Alarmed extends DurableObject {
  async args() {
    const s = this.ctx.storage;
    const out = {};
    for (const [k, v] of [["string", "123"], ["nan", NaN], ["undefined", undefined], ["object", {}], ["infinity", Infinity]]) {
      try {
        await s.setAlarm(v);
        out[k] = { ok: true, alarm: await s.getAlarm() };
      } catch (e) {
        out[k] = { ok: false, error: errInfo(e) };
      }
      await s.deleteAlarm();
    }
    const base = far();
    await s.setAlarm(base + 0.75);
    out.fraction = (await s.getAlarm()) - base;
    await s.setAlarm(new Date(base));
    out.date = (await s.getAlarm()) === base;
    await s.deleteAlarm();
    return out;
  }
  async replace() {
    const s = this.ctx.storage;
    const t1 = far(), t2 = t1 + 5000;
    await s.setAlarm(t1);
    await s.setAlarm(t2);
    const r = { replaced: (await s.getAlarm()) === t2 };
    await s.deleteAlarm();
    await s.deleteAlarm();
    r.after_double_delete = await s.getAlarm();
    return r;
  }
  async txn() {
    const s = this.ctx.storage;
    const t = far();
    const r = {};
    await s.transaction(async (txn) => {
      await txn.setAlarm(t);
      r.inside = (await txn.getAlarm()) === t;
      txn.rollback();
    });
    r.after_rollback = await s.getAlarm();
    try {
      await s.transaction(async (txn) => {
        await txn.setAlarm(t);
        throw new Error("boom");
      });
    } catch (e) {
      r.thrown = e.message;
    }
    r.after_throw = await s.getAlarm();
    await s.transaction(async (txn) => {
      await txn.setAlarm(t);
      await txn.put("k", 1);
    });
    r.after_commit = (await s.getAlarm()) === t;
    await s.transaction(async (txn) => {
      await s.deleteAlarm();
    });
    r.after_delete_in_txn = await s.getAlarm();
    return r;
  }
  async wipe() {
    const s = this.ctx.storage;
    await s.setAlarm(far());
    await s.put("x", 1);
    await s.deleteAll();
    return { alarm: await s.getAlarm(), x: (await s.get("x")) ?? null };
  }
  async alarm() {}
}

export class NoHandler extends DurableObject {
  async probe() {
    const s = this.ctx.storage;
    const r = { get: await s.getAlarm() };
    try {
      await s.deleteAlarm();
      r.del = "ok";
    } catch (e) {
      r.del = errInfo(e);
    }
    return r;
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const stub = env.A.getByName(url.searchParams.get("name") ?? "a");
    switch (url.pathname) {
      case "/args": return Response.json(await stub.args());
      case "/replace": return Response.json(await stub.replace());
      case "/txn": return Response.json(await stub.txn());
      case "/wipe": return Response.json(await stub.wipe());
      case "/no-handler": return Response.json(await env.N.getByName("x").probe());
      default: return new Response("no such route", { status: 404 });
    }
  },
};
