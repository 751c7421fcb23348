// node:stream: Readable, Writable, Duplex, Transform, PassThrough,
// pipeline and finished, with stream/promises and stream/web.

const { nodeError, nextTick } = internal;
const EE = () => internal["node:events"];
const B = () => internal["node:buffer"].Buffer;

const errDestroyed = (what) => nodeError(Error, "ERR_STREAM_DESTROYED", `Cannot call ${what} after a stream was destroyed`);
const errPremature = () => nodeError(Error, "ERR_STREAM_PREMATURE_CLOSE", "Premature close");
const errAfterEnd = () => nodeError(Error, "ERR_STREAM_WRITE_AFTER_END", "write after end");
const errNotImpl = (m) => nodeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", `The ${m} method is not implemented`);
const errPushAfterEOF = () => nodeError(Error, "ERR_STREAM_PUSH_AFTER_EOF", "stream.push() after EOF");

const hwmFrom = (options, key, objectMode) => {
  const v = options && (options[key] !== undefined ? options[key] : options.highWaterMark);
  if (v !== undefined && v !== null) {
    if (!Number.isInteger(v) || v < 0) throw internal.invalidArgValue(`options.${key}`, v);
    return v;
  }
  return objectMode ? 16 : 64 * 1024;
};
const chunkSize = (chunk, objectMode) => (objectMode ? 1 : chunk.length);

// ---- Stream -----------------------------------------------------------------------------

function Stream(opts) { EE().call(this, opts); }
Object.setPrototypeOf(Stream.prototype, EE().prototype);
Object.setPrototypeOf(Stream, EE());
Stream.prototype.pipe = function (dest, options) { return Readable.prototype.pipe.call(this, dest, options); };

// ---- destroy (shared) --------------------------------------------------------------------

function destroy(err, cb) {
  const r = this._readableState, w = this._writableState;
  const s = r || w;
  if (s.destroyed) {
    if (typeof cb === "function") cb(s.errored || null);
    return this;
  }
  if (r) r.destroyed = true;
  if (w) w.destroyed = true;
  if (err) {
    if (r && !r.errored) r.errored = err;
    if (w && !w.errored) w.errored = err;
  }
  const done = (e) => {
    if (e) {
      if (r && !r.errored) r.errored = e;
      if (w && !w.errored) w.errored = e;
    }
    if (r) r.closed = true;
    if (w) w.closed = true;
    if (typeof cb === "function") cb(e || null);
    nextTick(() => {
      const shouldError = e && !(r && r.errorEmitted) && !(w && w.errorEmitted);
      if (shouldError) {
        if (r) r.errorEmitted = true;
        if (w) w.errorEmitted = true;
        this.emit("error", e);
      }
      if ((r ? r.emitClose : true) && (w ? w.emitClose : true)) this.emit("close");
    });
  };
  try {
    this._destroy(err || null, done);
  } catch (e) {
    done(e);
  }
  return this;
}

// ---- Readable ---------------------------------------------------------------------------

function ReadableState(options, stream, isDuplex) {
  options = options || {};
  this.objectMode = !!(options.objectMode || (isDuplex && options.readableObjectMode));
  this.highWaterMark = hwmFrom(options, "readableHighWaterMark", this.objectMode);
  this.buffer = [];
  this.length = 0;
  this.pipes = [];
  this.flowing = null;
  this.ended = false;
  this.endEmitted = false;
  this.reading = false;
  this.sync = true;
  this.needReadable = false;
  this.emittedReadable = false;
  this.readableListening = false;
  this.resumeScheduled = false;
  this.destroyed = false;
  this.errored = null;
  this.closed = false;
  this.errorEmitted = false;
  this.emitClose = options.emitClose !== false;
  this.autoDestroy = options.autoDestroy !== false;
  this.defaultEncoding = options.defaultEncoding || "utf8";
  this.decoder = null;
  this.encoding = null;
  this.dataEmitted = false;
  if (options.encoding) {
    this.decoder = new (internal["node:string_decoder"].StringDecoder)(options.encoding);
    this.encoding = options.encoding;
  }
}

function Readable(options) {
  if (!(this instanceof Readable)) return new Readable(options);
  const isDuplex = this instanceof Duplex;
  this._readableState = new ReadableState(options, this, isDuplex);
  if (options) {
    if (typeof options.read === "function") this._read = options.read;
    if (typeof options.destroy === "function") this._destroy = options.destroy;
    if (typeof options.construct === "function") this._construct = options.construct;
    if (options.signal) addAbortSignal(options.signal, this);
  }
  Stream.call(this, options);
}
Readable.prototype = Object.create(Stream.prototype, { constructor: { value: Readable, writable: true, configurable: true } });
Object.setPrototypeOf(Readable, Stream);
Readable.ReadableState = ReadableState;

Readable.prototype._read = function () { throw errNotImpl("_read()"); };
Readable.prototype._destroy = function (err, cb) { cb(err); };
Readable.prototype.destroy = destroy;

Readable.prototype.push = function (chunk, encoding) { return readableAdd(this, chunk, encoding, false); };
Readable.prototype.unshift = function (chunk, encoding) { return readableAdd(this, chunk, encoding, true); };

function readableAdd(stream, chunk, encoding, front) {
  const state = stream._readableState;
  if (chunk === null) {
    state.reading = false;
    if (!state.ended) {
      if (state.decoder) {
        const rest = state.decoder.end();
        if (rest && rest.length) { state.buffer.push(rest); state.length += chunkSize(rest, state.objectMode); }
      }
      state.ended = true;
      if (state.sync) emitReadable(stream);
      else { state.needReadable = false; state.emittedReadable = true; emitReadable_(stream); }
    }
    return false;
  }
  if (!state.objectMode) {
    if (typeof chunk === "string") {
      encoding = encoding || state.defaultEncoding;
      if (state.encoding !== encoding || !state.decoder) chunk = B().from(chunk, encoding);
    } else if (chunk instanceof Uint8Array) {
      if (!(chunk instanceof B())) chunk = B().from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    } else if (chunk !== undefined) {
      const err = internal.invalidArgType("chunk", "of type string or an instance of Buffer or Uint8Array", chunk);
      stream.destroy(err);
      return false;
    }
  }
  if (state.ended && !front) {
    stream.destroy(errPushAfterEOF());
    return false;
  }
  if (state.destroyed || state.errored) return false;
  state.reading = false;
  if (state.decoder && !state.objectMode && typeof chunk !== "string") {
    chunk = state.decoder.write(chunk);
    if (chunk.length === 0) return state.length < state.highWaterMark;
  }
  if (!state.objectMode && (chunk === undefined || chunk.length === 0)) return state.length < state.highWaterMark;
  if (state.flowing && state.length === 0 && !state.sync && stream.listenerCount("data") > 0 && !front) {
    state.dataEmitted = true;
    stream.emit("data", chunk);
  } else {
    state.length += chunkSize(chunk, state.objectMode);
    if (front) state.buffer.unshift(chunk);
    else state.buffer.push(chunk);
    if (state.needReadable) emitReadable(stream);
  }
  maybeReadMore(stream, state);
  return state.length < state.highWaterMark || state.length === 0;
}

function emitReadable(stream) {
  const state = stream._readableState;
  state.needReadable = false;
  if (!state.emittedReadable) {
    state.emittedReadable = true;
    nextTick(emitReadable_, stream);
  }
}
function emitReadable_(stream) {
  const state = stream._readableState;
  if (!state.destroyed && !state.errored && (state.length || state.ended)) {
    stream.emit("readable");
    state.emittedReadable = false;
  }
  state.needReadable = !state.flowing && !state.ended && state.length <= state.highWaterMark;
  flow(stream);
}

function maybeReadMore(stream, state) {
  if (!state.readingMore && !state.ended) {
    state.readingMore = true;
    nextTick(() => {
      while (!state.reading && !state.ended && !state.destroyed &&
        (state.length < state.highWaterMark || (state.flowing && state.length === 0))) {
        const len = state.length;
        stream.read(0);
        if (len === state.length) break;
      }
      state.readingMore = false;
    });
  }
}

function takeChunks(state, n) {
  if (state.objectMode) return state.buffer.shift();
  if (n === undefined || n >= state.length) {
    const all = state.buffer;
    state.buffer = [];
    if (state.decoder) return all.join("");
    return all.length === 1 ? all[0] : B().concat(all, state.length);
  }
  const first = state.buffer[0];
  if (n < first.length) {
    state.buffer[0] = first.slice(n);
    return first.slice(0, n);
  }
  if (n === first.length) return state.buffer.shift();
  const parts = [];
  let got = 0;
  while (got < n) {
    const c = state.buffer[0];
    const need = n - got;
    if (c.length <= need) { parts.push(state.buffer.shift()); got += c.length; }
    else { parts.push(c.slice(0, need)); state.buffer[0] = c.slice(need); got += need; }
  }
  return state.decoder ? parts.join("") : B().concat(parts, n);
}

Readable.prototype.read = function (n) {
  const state = this._readableState;
  if (n !== undefined && n !== 0) n = Number.parseInt(n, 10);
  const nOrig = n;
  if (n !== 0) state.emittedReadable = false;
  if (n === 0 && state.needReadable && (state.length >= state.highWaterMark || state.ended)) {
    if (state.length === 0 && state.ended) endReadable(this);
    else emitReadable(this);
    return null;
  }
  const howMuch = (k) => {
    if (k <= 0 || (state.length === 0 && state.ended)) return 0;
    if (state.objectMode) return 1;
    if (k === undefined || Number.isNaN(k)) return state.flowing && state.length ? state.buffer[0].length : state.length;
    if (k <= state.length) return k;
    return state.ended ? state.length : 0;
  };
  n = howMuch(n);
  if (n === 0 && state.ended) {
    if (state.length === 0) endReadable(this);
    return null;
  }
  let doRead = state.needReadable;
  if (state.length === 0 || state.length - n < state.highWaterMark) doRead = true;
  if (state.ended || state.reading || state.destroyed || state.errored) doRead = false;
  else if (doRead) {
    state.reading = true;
    state.sync = true;
    if (state.length === 0) state.needReadable = true;
    try {
      this._read(state.highWaterMark);
    } catch (e) {
      this.destroy(e);
    }
    state.sync = false;
    if (!state.reading) n = howMuch(nOrig);
  }
  let ret = null;
  if (n > 0) ret = takeChunks(state, state.objectMode ? undefined : n);
  if (ret === null || ret === undefined) {
    ret = null;
    state.needReadable = state.length <= state.highWaterMark;
    n = 0;
  } else {
    state.length -= state.objectMode ? 1 : ret.length;
  }
  if (state.length === 0) {
    if (!state.ended) state.needReadable = true;
    if (nOrig !== n && state.ended) endReadable(this);
  }
  if (ret !== null && !state.errorEmitted && !state.closeEmitted) {
    state.dataEmitted = true;
    this.emit("data", ret);
  }
  return ret;
};

function endReadable(stream) {
  const state = stream._readableState;
  if (!state.endEmitted) {
    state.ended = true;
    nextTick(() => {
      if (!state.errored && !state.closeEmitted && !state.endEmitted && state.length === 0) {
        state.endEmitted = true;
        stream.emit("end");
        const w = stream._writableState;
        if (w && !stream.allowHalfOpen && !w.ending && !w.destroyed) stream.end();
        if (state.autoDestroy && (!w || (w.autoDestroy && (w.finished || w.writable === false)))) stream.destroy();
      }
    });
  }
}

function flow(stream) {
  const state = stream._readableState;
  while (state.flowing && stream.read() !== null);
}

Readable.prototype.on = function (ev, fn) {
  const res = Stream.prototype.on.call(this, ev, fn);
  const state = this._readableState;
  if (ev === "data") {
    state.readableListening = this.listenerCount("readable") > 0;
    if (state.flowing !== false) this.resume();
  } else if (ev === "readable") {
    if (!state.endEmitted && !state.readableListening) {
      state.readableListening = state.needReadable = true;
      state.flowing = false;
      state.emittedReadable = false;
      if (state.length) emitReadable(this);
      else if (!state.reading) nextTick(() => this.read(0));
    }
  }
  return res;
};
Readable.prototype.addListener = Readable.prototype.on;

Readable.prototype.resume = function () {
  const state = this._readableState;
  if (!state.flowing) {
    state.flowing = !state.readableListening;
    if (!state.resumeScheduled) {
      state.resumeScheduled = true;
      nextTick(() => {
        state.resumeScheduled = false;
        if (!state.reading) this.read(0);
        this.emit("resume");
        flow(this);
        if (state.flowing && !state.reading) this.read(0);
      });
    }
  }
  state.paused = false;
  return this;
};
Readable.prototype.pause = function () {
  const state = this._readableState;
  if (state.flowing !== false) {
    state.flowing = false;
    this.emit("pause");
  }
  state.paused = true;
  return this;
};
Readable.prototype.isPaused = function () { return this._readableState.paused === true || this._readableState.flowing === false; };
Readable.prototype.setEncoding = function (enc) {
  const state = this._readableState;
  state.decoder = new (internal["node:string_decoder"].StringDecoder)(enc);
  state.encoding = state.decoder.encoding;
  const buffered = state.buffer.map((c) => (typeof c === "string" ? c : state.decoder.write(c))).join("");
  state.buffer = buffered ? [buffered] : [];
  state.length = buffered.length;
  return this;
};
Readable.prototype.unpipe = function (dest) {
  const state = this._readableState;
  const targets = dest ? [dest] : state.pipes.slice();
  for (const d of targets) {
    const i = state.pipes.indexOf(d);
    if (i < 0) continue;
    state.pipes.splice(i, 1);
    d.emit("unpipe", this);
    if (d._pipeCleanup) d._pipeCleanup();
  }
  if (state.pipes.length === 0) this.pause();
  return this;
};
Readable.prototype.pipe = function (dest, options) {
  const src = this;
  const state = src._readableState;
  state.pipes.push(dest);
  const doEnd = !options || options.end !== false;
  const ondata = (chunk) => {
    if (dest.write(chunk) === false) src.pause();
  };
  const ondrain = () => { if (state.flowing === false || src.isPaused()) src.resume(); };
  const onend = () => { if (doEnd) dest.end(); };
  const onerror = (er) => {
    cleanup();
    if (dest.listenerCount("error") === 0) {
      const s = dest._writableState || dest._readableState;
      if (s && !s.errorEmitted) dest.destroy(er);
      else dest.emit("error", er);
    }
  };
  const onclose = () => { dest.removeListener("finish", onfinish); src.unpipe(dest); };
  const onfinish = () => { dest.removeListener("close", onclose); src.unpipe(dest); };
  const cleanup = () => {
    dest.removeListener("drain", ondrain);
    dest.removeListener("error", onerror);
    dest.removeListener("close", onclose);
    dest.removeListener("finish", onfinish);
    src.removeListener("data", ondata);
    src.removeListener("end", onend);
  };
  dest._pipeCleanup = cleanup;
  src.on("data", ondata);
  dest.on("drain", ondrain);
  dest.prependListener("error", onerror);
  dest.once("close", onclose);
  dest.once("finish", onfinish);
  if (state.endEmitted) nextTick(onend);
  else src.once("end", onend);
  dest.emit("pipe", src);
  if (!state.flowing) src.resume();
  return dest;
};
Readable.prototype.wrap = function (old) {
  old.on("data", (c) => { if (!this.push(c)) old.pause && old.pause(); });
  old.on("end", () => this.push(null));
  old.on("error", (e) => this.destroy(e));
  this._read = () => { old.resume && old.resume(); };
  return this;
};

Readable.prototype[Symbol.asyncIterator] = function () { return readableIterator(this); };
Readable.prototype.iterator = function (opts) { return readableIterator(this, opts); };
function readableIterator(stream, opts) {
  let wake = null;
  let error = null;
  let finished = false;
  const notify = () => { if (wake) { const w = wake; wake = null; w(); } };
  stream.on("readable", notify);
  const onEnd = () => { finished = true; notify(); };
  stream.on("end", onEnd);
  stream.on("error", (e) => { error = e; notify(); });
  stream.on("close", () => { finished = true; notify(); });
  const cleanup = (destroy) => {
    if (destroy && (!opts || opts.destroyOnReturn !== false)) stream.destroy();
  };
  return {
    async next() {
      for (;;) {
        if (error) throw error;
        const state = stream._readableState;
        if (state.errored) throw state.errored;
        const chunk = state.destroyed ? null : stream.read();
        if (chunk !== null) return { value: chunk, done: false };
        if (finished || state.endEmitted) {
          cleanup(false);
          if (state.destroyed && !state.endEmitted && !state.errored && !error) {
            // destroyed before its end: Node's iterator ends quietly too
          }
          return { value: undefined, done: true };
        }
        await new Promise((r) => { wake = r; });
      }
    },
    async return() {
      cleanup(true);
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() { return this; },
  };
}

const rprop = (name, get) => Object.defineProperty(Readable.prototype, name, { get, configurable: true, enumerable: false });
rprop("readable", function () {
  const r = this._readableState;
  return !!r && r.readable !== false && !r.destroyed && !r.errorEmitted && !r.endEmitted;
});
Object.defineProperty(Readable.prototype, "readable", {
  get() { const r = this._readableState; return !!r && r.readable !== false && !r.destroyed && !r.errorEmitted && !r.endEmitted; },
  set(v) { if (this._readableState) this._readableState.readable = !!v; },
  configurable: true,
});
rprop("readableEnded", function () { return this._readableState ? this._readableState.endEmitted : false; });
rprop("readableFlowing", function () { return this._readableState.flowing; });
rprop("readableLength", function () { return this._readableState.length; });
rprop("readableHighWaterMark", function () { return this._readableState.highWaterMark; });
rprop("readableObjectMode", function () { return this._readableState ? this._readableState.objectMode : false; });
rprop("readableEncoding", function () { return this._readableState ? this._readableState.encoding : null; });
rprop("readableAborted", function () { const r = this._readableState; return !!(r.destroyed || r.errored) && !r.endEmitted; });
rprop("readableDidRead", function () { return this._readableState.dataEmitted; });
rprop("errored", function () { return (this._readableState || this._writableState).errored; });
rprop("closed", function () { return (this._readableState || this._writableState).closed; });
Object.defineProperty(Readable.prototype, "destroyed", {
  get() { return (this._readableState || this._writableState).destroyed; },
  set(v) { const s = this._readableState || this._writableState; if (s) s.destroyed = v; },
  configurable: true,
});

Readable.from = function from(iterable, opts) {
  if (typeof iterable === "string" || iterable instanceof Uint8Array) {
    return new Readable({ objectMode: true, ...opts, read() { this.push(iterable); this.push(null); } });
  }
  let it;
  if (iterable && typeof iterable[Symbol.asyncIterator] === "function") it = iterable[Symbol.asyncIterator]();
  else if (iterable && typeof iterable[Symbol.iterator] === "function") it = iterable[Symbol.iterator]();
  else throw internal.invalidArgType("iterable", "an instance of Iterable", iterable);
  let reading = false;
  const r = new Readable({
    objectMode: true, highWaterMark: 1, ...opts,
    read() {
      if (reading) return;
      reading = true;
      (async () => {
        try {
          for (;;) {
            const { value, done } = await it.next();
            if (done) { this.push(null); break; }
            const v = await value;
            if (v === null) throw nodeError(TypeError, "ERR_STREAM_NULL_VALUES", "May not write null values to stream");
            if (!this.push(v)) break;
          }
        } catch (e) {
          this.destroy(e);
        }
        reading = false;
      })();
    },
    destroy(err, cb) {
      const ret = typeof it.return === "function" ? it.return() : undefined;
      Promise.resolve(ret).then(() => cb(err), (e) => cb(e || err));
    },
  });
  return r;
};

internal.nodeReadable = Readable;
internal.nodeStreamBase = Stream;
internal.nodeStreamDestroy = destroy;
internal.nodeStreamErrors = { errDestroyed, errPremature, errAfterEnd, errNotImpl, hwmFrom, chunkSize };

// Duplex and Writable are defined in 88_node_stream_writable.js; Readable
// needs to know Duplex for instanceof.
let Duplex = function () {};
internal.nodeSetDuplex = (d) => { Duplex = d; };

function addAbortSignal(signal, stream) {
  if (!signal || typeof signal.aborted !== "boolean") throw internal.invalidArgType("signal", "an instance of AbortSignal", signal);
  const onAbort = () => stream.destroy(internal.nodeAbortError(signal.reason));
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return stream;
}
internal.nodeAddAbortSignal = addAbortSignal;
