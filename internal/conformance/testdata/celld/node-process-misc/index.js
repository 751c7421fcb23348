// process, path, querystring, url, string_decoder, assert, timers and
// diagnostics_channel.
import process from "node:process";
import path from "node:path";
import posix from "path/posix";
import querystring from "node:querystring";
import url, { fileURLToPath, pathToFileURL } from "node:url";
import { StringDecoder } from "node:string_decoder";
import assert from "node:assert";
import strict from "node:assert/strict";
import * as timers from "node:timers";
import diagnostics from "node:diagnostics_channel";
import { types } from "node:util";
import * as utilTypes from "node:util/types";

const err = (f) => {
  try { f(); return "no error"; } catch (e) { return { name: e.name, code: e.code ?? null, message: e.message }; }
};

const routes = {
  "/process": async () => {
    const order = [];
    process.nextTick((a, b) => order.push(`tick ${a}${b}`), 1, 2);
    Promise.resolve().then(() => order.push("promise"));
    queueMicrotask(() => order.push("microtask"));
    process.nextTick(() => order.push("tick 2"));
    await new Promise((r) => setTimeout(r, 1));
    const hr = process.hrtime();
    return {
      env: process.env, sameGlobal: globalThis.process === process, order,
      facts: [process.platform, typeof process.version, process.cwd(), process.argv.length, typeof process.pid, process.exitCode ?? null],
      hrtime: [Array.isArray(hr), hr.length, typeof process.hrtime.bigint()],
      emitter: [typeof process.on, typeof process.emit, typeof process.nextTick],
      stdout: typeof process.stdout?.write,
      builtin: [typeof process.getBuiltinModule("node:buffer").Buffer, process.getBuiltinModule("path") === path],
      tickBad: err(() => process.nextTick(5)),
    };
  },
  "/path": () => ({
    join: [path.join("/a", "b", "../c", "./d"), path.join("a", "", "b/"), path.join(), path.join("..", "x")],
    normalize: [path.normalize("/a//b/../c/."), path.normalize(""), path.normalize("./"), path.normalize("a/../.."), path.normalize("//x")],
    resolve: [path.resolve("/a/b", "../c"), path.resolve("/x", "/y", "z"), path.resolve("rel")],
    relative: [path.relative("/a/b/c", "/a/d"), path.relative("/a", "/a"), path.relative("/a/b", "/a/b/c/d")],
    parts: [path.dirname("/a/b/c.txt"), path.dirname("a"), path.dirname("/"), path.basename("/a/b/c.txt"), path.basename("/a/b/c.txt", ".txt"),
      path.basename("/a/b/"), path.extname("x.tar.gz"), path.extname(".bashrc"), path.extname("a."), path.extname("a")],
    parse: [path.parse("/home/u/file.txt"), path.parse("file"), path.parse("/")],
    format: [path.format({ dir: "/a", base: "b.js" }), path.format({ root: "/", name: "n", ext: ".e" }), path.format({ name: "x", ext: "y" })],
    misc: [path.sep, path.delimiter, path.isAbsolute("/x"), path.isAbsolute("x"), posix === path.posix, posix.join("a", "b")],
    bad: err(() => path.join("a", 5)),
  }),
  "/querystring": () => ({
    parse: [querystring.parse("a=1&b=2&a=3&c&d=&e=x%20y+z&%E2%82%AC=%"), querystring.parse("x:1;y:2", ";", ":"), querystring.parse("")],
    stringify: [querystring.stringify({ a: [1, 2], b: "x y", c: true, d: null, e: undefined, f: { g: 1 }, "€": "€" }), querystring.stringify({ a: 1 }, ";", ":")],
    escape: [querystring.escape("a b&c/é"), querystring.unescape("a%20b%zz")],
  }),
  "/url": () => {
    const u = url.parse("https://user:pw@Example.com:8080/p/a/t/h?query=string&q=2#hash", true);
    const plain = url.parse("/just/path?x=1");
    return {
      parsed: { protocol: u.protocol, slashes: u.slashes, auth: u.auth, host: u.host, port: u.port, hostname: u.hostname, hash: u.hash, search: u.search, query: u.query, pathname: u.pathname, path: u.path, href: u.href },
      plain: { pathname: plain.pathname, search: plain.search, query: plain.query, host: plain.host, href: plain.href },
      format: [url.format({ protocol: "http", hostname: "x.com", pathname: "/a", query: { b: 1 } }), url.format(new URL("https://a.com/b?c#d"), { fragment: false, search: false })],
      resolve: [url.resolve("http://a.com/b/c", "../d"), url.resolve("/one/two/three", "four"), url.resolve("http://a.com/", "http://b.com/x")],
      file: [fileURLToPath("file:///tmp/a%20b.txt"), pathToFileURL("/tmp/a b#c.txt").href, err(() => fileURLToPath("https://x"))],
      classes: [url.URL === URL, url.URLSearchParams === URLSearchParams],
    };
  },
  "/decoder": () => {
    const euro = Buffer.from("€");
    const d = new StringDecoder("utf8");
    const parts = [d.write(euro.subarray(0, 1)), d.write(euro.subarray(1, 2)), d.write(euro.subarray(2)), d.end()];
    const d2 = new StringDecoder("utf8");
    const cut = [d2.write(Buffer.from([0xe2, 0x82])), d2.end()];
    const b64 = new StringDecoder("base64");
    const b64parts = [b64.write(Buffer.from("ab")), b64.write(Buffer.from("cd")), b64.end()];
    const hex = new StringDecoder("hex");
    const u16 = new StringDecoder("utf16le");
    const u16parts = [u16.write(Buffer.from([0x61])), u16.write(Buffer.from([0x00, 0x3d, 0xd8])), u16.write(Buffer.from([0x00, 0xde])), u16.end()];
    return { parts, cut, b64parts, hex: hex.write(Buffer.from([1, 255])), u16parts, enc: [d.encoding, new StringDecoder("UCS2").encoding], bad: err(() => new StringDecoder("nope")) };
  },
  "/assert": async () => ({
    ok: [err(() => assert(true)), err(() => assert.ok(0, "custom message")), err(() => assert.equal(1, "1")), err(() => assert.strictEqual(1, 2))],
    deep: [err(() => assert.deepStrictEqual({ a: [1] }, { a: [1] })), err(() => assert.deepEqual({ a: 1 }, { a: "1" })), err(() => strict.equal(1, "1")).name],
    throws: [err(() => assert.throws(() => { throw new TypeError("t"); }, TypeError)), err(() => assert.throws(() => {})).message,
      err(() => assert.throws(() => { throw new Error("abc"); }, /abc/)), err(() => assert.throws(() => { throw new Error("x"); }, { message: "x" })),
      err(() => assert.doesNotThrow(() => {}))],
    rejects: await assert.rejects(Promise.reject(new Error("r")), /r/).then(() => "rejected ok"),
    missingReject: await assert.rejects(Promise.resolve(1)).then(() => "no", (e) => [e.name, e.code, e.message]),
    match: [err(() => assert.match("abc", /b/)), err(() => assert.notStrictEqual(1, 2))],
    fail: [err(() => assert.fail()), err(() => assert.fail("boom")), err(() => assert.ifError(null)), err(() => assert.ok(false, new RangeError("own")))],
    errorShape: (() => { try { assert.strictEqual(1, 2, "m"); } catch (e) { return [e instanceof assert.AssertionError, e.actual, e.expected, e.operator, e.generatedMessage, e.code]; } })(),
  }),
  "/timers": async () => {
    const t = timers.setTimeout(() => {}, 1000);
    const shape = [typeof t, typeof t.ref, typeof t.unref, t.hasRef(), t.unref() === t, typeof t[Symbol.toPrimitive]];
    timers.clearTimeout(t);
    const fired = await new Promise((r) => { const i = timers.setInterval(() => { timers.clearInterval(i); r("interval"); }, 1); });
    const imm = await new Promise((r) => timers.setImmediate((x) => r(x), "imm"));
    const p = await timers.promises.setTimeout(1, "value");
    const ac = new AbortController();
    const aborted = timers.promises.setTimeout(1000, null, { signal: ac.signal }).catch((e) => [e.name, e.code]);
    ac.abort();
    return { shape, fired, imm, p, aborted: await aborted, globalImmediate: typeof setImmediate };
  },
  "/diagnostics": () => {
    const got = [];
    const ch = diagnostics.channel("celld:test");
    const before = ch.hasSubscribers;
    const sub = (msg, name) => got.push([msg, name]);
    diagnostics.subscribe("celld:test", sub);
    ch.publish({ n: 1 });
    const during = [ch.hasSubscribers, diagnostics.hasSubscribers("celld:test")];
    diagnostics.unsubscribe("celld:test", sub);
    ch.publish({ n: 2 });
    const tc = diagnostics.tracingChannel("celld:trace");
    const events = [];
    tc.subscribe({ start: () => events.push("start"), end: () => events.push("end"), error: () => events.push("error") });
    const r = tc.traceSync(() => 42, {});
    return { got, before, during, after: ch.hasSubscribers, sameChannel: diagnostics.channel("celld:test") === ch, events, r };
  },
  "/types": () => ({
    same: types === utilTypes.default || typeof utilTypes.isDate === "function",
    values: [utilTypes.isDate(new Date()), utilTypes.isUint8Array(new Uint8Array()), utilTypes.isPromise({ then() {} })],
  }),
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
