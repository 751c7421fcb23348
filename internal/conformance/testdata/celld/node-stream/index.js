// node:stream: Readable, Writable, Transform, pipeline, finished, and
// the web stream adapters.
import { Readable, Writable, Transform, PassThrough, Duplex, pipeline, finished } from "node:stream";
import { pipeline as pipelineP, finished as finishedP } from "node:stream/promises";
import * as web from "node:stream/web";

const collect = async (readable) => {
  const out = [];
  const it = readable[Symbol.asyncIterator]();
  for (let r = await it.next(); !r.done; r = await it.next()) out.push(r.value);
  return out;
};
const text = (chunks) => chunks.map((c) => (typeof c === "string" ? c : Buffer.from(c).toString())).join("");

const routes = {
  "/readable": async () => {
    const events = [];
    const r = new Readable({ read() {} });
    r.on("data", (c) => events.push(`data:${c}`));
    r.on("end", () => events.push("end"));
    r.on("close", () => events.push("close"));
    r.push("a");
    r.push(Buffer.from("b"));
    r.push(null);
    await new Promise((res) => r.on("close", res));
    let i = 0;
    const counter = new Readable({ read() { i++; this.push(i <= 3 ? String(i) : null); } });
    const counted = text(await collect(counter));
    const obj = await collect(Readable.from([{ a: 1 }, { b: 2 }]));
    const enc = new Readable({ read() {}, encoding: "utf8" });
    enc.push(Buffer.from([0xe2, 0x82]));
    enc.push(Buffer.from([0xac]));
    enc.push(null);
    const encOut = await collect(enc);
    const paused = new Readable({ read() {} });
    paused.push("xyz");
    paused.push(null);
    const readOne = await new Promise((res) => paused.once("readable", () => res([String(paused.read(1)), String(paused.read())])));
    const st = new Readable({ read() {} });
    return {
      events, counted, obj, encOut, readOne,
      props: [st.readable, st.readableEnded, st.readableFlowing, st.readableHighWaterMark, st.readableObjectMode, st.destroyed],
      objHwm: new Readable({ objectMode: true, read() {} }).readableHighWaterMark,
    };
  },
  "/writable": async () => {
    const got = [];
    const events = [];
    const w = new Writable({
      highWaterMark: 4,
      write(chunk, enc, cb) { got.push([String(chunk), enc, Buffer.isBuffer(chunk)]); setTimeout(cb, 1); },
      final(cb) { events.push("final"); cb(); },
    });
    w.on("drain", () => events.push("drain"));
    w.on("finish", () => events.push("finish"));
    w.on("close", () => events.push("close"));
    const r1 = w.write("abc");
    const r2 = w.write("defgh");
    await new Promise((res) => w.once("drain", res));
    w.end("!", () => events.push("end cb"));
    await new Promise((res) => w.on("close", res));
    const afterEnd = await new Promise((res) => {
      const x = new Writable({ write(c, e, cb) { cb(); } });
      x.on("error", (e) => res([e.name, e.code, e.message]));
      x.end();
      x.write("late");
    });
    const failing = new Writable({ write(c, e, cb) { cb(new Error("write failed")); } });
    const failErr = await new Promise((res) => { failing.on("error", (e) => res(e.message)); failing.write("x"); });
    const objs = [];
    const ow = new Writable({ objectMode: true, write(c, e, cb) { objs.push(c); cb(); } });
    ow.write({ k: 1 });
    ow.end(5);
    await finishedP(ow);
    const strings = [];
    const sw = new Writable({ decodeStrings: false, write(c, e, cb) { strings.push([c, e]); cb(); } });
    sw.end("kept", "utf8");
    await finishedP(sw);
    return { got, events, returns: [r1, r2], afterEnd, failErr, objs, strings, props: [w.writable, w.writableEnded, w.writableFinished] };
  },
  "/transform": async () => {
    const upper = new Transform({ transform(c, e, cb) { cb(null, String(c).toUpperCase()); }, flush(cb) { this.push("!"); cb(); } });
    const out = [];
    const sink = new Writable({ write(c, e, cb) { out.push(String(c)); cb(); } });
    await pipelineP(Readable.from(["a", "b", "c"]), upper, sink);
    const pt = new PassThrough();
    pt.end("through");
    const ptOut = text(await collect(pt));
    const errCb = await new Promise((res) => pipeline(
      Readable.from(["x"]),
      new Transform({ transform(c, e, cb) { cb(new Error("bad chunk")); } }),
      new Writable({ write(c, e, cb) { cb(); } }),
      (err) => res(err ? err.message : "no error")));
    const fin = await new Promise((res) => {
      const r = Readable.from(["q"]);
      finished(r, (err) => res(err ? err.message : "finished"));
      r.resume();
    });
    const premature = await new Promise((res) => {
      const r = new Readable({ read() {} });
      finished(r, (err) => res(err ? [err.code, err.message] : "finished"));
      r.destroy();
    });
    const d = new Duplex({ read() { this.push("from duplex"); this.push(null); }, write(c, e, cb) { cb(); } });
    const dOut = text(await collect(d));
    const fnStage = [];
    await pipelineP(Readable.from(["1", "2"]), async function (source) {
      const it = source[Symbol.asyncIterator]();
      for (let r = await it.next(); !r.done; r = await it.next()) fnStage.push(String(r.value));
    });
    return { out, ptOut, errCb, fin, premature, dOut, fnStage };
  },
  "/web": async () => {
    const rs = Readable.toWeb(Readable.from([Buffer.from("web "), Buffer.from("stream")]));
    const reader = rs.getReader();
    const chunks = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(new TextDecoder().decode(r.value));
    const back = Readable.fromWeb(new Response("from web").body);
    const backText = text(await collect(back));
    const ws = [];
    const w = Writable.fromWeb(new WritableStream({ write(c) { ws.push(new TextDecoder().decode(c)); } }));
    await new Promise((res) => w.end("into web", res));
    return { chunks, backText, ws, webExports: [web.ReadableStream === ReadableStream, web.TransformStream === TransformStream, typeof web.WritableStream] };
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
      return Response.json({ error: e.name, message: e.message, stack: e.stack });
    }
  },
};
