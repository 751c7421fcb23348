// Event, EventTarget, AbortController and AbortSignal.

const { define, expose } = internal;

// ---- Event and EventTarget -------------------------------------------------

const kEvent = Symbol("event");
class Event {
  // (...args) rather than `arguments` (see URL); Event.length is set to 1
  // below, as (type, init = undefined) would have it.
  constructor(...args) {
    if (args.length === 0) throw new TypeError("Failed to construct 'Event': 1 argument required, but only 0 present.");
    const type = args[0];
    const init = args[1];
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
  // workerd: preventDefault() during a dispatch makes dispatchEvent()
  // return false even for an event that is not cancelable.
  preventDefault() {
    const st = this[kEvent];
    if (st.cancelable) st.defaultPrevented = true;
    if (st.phase !== 0) st.preventCalled = true;
  }
  stopPropagation() { this[kEvent].stop = true; }
  stopImmediatePropagation() { this[kEvent].stop = true; this[kEvent].stopImmediate = true; }
}
Object.defineProperty(Event, "length", { value: 1 });
Object.assign(Event, { NONE: 0, CAPTURING_PHASE: 1, AT_TARGET: 2, BUBBLING_PHASE: 3 });
class CustomEvent extends Event {
  #detail;
  constructor(type, init = undefined) {
    super(type, init);
    this.#detail = init && init.detail !== undefined ? init.detail : null;
  }
  get detail() { return this.#detail; }
}
Object.defineProperty(Event.prototype, Symbol.toStringTag, { value: "Event", configurable: true });
Object.defineProperty(CustomEvent.prototype, Symbol.toStringTag, { value: "CustomEvent", configurable: true });
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
    if (st.phase !== 0) throw new DOMException("The event is already being dispatched.", "InvalidStateError");
    st.target = this;
    st.currentTarget = this;
    st.preventCalled = false;
    st.phase = 2;
    // workerd runs an on<type> handler property before addEventListener
    // listeners.
    // A listener's exception leaves dispatchEvent, as in workerd.
    try {
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
    } finally {
      st.currentTarget = null;
      st.phase = 0;
    }
    return !st.defaultPrevented && !st.preventCalled;
  }
}
function invokeListener(listener, target, event) {
  if (typeof listener === "function") listener.call(target, event);
  else if (listener && typeof listener.handleEvent === "function") listener.handleEvent(event);
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

const { kCreate } = internal;
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
