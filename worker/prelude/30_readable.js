// ReadableStream: a compact implementation of the WHATWG Streams model
// (default and BYOB readers, pull-based sources with a high-water mark,
// byte sources with byobRequest, tee, pipeTo/pipeThrough), with workerd's
// timing where it departs from the standard (when pull is called, tee's
// cancel) — see testdata/celld/streams-fidelity.

const { kCreate } = internal;
// hide(obj, symbol, value) is internal.define for a symbol, natively: no
// descriptor object per call (every stream and reader gets one).
const hide = native.defineHidden;
const kRS = Symbol("readable");
const kReader = Symbol("reader");
const lockedError = () => new TypeError("This ReadableStream is currently locked to a reader.");
const releasedError = () => new TypeError("This ReadableStream reader has been released.");
const withResolvers = () => Promise.withResolvers();
const handled = (p) => { p.catch(() => {}); return p; };
const sizeOne = () => 1;
const sizeOf = (strategy) => (strategy && typeof strategy.size === "function" ? strategy.size : sizeOne);
internal.sizeOf = sizeOf;
internal.handled = handled;

// ---- ReadableStream --------------------------------------------------------

class ReadableStream {
  constructor(source = undefined, strategy = undefined) {
    if (source === null) throw new TypeError("ReadableStream: the underlying source must be an object");
    source = source || {};
    const type = source.type === undefined ? undefined : String(source.type);
    if (type !== undefined && type !== "bytes") {
      throw new TypeError(`ReadableStream: unsupported underlying source type "${type}"`);
    }
    const hwm = strategy && strategy.highWaterMark !== undefined ? Number(strategy.highWaterMark) : type === "bytes" ? 0 : 1;
    if (Number.isNaN(hwm) || hwm < 0) throw new RangeError("ReadableStream: invalid highWaterMark");
    const st = {
      state: "readable", reader: null, storedError: undefined, disturbed: false,
      queue: [], queueSize: 0, hwm, size: sizeOf(strategy), started: false, pulling: false,
      pullAgain: false, closeRequested: false, source, controller: null, bytes: type === "bytes",
      autoAllocate: type === "bytes" && source.autoAllocateChunkSize !== undefined ? Number(source.autoAllocateChunkSize) : 0,
    };
    hide(this, kRS, st);
    st.controller = new ReadableStreamDefaultController(kCreate, this);
    const start = source.start ? source.start.call(source, st.controller) : undefined;
    Promise.resolve(start).then(() => {
      st.started = true;
      pullIfNeeded(this);
    }, (e) => errorStream(this, e));
  }
  get locked() {
    if (!hasState(this) && (this[kLazy] != null || this[kLazySource] != null)) return false; // a lazy stream nobody used
    return this[kRS].reader !== null;
  }
  cancel(reason = undefined) {
    if (this.locked) return Promise.reject(lockedError());
    return cancelStream(this, reason);
  }
  getReader(options = undefined) {
    if (options && options.mode !== undefined) {
      if (String(options.mode) !== "byob") throw new TypeError(`ReadableStream.getReader: invalid mode "${options.mode}"`);
      if (!this[kRS].bytes) throw new TypeError("This ReadableStream does not support BYOB reads.");
      return new ReadableStreamBYOBReader(this);
    }
    return new ReadableStreamDefaultReader(this);
  }
  pipeThrough(transform, options = undefined) {
    if (!transform || !(transform.writable instanceof WritableStream) || !(transform.readable instanceof ReadableStream)) {
      throw new TypeError("ReadableStream.pipeThrough: argument must be a { readable, writable } pair");
    }
    if (this.locked) throw lockedError();
    if (transform.writable.locked) throw new TypeError("This WritableStream is currently locked to a writer.");
    handled(this.pipeTo(transform.writable, options));
    return transform.readable;
  }
  pipeTo(dest, options = undefined) {
    if (!(dest instanceof WritableStream)) return Promise.reject(new TypeError("ReadableStream.pipeTo: destination must be a WritableStream"));
    if (this.locked) return Promise.reject(lockedError());
    if (dest.locked) return Promise.reject(new TypeError("This WritableStream is currently locked to a writer."));
    return pipe(this, dest, options || {});
  }
  tee() {
    if (this.locked) throw lockedError();
    return tee(this);
  }
  values(options = undefined) {
    const reader = this.getReader();
    const preventCancel = !!(options && options.preventCancel);
    let finished = false;
    const it = {
      next() {
        if (finished) return Promise.resolve({ value: undefined, done: true });
        return reader.read().then((r) => {
          if (r.done) { finished = true; reader.releaseLock(); }
          return r;
        }, (e) => { finished = true; reader.releaseLock(); throw e; });
      },
      return(value) {
        if (finished) return Promise.resolve({ value, done: true });
        finished = true;
        const p = preventCancel ? Promise.resolve() : reader.cancel(value);
        return p.then(() => { reader.releaseLock(); return { value, done: true }; });
      },
      [Symbol.asyncIterator]() { return this; },
    };
    return it;
  }
  [Symbol.asyncIterator](options = undefined) { return this.values(options); }
  static from(iterable) {
    if (iterable instanceof ReadableStream) return iterable;
    const it = iterable[Symbol.asyncIterator] ? iterable[Symbol.asyncIterator]() : iterable[Symbol.iterator]();
    return new ReadableStream({
      async pull(c) {
        const r = await it.next();
        if (r.done) c.close();
        else c.enqueue(await r.value);
      },
      async cancel(reason) { if (it.return) await it.return(reason); },
    }, { highWaterMark: 0 });
  }
}

class ReadableStreamDefaultController {
  #stream;
  constructor(key, stream) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#stream = stream;
  }
  get desiredSize() {
    const st = this.#stream[kRS];
    if (st.state === "errored") return null;
    if (st.state === "closed") return 0;
    return st.hwm - st.queueSize;
  }
  enqueue(chunk) {
    const stream = this.#stream;
    const st = stream[kRS];
    if (st.closeRequested || st.state !== "readable") throw new TypeError("Unable to enqueue");
    if (st.bytes && !internal.isBufferSource(chunk)) {
      throw new TypeError("This ReadableStream did not return bytes.");
    }
    const requests = st.reader ? st.reader[kReader].requests : [];
    if (requests.length) {
      const d = requests[0];
      if (d.view) {
        const rest = fillView(d, internal.toU8(chunk));
        if (d.settled) requests.shift();
        if (rest.byteLength) {
          st.queue.unshift({ chunk: rest, size: 1 });
          st.queueSize += 1;
        }
      } else {
        requests.shift();
        d.resolve({ value: chunk, done: false });
      }
    } else {
      let size;
      try { size = st.size(chunk); } catch (e) { errorStream(stream, e); throw e; }
      st.queue.push({ chunk, size });
      st.queueSize += size;
    }
    pullIfNeeded(stream);
  }
  close() {
    const st = this.#stream[kRS];
    if (st.closeRequested || st.state !== "readable") throw new TypeError("Cannot close a ReadableStream that is closed or closing.");
    st.closeRequested = true;
    if (!st.queue.length) closeStream(this.#stream);
  }
  error(e = undefined) {
    if (this.#stream[kRS].state === "readable") errorStream(this.#stream, e);
  }
  // byobRequest: the pending read a byte source may fill in place (a BYOB
  // read, or a default read given an autoAllocateChunkSize buffer).
  get byobRequest() {
    const st = this.#stream[kRS];
    if (!st.bytes || !st.reader) return null;
    const d = st.reader[kReader].requests[0];
    if (!d) return null;
    if (!d.view) {
      if (!st.autoAllocate) return null;
      d.view = new Uint8Array(st.autoAllocate);
      d.auto = true;
      d.filled = 0;
    }
    const view = new Uint8Array(d.view.buffer, d.view.byteOffset + d.filled, d.view.byteLength - d.filled);
    const requests = st.reader[kReader].requests;
    const stream = this.#stream;
    return {
      view,
      respond(n) {
        n = Number(n);
        if (!(n >= 0 && n <= view.byteLength)) throw new RangeError("Invalid byobRequest.respond() length.");
        fillView(d, new Uint8Array(0), n);
        if (d.settled && requests[0] === d) requests.shift();
        pullIfNeeded(stream);
      },
      respondWithNewView(v) {
        const u = internal.toU8(v);
        if (u !== view && u.byteLength > 0) view.set(u.subarray(0, view.byteLength));
        this.respond(u.byteLength);
      },
    };
  }
}

class ReadableStreamDefaultReader {
  constructor(stream) {
    if (!(stream instanceof ReadableStream)) throw new TypeError("ReadableStreamDefaultReader: argument must be a ReadableStream");
    const st = stream[kRS];
    if (st.reader) throw lockedError();
    const closed = withResolvers();
    hide(this, kReader, { stream, requests: [], closed });
    st.reader = this;
    if (st.state === "closed") closed.resolve();
    else if (st.state === "errored") { closed.reject(st.storedError); handled(closed.promise); }
  }
  get closed() { return this[kReader].closed.promise; }
  read() {
    const r = this[kReader];
    if (!r.stream) return Promise.reject(releasedError());
    const stream = r.stream;
    const st = stream[kRS];
    st.disturbed = true;
    if (st.state === "closed") return Promise.resolve({ value: undefined, done: true });
    if (st.state === "errored") return Promise.reject(st.storedError);
    if (st.queue.length) {
      const { chunk, size } = st.queue.shift();
      st.queueSize -= size;
      // workerd pulls again when a read finds the queue empty, not after
      // a read the queue could serve (byte streams aside).
      if (st.closeRequested && !st.queue.length) closeStream(stream);
      else if (st.bytes) pullIfNeeded(stream);
      return Promise.resolve({ value: chunk, done: false });
    }
    const d = withResolvers();
    r.requests.push(d);
    pullIfNeeded(stream);
    return d.promise;
  }
  releaseLock() {
    const r = this[kReader];
    if (!r.stream) return;
    const err = releasedError();
    for (const d of r.requests.splice(0)) d.reject(err);
    if (r.stream[kRS].state === "readable") r.closed.reject(err);
    else {
      r.closed = withResolvers();
      r.closed.reject(err);
    }
    handled(r.closed.promise);
    r.stream[kRS].reader = null;
    r.stream = null;
  }
  cancel(reason = undefined) {
    const r = this[kReader];
    if (!r.stream) return Promise.reject(releasedError());
    return cancelStream(r.stream, reason);
  }
}

// fillView copies as much of bytes as fits into a BYOB read request's view
// after what it holds already (plus `given` bytes a byte source wrote in
// place), resolves the request once it holds its minimum, and returns the
// bytes left over.
function fillView(d, bytes, given = 0) {
  const view = d.view;
  d.filled = (d.filled || 0) + given;
  const n = Math.min(view.byteLength - d.filled, bytes.byteLength);
  new Uint8Array(view.buffer, view.byteOffset + d.filled, n).set(bytes.subarray(0, n));
  d.filled += n;
  const per = view.BYTES_PER_ELEMENT || 1;
  if (d.filled >= (d.min || 1) || d.auto) {
    d.settled = true;
    const len = view instanceof DataView ? d.filled : Math.floor(d.filled / per);
    d.resolve({ value: new view.constructor(view.buffer, view.byteOffset, len), done: false });
  }
  return bytes.subarray(n);
}

// ReadableStreamBYOBReader reads a byte stream into caller-supplied views.
// The view's buffer is filled in place (not transferred, a simplification
// of the standard that callers cannot tell apart unless they check for
// detachment).
class ReadableStreamBYOBReader extends ReadableStreamDefaultReader {
  read(view, options = undefined) {
    if (!ArrayBuffer.isView(view) || view.byteLength === 0) {
      return Promise.reject(new TypeError("You must call read() on a \"byob\" reader with a positive-sized TypedArray object."));
    }
    const r = this[kReader];
    if (!r.stream) return Promise.reject(releasedError());
    const stream = r.stream;
    const st = stream[kRS];
    st.disturbed = true;
    if (st.state === "errored") return Promise.reject(st.storedError);
    const d = withResolvers();
    d.view = view;
    d.filled = 0;
    const per = view.BYTES_PER_ELEMENT || 1;
    d.min = options && options.min !== undefined ? Number(options.min) * per : 1;
    if (!(d.min >= 1 && d.min <= view.byteLength)) return Promise.reject(new RangeError("options.min must be between 1 and the view's length."));
    while (st.queue.length && !d.settled) {
      const head = st.queue.shift();
      st.queueSize -= head.size;
      const rest = fillView(d, internal.toU8(head.chunk));
      if (rest.byteLength) {
        st.queue.unshift({ chunk: rest, size: head.size });
        st.queueSize += head.size;
      }
    }
    if (d.settled) {
      if (st.closeRequested && !st.queue.length) closeStream(stream);
      else pullIfNeeded(stream);
      return d.promise;
    }
    if (st.state === "closed") return Promise.resolve({ value: new view.constructor(view.buffer, view.byteOffset, 0), done: true });
    r.requests.push(d);
    pullIfNeeded(stream);
    return d.promise;
  }
}

function shouldPull(st) {
  if (!st.started || st.closeRequested || st.state !== "readable") return false;
  if (st.reader && st.reader[kReader].requests.length) return true;
  return st.hwm - st.queueSize > 0;
}

function pullIfNeeded(stream) {
  const st = stream[kRS];
  if (!shouldPull(st)) return;
  if (st.pulling) {
    st.pullAgain = true;
    return;
  }
  if (!st.source.pull) return;
  st.pulling = true;
  let p;
  try {
    p = Promise.resolve(st.source.pull.call(st.source, st.controller));
  } catch (e) {
    p = Promise.reject(e);
  }
  p.then(() => {
    st.pulling = false;
    if (st.pullAgain) {
      st.pullAgain = false;
      pullIfNeeded(stream);
    }
  }, (e) => errorStream(stream, e));
}

function closeStream(stream) {
  const st = stream[kRS];
  if (st.state !== "readable") return;
  st.state = "closed";
  if (st.reader) {
    const r = st.reader[kReader];
    for (const d of r.requests.splice(0)) {
      d.resolve({ value: d.view ? new d.view.constructor(d.view.buffer, d.view.byteOffset, 0) : undefined, done: true });
    }
    r.closed.resolve();
  }
}

function errorStream(stream, e) {
  const st = stream[kRS];
  if (st.state !== "readable") return;
  st.state = "errored";
  st.storedError = e;
  st.queue = [];
  st.queueSize = 0;
  if (st.reader) {
    const r = st.reader[kReader];
    for (const d of r.requests.splice(0)) d.reject(e);
    r.closed.reject(e);
    handled(r.closed.promise);
  }
}

function cancelStream(stream, reason) {
  const st = stream[kRS];
  st.disturbed = true;
  if (st.state === "closed") return Promise.resolve();
  if (st.state === "errored") return Promise.reject(st.storedError);
  st.queue = [];
  st.queueSize = 0;
  closeStream(stream);
  let p;
  try {
    p = Promise.resolve(st.source.cancel ? st.source.cancel.call(st.source, reason) : undefined);
  } catch (e) {
    p = Promise.reject(e);
  }
  return p.then(() => undefined);
}

function tee(stream) {
  const reader = stream.getReader();
  let reading = false;
  let readAgain = false;
  const canceled = [false, false];
  const reasons = [undefined, undefined];
  const controllers = [null, null];
  const cancelDone = withResolvers();
  const forEach = (fn) => { for (let i = 0; i < 2; i++) if (!canceled[i]) { try { fn(controllers[i]); } catch {} } };
  function pull() {
    if (reading) {
      readAgain = true;
      return Promise.resolve();
    }
    reading = true;
    reader.read().then(({ value, done }) => {
      reading = false;
      if (done) {
        forEach((c) => c.close());
        cancelDone.resolve();
        return;
      }
      forEach((c) => c.enqueue(value));
      if (readAgain) {
        readAgain = false;
        pull();
      }
    }, (e) => {
      reading = false;
      for (const c of controllers) c.error(e);
      cancelDone.resolve();
    });
    return Promise.resolve();
  }
  const branch = (i) => new ReadableStream({
    start(c) { controllers[i] = c; },
    pull,
    // As in workerd: a branch's cancel() settles at once, and the source
    // is canceled, with the last branch's reason, when both are.
    cancel(reason) {
      canceled[i] = true;
      reasons[i] = reason;
      if (canceled[1 - i]) return reader.cancel(reason);
      return Promise.resolve();
    },
  });
  return [branch(0), branch(1)];
}

function pipe(source, dest, { preventClose = false, preventAbort = false, preventCancel = false, signal = undefined }) {
  const reader = source.getReader();
  const writer = dest.getWriter();
  source[kRS].disturbed = true;
  return new Promise((resolve, reject) => {
    let finished = false;
    const finish = (error, isError) => {
      if (finished) return;
      finished = true;
      writer.releaseLock();
      reader.releaseLock();
      if (isError) reject(error);
      else resolve();
    };
    const shutdown = (actions, error, isError) => {
      Promise.all(actions.map((a) => a())).then(() => finish(error, isError), (e) => finish(e, true));
    };
    if (signal) {
      const onAbort = () => {
        const e = signal.reason;
        const actions = [];
        if (!preventAbort) actions.push(() => writer.abort(e));
        if (!preventCancel) actions.push(() => reader.cancel(e));
        shutdown(actions, e, true);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort);
    }
    writer.closed.then(() => {
      if (!finished) shutdown(preventCancel ? [] : [() => reader.cancel(new TypeError("The destination stream closed"))], undefined, false);
    }, (e) => {
      if (!finished) shutdown(preventCancel ? [] : [() => reader.cancel(e)], e, true);
    });
    (async () => {
      for (;;) {
        try {
          await writer.ready;
        } catch {
          return; // the destination errored: writer.closed handles it
        }
        let r;
        try {
          r = await reader.read();
        } catch (e) {
          if (!finished) shutdown(preventAbort ? [] : [() => writer.abort(e)], e, true);
          return;
        }
        if (finished) return;
        if (r.done) {
          if (preventClose) finish(undefined, false);
          else writer.close().then(() => finish(undefined, false), (e) => finish(e, true));
          return;
        }
        handled(writer.write(r.value));
      }
    })();
  });
}

internal.expose("ReadableStream", ReadableStream);
internal.expose("ReadableStreamDefaultReader", ReadableStreamDefaultReader);
internal.expose("ReadableStreamDefaultController", ReadableStreamDefaultController);
internal.expose("ReadableStreamBYOBReader", ReadableStreamBYOBReader);
internal.isDisturbed = (stream) => (!hasState(stream) && (stream[kLazy] != null || stream[kLazySource] != null) ? false : stream[kRS].disturbed);

// closedBytesStream(source) is
//   new ReadableStream({ type: "bytes", start(c) { if (bytes.byteLength) c.enqueue(bytes); c.close(); } })
// built directly in the state that constructor leaves (one chunk queued,
// close requested), without a source, controller or start promise: a
// body is made a stream this way whenever script reads .body (frameworks
// do it per request, to re-wrap a response). A string source is encoded
// as UTF-8 when its chunk is first read, so a stream passed on unread
// (to a new Response, then to Go) never encodes it.
const noSource = Object.freeze({});
class TextChunk {
  constructor(text) { this.text = text; this.bytes = null; }
  get chunk() { return (this.bytes ??= internal.utf8Encode(this.text)); }
  get size() { return 1; }
}
const closedState = (source) => {
  const text = typeof source === "string";
  const has = text ? source.length > 0 : source.byteLength > 0;
  return {
    state: has ? "readable" : "closed", reader: null, storedError: undefined, disturbed: false,
    queue: has ? [text ? new TextChunk(source) : { chunk: source, size: 1 }] : [], queueSize: has ? 1 : 0, hwm: 0,
    size: sizeOne, started: true, pulling: false, pullAgain: false, closeRequested: true, source: noSource,
    controller: null, bytes: true, autoAllocate: 0,
  };
};
internal.closedBytesStream = (source) => {
  const s = Object.create(ReadableStream.prototype);
  hide(s, kRS, closedState(source));
  return s;
};
// lazyBytesStream(source) is closedBytesStream(source) whose state is
// made when first used: until then the stream is one object with one
// property (kLazy: its source). A response body read as .body only to be
// handed to a new Response (frameworks do it per request, to change
// headers) and then to Go never gets one. The kLazy mark stays after the
// state is made, until the source is taken (34_transform.js), and
// tells a stream whose bytes are at hand.
const kLazy = Symbol("bytes source");
internal.kLazyBytes = kLazy;
const hasOwnProp = Object.prototype.hasOwnProperty;
const hasState = (s) => hasOwnProp.call(s, kRS);
internal.hasStreamState = hasState;
// lazySourceStream(source) is new ReadableStream(source, { highWaterMark:
// 0 }) for a bytes source whose start() does nothing (a Go body's: an R2
// object's, a fetch() response's), its state made when first used: a
// body handed on unread (new Response(object.body)) goes back to Go
// without a state, controller or start promise ever made. kLazySource
// marks it for good.
const kLazySource = Symbol("lazy source");
const sourceState = (stream, source) => {
  const st = {
    state: "readable", reader: null, storedError: undefined, disturbed: false,
    queue: [], queueSize: 0, hwm: 0, size: sizeOne, started: true, pulling: false,
    pullAgain: false, closeRequested: false, source, controller: null, bytes: true, autoAllocate: 0,
  };
  hide(stream, kRS, st);
  st.controller = new ReadableStreamDefaultController(kCreate, stream);
  return st;
};
internal.lazySourceStream = (source) => {
  const s = Object.create(ReadableStream.prototype);
  hide(s, kLazySource, source);
  return s;
};
Object.defineProperty(ReadableStream.prototype, kRS, {
  get() {
    const source = this[kLazy];
    if (source === undefined || source === null) {
      const src = this[kLazySource];
      return src === undefined || src === null ? undefined : sourceState(this, src);
    }
    const st = closedState(source);
    hide(this, kRS, st);
    return st;
  },
  configurable: true,
});
internal.lazyBytesStream = (source) => {
  const s = Object.create(ReadableStream.prototype);
  hide(s, kLazy, source);
  return s;
};
// drainClosed empties an unlocked, unread stream whose source has closed
// it and leaves it as reading it to the end through a reader would
// (locked for good, disturbed, closed), and returns true; for any other
// stream it changes nothing and returns false. The lock is a reader no
// one holds (released, so inert), shared by every drained stream.
const drainedReader = Object.create(ReadableStreamDefaultReader.prototype);
internal.define(drainedReader, kReader, Object.freeze({ stream: null, requests: Object.freeze([]), closed: Object.freeze({ promise: Promise.resolve() }) }));
// A lazy stream drained before its state was made shares this one (the
// state of a stream locked for good by drainedReader, disturbed, closed:
// nothing changes it).
const drainedState = Object.freeze({
  state: "closed", reader: drainedReader, storedError: undefined, disturbed: true, queue: Object.freeze([]), queueSize: 0,
  hwm: 0, size: sizeOne, started: true, pulling: false, pullAgain: false, closeRequested: true, source: noSource,
  controller: null, bytes: true, autoAllocate: 0,
});
// Go makes and drains lazy bytes streams of native bodies as these do
// (body_lazy.go).
internal.kStreamState = kRS;
internal.drainedState = drainedState;
// lockTaken leaves stream, unlocked and unread, as a body Go took whole
// leaves it: locked for good and disturbed.
internal.lockTaken = (stream) => {
  if (!hasState(stream)) hide(stream, kRS, drainedState);
  else stream.getReader();
};
internal.drainClosed = (stream) => {
  if (!hasState(stream)) {
    if (stream[kLazy] == null) return false;
    hide(stream, kRS, drainedState);
    return true;
  }
  const st = stream[kRS];
  if (st.reader !== null || st.disturbed || !st.closeRequested || st.state !== "readable") return false;
  st.reader = drainedReader;
  st.disturbed = true;
  st.queue = [];
  st.queueSize = 0;
  st.state = "closed";
  return true;
};