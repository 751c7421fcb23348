// Built-ins goja lacks, DOMException, events, abort signals, timers,
// console and performance.

const define = (obj, name, value) =>
  Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });
internal.define = define;
internal.expose = (name, value) => define(global, name, value);
const expose = internal.expose;

// ---- missing language built-ins -------------------------------------------

// esbuild's helpers look symbols up as Symbol[name] and fall back to
// Symbol.for("Symbol." + name); using the same registered symbols keeps
// bundled for-await loops and `using` declarations working.
for (const name of ["asyncIterator", "dispose", "asyncDispose"]) {
  if (!Symbol[name]) Object.defineProperty(Symbol, name, { value: Symbol.for("Symbol." + name) });
}

if (!Promise.withResolvers) {
  define(Promise, "withResolvers", function withResolvers() {
    let resolve, reject;
    const promise = new this((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  });
}
if (!Promise.try) {
  define(Promise, "try", function (fn, ...args) {
    return new this((resolve) => resolve(fn(...args)));
  });
}
const groupBy = (items, keyFn, make, add) => {
  const out = make();
  let i = 0;
  for (const item of items) add(out, keyFn(item, i++), item);
  return out;
};
if (!Object.groupBy) {
  define(Object, "groupBy", (items, keyFn) =>
    groupBy(items, keyFn, () => Object.create(null), (o, k, v) => {
      k = typeof k === "symbol" ? k : String(k);
      (o[k] || (o[k] = [])).push(v);
    }));
}
if (!Map.groupBy) {
  define(Map, "groupBy", (items, keyFn) =>
    groupBy(items, keyFn, () => new Map(), (m, k, v) => {
      if (!m.has(k)) m.set(k, []);
      m.get(k).push(v);
    }));
}
if (!Array.fromAsync) {
  define(Array, "fromAsync", async function fromAsync(items, mapFn, thisArg) {
    const out = [];
    if (items[Symbol.asyncIterator]) {
      const it = items[Symbol.asyncIterator]();
      for (;;) {
        const r = await it.next();
        if (r.done) break;
        out.push(mapFn ? await mapFn.call(thisArg, r.value, out.length) : r.value);
      }
    } else {
      for (const v of items) out.push(mapFn ? await mapFn.call(thisArg, await v, out.length) : await v);
    }
    return out;
  });
}
if (!Error.captureStackTrace) {
  define(Error, "captureStackTrace", function captureStackTrace(target) {
    if (target === null || typeof target !== "object") throw new TypeError("Invalid argument");
    const lines = String(new Error().stack || "").split("\n").slice(2);
    const head = target.name !== undefined ? `${target.name}: ${target.message}` : "Error";
    define(target, "stack", [head, ...lines].join("\n"));
  });
}
if (Error.stackTraceLimit === undefined) Error.stackTraceLimit = 10;
if (!String.prototype.isWellFormed) {
  define(String.prototype, "isWellFormed", function isWellFormed() {
    return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(String(this));
  });
  define(String.prototype, "toWellFormed", function toWellFormed() {
    return String(this).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
  });
}
if (typeof WeakRef === "undefined") {
  // Without engine support a WeakRef holds its target strongly: deref()
  // always succeeds, which is an allowed outcome for code using WeakRef.
  class WeakRef {
    #target;
    constructor(target) {
      if (target === null || (typeof target !== "object" && typeof target !== "function")) {
        throw new TypeError("WeakRef: target must be an object");
      }
      this.#target = target;
    }
    deref() { return this.#target; }
  }
  expose("WeakRef", WeakRef);
}
if (typeof FinalizationRegistry === "undefined") {
  // Cleanup callbacks never run: goja cannot observe collection.
  class FinalizationRegistry {
    constructor(cleanup) {
      if (typeof cleanup !== "function") throw new TypeError("FinalizationRegistry: cleanup must be callable");
    }
    register() {}
    unregister() { return false; }
  }
  expose("FinalizationRegistry", FinalizationRegistry);
}
// goja's %TypedArray%.from rejects a string source; the spec iterates it
// (Uint8Array.from(atob(s), (c) => c.charCodeAt(0)) is a common idiom).
{
  const TypedArray = Object.getPrototypeOf(Uint8Array);
  const originalFrom = TypedArray.from;
  define(TypedArray, "from", function from(source, ...rest) {
    return originalFrom.call(this, typeof source === "string" ? Array.from(source) : source, ...rest);
  });
}
if (!("detached" in ArrayBuffer.prototype)) {
  Object.defineProperty(ArrayBuffer.prototype, "detached", {
    get() { return native.isDetached(this); }, configurable: true,
  });
}
if (!ArrayBuffer.prototype.transfer) {
  define(ArrayBuffer.prototype, "transfer", function transfer(length) {
    const n = length === undefined ? this.byteLength : Number(length);
    const out = new ArrayBuffer(n);
    new Uint8Array(out).set(new Uint8Array(this, 0, Math.min(n, this.byteLength)));
    native.detach(this);
    return out;
  });
}

// ---- DOMException ----------------------------------------------------------

const legacyCodes = {
  IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
  NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InUseAttributeError: 10,
  InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14,
  InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20,
  URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23, InvalidNodeTypeError: 24, DataCloneError: 25,
};
const kDOMName = Symbol("DOMException.name");
class DOMException extends Error {
  constructor(message = "", options = "Error") {
    super(String(message));
    let name = "Error";
    if (options !== null && typeof options === "object") {
      if (options.name !== undefined) name = String(options.name);
      if ("cause" in options) define(this, "cause", options.cause);
    } else if (options !== undefined) {
      name = String(options);
    }
    define(this, kDOMName, name);
    if (!Object.prototype.hasOwnProperty.call(this, "message")) define(this, "message", "");
  }
  get name() { return this[kDOMName]; }
  get code() { return legacyCodes[this[kDOMName]] || 0; }
}
Object.defineProperty(DOMException.prototype, Symbol.toStringTag, { value: "DOMException", configurable: true });
for (const [name, code] of Object.entries(legacyCodes)) {
  const constName = name.replace(/Error$/, "").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase() + "_ERR";
  Object.defineProperty(DOMException, constName, { value: code, enumerable: true });
  Object.defineProperty(DOMException.prototype, constName, { value: code, enumerable: true });
}
expose("DOMException", DOMException);

// ---- reporting -------------------------------------------------------------

internal.describe = (v) => {
  if (v instanceof Error) return v.stack || `${v.name}: ${v.message}`;
  return internal.inspect ? internal.inspect(v) : String(v);
};
internal.reportError = (e, what = "Uncaught") => {
  native.log("error", `${what} ${internal.describe(e)}`);
};
expose("reportError", function reportError(e) { internal.reportError(e); });

// ---- Event and EventTarget -------------------------------------------------

const kEvent = Symbol("event");
class Event {
  constructor(type, init = undefined) {
    if (arguments.length === 0) throw new TypeError("Failed to construct 'Event': 1 argument required, but only 0 present.");
    const o = init == null ? {} : init;
    this[kEvent] = {
      type: String(type), bubbles: !!o.bubbles, cancelable: !!o.cancelable, composed: !!o.composed,
      defaultPrevented: false, target: null, currentTarget: null, stop: false, stopImmediate: false,
      timeStamp: native.now(), phase: 0,
    };
  }
  get type() { return this[kEvent].type; }
  get bubbles() { return this[kEvent].bubbles; }
  get cancelable() { return this[kEvent].cancelable; }
  get composed() { return this[kEvent].composed; }
  get defaultPrevented() { return this[kEvent].defaultPrevented; }
  get returnValue() { return !this[kEvent].defaultPrevented; }
  get target() { return this[kEvent].target; }
  get srcElement() { return this[kEvent].target; }
  get currentTarget() { return this[kEvent].currentTarget; }
  get eventPhase() { return this[kEvent].phase; }
  get timeStamp() { return this[kEvent].timeStamp; }
  get isTrusted() { return false; }
  get cancelBubble() { return this[kEvent].stop; }
  set cancelBubble(v) { if (v) this[kEvent].stop = true; }
  composedPath() { return this[kEvent].currentTarget ? [this[kEvent].currentTarget] : []; }
  preventDefault() { if (this[kEvent].cancelable) this[kEvent].defaultPrevented = true; }
  stopPropagation() { this[kEvent].stop = true; }
  stopImmediatePropagation() { this[kEvent].stop = true; this[kEvent].stopImmediate = true; }
}
Object.assign(Event, { NONE: 0, CAPTURING_PHASE: 1, AT_TARGET: 2, BUBBLING_PHASE: 3 });
class CustomEvent extends Event {
  #detail;
  constructor(type, init = undefined) {
    super(type, init);
    this.#detail = init && init.detail !== undefined ? init.detail : null;
  }
  get detail() { return this.#detail; }
}
expose("Event", Event);
expose("CustomEvent", CustomEvent);

const kListeners = Symbol("listeners");
const kHandlers = Symbol("handlers");
const listenersOf = (t) => t[kListeners] || (define(t, kListeners, new Map()), t[kListeners]);
class EventTarget {
  addEventListener(type, listener, options = undefined) {
    if (listener == null) return;
    if (typeof listener !== "function" && typeof listener !== "object") {
      throw new TypeError("Failed to execute 'addEventListener' on 'EventTarget': parameter 2 is not of type 'Object'.");
    }
    const o = typeof options === "boolean" ? { capture: options } : options || {};
    const capture = !!o.capture;
    if (o.signal && o.signal.aborted) return;
    const map = listenersOf(this);
    type = String(type);
    const list = map.get(type) || [];
    if (list.some((l) => l.listener === listener && l.capture === capture)) return;
    const entry = { listener, capture, once: !!o.once, removed: false };
    list.push(entry);
    map.set(type, list);
    if (o.signal) o.signal.addEventListener("abort", () => this.removeEventListener(type, listener, { capture }));
  }
  removeEventListener(type, listener, options = undefined) {
    const capture = typeof options === "boolean" ? options : !!(options && options.capture);
    const map = listenersOf(this);
    const list = map.get(String(type));
    if (!list) return;
    const i = list.findIndex((l) => l.listener === listener && l.capture === capture);
    if (i >= 0) {
      list[i].removed = true;
      list.splice(i, 1);
    }
  }
  dispatchEvent(event) {
    if (!(event instanceof Event)) {
      throw new TypeError("Failed to execute 'dispatchEvent' on 'EventTarget': parameter 1 is not of type 'Event'.");
    }
    const st = event[kEvent];
    st.target = this;
    st.currentTarget = this;
    st.phase = 2;
    // workerd runs an on<type> handler property before addEventListener
    // listeners.
    const handler = this[kHandlers] && this[kHandlers][st.type];
    if (typeof handler === "function") invokeListener(handler, this, event);
    const list = listenersOf(this).get(st.type);
    if (list) {
      for (const entry of list.slice()) {
        if (entry.removed) continue;
        if (st.stopImmediate) break;
        if (entry.once) this.removeEventListener(st.type, entry.listener, { capture: entry.capture });
        invokeListener(entry.listener, this, event);
      }
    }
    st.currentTarget = null;
    st.phase = 0;
    return !st.defaultPrevented;
  }
}
function invokeListener(listener, target, event) {
  try {
    if (typeof listener === "function") listener.call(target, event);
    else if (listener && typeof listener.handleEvent === "function") listener.handleEvent(event);
  } catch (e) {
    internal.reportError(e);
  }
}
internal.defineEventHandler = (proto, type) => {
  Object.defineProperty(proto, "on" + type, {
    get() { return (this[kHandlers] && this[kHandlers][type]) || null; },
    set(fn) {
      if (!this[kHandlers]) define(this, kHandlers, {});
      this[kHandlers][type] = typeof fn === "function" ? fn : null;
    },
    configurable: true, enumerable: true,
  });
};
expose("EventTarget", EventTarget);

// ---- AbortController / AbortSignal ----------------------------------------

const kCreate = Symbol("create");
internal.kCreate = kCreate;
const kSignal = Symbol("signal");
class AbortSignal extends EventTarget {
  constructor(key) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    super();
    define(this, kSignal, { aborted: false, reason: undefined, followers: [] });
  }
  get aborted() { return this[kSignal].aborted; }
  get reason() { return this[kSignal].reason; }
  throwIfAborted() {
    if (this[kSignal].aborted) throw this[kSignal].reason;
  }
  static abort(reason = undefined) {
    const s = new AbortSignal(kCreate);
    signalAbort(s, reason);
    return s;
  }
  static timeout(ms) {
    const s = new AbortSignal(kCreate);
    native.setTimer(() => signalAbort(s, new DOMException("The operation was aborted due to timeout", "TimeoutError")), Number(ms), false);
    return s;
  }
  static any(signals) {
    const s = new AbortSignal(kCreate);
    for (const sig of signals) {
      if (!(sig instanceof AbortSignal)) throw new TypeError("AbortSignal.any: every element must be an AbortSignal");
      if (sig.aborted) {
        signalAbort(s, sig.reason);
        return s;
      }
    }
    for (const sig of signals) sig[kSignal].followers.push(s);
    return s;
  }
}
internal.defineEventHandler(AbortSignal.prototype, "abort");
function signalAbort(signal, reason) {
  const st = signal[kSignal];
  if (st.aborted) return;
  st.aborted = true;
  st.reason = reason === undefined ? new DOMException("The operation was aborted", "AbortError") : reason;
  signal.dispatchEvent(new Event("abort"));
  for (const f of st.followers) signalAbort(f, st.reason);
  st.followers = [];
}
internal.newSignal = () => new AbortSignal(kCreate);
internal.signalAbort = signalAbort;
class AbortController {
  #signal = new AbortSignal(kCreate);
  get signal() { return this.#signal; }
  abort(reason = undefined) { signalAbort(this.#signal, reason); }
}
expose("AbortSignal", AbortSignal);
expose("AbortController", AbortController);

// ---- timers and microtasks -------------------------------------------------

expose("setTimeout", function setTimeout(fn, delay = 0, ...args) {
  return native.setTimer(fn, Number(delay), false, args);
});
expose("setInterval", function setInterval(fn, delay = 0, ...args) {
  return native.setTimer(fn, Number(delay), true, args);
});
expose("clearTimeout", function clearTimeout(id) { if (id != null) native.clearTimer(Number(id)); });
expose("clearInterval", function clearInterval(id) { if (id != null) native.clearTimer(Number(id)); });
const resolved = Promise.resolve();
expose("queueMicrotask", function queueMicrotask(fn) {
  if (typeof fn !== "function") {
    throw new TypeError("Failed to execute 'queueMicrotask': parameter 1 is not of type 'Function'.");
  }
  resolved.then(() => {
    try { fn(); } catch (e) { internal.reportError(e); }
  });
});
expose("scheduler", {
  wait(ms, options = undefined) {
    return new Promise((resolve, reject) => {
      const signal = options && options.signal;
      if (signal && signal.aborted) return reject(signal.reason);
      const id = native.setTimer(resolve, Number(ms), false);
      if (signal) signal.addEventListener("abort", () => { native.clearTimer(id); reject(signal.reason); });
    });
  },
});

// ---- performance, navigator -----------------------------------------------

const timeOrigin = native.timeOrigin();
expose("performance", {
  now: () => native.now(),
  get timeOrigin() { return timeOrigin; },
  toJSON() { return { timeOrigin }; },
});
expose("self", global);
expose("navigator", { userAgent: "Cloudflare-Workers", hardwareConcurrency: 1, language: "en" });
