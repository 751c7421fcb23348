// CompressionStream and DecompressionStream (gzip, deflate, deflate-raw).
// They are TransformStreams whose two sides are joined by Go's compress
// packages (native_compress.go) rather than by a transformer, because
// workerd's differ from a JS transformer in what a failure does: a chunk
// that is not bytes rejects its write and errors the writable side only,
// while corrupt input errors both sides with the same TypeError.

const formats = ["gzip", "deflate", "deflate-raw"];
const kZ = Symbol("compression");

const makePair = (format, compress) => {
  const z = native.zNew(format, compress);
  let rc;
  let wake = null; // resolves when the readable side wants more
  const readable = new ReadableStream({
    start(c) { rc = c; },
    pull() {
      if (wake) { wake(); wake = null; }
    },
    cancel() {
      if (wake) { wake(); wake = null; }
    },
  }, { highWaterMark: 1 });
  const push = (bytes, end) => {
    const [out, err] = native.zPush(z, bytes, end);
    // A chunk that fails yields none of its output (as in workerd); input
    // that ends early yields what it decoded to, then the error. (Go's
    // inflater holds back a partial block that zlib would have emitted
    // with the chunk before.)
    if (end && out.byteLength > 0) rc.enqueue(new Uint8Array(out));
    if (err !== null) {
      const e = new TypeError(err);
      rc.error(e);
      throw e;
    }
    if (!end && out.byteLength > 0) rc.enqueue(new Uint8Array(out));
  };
  const writable = new WritableStream({
    async write(chunk) {
      const u = internal.toU8(chunk);
      if (u === null) throw new TypeError("The chunk must be an ArrayBuffer or ArrayBufferView.");
      push(u, false);
      // Backpressure: wait until the reader has taken what is queued.
      while (rc.desiredSize !== null && rc.desiredSize <= 0) await new Promise((resolve) => { wake = resolve; });
    },
    close() {
      push(new Uint8Array(0), true);
      rc.close();
    },
    abort(reason) {
      try { rc.error(reason); } catch {}
    },
  });
  return { readable, writable };
};

const checkFormat = (what, format) => {
  if (typeof format !== "string") throw new TypeError(`Failed to construct '${what}': constructor parameter 1 is not of type 'string'.`);
  if (!formats.includes(format)) throw new TypeError("The compression format must be either 'deflate', 'deflate-raw' or 'gzip'.");
};

class CompressionStream extends TransformStream {
  constructor(format) {
    checkFormat("CompressionStream", format);
    super();
    internal.define(this, kZ, makePair(format, true));
  }
  get readable() { return this[kZ].readable; }
  get writable() { return this[kZ].writable; }
}
Object.defineProperty(CompressionStream.prototype, Symbol.toStringTag, { value: "CompressionStream", configurable: true });

class DecompressionStream extends TransformStream {
  constructor(format) {
    checkFormat("DecompressionStream", format);
    super();
    internal.define(this, kZ, makePair(format, false));
  }
  get readable() { return this[kZ].readable; }
  get writable() { return this[kZ].writable; }
}
Object.defineProperty(DecompressionStream.prototype, Symbol.toStringTag, { value: "DecompressionStream", configurable: true });

internal.expose("CompressionStream", CompressionStream);
internal.expose("DecompressionStream", DecompressionStream);
