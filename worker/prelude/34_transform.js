// TransformStream and the stream classes built on it; body helpers.

const { kCreate, errorWritable } = internal;


class TransformStream {
  #readable;
  #writable;
  constructor(transformer = undefined, writableStrategy = undefined, readableStrategy = undefined) {
    transformer = transformer || {};
    let rc;
    let writable;
    const readable = new ReadableStream({
      start(c) { rc = c; },
      cancel(reason) {
        errorWritable(writable, reason);
        if (transformer.cancel) return transformer.cancel.call(transformer, reason);
      },
    }, { highWaterMark: readableStrategy && readableStrategy.highWaterMark !== undefined ? readableStrategy.highWaterMark : 0, size: readableStrategy && readableStrategy.size });
    const fail = (e) => {
      rc.error(e);
      errorWritable(writable, e);
    };
    const controller = new TransformStreamDefaultController(kCreate, {
      enqueue: (chunk) => rc.enqueue(chunk),
      error: fail,
      terminate: () => {
        try { rc.close(); } catch {}
        errorWritable(writable, new TypeError("The transform stream has been terminated."));
      },
      desiredSize: () => rc.desiredSize,
    });
    const run = (fn) => {
      try {
        return Promise.resolve(fn()).catch((e) => { fail(e); throw e; });
      } catch (e) {
        fail(e);
        return Promise.reject(e);
      }
    };
    const started = Promise.resolve(transformer.start ? transformer.start.call(transformer, controller) : undefined);
    writable = new WritableStream({
      start() { return started; },
      write(chunk) {
        return run(() => (transformer.transform ? transformer.transform.call(transformer, chunk, controller) : controller.enqueue(chunk)));
      },
      close() {
        return run(() => (transformer.flush ? transformer.flush.call(transformer, controller) : undefined)).then(() => {
          try { rc.close(); } catch {}
        });
      },
      abort(reason) {
        rc.error(reason);
        if (transformer.cancel) return transformer.cancel.call(transformer, reason);
      },
    }, writableStrategy);
    this.#readable = readable;
    this.#writable = writable;
  }
  get readable() { return this.#readable; }
  get writable() { return this.#writable; }
}

class TransformStreamDefaultController {
  #ops;
  constructor(key, ops) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#ops = ops;
  }
  get desiredSize() { return this.#ops.desiredSize(); }
  enqueue(chunk = undefined) { this.#ops.enqueue(chunk); }
  error(reason = undefined) { this.#ops.error(reason); }
  terminate() { this.#ops.terminate(); }
}

class TextDecoderStream extends TransformStream {
  #decoder;
  constructor(label = "utf-8", options = undefined) {
    const decoder = new TextDecoder(label, options);
    super({
      transform(chunk, c) {
        const s = decoder.decode(chunk, { stream: true });
        if (s) c.enqueue(s);
      },
      flush(c) {
        const s = decoder.decode();
        if (s) c.enqueue(s);
      },
    });
    this.#decoder = decoder;
  }
  get encoding() { return this.#decoder.encoding; }
  get fatal() { return this.#decoder.fatal; }
  get ignoreBOM() { return this.#decoder.ignoreBOM; }
}

class TextEncoderStream extends TransformStream {
  constructor() {
    let pendingHigh = "";
    super({
      transform(chunk, c) {
        let s = pendingHigh + String(chunk);
        pendingHigh = "";
        const last = s.charCodeAt(s.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) {
          pendingHigh = s[s.length - 1];
          s = s.slice(0, -1);
        }
        if (s) c.enqueue(internal.utf8Encode(s));
      },
      flush(c) {
        if (pendingHigh) c.enqueue(new Uint8Array([0xef, 0xbf, 0xbd]));
      },
    });
  }
  get encoding() { return "utf-8"; }
}

// IdentityTransformStream and FixedLengthStream are workerd extensions:
// byte streams that pass chunks through unchanged.
class IdentityTransformStream extends TransformStream {
  constructor() {
    super({
      transform(chunk, c) {
        if (!internal.isBufferSource(chunk)) throw new TypeError("This TransformStream is being used as a byte stream, but received an object of non-ArrayBuffer/ArrayBufferView type on its writable side.");
        c.enqueue(internal.copyBytes(chunk));
      },
    });
  }
}
class FixedLengthStream extends IdentityTransformStream {
  constructor(length) {
    super();
    if (!(Number(length) >= 0)) throw new TypeError("FixedLengthStream requires a non-negative integer length.");
  }
}

class ByteLengthQueuingStrategy {
  constructor({ highWaterMark }) { this.highWaterMark = highWaterMark; }
  size(chunk) { return chunk.byteLength; }
}
class CountQueuingStrategy {
  constructor({ highWaterMark }) { this.highWaterMark = highWaterMark; }
  size() { return 1; }
}

for (const [name, value] of Object.entries({
  TransformStream, TransformStreamDefaultController,
  TextDecoderStream, TextEncoderStream, IdentityTransformStream, FixedLengthStream,
  ByteLengthQueuingStrategy, CountQueuingStrategy,
})) internal.expose(name, value);

// maxWholeBody bounds a body read whole (text(), arrayBuffer(), json()…):
// a Worker's memory on Workers is 128 MiB, and here one script must not
// take the node's. Larger bodies stream.
const maxWholeBody = 128 << 20;

const tooLargeError = () =>
  new RangeError(`celld: a body larger than ${maxWholeBody} bytes cannot be read whole; read it as a stream (body.getReader())`);
// readGoBody reads a Go body that Go took back (takeGoStream) whole, in
// Go: one call instead of a read per chunk through a reader.
internal.readGoBody = async (handle) => {
  const ab = await native.bodyReadAll(handle, maxWholeBody);
  if (ab === null) throw tooLargeError();
  return new Uint8Array(ab);
};
// readAllBytes drains a body stream; every chunk must be bytes.
internal.readAllBytes = async (stream) => {
  const reader = stream.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const u = internal.toU8(value);
    if (u === null) {
      const err = new TypeError("This ReadableStream did not return bytes.");
      reader.cancel(err).catch(() => {});
      throw err;
    }
    total += u.byteLength;
    if (total > maxWholeBody) {
      const err = tooLargeError();
      reader.cancel(err).catch(() => {});
      throw err;
    }
    chunks.push(u);
  }
  reader.releaseLock();
  return chunks.length ? internal.concatBytes(chunks) : new Uint8Array(0);
};
// bytesStream is a stream over bytes (or a string, UTF-8) at hand (a
// request body, say), made lazily (30_readable.js); kBytesSource marks
// it until its source is taken.
internal.bytesStream = (source) => internal.lazyBytesStream(source);
const kBytesSource = internal.kLazyBytes;
const asBytes = (source) => (typeof source === "string" ? internal.utf8Encode(source) : source);
// takeBytesStream returns the bytes of an unlocked, unread stream over
// bytes and locks the stream, or null: a binding given such a stream (an
// R2 put of request.body) takes the bytes whole, length known.
// drainBodySource is takeBytesStream for a reader of the whole body: it
// also reads the stream to its end, so the stream is locked and disturbed
// exactly as if its one chunk had been pulled, and it returns the source
// as it was given (a string stays one) — a response re-wrapped from
// another's unread body (frameworks do it to change headers) goes to Go,
// or is read by text(), whole, not chunk by chunk through JS.
internal.drainBodySource = (stream) => {
  const source = stream[kBytesSource];
  if (source === undefined || source === null || stream.locked || internal.isDisturbed(stream)) return null;
  // drainClosed first: a lazy stream needs its source until it has a state
  if (internal.drainClosed(stream)) {
    stream[kBytesSource] = null;
    return source;
  }
  stream[kBytesSource] = null;
  {
    const reader = stream.getReader();
    reader.read().catch(() => {});
  }
  return source;
};
internal.drainBytesStream = (stream) => {
  const source = internal.drainBodySource(stream);
  return source === null ? null : asBytes(source);
};
internal.takeBytesStream = (stream) => {
  const source = stream[kBytesSource];
  if (source === undefined || source === null || stream.locked || internal.isDisturbed(stream)) return null;
  stream.getReader();
  stream[kBytesSource] = null;
  return asBytes(source);
};
