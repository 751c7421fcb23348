// node:stream, continued: Writable, Duplex, Transform, PassThrough,
// finished, pipeline, the promises API and the web stream adapters.

const Readable = internal.nodeReadable;
const Stream = internal.nodeStreamBase;
const destroy = internal.nodeStreamDestroy;
const { errDestroyed, errPremature, errAfterEnd, errNotImpl, hwmFrom } = internal.nodeStreamErrors;
const { nodeError, nextTick } = internal;
const B = () => internal["node:buffer"].Buffer;

// ---- Writable ---------------------------------------------------------------------------

function WritableState(options, stream, isDuplex) {
  options = options || {};
  this.objectMode = !!(options.objectMode || (isDuplex && options.writableObjectMode));
  this.highWaterMark = hwmFrom(options, "writableHighWaterMark", this.objectMode);
  this.decodeStrings = options.decodeStrings !== false;
  this.defaultEncoding = options.defaultEncoding || "utf8";
  this.length = 0;
  this.writing = false;
  this.corked = 0;
  this.sync = true;
  this.buffered = [];
  this.pendingcb = 0;
  this.ending = false;
  this.ended = false;
  this.finished = false;
  this.prefinished = false;
  this.finalCalled = false;
  this.destroyed = false;
  this.errored = null;
  this.closed = false;
  this.errorEmitted = false;
  this.needDrain = false;
  this.emitClose = options.emitClose !== false;
  this.autoDestroy = options.autoDestroy !== false;
  this.finishCbs = [];
}

function Writable(options) {
  const isDuplex = this instanceof Duplex;
  if (!isDuplex && !(this instanceof Writable)) return new Writable(options);
  this._writableState = new WritableState(options, this, isDuplex);
  if (options) {
    if (typeof options.write === "function") this._write = options.write;
    if (typeof options.writev === "function") this._writev = options.writev;
    if (typeof options.destroy === "function") this._destroy = options.destroy;
    if (typeof options.final === "function") this._final = options.final;
    if (options.signal) internal.nodeAddAbortSignal(options.signal, this);
  }
  if (!isDuplex) Stream.call(this, options);
}
Writable.prototype = Object.create(Stream.prototype, { constructor: { value: Writable, writable: true, configurable: true } });
Object.setPrototypeOf(Writable, Stream);
Writable.WritableState = WritableState;
Object.defineProperty(Writable, Symbol.hasInstance, {
  value(obj) {
    if (Function.prototype[Symbol.hasInstance].call(this, obj)) return true;
    if (this !== Writable) return false;
    return !!(obj && obj._writableState instanceof WritableState);
  },
});

Writable.prototype._write = function (chunk, encoding, cb) {
  if (this._writev) this._writev([{ chunk, encoding }], cb);
  else throw errNotImpl("_write()");
};
Writable.prototype._destroy = function (err, cb) { cb(err); };
Writable.prototype.destroy = function (err, cb) {
  const state = this._writableState;
  if (!state.destroyed && (state.buffered.length || state.finishCbs.length)) {
    const e = errDestroyed("end");
    nextTick(() => {
      for (const b of state.buffered.splice(0)) b.callback(e);
      for (const f of state.finishCbs.splice(0)) f(e);
    });
  }
  return destroy.call(this, err, cb);
};

Writable.prototype.write = function (chunk, encoding, cb) {
  const state = this._writableState;
  if (typeof encoding === "function") { cb = encoding; encoding = null; }
  if (!encoding) encoding = state.defaultEncoding;
  else if (encoding !== "buffer") encoding = internal.normEnc(encoding);
  if (typeof cb !== "function") cb = () => {};
  if (chunk === null) throw nodeError(TypeError, "ERR_STREAM_NULL_VALUES", "May not write null values to stream");
  if (!state.objectMode) {
    if (typeof chunk === "string") {
      if (state.decodeStrings !== false) { chunk = B().from(chunk, encoding); encoding = "buffer"; }
    } else if (chunk instanceof Uint8Array) {
      if (!(chunk instanceof B())) chunk = B().from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      encoding = "buffer";
    } else {
      throw internal.invalidArgType("chunk", "of type string or an instance of Buffer or Uint8Array", chunk);
    }
  }
  let err;
  if (state.ending) err = errAfterEnd();
  else if (state.destroyed) err = errDestroyed("write");
  if (err) {
    nextTick(cb, err);
    if (!state.errorEmitted && !state.destroyed) this.destroy(err);
    else if (!state.errored) { state.errored = err; }
    return false;
  }
  state.pendingcb++;
  const len = state.objectMode ? 1 : chunk.length;
  state.length += len;
  const ret = state.length < state.highWaterMark;
  if (!ret) state.needDrain = true;
  if (state.writing || state.corked || state.errored) {
    state.buffered.push({ chunk, encoding, callback: cb, len });
  } else {
    doWrite(this, state, chunk, encoding, cb, len);
  }
  return ret && !state.errored && !state.destroyed;
};

function doWrite(stream, state, chunk, encoding, cb, len) {
  state.writelen = len;
  state.writecb = cb;
  state.writing = true;
  state.sync = true;
  if (state.destroyed) onwrite(stream, errDestroyed("write"));
  else stream._write(chunk, encoding, (er) => onwrite(stream, er));
  state.sync = false;
}
function doWritev(stream, state, entries) {
  const len = entries.reduce((n, e) => n + e.len, 0);
  state.writelen = len;
  state.writecb = (er) => { for (const e of entries) e.callback(er); };
  state.pendingcb -= entries.length - 1;
  state.writing = true;
  state.sync = true;
  stream._writev(entries.map((e) => ({ chunk: e.chunk, encoding: e.encoding })), (er) => onwrite(stream, er));
  state.sync = false;
}

function onwrite(stream, er) {
  const state = stream._writableState;
  const cb = state.writecb;
  if (typeof cb !== "function") {
    stream.destroy(nodeError(Error, "ERR_MULTIPLE_CALLBACK", "Callback called multiple times"));
    return;
  }
  state.writing = false;
  state.writecb = null;
  state.length -= state.writelen;
  state.writelen = 0;
  if (er) {
    if (!state.errored) state.errored = er;
    if (state.sync) nextTick(() => { state.pendingcb--; cb(er); });
    else { state.pendingcb--; cb(er); }
    stream.destroy(er);
    return;
  }
  if (state.buffered.length && !state.corked) clearBuffer(stream, state);
  const after = () => {
    state.pendingcb--;
    cb(null);
    if (state.needDrain && state.length === 0 && !state.ending && !state.destroyed) {
      state.needDrain = false;
      stream.emit("drain");
    }
    finishMaybe(stream, state);
  };
  if (state.sync) nextTick(after);
  else after();
}

function clearBuffer(stream, state) {
  if (state.corked || state.destroyed || state.writing) return;
  if (state.buffered.length > 1 && stream._writev) {
    doWritev(stream, state, state.buffered.splice(0));
  } else if (state.buffered.length) {
    const { chunk, encoding, callback, len } = state.buffered.shift();
    doWrite(stream, state, chunk, encoding, callback, len);
  }
}

Writable.prototype.cork = function () { this._writableState.corked++; };
Writable.prototype.uncork = function () {
  const state = this._writableState;
  if (state.corked) {
    state.corked--;
    if (!state.writing) clearBuffer(this, state);
  }
};
Writable.prototype.setDefaultEncoding = function (enc) {
  this._writableState.defaultEncoding = internal.normEnc(enc);
  return this;
};

Writable.prototype.end = function (chunk, encoding, cb) {
  const state = this._writableState;
  if (typeof chunk === "function") { cb = chunk; chunk = null; encoding = null; }
  else if (typeof encoding === "function") { cb = encoding; encoding = null; }
  let err;
  if (chunk !== null && chunk !== undefined) {
    const ret = this.write(chunk, encoding);
    if (ret === false && state.errored) err = state.errored;
  }
  if (state.corked) { state.corked = 1; this.uncork(); }
  if (!err && state.errored) err = state.errored;
  else if (!err && !state.ending && !state.destroyed) {
    state.ending = true;
    finishMaybe(this, state, true);
    state.ended = true;
  } else if (!err && state.finished) {
    // ended already: the callback still runs, after finish
  } else if (!err && state.destroyed) {
    err = errDestroyed("end");
  }
  if (typeof cb === "function") {
    if (err) nextTick(cb, err);
    else if (state.finished) nextTick(cb, null);
    else state.finishCbs.push(cb);
  }
  return this;
};

function needFinish(state) {
  return state.ending && !state.destroyed && state.length === 0 && !state.errored &&
    state.buffered.length === 0 && !state.finished && !state.writing && !state.errorEmitted && !state.closeEmitted;
}
function prefinish(stream, state) {
  if (state.prefinished || state.finalCalled) return;
  if (typeof stream._final === "function" && !state.destroyed) {
    state.finalCalled = true;
    state.sync = true;
    state.pendingcb++;
    let called = false;
    const onFinal = (err) => {
      if (called) return;
      called = true;
      state.pendingcb--;
      if (err) {
        for (const f of state.finishCbs.splice(0)) f(err);
        stream.destroy(err);
        return;
      }
      if (needFinish(state)) {
        state.prefinished = true;
        stream.emit("prefinish");
        state.pendingcb++;
        nextTick(finish, stream, state);
      }
    };
    try {
      stream._final(onFinal);
    } catch (e) {
      onFinal(e);
    }
    state.sync = false;
  } else {
    state.prefinished = true;
    stream.emit("prefinish");
  }
}
function finishMaybe(stream, state, sync) {
  if (!needFinish(state)) return;
  prefinish(stream, state);
  if (state.pendingcb === 0) {
    if (sync) {
      state.pendingcb++;
      nextTick(() => { if (needFinish(state)) finish(stream, state); else state.pendingcb--; });
    } else if (needFinish(state)) {
      state.pendingcb++;
      finish(stream, state);
    }
  }
}
function finish(stream, state) {
  state.pendingcb--;
  state.finished = true;
  for (const f of state.finishCbs.splice(0)) f(null);
  stream.emit("finish");
  if (state.autoDestroy) {
    const r = stream._readableState;
    if (!r || (r.autoDestroy && (r.endEmitted || r.readable === false))) stream.destroy();
  }
}

const wprop = (name, get) => Object.defineProperty(Writable.prototype, name, { get, configurable: true, enumerable: false });
Object.defineProperty(Writable.prototype, "writable", {
  get() { const w = this._writableState; return !!w && w.writable !== false && !w.destroyed && !w.errored && !w.ending && !w.ended; },
  set(v) { if (this._writableState) this._writableState.writable = !!v; },
  configurable: true,
});
wprop("writableEnded", function () { return this._writableState ? this._writableState.ending : false; });
wprop("writableFinished", function () { return this._writableState ? this._writableState.finished : false; });
wprop("writableLength", function () { return this._writableState.length; });
wprop("writableHighWaterMark", function () { return this._writableState.highWaterMark; });
wprop("writableObjectMode", function () { return this._writableState ? this._writableState.objectMode : false; });
wprop("writableCorked", function () { return this._writableState ? this._writableState.corked : 0; });
wprop("writableNeedDrain", function () { const w = this._writableState; return !w.destroyed && !w.ending && w.needDrain; });
wprop("writableAborted", function () { const w = this._writableState; return !!(w.destroyed || w.errored) && !w.finished; });
wprop("errored", function () { return (this._writableState || {}).errored || null; });
wprop("closed", function () { return (this._writableState || {}).closed || false; });
Object.defineProperty(Writable.prototype, "destroyed", {
  get() { return this._writableState ? this._writableState.destroyed : false; },
  set(v) { if (this._writableState) this._writableState.destroyed = v; },
  configurable: true,
});

// ---- Duplex, Transform, PassThrough -----------------------------------------------------

function Duplex(options) {
  if (!(this instanceof Duplex)) return new Duplex(options);
  Readable.call(this, options);
  Writable.call(this, options);
  this.allowHalfOpen = !options || options.allowHalfOpen !== false;
  if (options) {
    if (options.readable === false) { this._readableState.readable = false; this._readableState.ended = true; this._readableState.endEmitted = true; }
    if (options.writable === false) { this._writableState.writable = false; this._writableState.ending = true; this._writableState.ended = true; this._writableState.finished = true; }
  }
}
Duplex.prototype = Object.create(Readable.prototype, { constructor: { value: Duplex, writable: true, configurable: true } });
Object.setPrototypeOf(Duplex, Readable);
for (const key of Object.getOwnPropertyNames(Writable.prototype)) {
  if (key === "constructor" || key === "destroy" || key === "errored" || key === "closed" || key === "destroyed") continue;
  if (!Object.prototype.hasOwnProperty.call(Duplex.prototype, key)) {
    Object.defineProperty(Duplex.prototype, key, Object.getOwnPropertyDescriptor(Writable.prototype, key));
  }
}
Duplex.prototype.destroy = function (err, cb) { return Writable.prototype.destroy.call(this, err, cb); };
Duplex.prototype._destroy = function (err, cb) { cb(err); };
internal.nodeSetDuplex(Duplex);

function Transform(options) {
  if (!(this instanceof Transform)) return new Transform(options);
  Duplex.call(this, options);
  this._readableState.sync = false;
  this._transformCallback = null;
  if (options) {
    if (typeof options.transform === "function") this._transform = options.transform;
    if (typeof options.flush === "function") this._flush = options.flush;
  }
}
Transform.prototype = Object.create(Duplex.prototype, { constructor: { value: Transform, writable: true, configurable: true } });
Object.setPrototypeOf(Transform, Duplex);
Transform.prototype._transform = function () { throw errNotImpl("_transform()"); };
Transform.prototype._final = function (cb) {
  const done = (er, data) => {
    if (er) { cb(er); return; }
    if (data != null) this.push(data);
    this.push(null);
    cb();
  };
  if (typeof this._flush === "function" && !this.destroyed) {
    this._flush(done);
  } else {
    done();
  }
};
Transform.prototype._write = function (chunk, encoding, callback) {
  const rState = this._readableState;
  const length = rState.length;
  this._transform(chunk, encoding, (err, val) => {
    if (err) { callback(err); return; }
    if (val != null) this.push(val);
    if (rState.ended || length === rState.length || rState.length < rState.highWaterMark) callback();
    else this._transformCallback = callback;
  });
};
Transform.prototype._read = function () {
  if (this._transformCallback) {
    const cb = this._transformCallback;
    this._transformCallback = null;
    cb();
  }
};

function PassThrough(options) {
  if (!(this instanceof PassThrough)) return new PassThrough(options);
  Transform.call(this, options);
}
PassThrough.prototype = Object.create(Transform.prototype, { constructor: { value: PassThrough, writable: true, configurable: true } });
Object.setPrototypeOf(PassThrough, Transform);
PassThrough.prototype._transform = function (chunk, enc, cb) { cb(null, chunk); };

// ---- finished and pipeline ---------------------------------------------------------------

function eos(stream, options, callback) {
  if (typeof options === "function") { callback = options; options = {}; }
  options = options || {};
  let called = false;
  const cb = (err) => { if (!called) { called = true; cleanup(); callback.call(stream, err); } };
  const r = stream._readableState, w = stream._writableState;
  const readable = options.readable !== false && !!r && r.readable !== false;
  const writable = options.writable !== false && !!w && w.writable !== false;
  let readDone = !readable || (r && r.endEmitted);
  let writeDone = !writable || (w && w.finished);
  const onfinish = () => { writeDone = true; if (readDone) cb(); };
  const onend = () => { readDone = true; if (writeDone) cb(); };
  const onerror = (err) => cb(err);
  const onclose = () => {
    if ((readable && !readDone) || (writable && !writeDone)) cb(errPremature());
    else cb();
  };
  const cleanup = () => {
    stream.removeListener("finish", onfinish);
    stream.removeListener("end", onend);
    stream.removeListener("error", onerror);
    stream.removeListener("close", onclose);
  };
  stream.on("finish", onfinish);
  stream.on("end", onend);
  if (options.error !== false) stream.on("error", onerror);
  stream.on("close", onclose);
  const s = r || w;
  if (s && s.errored) nextTick(onerror, s.errored);
  else if (s && s.closed) nextTick(onclose);
  else if (readDone && writeDone) nextTick(() => cb());
  return cleanup;
}

function pipeline(...streams) {
  const callback = typeof streams[streams.length - 1] === "function" ? streams.pop() : null;
  if (Array.isArray(streams[0]) && streams.length === 1) streams = streams[0];
  if (streams.length < 2) throw nodeError(TypeError, "ERR_MISSING_ARGS", 'The "streams" argument must be specified');
  let done = false;
  const made = [];
  const finish = (err) => {
    if (done) return;
    done = true;
    if (err) for (const s of made) if (s && typeof s.destroy === "function" && !s.destroyed) s.destroy(err);
    if (callback) callback(err);
  };
  const toStream = (s) => {
    if (s && typeof s.pipe === "function") return s;
    if (s && typeof s.getReader === "function") return fromWebReadable(s);
    if (s && typeof s.getWriter === "function") return fromWebWritable(s);
    if (s && (typeof s[Symbol.asyncIterator] === "function" || typeof s[Symbol.iterator] === "function" || typeof s === "string")) {
      return Readable.from(s, { objectMode: true });
    }
    throw internal.invalidArgType("streams", "a stream, an iterable or a function", s);
  };
  let prev;
  for (let i = 0; i < streams.length; i++) {
    const last = i === streams.length - 1;
    let s = streams[i];
    if (typeof s === "function") {
      const r = s(prev, { signal: undefined });
      if (r && typeof r.then === "function" && !(r && typeof r.pipe === "function")) {
        r.then(() => finish(undefined), (e) => finish(e || new Error("pipeline stage rejected")));
        prev = null;
        continue;
      }
      s = toStream(r);
    } else {
      s = toStream(s);
      if (prev) prev.pipe(s);
    }
    made.push(s);
    eos(s, { readable: !last, writable: i > 0 && !(typeof streams[i] === "function") }, (err) => {
      if (err) finish(err);
      else if (last) finish(undefined);
    });
    prev = s;
  }
  return made[made.length - 1];
}

// ---- web stream adapters -----------------------------------------------------------------

function fromWebReadable(web, options) {
  const reader = web.getReader();
  let closed = false;
  return new Readable({
    objectMode: !!(options && options.objectMode), ...options,
    read() {
      reader.read().then(({ value, done }) => {
        if (done) { closed = true; this.push(null); return; }
        this.push(value instanceof Uint8Array || this._readableState.objectMode ? value : B().from(value));
      }, (e) => this.destroy(e));
    },
    destroy(err, cb) {
      if (!closed) reader.cancel(err).then(() => cb(err), () => cb(err));
      else cb(err);
    },
  });
}
function fromWebWritable(web, options) {
  const writer = web.getWriter();
  return new Writable({
    ...options,
    write(chunk, enc, cb) { writer.write(chunk).then(() => cb(), cb); },
    final(cb) { writer.close().then(() => cb(), cb); },
    destroy(err, cb) { writer.abort(err).then(() => cb(err), () => cb(err)); },
  });
}
function toWebReadable(stream) {
  return new ReadableStream({
    start(controller) {
      stream.on("data", (c) => {
        controller.enqueue(c instanceof Uint8Array ? new Uint8Array(c.buffer, c.byteOffset, c.byteLength) : c);
        if (controller.desiredSize <= 0) stream.pause();
      });
      stream.on("end", () => controller.close());
      stream.on("error", (e) => controller.error(e));
    },
    pull() { stream.resume(); },
    cancel(reason) { stream.destroy(reason); },
  });
}
function toWebWritable(stream) {
  return new WritableStream({
    write(chunk) { return new Promise((res, rej) => stream.write(chunk, (e) => (e ? rej(e) : res()))); },
    close() { return new Promise((res) => stream.end(res)); },
    abort(reason) { stream.destroy(reason); },
  });
}
Readable.fromWeb = fromWebReadable;
Readable.toWeb = toWebReadable;
Writable.fromWeb = fromWebWritable;
Writable.toWeb = toWebWritable;

// ---- the module ---------------------------------------------------------------------------

const promises = {
  pipeline: (...streams) => new Promise((resolve, reject) => {
    const last = streams[streams.length - 1];
    if (last && typeof last === "object" && !last.pipe && !last.getReader && !last.getWriter && !last[Symbol.asyncIterator]) streams.pop();
    pipeline(...streams, (err) => (err ? reject(err) : resolve()));
  }),
  finished: (stream, opts) => new Promise((resolve, reject) => eos(stream, opts, (err) => (err ? reject(err) : resolve()))),
};
const isReadable = (s) => !!(s && s._readableState && !s._readableState.destroyed && !s._readableState.endEmitted);
Object.assign(Stream, {
  Stream, Readable, Writable, Duplex, Transform, PassThrough,
  pipeline, finished: eos, promises, addAbortSignal: internal.nodeAddAbortSignal,
  isReadable, isErrored: (s) => !!(s && (s._readableState || s._writableState || {}).errored),
  isDisturbed: (s) => !!(s && s._readableState && (s._readableState.dataEmitted || s._readableState.endEmitted)),
  getDefaultHighWaterMark: (objectMode) => (objectMode ? 16 : 64 * 1024),
  setDefaultHighWaterMark: () => {},
  duplexPair: () => {
    const a = new Duplex({ read() {}, write(c, e, cb) { b.push(c); cb(); }, final(cb) { b.push(null); cb(); } });
    const b = new Duplex({ read() {}, write(c, e, cb) { a.push(c); cb(); }, final(cb) { a.push(null); cb(); } });
    return [a, b];
  },
});
pipeline[Symbol.for("nodejs.util.promisify.custom")] = promises.pipeline;
eos[Symbol.for("nodejs.util.promisify.custom")] = promises.finished;
Stream.default = Stream;
internal["node:stream"] = Stream;
internal.nodeStreamWeb = () => ({
  ReadableStream, WritableStream, TransformStream, ReadableStreamDefaultReader, WritableStreamDefaultWriter,
  ByteLengthQueuingStrategy, CountQueuingStrategy, TextEncoderStream, TextDecoderStream,
  ReadableStreamBYOBReader: global.ReadableStreamBYOBReader, ReadableByteStreamController: global.ReadableByteStreamController,
  ReadableStreamDefaultController: global.ReadableStreamDefaultController, TransformStreamDefaultController: global.TransformStreamDefaultController,
  WritableStreamDefaultController: global.WritableStreamDefaultController,
  CompressionStream: global.CompressionStream, DecompressionStream: global.DecompressionStream,
});
