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
const tick = () => new Promise((r) => setTimeout(r, 0));

const groups = {
  readable: () => run({
    desired_over_time: async () => {
      const log = [];
      let ctrl;
      const rs = new ReadableStream({ start(c) { ctrl = c; log.push(["start", c.desiredSize]); }, pull(c) { log.push(["pull", c.desiredSize]); } }, { highWaterMark: 3 });
      await tick();
      ctrl.enqueue("a"); log.push(["enq1", ctrl.desiredSize]);
      ctrl.enqueue("b"); ctrl.enqueue("c"); ctrl.enqueue("d"); log.push(["enq4", ctrl.desiredSize]);
      const r = rs.getReader();
      await r.read(); log.push(["read1", ctrl.desiredSize]);
      await r.read(); await r.read(); await r.read(); log.push(["read4", ctrl.desiredSize]);
      await tick();
      ctrl.close(); log.push(["closed", ctrl.desiredSize]);
      return log;
    },
    pull_source: async () => {
      const log = [];
      let n = 0;
      const rs = new ReadableStream({ pull(c) { log.push(["pull", c.desiredSize]); c.enqueue(n++); if (n === 4) c.close(); } }, { highWaterMark: 2 });
      await tick();
      log.push(["before read"]);
      const r = rs.getReader();
      for (;;) { const { value, done } = await r.read(); log.push(["read", value, done]); if (done) break; }
      return log;
    },
    size_strategy: async () => {
      let ctrl;
      new ReadableStream({ start(c) { ctrl = c; } }, new ByteLengthQueuingStrategy({ highWaterMark: 10 }));
      const a = ctrl.desiredSize; ctrl.enqueue(new Uint8Array(4)); const b = ctrl.desiredSize; ctrl.enqueue(new Uint8Array(8)); const c = ctrl.desiredSize;
      let ctrl2;
      new ReadableStream({ start(c) { ctrl2 = c; } }, { highWaterMark: 5, size: (x) => x.length });
      ctrl2.enqueue("abc");
      return [a, b, c, ctrl2.desiredSize, new CountQueuingStrategy({ highWaterMark: 7 }).highWaterMark, new ByteLengthQueuingStrategy({ highWaterMark: 3 }).size(new Uint8Array(9))];
    },
    bad_size: async () => { let ctrl; const rs = new ReadableStream({ start(c) { ctrl = c; } }, { size: () => -1 }); try { ctrl.enqueue("x"); return "ok"; } catch (e) { return [errInfo(e), await rs.getReader().read().catch(errInfo)]; } },
    error_then_read: async () => { const rs = new ReadableStream({ start(c) { c.error(new TypeError("boom")); } }); const r = rs.getReader(); return [await r.read().catch(errInfo), await r.closed.catch(errInfo)]; },
    cancel_reason: async () => { let got; const rs = new ReadableStream({ cancel(r) { got = r; } }); await rs.cancel("why"); return [got, rs.locked]; },
    locked_errors: async () => { const rs = new ReadableStream(); rs.getReader(); try { rs.getReader(); return "second"; } catch (e) { return [errInfo(e), await rs.cancel().catch(errInfo)]; } },
    release_pending: async () => { const rs = new ReadableStream(); const r = rs.getReader(); const p = r.read(); r.releaseLock(); return [await p.catch((e) => e.name), await r.closed.catch((e) => e.name)]; },
    enqueue_after_close: async () => { let ctrl; new ReadableStream({ start(c) { ctrl = c; } }); ctrl.close(); try { ctrl.enqueue("x"); } catch (e) { return errInfo(e); } },
    async_iter: async () => { const rs = new ReadableStream({ start(c) { c.enqueue(1); c.enqueue(2); c.close(); } }); const out = []; for await (const x of rs) out.push(x); return out; },
    from: async () => { const out = []; for await (const x of ReadableStream.from([1, 2, 3])) out.push(x); return out; },
  }),
  bytes: () => run({
    byob: async () => {
      const rs = new ReadableStream({ type: "bytes", start(c) { c.enqueue(new Uint8Array([1, 2, 3, 4, 5])); c.close(); } });
      const r = rs.getReader({ mode: "byob" });
      const a = await r.read(new Uint8Array(2));
      const b = await r.read(new Uint8Array(10));
      const c = await r.read(new Uint8Array(4));
      return [[...a.value], a.done, [...b.value], b.done, c.done, c.value?.byteLength];
    },
    byob_request: async () => {
      const log = [];
      const rs = new ReadableStream({ type: "bytes", autoAllocateChunkSize: 8, pull(c) { const v = c.byobRequest.view; log.push(v.byteLength); v[0] = 7; c.byobRequest.respond(1); } });
      const r = rs.getReader();
      const x = await r.read();
      return [log, [...x.value]];
    },
    byob_min: async () => {
      const rs = new ReadableStream({ type: "bytes", start(c) { c.enqueue(new Uint8Array([1])); c.enqueue(new Uint8Array([2, 3])); c.close(); } });
      const r = rs.getReader({ mode: "byob" });
      const x = await r.read(new Uint8Array(3), { min: 3 });
      return [[...x.value], x.done];
    },
    default_on_bytes: async () => { const rs = new ReadableStream({ type: "bytes", start(c) { c.enqueue(new Uint8Array([9, 8])); c.close(); } }); const r = rs.getReader(); const a = await r.read(); return [Object.prototype.toString.call(a.value), [...a.value], (await r.read()).done]; },
    byob_not_bytes: async () => { try { new ReadableStream().getReader({ mode: "byob" }); return "got"; } catch (e) { return errInfo(e); } },
    enqueue_not_view: async () => { let ctrl; new ReadableStream({ type: "bytes", start(c) { ctrl = c; } }); try { ctrl.enqueue("x"); return "ok"; } catch (e) { return { name: e.name }; } },
  }),
  writable: () => run({
    desired_backpressure: async () => {
      const log = [];
      let release;
      const ws = new WritableStream({ write(chunk) { log.push(["write", chunk]); return new Promise((r) => { release = r; }); } }, { highWaterMark: 2 });
      const w = ws.getWriter();
      log.push(["start", w.desiredSize]);
      w.write("a"); log.push(["after a", w.desiredSize]);
      w.write("b"); w.write("c"); log.push(["after c", w.desiredSize]);
      await tick(); release(); await tick(); log.push(["released", w.desiredSize]);
      release(); await tick(); release(); await tick(); log.push(["done", w.desiredSize]);
      return log;
    },
    close_and_closed: async () => { const log = []; const ws = new WritableStream({ close() { log.push("sink close"); } }); const w = ws.getWriter(); await w.close(); log.push(["closed", await w.closed, w.desiredSize]); return log; },
    write_after_close: async () => { const w = new WritableStream().getWriter(); w.close(); return await w.write("x").catch(errInfo); },
    sink_error: async () => { const w = new WritableStream({ write() { throw new RangeError("sink"); } }).getWriter(); const a = await w.write(1).catch(errInfo); return [a, await w.closed.catch(errInfo), w.desiredSize]; },
    abort: async () => { let reason; const w = new WritableStream({ abort(r) { reason = r; } }).getWriter(); await w.abort("stop"); return [reason, await w.write(1).catch(errInfo)]; },
  }),
  pipes: () => run({
    pipe_basic: async () => { const out = []; await new ReadableStream({ start(c) { c.enqueue(1); c.enqueue(2); c.close(); } }).pipeTo(new WritableStream({ write(x) { out.push(x); } })); return out; },
    prevent_close: async () => { const log = []; const ws = new WritableStream({ write(x) { log.push(x); }, close() { log.push("closed"); } }); await ReadableStream.from(["a"]).pipeTo(ws, { preventClose: true }); return [log, ws.locked]; },
    source_error: async () => { let abortReason; const ws = new WritableStream({ abort(r) { abortReason = r?.message; } }); const p = await new ReadableStream({ start(c) { c.error(new Error("src")); } }).pipeTo(ws).catch(errInfo); return [p, abortReason]; },
    prevent_abort: async () => { let aborted = false; const ws = new WritableStream({ abort() { aborted = true; } }); const p = await new ReadableStream({ start(c) { c.error(new Error("src")); } }).pipeTo(ws, { preventAbort: true }).catch(errInfo); return [p, aborted, ws.locked]; },
    dest_error: async () => { let cancelled; const rs = new ReadableStream({ pull(c) { c.enqueue(1); }, cancel(r) { cancelled = r?.message; } }); const p = await rs.pipeTo(new WritableStream({ write() { throw new Error("dst"); } })).catch(errInfo); return [p, cancelled]; },
    prevent_cancel: async () => { let cancelled = false; const rs = new ReadableStream({ pull(c) { c.enqueue(1); }, cancel() { cancelled = true; } }); const p = await rs.pipeTo(new WritableStream({ write() { throw new Error("dst"); } }), { preventCancel: true }).catch(errInfo); return [p, cancelled, rs.locked]; },
    signal: async () => { const ac = new AbortController(); const rs = new ReadableStream({ pull(c) { c.enqueue(1); return new Promise((r) => setTimeout(r, 5)); } }); const p = rs.pipeTo(new WritableStream(), { signal: ac.signal }); setTimeout(() => ac.abort(), 20); return await p.catch((e) => e.name); },
    locked_pipe: async () => { const rs = new ReadableStream(); rs.getReader(); return await rs.pipeTo(new WritableStream()).catch(errInfo); },
    through: async () => { const ts = new TransformStream({ transform(x, c) { c.enqueue(x * 10); } }); const out = []; await ReadableStream.from([1, 2]).pipeThrough(ts).pipeTo(new WritableStream({ write(x) { out.push(x); } })); return out; },
    transform_error: async () => { const ts = new TransformStream({ transform() { throw new TypeError("tx"); } }); const p = await ReadableStream.from([1]).pipeThrough(ts).getReader().read().catch(errInfo); return p; },
    transform_flush: async () => { const ts = new TransformStream({ flush(c) { c.enqueue("end"); } }); const out = []; await ReadableStream.from(["a"]).pipeThrough(ts).pipeTo(new WritableStream({ write(x) { out.push(x); } })); return out; },
    ts_desired: async () => { let ctrl; const ts = new TransformStream({ start(c) { ctrl = c; } }, undefined, { highWaterMark: 2 }); await tick(); const w = ts.writable.getWriter(); return [ctrl.desiredSize, w.desiredSize]; },
  }),
  tee: () => run({
    tee_both: async () => { const [a, b] = ReadableStream.from([1, 2, 3]).tee(); const ra = []; const rb = []; for await (const x of a) ra.push(x); for await (const x of b) rb.push(x); return [ra, rb]; },
    tee_cancel_one: async () => { let reason = "none"; const rs = new ReadableStream({ start(c) { c.enqueue(1); }, cancel(r) { reason = r; } }); const [a, b] = rs.tee(); await a.cancel("x"); const before = reason; const r = b.getReader(); const v = await r.read(); await b.cancel("y").catch(() => {}); r.releaseLock(); await b.cancel("y"); return [before, v.value, reason]; },
    tee_error: async () => { let ctrl; const rs = new ReadableStream({ start(c) { ctrl = c; } }); const [a, b] = rs.tee(); ctrl.error(new Error("e")); return [await a.getReader().read().catch(errInfo), await b.getReader().read().catch(errInfo)]; },
    tee_locked: async () => { const rs = new ReadableStream(); rs.tee(); return [rs.locked]; },
  }),
};

export default {
  async fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    const fn = groups[name];
    if (!fn) return new Response("no such group", { status: 404 });
    return Response.json(await fn());
  },
};
