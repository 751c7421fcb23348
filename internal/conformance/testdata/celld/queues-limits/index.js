// Each route tries one send and reports what it threw (or that it resolved).
async function attempt(fn) {
  try {
    const r = await fn();
    return { ok: true, keys: r && typeof r === "object" ? Object.keys(r).sort() : typeof r };
  } catch (e) {
    return { ok: false, name: e.name, message: e.message };
  }
}

const big = (n) => "x".repeat(n);

const cases = {
  "undefined-body": (q) => q.send(undefined),
  "no-args": (q) => q.send(),
  "null-body": (q) => q.send(null),
  "text-number": (q) => q.send(42, { contentType: "text" }),
  "bytes-string": (q) => q.send("abc", { contentType: "bytes" }),
  "bytes-arraybuffer": (q) => q.send(new ArrayBuffer(3), { contentType: "bytes" }),
  "bytes-dataview": (q) => q.send(new DataView(new ArrayBuffer(3)), { contentType: "bytes" }),
  "json-function": (q) => q.send({ f() {} }, { contentType: "json" }),
  "json-bigint": (q) => q.send(10n, { contentType: "json" }),
  "json-symbol": (q) => q.send(Symbol("s"), { contentType: "json" }),
  "v8-function": (q) => q.send(() => 1, { contentType: "v8" }),
  "default-map": (q) => q.send(new Map([[1, 2]])),
  "bad-type": (q) => q.send("x", { contentType: "xml" }),
  "delay-negative": (q) => q.send("x", { delaySeconds: -1 }),
  "delay-fraction": (q) => q.send("x", { delaySeconds: 1.5 }),
  "delay-string": (q) => q.send("x", { delaySeconds: "5" }),
  "delay-43200": (q) => q.send("x", { delaySeconds: 43200 }),
  "delay-43201": (q) => q.send("x", { delaySeconds: 43201 }),
  "delay-86400": (q) => q.send("x", { delaySeconds: 86400 }),
  "delay-86401": (q) => q.send("x", { delaySeconds: 86401 }),
  "text-127000": (q) => q.send(big(127000), { contentType: "text" }),
  "text-128000": (q) => q.send(big(128000), { contentType: "text" }),
  "text-128001": (q) => q.send(big(128001), { contentType: "text" }),
  "json-128001": (q) => q.send(big(127999)),
  "batch-empty": (q) => q.sendBatch([]),
  "batch-none": (q) => q.sendBatch(),
  "batch-not-iterable": (q) => q.sendBatch(5),
  "batch-100": (q) => q.sendBatch(Array.from({ length: 100 }, (_, i) => ({ body: i }))),
  "batch-101": (q) => q.sendBatch(Array.from({ length: 101 }, (_, i) => ({ body: i }))),
  "batch-undefined-body": (q) => q.sendBatch([{ body: 1 }, { body: undefined }]),
  "batch-bad-type": (q) => q.sendBatch([{ body: 1, contentType: "nope" }]),
  "batch-300k": (q) => q.sendBatch([{ body: big(100000), contentType: "text" }, { body: big(100000), contentType: "text" }, { body: big(100000), contentType: "text" }]),
  "batch-240k": (q) => q.sendBatch([{ body: big(120000), contentType: "text" }, { body: big(120000), contentType: "text" }]),
  "batch-big-message": (q) => q.sendBatch([{ body: big(128001), contentType: "text" }]),
  "batch-delay-bad": (q) => q.sendBatch([{ body: 1 }], { delaySeconds: -5 }),
  "batch-msg-delay-bad": (q) => q.sendBatch([{ body: 1, delaySeconds: 100000 }]),
  "batch-generator": (q) => q.sendBatch((function* () { yield { body: "g" }; })()),
};

export default {
  async fetch(request, env) {
    const name = new URL(request.url).pathname.slice(1);
    if (name === "list") return Response.json(Object.keys(cases));
    const fn = cases[name];
    if (!fn) return new Response("no such case", { status: 404 });
    return Response.json(await attempt(() => fn(env.Q)));
  },
  async queue(batch) {
    batch.ackAll();
  },
};
