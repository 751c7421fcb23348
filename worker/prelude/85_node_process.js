// node:process, node:timers, node:async_hooks and node:diagnostics_channel.

// ---- async_hooks ----------------------------------------------------------------
// The current frame is an immutable Map from AsyncLocalStorage to store,
// kept by Go (node.go) and carried by goja's async context tracker into
// promise jobs, and by the loop into timers.

const frame = () => native.alsFrame();
const runIn = (f, fn, thisArg, args) => {
  const prev = frame();
  native.alsEnter(f);
  try {
    return fn.apply(thisArg, args);
  } finally {
    native.alsEnter(prev);
  }
};

class AsyncLocalStorage {
  #enabled = true;
  static bind(fn) { return AsyncResource.bind(fn); }
  static snapshot() {
    const f = frame();
    return function runInAsyncScope(fn, ...args) { return runIn(f, fn, this, args); };
  }
  run(store, fn, ...args) {
    const next = new Map(frame() || undefined);
    next.set(this, store);
    this.#enabled = true;
    return runIn(next, fn, undefined, args);
  }
  exit(fn, ...args) {
    const cur = frame();
    if (!cur || !cur.has(this)) return fn(...args);
    const next = new Map(cur);
    next.delete(this);
    return runIn(next, fn, undefined, args);
  }
  getStore() {
    if (!this.#enabled) return undefined;
    const f = frame();
    return f ? f.get(this) : undefined;
  }
  enterWith() {
    // workerd does not have it either: a store set this way would leak
    // into whatever runs next on the isolate.
    throw new Error("asyncLocalStorage.enterWith() is not implemented");
  }
  disable() {
    this.#enabled = false;
    const f = frame();
    if (f && f.has(this)) {
      const next = new Map(f);
      next.delete(this);
      native.alsEnter(next.size ? next : undefined);
    }
  }
  get name() { return ""; }
}

class AsyncResource {
  #frame;
  #type;
  constructor(type, options = undefined) {
    internal.validateString(type, "type");
    this.#type = type;
    this.#frame = frame();
  }
  static bind(fn, type = undefined, thisArg = undefined) {
    return new AsyncResource(type || fn.name || "bound-anonymous-fn").bind(fn, thisArg);
  }
  runInAsyncScope(fn, thisArg, ...args) { return runIn(this.#frame, fn, thisArg, args); }
  bind(fn, thisArg = undefined) {
    internal.validateFunction(fn, "fn");
    const self = this;
    const bound = function (...args) { return self.runInAsyncScope(fn, thisArg === undefined ? this : thisArg, ...args); };
    Object.defineProperty(bound, "length", { value: fn.length, configurable: true });
    Object.defineProperty(bound, "asyncResource", { value: this, configurable: true, enumerable: true, writable: true });
    return bound;
  }
  emitDestroy() { return this; }
  asyncId() { return 0; }
  triggerAsyncId() { return 0; }
}

internal["node:async_hooks"] = {
  AsyncLocalStorage, AsyncResource,
  createHook: () => ({ enable() { return this; }, disable() { return this; } }),
  executionAsyncId: () => 0,
  triggerAsyncId: () => 0,
  executionAsyncResource: () => ({}),
  asyncWrapProviders: Object.freeze({ __proto__: null }),
};

// ---- timers -------------------------------------------------------------------------

const kId = Symbol("timerId");
class Timeout {
  constructor(fn, delay, args, repeat) {
    this[kId] = native.setTimer(fn, delay, repeat, args);
    this._fn = fn; this._delay = delay; this._args = args; this._repeat = repeat;
  }
  ref() { return this; }
  unref() { return this; }
  hasRef() { return true; }
  refresh() {
    native.clearTimer(this[kId]);
    this[kId] = native.setTimer(this._fn, this._delay, this._repeat, this._args);
    return this;
  }
  close() { native.clearTimer(this[kId]); return this; }
  [Symbol.toPrimitive]() { return this[kId]; }
}
class Immediate {
  constructor(fn, args) { this[kId] = native.setTimer(fn, 0, false, args); }
  ref() { return this; }
  unref() { return this; }
  hasRef() { return true; }
}
const clear = (t) => {
  if (t == null) return;
  native.clearTimer(typeof t === "object" ? t[kId] : Number(t));
};
const abortErr = (signal) => internal.nodeAbortError(signal.reason);
const delayed = (ms, value, options = {}) => new Promise((resolve, reject) => {
  const signal = options && options.signal;
  if (signal && signal.aborted) return reject(abortErr(signal));
  const id = native.setTimer(() => resolve(value), Number(ms) || 0, false, []);
  if (signal) signal.addEventListener("abort", () => { native.clearTimer(id); reject(abortErr(signal)); }, { once: true });
});
const timers = {
  setTimeout(fn, delay = 0, ...args) { internal.validateFunction(fn, "callback"); return new Timeout(fn, Number(delay) || 0, args, false); },
  setInterval(fn, delay = 0, ...args) { internal.validateFunction(fn, "callback"); return new Timeout(fn, Number(delay) || 0, args, true); },
  setImmediate(fn, ...args) { internal.validateFunction(fn, "callback"); return new Immediate(fn, args); },
  clearTimeout: clear, clearInterval: clear, clearImmediate: clear,
  promises: {
    setTimeout: delayed,
    setImmediate: (value, options) => delayed(0, value, options),
    setInterval(ms, value, options = {}) {
      // goja has no async generators: the iterator by hand.
      let done = false;
      return {
        next: () => (done ? Promise.resolve({ value: undefined, done: true })
          : delayed(ms, value, options).then((v) => ({ value: v, done: false }))),
        return: () => { done = true; return Promise.resolve({ value: undefined, done: true }); },
        [Symbol.asyncIterator]() { return this; },
      };
    },
    scheduler: {
      wait: (ms, options) => delayed(ms, undefined, options),
      yield: () => delayed(0),
    },
  },
};
internal["node:timers"] = timers;

// ---- process ------------------------------------------------------------------------

const makeProcess = () => {
  const EventEmitter = internal["node:events"];
  const p = new EventEmitter();
  const env = {};
  const pairs = internal.nodeEnvPairs();
  for (let i = 0; i + 1 < pairs.length; i += 2) env[pairs[i]] = pairs[i + 1];
  const start = native.now();
  const write = (level) => ({
    write(chunk, encoding, cb) {
      const s = typeof chunk === "string" ? chunk : internal.utf8Decode(chunk);
      native.log(level, s.replace(/\n$/, ""));
      if (typeof encoding === "function") encoding();
      else if (typeof cb === "function") cb();
      return true;
    },
    isTTY: false,
    fd: level === "info" ? 1 : 2,
  });
  const hrtime = (prev) => {
    const t = native.now();
    let s = Math.floor(t / 1000), ns = Math.round((t % 1000) * 1e6);
    if (prev) {
      s -= prev[0]; ns -= prev[1];
      if (ns < 0) { s--; ns += 1e9; }
    }
    return [s, ns];
  };
  hrtime.bigint = () => BigInt(Math.round(native.now() * 1e6));
  const notSupported = (name) => () => {
    throw internal.nodeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", `The ${name} method is not implemented`);
  };
  Object.assign(p, {
    title: "workerd", version: "v22.19.0", versions: { node: "22.19.0" },
    arch: "x64", platform: "linux", release: { name: "node" },
    argv: ["workerd"], argv0: "workerd", execArgv: [], execPath: "", pid: 1, ppid: 0,
    env, exitCode: undefined, features: {}, config: {},
    stdout: write("info"), stderr: write("error"), stdin: undefined,
    nextTick: internal.nextTick,
    cwd: () => "/bundle",
    chdir: notSupported("process.chdir()"),
    umask: () => 0o22,
    getuid: () => 0, getgid: () => 0, geteuid: () => 0, getegid: () => 0, getgroups: () => [],
    hrtime,
    uptime: () => (native.now() - start) / 1000,
    memoryUsage: Object.assign(() => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }), { rss: () => 0 }),
    cpuUsage: () => ({ user: 0, system: 0 }),
    resourceUsage: () => ({}),
    emitWarning(warning, type, code) {
      const name = typeof type === "string" ? type : (type && type.type) || (warning && warning.name) || "Warning";
      console.warn(`${name}: ${warning instanceof Error ? warning.message : warning}`);
    },
    exit(code) {
      // workerd cannot end the process either; the request's code stops.
      throw internal.nodeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", `process.exit(${code === undefined ? "" : code}) is not supported by Workers`);
    },
    abort: notSupported("process.abort()"),
    kill: notSupported("process.kill()"),
    binding: notSupported("process.binding()"),
    getBuiltinModule: (id) => {
      id = String(id);
      const name = id.startsWith("node:") ? id.slice(5) : id;
      return internal.nodeRequire(name);
    },
    hasUncaughtExceptionCaptureCallback: () => false,
    setUncaughtExceptionCaptureCallback: () => {},
    allowedNodeEnvironmentFlags: new Set(),
    noDeprecation: false, throwDeprecation: false, traceDeprecation: false,
  });
  return p;
};
let processObject;
Object.defineProperty(internal, "node:process", {
  configurable: true, enumerable: true,
  get() { return processObject || (processObject = makeProcess()); },
});

// ---- diagnostics_channel ------------------------------------------------------------

const channels = new Map();
class Channel {
  constructor(name) {
    this.name = name;
    this._subscribers = [];
    this._stores = new Map();
  }
  // A method, not Node's getter: what workerd has.
  hasSubscribers() { return this._subscribers.length > 0 || this._stores.size > 0; }
  subscribe(fn) { internal.validateFunction(fn, "subscription"); this._subscribers.push(fn); }
  unsubscribe(fn) {
    const i = this._subscribers.indexOf(fn);
    if (i < 0) return false;
    this._subscribers.splice(i, 1);
    return true;
  }
  publish(message) {
    for (const fn of this._subscribers.slice()) {
      try { fn(message, this.name); } catch (e) { internal.nextTick(() => { throw e; }); }
    }
  }
  bindStore(store, transform) { this._stores.set(store, transform); }
  unbindStore(store) { return this._stores.delete(store); }
  runStores(data, fn, thisArg, ...args) {
    let run = () => {
      this.publish(data);
      return fn.apply(thisArg, args);
    };
    for (const [store, transform] of this._stores) {
      const inner = run;
      run = () => store.run(transform ? transform(data) : data, inner);
    }
    return run();
  }
}
const channel = (name) => {
  if (typeof name !== "string" && typeof name !== "symbol") throw internal.invalidArgType("channel", "of type string or symbol", name);
  let c = channels.get(name);
  if (!c) channels.set(name, (c = new Channel(name)));
  return c;
};
const tracingChannel = (nameOrChannels) => {
  const names = ["start", "end", "asyncStart", "asyncEnd", "error"];
  const tc = {};
  for (const n of names) tc[n] = typeof nameOrChannels === "string" ? channel(`tracing:${nameOrChannels}:${n}`) : nameOrChannels[n];
  Object.assign(tc, {
    get hasSubscribers() { return names.some((n) => tc[n].hasSubscribers()); },
    subscribe(h) { for (const n of names) if (h[n]) tc[n].subscribe(h[n]); },
    unsubscribe(h) { let ok = true; for (const n of names) if (h[n]) ok = tc[n].unsubscribe(h[n]) && ok; return ok; },
    traceSync(fn, context = {}, thisArg, ...args) {
      return tc.start.runStores(context, () => {
        try {
          context.result = fn.apply(thisArg, args);
          return context.result;
        } catch (err) {
          context.error = err;
          tc.error.publish(context);
          throw err;
        } finally {
          tc.end.publish(context);
        }
      });
    },
    tracePromise(fn, context = {}, thisArg, ...args) {
      return tc.start.runStores(context, () => {
        try {
          const p = Promise.resolve(fn.apply(thisArg, args));
          return p.then((result) => {
            context.result = result;
            tc.asyncStart.publish(context);
            tc.asyncEnd.publish(context);
            return result;
          }, (err) => {
            context.error = err;
            tc.error.publish(context);
            tc.asyncStart.publish(context);
            tc.asyncEnd.publish(context);
            throw err;
          });
        } catch (err) {
          context.error = err;
          tc.error.publish(context);
          throw err;
        } finally {
          tc.end.publish(context);
        }
      });
    },
    traceCallback(fn, position = -1, context = {}, thisArg, ...args) {
      const i = position < 0 ? args.length + position : position;
      const cb = args[i];
      args[i] = function (err, ...rest) {
        if (err) { context.error = err; tc.error.publish(context); } else context.result = rest[0];
        tc.asyncStart.publish(context);
        try { return cb.call(this, err, ...rest); } finally { tc.asyncEnd.publish(context); }
      };
      return tc.traceSync(fn, context, thisArg, ...args);
    },
  });
  return tc;
};
internal["node:diagnostics_channel"] = {
  Channel, channel, tracingChannel,
  hasSubscribers: (name) => (channels.has(name) ? channels.get(name).hasSubscribers() : false),
  subscribe: (name, fn) => channel(name).subscribe(fn),
  unsubscribe: (name, fn) => channel(name).unsubscribe(fn),
};
