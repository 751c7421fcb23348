const errInfo = (e) => ({ name: e?.name, message: e?.message });
async function run(cases) {
  const out = {};
  for (const [name, fn] of Object.entries(cases)) {
    try {
      out[name] = await fn();
    } catch (e) {
      out[name] = { error: errInfo(e) };
    }
  }
  return out;
}

const groups = {
  events: () => run({
    event_defaults: () => { const e = new Event("x"); return [e.type, e.bubbles, e.cancelable, e.composed, e.defaultPrevented, e.eventPhase, e.isTrusted, e.target, e.currentTarget, typeof e.timeStamp, e.returnValue, e.cancelBubble]; },
    event_init: () => { const e = new Event("y", { bubbles: true, cancelable: true, composed: true }); e.preventDefault(); return [e.bubbles, e.cancelable, e.composed, e.defaultPrevented, e.returnValue]; },
    not_cancelable: () => { const e = new Event("y"); e.preventDefault(); return e.defaultPrevented; },
    no_type: () => { try { new Event(); return "made"; } catch (e) { return { name: e.name }; } },
    custom: () => { const e = new CustomEvent("c", { detail: { a: 1 } }); return [e.detail, e instanceof Event, Object.prototype.toString.call(e), new CustomEvent("d").detail]; },
    dispatch: () => {
      const t = new EventTarget();
      const log = [];
      const h = (e) => log.push(["fn", e.eventPhase, e.target === t, e.currentTarget === t]);
      t.addEventListener("a", h);
      t.addEventListener("a", h);
      t.addEventListener("a", { handleEvent(e) { log.push(["obj", this !== undefined]); } });
      t.addEventListener("a", () => log.push("once"), { once: true });
      const r1 = t.dispatchEvent(new Event("a"));
      const r2 = t.dispatchEvent(new Event("a"));
      t.removeEventListener("a", h);
      t.dispatchEvent(new Event("a"));
      return [log, r1, r2];
    },
    prevent_result: () => { const t = new EventTarget(); t.addEventListener("a", (e) => e.preventDefault()); return [t.dispatchEvent(new Event("a", { cancelable: true })), t.dispatchEvent(new Event("a"))]; },
    stop_immediate: () => { const t = new EventTarget(); const log = []; t.addEventListener("a", (e) => { log.push(1); e.stopImmediatePropagation(); }); t.addEventListener("a", () => log.push(2)); t.dispatchEvent(new Event("a")); return log; },
    signal_remove: () => { const t = new EventTarget(); const ac = new AbortController(); let n = 0; t.addEventListener("a", () => n++, { signal: ac.signal }); t.dispatchEvent(new Event("a")); ac.abort(); t.dispatchEvent(new Event("a")); return n; },
    listener_throws: () => { const t = new EventTarget(); const log = []; t.addEventListener("a", () => { throw new Error("x"); }); t.addEventListener("a", () => log.push("after")); const r = t.dispatchEvent(new Event("a")); return [log, r]; },
    redispatch: () => { const t = new EventTarget(); const e = new Event("a"); t.addEventListener("a", () => { try { t.dispatchEvent(e); } catch (x) { e.caught = x.name; } }); t.dispatchEvent(e); return [e.caught ?? null, e.eventPhase, e.target === t]; },
    dispatch_non_event: () => { try { new EventTarget().dispatchEvent({ type: "a" }); return "ok"; } catch (e) { return { name: e.name }; } },
    null_listener: () => { const t = new EventTarget(); t.addEventListener("a", null); return t.dispatchEvent(new Event("a")); },
    subclass: () => { class My extends EventTarget {} const m = new My(); let got = null; m.addEventListener("z", (e) => { got = e.type; }); m.dispatchEvent(new Event("z")); return [got, m instanceof EventTarget]; },
    abort_signal: () => { const ac = new AbortController(); const log = []; ac.signal.onabort = (e) => log.push(["onabort", e.type]); ac.signal.addEventListener("abort", () => log.push("listener")); ac.abort("why"); ac.abort("again"); return [log, ac.signal.aborted, ac.signal.reason]; },
    abort_default_reason: () => { const ac = new AbortController(); ac.abort(); return [ac.signal.reason.name, ac.signal.reason.message, ac.signal.reason instanceof DOMException]; },
    signal_statics: async () => { const s = AbortSignal.abort(); const t = AbortSignal.timeout(10); const any = AbortSignal.any([s]); await new Promise((r) => setTimeout(r, 40)); return [s.aborted, t.aborted, t.reason?.name, any.aborted, any.reason?.name]; },
    throw_if_aborted: () => { try { AbortSignal.abort(new TypeError("r")).throwIfAborted(); return "no"; } catch (e) { return errInfo(e); } },
  }),
  globals: () => run({
    navigator: () => [navigator.userAgent, typeof navigator.hardwareConcurrency, navigator.language, Object.prototype.toString.call(navigator)],
    performance: () => [typeof performance.now(), typeof performance.timeOrigin, performance.now() >= 0, Object.prototype.toString.call(performance)],
    scheduler: async () => { const r = await scheduler.wait(5); return [typeof scheduler.wait, r]; },
    scheduler_bad: async () => { try { return await scheduler.wait("x"); } catch (e) { return { name: e.name }; } },
    microtasks: async () => {
      const log = [];
      setTimeout(() => log.push("timeout"), 0);
      queueMicrotask(() => log.push("micro1"));
      Promise.resolve().then(() => log.push("then1")).then(() => log.push("then2"));
      queueMicrotask(() => { log.push("micro2"); queueMicrotask(() => log.push("micro3")); });
      (async () => { log.push("async-sync"); await null; log.push("async-after"); })();
      log.push("sync");
      await new Promise((r) => setTimeout(r, 10));
      return log;
    },
    microtask_bad: () => { try { queueMicrotask(1); return "ok"; } catch (e) { return { name: e.name }; } },
    structured_transfer: () => {
      const buf = new Uint8Array([1, 2, 3]).buffer;
      const out = structuredClone({ buf }, { transfer: [buf] });
      return [buf.byteLength, out.buf.byteLength, [...new Uint8Array(out.buf)]];
    },
    structured_transfer_bad: () => { try { const b = new ArrayBuffer(1); structuredClone(b, { transfer: [b, b] }); return "ok"; } catch (e) { return { name: e.name }; } },
    structured_types: () => { const d = new Date(5); const m = new Map([[1, { a: [1n] }]]); const r = structuredClone({ d, m, s: new Set([1]), re: /x/g, err: new RangeError("m") }); return [r.d.getTime(), r.m.get(1).a[0] === 1n, r.s.has(1), r.re.flags, r.err.name, r.err.message]; },
    structured_fn: () => { try { structuredClone({ f() {} }); return "ok"; } catch (e) { return { name: e.name }; } },
    self_global: () => [self === globalThis, typeof globalThis.caches, typeof WebSocketPair, typeof HTMLRewriter],
    report_error: () => typeof reportError,
  }),
  cf: async (request) => ({ type: typeof request.cf, isObject: request.cf !== null && typeof request.cf === "object", constructed: new Request("https://h.test/").cf === undefined, viaInit: new Request("https://h.test/", { cf: { cacheTtl: 5 } }).cf?.cacheTtl ?? null }),
};

export default {
  async fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    const fn = groups[name];
    if (!fn) return new Response("no such group", { status: 404 });
    return Response.json(await fn(request));
  },
};
