// AsyncLocalStorage across awaits, timers, microtasks, nextTick and
// concurrent requests in one isolate.
import { AsyncLocalStorage, AsyncResource } from "node:async_hooks";
import { setImmediate as nodeSetImmediate } from "node:timers";
import { setTimeout as sleep } from "node:timers/promises";

const als = new AsyncLocalStorage();
const other = new AsyncLocalStorage();
const wait = (ms) => new Promise((r) => setTimeout(r, ms));

const routes = {
  "/basics": async () => {
    const seen = [];
    seen.push(["outside", als.getStore() ?? null]);
    const result = await als.run({ id: 1 }, async () => {
      seen.push(["sync", als.getStore()]);
      await null;
      seen.push(["after await", als.getStore()]);
      await wait(2);
      seen.push(["after timer await", als.getStore()]);
      await new Promise((r) => setTimeout(() => { seen.push(["in setTimeout", als.getStore()]); r(); }, 1));
      await new Promise((r) => queueMicrotask(() => { seen.push(["in queueMicrotask", als.getStore()]); r(); }));
      await new Promise((r) => process.nextTick(() => { seen.push(["in nextTick", als.getStore()]); r(); }));
      await new Promise((r) => setImmediate(() => { seen.push(["in setImmediate", als.getStore()]); r(); }));
      await new Promise((r) => nodeSetImmediate(() => { seen.push(["in node:timers setImmediate", als.getStore()]); r(); }));
      await sleep(1);
      seen.push(["after timers/promises", als.getStore()]);
      await Promise.resolve().then(() => seen.push(["in then", als.getStore()]));
      const inner = other.run("o", () => [als.getStore(), other.getStore()]);
      seen.push(["nested other", inner]);
      const nested = als.run({ id: 2 }, () => als.getStore());
      seen.push(["nested same", nested, als.getStore()]);
      seen.push(["exit", als.exit(() => als.getStore() ?? null), als.getStore()]);
      return "returned";
    });
    seen.push(["after run", als.getStore() ?? null, result]);
    return seen;
  },
  "/bind": async () => {
    const out = [];
    const bound = als.run("bound", () => AsyncResource.bind(() => als.getStore()));
    const snap = als.run("snap", () => AsyncLocalStorage.snapshot());
    const res = als.run("res", () => new AsyncResource("thing"));
    out.push(bound(), snap(() => als.getStore()), res.runInAsyncScope(() => als.getStore()));
    const bound2 = als.run("b2", () => AsyncLocalStorage.bind(() => als.getStore()));
    out.push(bound2(), als.getStore() ?? null);
    als.run("thenable", () => {
      const p = Promise.resolve();
      out.push(["captured at then", "pending"]);
      return p;
    });
    const later = await als.run("cb", () => new Promise((r) => setTimeout(() => r(als.getStore()), 1)));
    out.push(later);
    try {
      als.enterWith("entered");
      out.push("enterWith worked");
    } catch (e) {
      out.push({ name: e.name, message: e.message });
    }
    out.push(typeof als.disable, als.name);
    return out;
  },
  "/concurrent": async (request) => {
    const n = Number(new URL(request.url).searchParams.get("n"));
    return als.run({ n }, async () => {
      const marks = [];
      for (let i = 0; i < 5; i++) {
        await wait(1 + ((n * 3 + i) % 4));
        marks.push(als.getStore().n);
      }
      return marks;
    });
  },
  "/fanout": async (request) => {
    const base = new URL(request.url);
    const res = await Promise.all([1, 2, 3].map((n) => als.run({ n }, async () => {
      await wait(4 - n);
      return als.getStore().n;
    })));
    return res;
  },
};

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    const route = routes[pathname];
    if (!route) return new Response("not found", { status: 404 });
    try {
      return Response.json(await route(request));
    } catch (e) {
      return Response.json({ error: e.name, message: e.message });
    }
  },
};
