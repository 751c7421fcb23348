// WritableStream with its default writer and controller.

const { kCreate, sizeOf, handled } = internal;
const kWS = Symbol("writable");
const kWriter = Symbol("writer");
const withResolvers = () => Promise.withResolvers();


class WritableStream {
  constructor(sink = undefined, strategy = undefined) {
    sink = sink || {};
    if (sink.type !== undefined) throw new RangeError("WritableStream: invalid type");
    const hwm = strategy && strategy.highWaterMark !== undefined ? Number(strategy.highWaterMark) : 1;
    const st = {
      state: "writable", storedError: undefined, writer: null, sink, queue: [], inFlight: false,
      closeRequest: null, hwm, size: sizeOf(strategy), queueSize: 0, started: false, controller: null,
      abortController: new AbortController(),
    };
    internal.define(this, kWS, st);
    st.controller = new WritableStreamDefaultController(kCreate, this);
    const start = sink.start ? sink.start.call(sink, st.controller) : undefined;
    // A sink whose start() returns no promise is started at once: workerd
    // hands the first write to it synchronously.
    if (start === undefined || start === null || typeof start.then !== "function") st.started = true;
    Promise.resolve(start).then(() => {
      st.started = true;
      advance(this);
    }, (e) => errorWritable(this, e));
  }
  get locked() { return this[kWS].writer !== null; }
  getWriter() { return new WritableStreamDefaultWriter(this); }
  abort(reason = undefined) {
    if (this.locked) return Promise.reject(new TypeError("This WritableStream is currently locked to a writer."));
    return abortWritable(this, reason);
  }
  close() {
    if (this.locked) return Promise.reject(new TypeError("This WritableStream is currently locked to a writer."));
    return closeWritable(this);
  }
}

class WritableStreamDefaultController {
  #stream;
  constructor(key, stream) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#stream = stream;
  }
  get signal() { return this.#stream[kWS].abortController.signal; }
  error(e = undefined) {
    if (this.#stream[kWS].state === "writable") errorWritable(this.#stream, e);
  }
}

class WritableStreamDefaultWriter {
  constructor(stream) {
    if (!(stream instanceof WritableStream)) throw new TypeError("WritableStreamDefaultWriter: argument must be a WritableStream");
    const st = stream[kWS];
    if (st.writer) throw new TypeError("This WritableStream is currently locked to a writer.");
    const w = { stream, closed: withResolvers(), ready: withResolvers() };
    internal.define(this, kWriter, w);
    st.writer = this;
    if (st.state === "errored") {
      w.closed.reject(st.storedError);
      w.ready.reject(st.storedError);
      handled(w.closed.promise);
      handled(w.ready.promise);
    } else {
      if (st.state === "closed") w.closed.resolve();
      w.readyResolved = !backpressure(st) || st.closeRequest !== null;
      if (w.readyResolved) w.ready.resolve();
    }
  }
  get closed() { return this[kWriter].closed.promise; }
  get ready() { return this[kWriter].ready.promise; }
  get desiredSize() {
    const w = this[kWriter];
    if (!w.stream) throw new TypeError("This WritableStream writer has been released.");
    const st = w.stream[kWS];
    if (st.state === "errored") return null;
    if (st.state === "closed") return 0;
    return st.hwm - st.queueSize;
  }
  write(chunk = undefined) {
    const w = this[kWriter];
    if (!w.stream) return Promise.reject(new TypeError("This WritableStream writer has been released."));
    const st = w.stream[kWS];
    if (st.state === "errored") return Promise.reject(st.storedError);
    if (st.closeRequest || st.state === "closed") return Promise.reject(new TypeError("This WritableStream has been closed."));
    const d = withResolvers();
    let size;
    try { size = st.size(chunk); } catch (e) { errorWritable(w.stream, e); return Promise.reject(e); }
    st.queue.push({ chunk, size, d });
    st.queueSize += size;
    updateReady(st);
    advance(w.stream);
    return d.promise;
  }
  close() {
    const w = this[kWriter];
    if (!w.stream) return Promise.reject(new TypeError("This WritableStream writer has been released."));
    return closeWritable(w.stream);
  }
  abort(reason = undefined) {
    const w = this[kWriter];
    if (!w.stream) return Promise.reject(new TypeError("This WritableStream writer has been released."));
    return abortWritable(w.stream, reason);
  }
  releaseLock() {
    const w = this[kWriter];
    if (!w.stream) return;
    const err = new TypeError("This WritableStream writer has been released.");
    w.ready = withResolvers();
    w.ready.reject(err);
    handled(w.ready.promise);
    if (w.stream[kWS].state === "writable") {
      w.closed.reject(err);
    } else {
      w.closed = withResolvers();
      w.closed.reject(err);
    }
    handled(w.closed.promise);
    w.stream[kWS].writer = null;
    w.stream = null;
  }
}

const backpressure = (st) => st.queueSize >= st.hwm && st.hwm >= 0 && st.queueSize > 0;

function updateReady(st) {
  if (!st.writer) return;
  const w = st.writer[kWriter];
  if (backpressure(st)) {
    if (w.readyResolved !== false) {
      w.ready = withResolvers();
      w.readyResolved = false;
    }
  } else if (w.readyResolved === false) {
    w.readyResolved = true;
    w.ready.resolve();
  }
}

function advance(stream) {
  const st = stream[kWS];
  if (!st.started || st.inFlight || st.state !== "writable") return;
  if (st.queue.length) {
    const { chunk, size, d } = st.queue[0];
    st.inFlight = true;
    let p;
    try {
      p = Promise.resolve(st.sink.write ? st.sink.write.call(st.sink, chunk, st.controller) : undefined);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(() => {
      st.inFlight = false;
      st.queue.shift();
      st.queueSize -= size;
      d.resolve();
      updateReady(st);
      advance(stream);
    }, (e) => {
      st.inFlight = false;
      d.reject(e);
      errorWritable(stream, e);
    });
    return;
  }
  if (st.closeRequest) {
    st.inFlight = true;
    let p;
    try {
      p = Promise.resolve(st.sink.close ? st.sink.close.call(st.sink) : undefined);
    } catch (e) {
      p = Promise.reject(e);
    }
    p.then(() => {
      st.inFlight = false;
      st.state = "closed";
      st.closeRequest.resolve();
      if (st.writer) st.writer[kWriter].closed.resolve();
    }, (e) => {
      st.inFlight = false;
      st.closeRequest.reject(e);
      errorWritable(stream, e);
    });
  }
}

function closeWritable(stream) {
  const st = stream[kWS];
  if (st.state === "closed" || st.closeRequest) return Promise.reject(new TypeError("This WritableStream has been closed."));
  if (st.state === "errored") return Promise.reject(st.storedError);
  st.closeRequest = withResolvers();
  if (st.writer) {
    const w = st.writer[kWriter];
    if (w.readyResolved === false) { w.readyResolved = true; w.ready.resolve(); }
  }
  advance(stream);
  return st.closeRequest.promise;
}

function errorWritable(stream, e) {
  const st = stream[kWS];
  if (st.state !== "writable") return;
  st.state = "errored";
  st.storedError = e;
  for (const { d } of st.queue.splice(st.inFlight ? 1 : 0)) {
    handled(d.promise);
    d.reject(e);
  }
  if (st.closeRequest) { handled(st.closeRequest.promise); st.closeRequest.reject(e); }
  if (st.writer) {
    const w = st.writer[kWriter];
    w.closed.reject(e);
    handled(w.closed.promise);
    if (w.readyResolved !== false) w.ready = withResolvers();
    w.readyResolved = true;
    w.ready.reject(e);
    handled(w.ready.promise);
  }
}

function abortWritable(stream, reason) {
  const st = stream[kWS];
  if (st.state === "closed" || st.state === "errored") return Promise.resolve();
  internal.signalAbort(st.abortController.signal, reason);
  errorWritable(stream, reason);
  let p;
  try {
    p = Promise.resolve(st.sink.abort ? st.sink.abort.call(st.sink, reason) : undefined);
  } catch (e) {
    p = Promise.reject(e);
  }
  return p.then(() => undefined);
}

internal.errorWritable = errorWritable;
internal.expose("WritableStream", WritableStream);
internal.expose("WritableStreamDefaultWriter", WritableStreamDefaultWriter);
internal.expose("WritableStreamDefaultController", WritableStreamDefaultController);
