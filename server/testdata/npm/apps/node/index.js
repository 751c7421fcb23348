import { Readable, Transform, Writable, PassThrough, pipeline, finished } from "node:stream";
import { pipeline as pipelineP } from "node:stream/promises";
import util, { format, inspect, promisify, types, isDeepStrictEqual, callbackify, inherits } from "node:util";
import path from "node:path";
import { URL as NodeURL, fileURLToPath, pathToFileURL, format as urlFormat, parse as urlParse, URLSearchParams as NodeUSP } from "node:url";
import querystring from "node:querystring";
import { AsyncLocalStorage } from "node:async_hooks";
import { EventEmitter, once } from "events";
import { Buffer } from "buffer";
import { StringDecoder } from "node:string_decoder";
import assert from "node:assert";

const caught = (fn) => { try { fn(); return "no error"; } catch (e) { return { name: e.name, code: e.code ?? null, message: e.message }; } };
const routes = {};

routes["/stream"] = async () => {
  const upper = new Transform({
    transform(chunk, enc, cb) { cb(null, chunk.toString().toUpperCase()); },
  });
  const got = [];
  const sink = new Writable({ write(chunk, enc, cb) { got.push(chunk.toString()); cb(); } });
  await pipelineP(Readable.from(["a", "b", "c"]), upper, sink);
  const objs = [];
  for await (const x of Readable.from([{ n: 1 }, { n: 2 }])) objs.push(x.n);
  const pt = new PassThrough();
  const collected = [];
  pt.on("data", (d) => collected.push(d.toString("hex")));
  pt.write(Buffer.from([1, 2])); pt.end(Buffer.from("ok"));
  await new Promise((r) => finished(pt, r));
  const failed = await new Promise((resolve) => {
    pipeline(Readable.from(["x"]), new Transform({ transform(c, e, cb) { cb(new Error("transform failed")); } }), new PassThrough(), (err) => resolve(err && err.message));
  });
  const web = await new Response(Readable.toWeb(Readable.from([Buffer.from("to "), Buffer.from("web")]))).text();
  const fromWeb = [];
  for await (const c of Readable.fromWeb(new Response("from web").body)) fromWeb.push(Buffer.from(c).toString());
  return { got, objs, collected, failed, web, fromWeb: fromWeb.join("") };
};

routes["/util"] = async () => {
  const sleep = promisify((ms, cb) => setTimeout(() => cb(null, ms * 2), ms));
  function Old() {}
  inherits(Old, EventEmitter);
  const cbf = callbackify(async (x) => x + 1);
  const viaCb = await new Promise((r) => cbf(1, (e, v) => r(v)));
  return {
    format: [format("%s=%d %i %j %o %%", "a", 4.5, 4.5, { j: 1 }, [1]), format("x", 1, { y: 2 }), format("%c%s", "css", "s")],
    inspect: [
      inspect({ a: 1, b: "s", c: [1, 2, { d: new Map([["k", 1]]) }], e: new Set([1]), f: null, g: undefined, h: () => {}, i: Symbol("s"), j: 10n }),
      inspect("str"), inspect([1, [2, [3, [4, [5]]]]], { depth: 1 }), inspect(new Error("e1")).split("\n")[0],
      inspect({ long: "x".repeat(20), arr: Array.from({ length: 120 }, (_, i) => i) }, { breakLength: 40 }),
      inspect(new Date(0)), inspect(Buffer.from("hi")), inspect(new Uint8Array([1, 2])), inspect(class Foo {}), inspect(Object.create(null)),
    ],
    promisified: await sleep(5),
    types: [types.isPromise(Promise.resolve()), types.isDate(new Date()), types.isRegExp(/x/), types.isUint8Array(Buffer.alloc(1)), types.isAsyncFunction(async () => {}), types.isProxy(new Proxy({}, {}))],
    deepEq: [isDeepStrictEqual({ a: [1] }, { a: [1] }), isDeepStrictEqual([1], ["1"])],
    inherits: new Old() instanceof EventEmitter,
    viaCb,
    textEncoder: typeof util.TextEncoder,
    parseArgs: (() => { try { return util.parseArgs({ args: ["-f", "--bar", "b", "pos"], options: { foo: { type: "boolean", short: "f" }, bar: { type: "string" } }, allowPositionals: true }); } catch (e) { return { name: e.name, message: e.message }; } })(),
  };
};

routes["/path-url"] = () => ({
  join: path.join("/a/b", "../c", "./d.txt"), resolve: path.resolve("/x", "y", "..", "z"), relative: path.relative("/a/b/c", "/a/d"),
  parse: path.parse("/home/u/file.tar.gz"), ext: path.extname("x.json"), base: path.basename("/p/q.js", ".js"), dir: path.dirname("/p/q/r"),
  normalize: path.normalize("/a//b/../c/."), isAbs: [path.isAbsolute("/a"), path.isAbsolute("a")], sep: path.sep, posix: path.posix === path || typeof path.posix.join,
  fileURL: fileURLToPath("file:///tmp/a%20b.txt"), toFileURL: pathToFileURL("/tmp/a b#.txt").href,
  legacy: urlParse("https://u:p@example.com:8080/p/a?x=1&y=2#h", true),
  formatted: urlFormat({ protocol: "https", hostname: "example.com", pathname: "/x", query: { a: "1 2" } }),
  whatwg: new NodeURL("../x?y=1", "https://example.com/a/b").href, same: NodeURL === URL, usp: new NodeUSP({ a: "1", b: "x y" }).toString(),
  qs: [querystring.parse("a=1&a=2&b=%20c&d"), querystring.stringify({ x: [1, 2], y: "a b", z: "" }), querystring.escape("a b&c")],
  badFileURL: caught(() => fileURLToPath("https://example.com/x")),
});

// Layouts of util.inspect: long arrays grouped in columns, nesting against
// breakLength, compact and depth options.
routes["/inspect-layout"] = () => {
  const cases = [
    Array.from({ length: 120 }, (_, i) => i), [1, 2, 3, 4, 5, 6, 7], ["a", "bb", "ccc", "dddd", "e", "f", "g", "h"],
    { long: "x".repeat(20), arr: Array.from({ length: 120 }, (_, i) => i) }, { a: { b: { c: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] } } },
    [1.5, -2, 300000, 4, 5n, 6, 7, 8], Array.from({ length: 30 }, (_, i) => "item" + i), [[1, 2, 3, 4, 5, 6, 7], [1, 2]], new Uint8Array(40),
    { key1: "value one is long", key2: "value two is long", key3: "value three long", key4: "x" },
    [{ a: 1 }, { b: 2 }, { c: 3 }, { d: 4 }, { e: 5 }, { f: 6 }, { g: 7 }], Array.from({ length: 26 }, (_, i) => String.fromCharCode(97 + i).repeat(i % 5 + 1)),
    new Map([["alpha", { nested: [1, 2, 3] }], ["beta", "a string that is fairly long to wrap the line"]]),
  ];
  const out = [];
  for (const c of cases) for (const o of [{}, { breakLength: 40 }, { compact: 1 }, { depth: 0 }]) out.push(inspect(c, o));
  return out;
};

const als = new AsyncLocalStorage();
routes["/als"] = async (request) => {
  const id = new URL(request.url).searchParams.get("id");
  return als.run({ id }, async () => {
    const seen = [als.getStore().id];
    await new Promise((r) => setTimeout(r, 5));
    seen.push(als.getStore().id);
    await Promise.resolve();
    seen.push(await new Promise((r) => queueMicrotask(() => r(als.getStore().id))));
    const ee = new EventEmitter();
    const p = once(ee, "go");
    setTimeout(() => als.run({ id: "inner" }, () => ee.emit("go", als.getStore().id)), 1);
    const [fromEmit] = await p;
    seen.push(fromEmit, als.getStore().id);
    const bound = als.run({ id: "bound" }, () => AsyncLocalStorage.bind(() => als.getStore().id));
    seen.push(bound());
    const snap = als.run({ id: "snap" }, () => AsyncLocalStorage.snapshot());
    seen.push(snap(() => als.getStore().id));
    seen.push(als.exit(() => als.getStore()) ?? "exited");
    return { seen, outside: als.getStore() ?? null };
  });
};

routes["/events-buffer"] = async () => {
  const ee = new EventEmitter();
  const order = [];
  ee.on("x", (v) => order.push("on:" + v));
  ee.prependListener("x", (v) => order.push("pre:" + v));
  ee.once("x", (v) => order.push("once:" + v));
  ee.emit("x", 1); ee.emit("x", 2);
  const err = caught(() => ee.emit("error", new Error("unhandled")));
  const b = Buffer.from("héllo wörld");
  const dec = new StringDecoder("utf8");
  const euro = Buffer.from("€");
  return {
    order, listeners: ee.listenerCount("x"), err,
    buf: [b.toString("base64"), b.toString("hex"), b.toString("latin1"), b.length, b.subarray(1, 3).toString("base64url")],
    readWrite: (() => { const x = Buffer.alloc(8); x.writeUInt32BE(0xdeadbeef, 0); x.writeInt16LE(-2, 4); return [x.toString("hex"), x.readUInt32BE(0), x.readInt16LE(4), x.readBigUInt64BE(0).toString()]; })(),
    concat: Buffer.concat([Buffer.from("a"), Buffer.from("bc")]).toString(), compare: Buffer.compare(Buffer.from("a"), Buffer.from("b")),
    decoder: [dec.write(euro.subarray(0, 1)), dec.write(euro.subarray(1)), dec.end()],
    json: Buffer.from([1, 2]).toJSON(), isBuffer: Buffer.isBuffer(new Uint8Array(1)), byteLength: Buffer.byteLength("€€", "utf8"),
    assert: [caught(() => assert.strictEqual(1, 2)).name, caught(() => assert.deepStrictEqual({ a: 1 }, { a: 1 })), caught(() => assert.ok(false, "nope")).message],
  };
};

export default {
  async fetch(request) {
    const route = routes[new URL(request.url).pathname];
    if (!route) return new Response("not found", { status: 404 });
    try {
      return Response.json(await route(request));
    } catch (e) {
      return Response.json({ threw: e.name, message: e.message }, { status: 500 });
    }
  },
};
