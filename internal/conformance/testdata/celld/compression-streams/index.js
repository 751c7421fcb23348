// NODE holds "hello compression, " x20 compressed by Node's zlib (gzip,
// deflate, deflate-raw) and two concatenated gzip members ("ab", "cd").
const NODE = {"gzip":"H4sIAAAAAAAAA8tIzcnJV0jOzy0oSi0uzszP01HIGBWijxAAT9gn9HwBAAA=","deflate":"eJzLSM3JyVdIzs8tKEotLs7Mz9NRyBgVoo8QAFd5j+k=","raw":"y0jNyclXSM7PLShKLS7OzM/TUcgYFaKPEAA=","multi":"H4sIAAAAAAAAA0tMAgBtSIOeAgAAAB+LCAAAAAAAAANLTgEA2o/WRQIAAAA="};
const errInfo = (e) => ({ name: e?.name, message: e?.message });
const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
const b64d = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const enc = new TextEncoder();
const dec = new TextDecoder();

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
const pendingAfter = (x, ms = 300) => Promise.race([x, new Promise((res) => setTimeout(() => res("pending"), ms))]);
const streamOf = (chunks) => new ReadableStream({ start(c) { for (const x of chunks) c.enqueue(x); c.close(); } });
const collect = async (readable) => new Uint8Array(await new Response(readable).arrayBuffer());
const through = (chunks, ts) => collect(streamOf(chunks).pipeThrough(ts));
const roundtrip = async (format, chunks) => {
  const z = await through(chunks, new CompressionStream(format));
  return dec.decode(await through([z], new DecompressionStream(format)));
};
// readAll reads a stream by hand and reports the chunks' count and the
// error the read ends with.
const readErr = async (format, data, split = 0) => {
  const ds = new DecompressionStream(format);
  const w = ds.writable.getWriter();
  const r = ds.readable.getReader();
  const parts = split ? [data.slice(0, split), data.slice(split)] : [data];
  const writes = parts.map((p) => w.write(p).then(() => "ok", (e) => errInfo(e)));
  const closed = w.close().then(() => "ok", (e) => errInfo(e));
  let text = "";
  let readError = null;
  for (;;) {
    try {
      const { value, done } = await r.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    } catch (e) {
      readError = errInfo(e);
      break;
    }
  }
  return { text, readError, writes: await pendingAfter(Promise.all(writes)), closed: await pendingAfter(closed) };
};

const groups = {
  roundtrip: () => run({
    gzip: () => roundtrip("gzip", [enc.encode("hello "), enc.encode("world")]),
    deflate: () => roundtrip("deflate", [enc.encode("a".repeat(1000)), new Uint8Array(0), enc.encode("b")]),
    raw: () => roundtrip("deflate-raw", [enc.encode("x")]),
    empty: async () => Promise.all(["gzip", "deflate", "deflate-raw"].map((f) => roundtrip(f, []))),
    arraybuffer_chunk: () => roundtrip("gzip", [enc.encode("from buffer").buffer]),
    dataview_chunk: () => roundtrip("deflate", [new DataView(enc.encode("dataview").buffer)]),
    large: async () => {
      const big = new Uint8Array(1 << 20);
      for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 9)) & 255;
      const chunks = [];
      for (let i = 0; i < big.length; i += 65536) chunks.push(big.subarray(i, i + 65536));
      const z = await through(chunks, new CompressionStream("gzip"));
      const back = await through([z], new DecompressionStream("gzip"));
      return [back.length, hex(await crypto.subtle.digest("SHA-256", back)) === hex(await crypto.subtle.digest("SHA-256", big)), z.length < big.length];
    },
    response_body: async () => {
      const body = new Response("compressed body ".repeat(100)).body.pipeThrough(new CompressionStream("deflate"));
      const z = await new Response(body).arrayBuffer();
      return (await new Response(new Response(z).body.pipeThrough(new DecompressionStream("deflate"))).text()).length;
    },
  }),
  "from-node": () => run({
    gzip: async () => dec.decode(await through([b64d(NODE.gzip)], new DecompressionStream("gzip"))),
    deflate: async () => dec.decode(await through([b64d(NODE.deflate)], new DecompressionStream("deflate"))),
    raw: async () => dec.decode(await through([b64d(NODE.raw)], new DecompressionStream("deflate-raw"))),
    byte_by_byte: async () => { const d = b64d(NODE.gzip); return dec.decode(await through([...d].map((b) => new Uint8Array([b])), new DecompressionStream("gzip"))); },
    multi_member: () => readErr("gzip", b64d(NODE.multi)),
  }),
  shape: () => run({
    header_gzip: async () => hex((await through([enc.encode("x")], new CompressionStream("gzip"))).slice(0, 4)),
    header_deflate: async () => hex((await through([enc.encode("x")], new CompressionStream("deflate"))).slice(0, 1)),
    classes: () => { const c = new CompressionStream("gzip"); const d = new DecompressionStream("deflate-raw"); return [c instanceof TransformStream, Object.prototype.toString.call(c), Object.prototype.toString.call(d), typeof c.readable.getReader, typeof c.writable.getWriter, Object.keys(c)]; },
    bad_format: () => new CompressionStream("brotli"),
    bad_format_d: () => new DecompressionStream("GZIP"),
    no_format: () => new CompressionStream(),
    string_chunk: async () => { const c = new CompressionStream("gzip"); const w = c.writable.getWriter(); const r = c.readable.getReader(); const p = w.write("text").then(() => "ok", (e) => ({ name: e.name })); const rd = r.read().then(() => "read", (e) => ({ name: e.name })); const t = (x) => Promise.race([x, new Promise((res) => setTimeout(() => res("pending"), 300))]); return [await t(p), await t(rd)]; },
  }),
  errors: () => run({
    garbage_gzip: () => readErr("gzip", enc.encode("this is not gzip data at all")),
    garbage_deflate: () => readErr("deflate", enc.encode("nope nope")),
    truncated: () => readErr("gzip", b64d(NODE.gzip).slice(0, 20)),
    trailing: async () => { const d = b64d(NODE.raw); const t = new Uint8Array(d.length + 3); t.set(d); t.set([1, 2, 3], d.length); return readErr("deflate-raw", t); },
    split: () => readErr("deflate", b64d(NODE.deflate), 7),
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
