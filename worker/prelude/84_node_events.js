// node:events: EventEmitter and its helpers.

const kCapture = Symbol("kCapture");
const captureRejectionSymbol = Symbol.for("nodejs.rejection");
const errorMonitor = Symbol("events.errorMonitor");
let defaultMaxListeners = 10;

function EventEmitter(opts) {
  EventEmitter.init.call(this, opts);
}
EventEmitter.prototype._events = undefined;
EventEmitter.prototype._eventsCount = 0;
EventEmitter.prototype._maxListeners = undefined;

EventEmitter.init = function init(opts) {
  if (this._events === undefined || this._events === Object.getPrototypeOf(this)._events) {
    this._events = Object.create(null);
    this._eventsCount = 0;
  }
  this._maxListeners = this._maxListeners || undefined;
  if (opts && opts.captureRejections) {
    if (typeof opts.captureRejections !== "boolean") {
      throw internal.invalidArgType("options.captureRejections", "of type boolean", opts.captureRejections);
    }
    this[kCapture] = true;
  } else {
    this[kCapture] = EventEmitter.prototype[kCapture];
  }
};
EventEmitter.prototype[kCapture] = false;

const checkListener = (l) => internal.validateFunction(l, "listener");

const getMax = (that) => (that._maxListeners === undefined ? defaultMaxListeners : that._maxListeners);

EventEmitter.prototype.setMaxListeners = function setMaxListeners(n) {
  if (typeof n !== "number" || n < 0 || Number.isNaN(n)) {
    throw internal.outOfRange("n", "a non-negative number", n);
  }
  this._maxListeners = n;
  return this;
};
EventEmitter.prototype.getMaxListeners = function getMaxListeners() { return getMax(this); };

function addCatch(that, promise, type, args) {
  if (!that[kCapture]) return;
  try {
    const then = promise.then;
    if (typeof then === "function") {
      then.call(promise, undefined, (err) => internal.nextTick(emitUnhandledRejectionOrErr, that, err, type, args));
    }
  } catch (err) {
    that.emit("error", err);
  }
}
function emitUnhandledRejectionOrErr(ee, err, type, args) {
  if (typeof ee[captureRejectionSymbol] === "function") {
    ee[captureRejectionSymbol](err, type, ...args);
  } else {
    const prev = ee[kCapture];
    try {
      ee[kCapture] = false;
      ee.emit("error", err);
    } finally {
      ee[kCapture] = prev;
    }
  }
}

EventEmitter.prototype.emit = function emit(type, ...args) {
  let doError = type === "error";
  const events = this._events;
  if (events !== undefined) {
    if (doError && events[errorMonitor] !== undefined) this.emit(errorMonitor, ...args);
    doError = doError && events.error === undefined;
  } else if (!doError) {
    return false;
  }
  if (doError) {
    const er = args.length > 0 ? args[0] : undefined;
    if (er instanceof Error) throw er;
    let shown;
    try { shown = internal.nodeInspect ? internal.nodeInspect(er) : String(er); } catch { shown = String(er); }
    const err = internal.nodeError(Error, "ERR_UNHANDLED_ERROR", `Unhandled error. (${shown})`);
    err.context = er;
    throw err;
  }
  const handler = events[type];
  if (handler === undefined) return false;
  if (typeof handler === "function") {
    const result = handler.apply(this, args);
    if (result !== undefined && result !== null) addCatch(this, result, type, args);
  } else {
    const listeners = handler.slice();
    for (let i = 0; i < listeners.length; i++) {
      const result = listeners[i].apply(this, args);
      if (result !== undefined && result !== null) addCatch(this, result, type, args);
    }
  }
  return true;
};

function addListener(target, type, listener, prepend) {
  checkListener(listener);
  let events = target._events;
  if (events === undefined) {
    events = target._events = Object.create(null);
    target._eventsCount = 0;
  } else if (events.newListener !== undefined) {
    target.emit("newListener", type, listener.listener ? listener.listener : listener);
    events = target._events;
  }
  let existing = events[type];
  if (existing === undefined) {
    events[type] = listener;
    ++target._eventsCount;
  } else {
    if (typeof existing === "function") {
      existing = events[type] = prepend ? [listener, existing] : [existing, listener];
    } else if (prepend) {
      existing.unshift(listener);
    } else {
      existing.push(listener);
    }
    const m = getMax(target);
    if (m > 0 && existing.length > m && !existing.warned) {
      existing.warned = true;
      const name = typeof type === "symbol" ? type.toString() : type;
      console.warn(`MaxListenersExceededWarning: Possible EventEmitter memory leak detected. ${existing.length} ${name} listeners added to ${target.constructor.name}. MaxListeners is ${m}. Use emitter.setMaxListeners() to increase limit`);
    }
  }
  return target;
}

EventEmitter.prototype.addListener = function addListener_(type, listener) { return addListener(this, type, listener, false); };
EventEmitter.prototype.on = EventEmitter.prototype.addListener;
EventEmitter.prototype.prependListener = function prependListener(type, listener) { return addListener(this, type, listener, true); };

function onceWrapper(...args) {
  if (!this.fired) {
    this.target.removeListener(this.type, this.wrapFn);
    this.fired = true;
    return this.listener.apply(this.target, args);
  }
}
function onceWrap(target, type, listener) {
  const state = { fired: false, wrapFn: undefined, target, type, listener };
  const wrapped = onceWrapper.bind(state);
  wrapped.listener = listener;
  state.wrapFn = wrapped;
  return wrapped;
}
EventEmitter.prototype.once = function once(type, listener) {
  checkListener(listener);
  this.on(type, onceWrap(this, type, listener));
  return this;
};
EventEmitter.prototype.prependOnceListener = function prependOnceListener(type, listener) {
  checkListener(listener);
  this.prependListener(type, onceWrap(this, type, listener));
  return this;
};

EventEmitter.prototype.removeListener = function removeListener(type, listener) {
  checkListener(listener);
  const events = this._events;
  if (events === undefined) return this;
  const list = events[type];
  if (list === undefined) return this;
  if (list === listener || list.listener === listener) {
    this._eventsCount -= 1;
    if (this._eventsCount === 0) this._events = Object.create(null);
    else delete events[type];
    if (events.removeListener !== undefined) this.emit("removeListener", type, list.listener || listener);
  } else if (typeof list !== "function") {
    let position = -1;
    for (let i = list.length - 1; i >= 0; i--) {
      if (list[i] === listener || list[i].listener === listener) {
        position = i;
        break;
      }
    }
    if (position < 0) return this;
    const removed = list[position];
    list.splice(position, 1);
    if (list.length === 1) events[type] = list[0];
    if (events.removeListener !== undefined) this.emit("removeListener", type, removed.listener || listener);
  }
  return this;
};
EventEmitter.prototype.off = EventEmitter.prototype.removeListener;

EventEmitter.prototype.removeAllListeners = function removeAllListeners(type) {
  const events = this._events;
  if (events === undefined) return this;
  if (events.removeListener === undefined) {
    if (arguments.length === 0) {
      this._events = Object.create(null);
      this._eventsCount = 0;
    } else if (events[type] !== undefined) {
      if (--this._eventsCount === 0) this._events = Object.create(null);
      else delete events[type];
    }
    return this;
  }
  if (arguments.length === 0) {
    for (const key of Reflect.ownKeys(events)) {
      if (key === "removeListener") continue;
      this.removeAllListeners(key);
    }
    this.removeAllListeners("removeListener");
    this._events = Object.create(null);
    this._eventsCount = 0;
    return this;
  }
  const listeners = events[type];
  if (typeof listeners === "function") {
    this.removeListener(type, listeners);
  } else if (listeners !== undefined) {
    for (let i = listeners.length - 1; i >= 0; i--) this.removeListener(type, listeners[i]);
  }
  return this;
};

function listenersOf(target, type, unwrap) {
  const events = target._events;
  if (events === undefined) return [];
  const l = events[type];
  if (l === undefined) return [];
  if (typeof l === "function") return unwrap ? [l.listener || l] : [l];
  return unwrap ? l.map((f) => f.listener || f) : l.slice();
}
EventEmitter.prototype.listeners = function listeners(type) { return listenersOf(this, type, true); };
EventEmitter.prototype.rawListeners = function rawListeners(type) { return listenersOf(this, type, false); };
function listenerCount(type, listener) {
  const events = this._events;
  if (events !== undefined) {
    const l = events[type];
    if (typeof l === "function") return listener == null || l === listener || l.listener === listener ? 1 : 0;
    if (l !== undefined) {
      if (listener == null) return l.length;
      return l.filter((f) => f === listener || f.listener === listener).length;
    }
  }
  return 0;
}
EventEmitter.prototype.listenerCount = listenerCount;
EventEmitter.prototype.eventNames = function eventNames() {
  return this._eventsCount > 0 ? Reflect.ownKeys(this._events) : [];
};

// ---- module functions -------------------------------------------------------

const isEventTarget = (t) => t && typeof t.addEventListener === "function" && typeof t.on !== "function";

function once(emitter, name, options = {}) {
  const signal = options && options.signal;
  if (signal && signal.aborted) {
    return Promise.reject(abortError(signal.reason));
  }
  return new Promise((resolve, reject) => {
    if (isEventTarget(emitter)) {
      const listener = (...args) => { cleanup(); resolve(args); };
      const cleanup = () => {
        emitter.removeEventListener(name, listener);
        if (signal) signal.removeEventListener("abort", onAbort);
      };
      const onAbort = () => { cleanup(); reject(abortError(signal.reason)); };
      emitter.addEventListener(name, listener, { once: true });
      if (signal) signal.addEventListener("abort", onAbort, { once: true });
      return;
    }
    const errorListener = (err) => { cleanup(); reject(err); };
    const resolver = (...args) => { cleanup(); resolve(args); };
    const onAbort = () => { cleanup(); reject(abortError(signal.reason)); };
    const cleanup = () => {
      emitter.removeListener(name, resolver);
      if (name !== "error") emitter.removeListener("error", errorListener);
      if (signal) signal.removeEventListener("abort", onAbort);
    };
    emitter.on(name, resolver);
    if (name !== "error") emitter.on("error", errorListener);
    if (signal) signal.addEventListener("abort", onAbort, { once: true });
  });
}

const abortError = (cause) => {
  const e = internal.nodeError(Error, "ABORT_ERR", "The operation was aborted");
  e.name = "AbortError";
  if (cause !== undefined) e.cause = cause;
  return e;
};
internal.nodeAbortError = abortError;

function on(emitter, event, options = {}) {
  const signal = options && options.signal;
  const queue = [];
  const waiting = [];
  let error = null;
  let finished = false;
  const handler = (...args) => {
    if (waiting.length) waiting.shift().resolve({ value: args, done: false });
    else queue.push(args);
  };
  const errorHandler = (err) => {
    finished = true;
    if (waiting.length) waiting.shift().reject(err);
    else error = err;
    iterator.return();
  };
  const cleanup = () => {
    emitter.removeListener(event, handler);
    emitter.removeListener("error", errorHandler);
  };
  const iterator = {
    next() {
      if (queue.length) return Promise.resolve({ value: queue.shift(), done: false });
      if (error) { const p = Promise.reject(error); error = null; return p; }
      if (finished) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return() {
      cleanup();
      finished = true;
      for (const w of waiting.splice(0)) w.resolve({ value: undefined, done: true });
      return Promise.resolve({ value: undefined, done: true });
    },
    throw(err) {
      error = err;
      cleanup();
      return Promise.reject(err);
    },
    [Symbol.asyncIterator]() { return this; },
  };
  emitter.on(event, handler);
  if (event !== "error") emitter.on("error", errorHandler);
  if (signal) signal.addEventListener("abort", () => errorHandler(abortError(signal.reason)), { once: true });
  return iterator;
}

function getEventListeners(target, type) {
  if (typeof target.listeners === "function") return target.listeners(type);
  return [];
}
function setMaxListeners(n = defaultMaxListeners, ...targets) {
  if (targets.length === 0) defaultMaxListeners = n;
  for (const t of targets) if (typeof t.setMaxListeners === "function") t.setMaxListeners(n);
}
function getMaxListeners(target) {
  return typeof target.getMaxListeners === "function" ? target.getMaxListeners() : defaultMaxListeners;
}
function addAbortListener(signal, listener) {
  if (signal === undefined) throw internal.invalidArgType("signal", "an instance of AbortSignal", signal);
  internal.validateFunction(listener, "listener");
  let removed = false;
  if (signal.aborted) {
    queueMicrotask(() => listener());
  } else {
    signal.addEventListener("abort", listener, { once: true });
  }
  return { [Symbol.dispose || Symbol.for("Symbol.dispose")]() { if (!removed) { removed = true; signal.removeEventListener("abort", listener); } } };
}

class EventEmitterAsyncResource extends EventEmitter {
  constructor(options) {
    super(options);
    this.asyncResource = { runInAsyncScope: (fn, thisArg, ...args) => fn.apply(thisArg, args) };
  }
  emitDestroy() {}
  get asyncId() { return 0; }
  get triggerAsyncId() { return 0; }
}

Object.defineProperty(EventEmitter, "defaultMaxListeners", {
  enumerable: true,
  get() { return defaultMaxListeners; },
  set(v) {
    if (typeof v !== "number" || v < 0 || Number.isNaN(v)) throw internal.outOfRange("defaultMaxListeners", "a non-negative number", v);
    defaultMaxListeners = v;
  },
});
Object.defineProperty(EventEmitter, "captureRejections", {
  enumerable: true,
  get() { return EventEmitter.prototype[kCapture]; },
  set(v) { EventEmitter.prototype[kCapture] = !!v; },
});
Object.assign(EventEmitter, {
  EventEmitter, EventEmitterAsyncResource, once, on, getEventListeners, setMaxListeners, getMaxListeners,
  addAbortListener, errorMonitor, captureRejectionSymbol, usingDomains: false,
  listenerCount: (emitter, type) => (typeof emitter.listenerCount === "function" ? emitter.listenerCount(type) : listenerCount.call(emitter, type)),
});
EventEmitter.default = EventEmitter;
internal["node:events"] = EventEmitter;
