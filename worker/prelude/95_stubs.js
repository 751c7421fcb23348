// Durable Object stubs: their calls go to Go (native.doCall /
// native.doFetch) and on to the object wherever it runs.

const { unsupported, rebuild, idHex, idName } = internal;
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

const nameArg = (id) => idName(id) ?? null;

// Each stub numbers its events in call order (ord, native.doOrderTake)
// so the object receives them in that order (E-order, objects_order.go).
function stubFetch(cls, id, ord, input, init) {
  const n = native.doOrderTake(ord);
  let req;
  try {
    req = input instanceof Request && init === undefined ? input : new Request(input, init);
  } catch (e) {
    native.doOrderSkip(ord, n);
    return Promise.reject(e);
  }
  return sendFetch(cls, id, ord, n, req);
}

async function sendFetch(cls, id, ord, n, req) {
  let body;
  try {
    body = req.body === null ? null : await req.arrayBuffer();
  } catch (e) {
    native.doOrderSkip(ord, n);
    throw e;
  }
  let sent;
  try {
    sent = native.doFetch(cls, idHex(id), nameArg(id), req.method, req.url, req.headers, body, ord, n);
  } catch (e) {
    native.doOrderSkip(ord, n);
    throw e;
  }
  const r = await sent;
  if (!r.ok) throw rebuild(r);
  const resBody = r.stream === undefined ? r.body : internal.goStream(r.stream);
  const ws = r.webSocket === undefined ? null : internal.ws.fromGo(r.webSocket, true, null);
  return internal.makeResponse(r.status, r.statusText, r.headers, resBody, "", false, ws);
}

function stubCall(cls, id, ord, method, args) {
  let p;
  try {
    if (!plainArgs(args)) args = exportArgs(args, 0);
    p = native.doCall(cls, idHex(id), nameArg(id), method, args, ord, id);
  } catch (e) {
    p = Promise.reject(e);
  }
  return pipelined(p);
}

// Special RPC names (96_state.js objectCall): a property read, and calls
// on an RpcTarget or function the object returned.
const kRef = "\0celld-ref";
const kMethodRef = "\0celld-method";
const getName = (prop) => "\0get\0" + prop;
const targetName = (ref, m) => "\0t\0" + ref + "\0" + m;

// member is what stub.prop is, as in workerd: call it to run the method,
// await it to read the property.
function member(call, get) {
  const f = (...args) => call(args);
  f.then = (res, rej) => get().then(res, rej);
  return f;
}

// pipelined is the promise of an RPC result on which methods and
// properties of the (future) result can be used at once:
// stub.counter().increment() (promise pipelining; here the second call
// leaves once the first answered). It stays a native promise (await and
// Promise.all take their fast path); names a promise lacks resolve
// through one shared Proxy prototype.
// The names await and Promise methods read (then, constructor, ...) are
// own properties of pipelineProto, so they are found without the Proxy
// trap below it. It is made on the first call through a stub: an isolate
// that never makes one (most Durable Objects) does not pay for the Proxy
// and Reflect built-ins it needs.
const promiseProto = Promise.prototype;
let pipelineProto = null;
function makePipelineProto() {
  const proto = Object.create(new Proxy(promiseProto, {
    get(t, prop, receiver) {
      if (typeof prop === "symbol" || prop in t) return Reflect.get(t, prop, receiver);
      const p = receiver;
      return member((args) => pipelined(promiseProto.then.call(p, (v) => v[prop](...args))),
        () => promiseProto.then.call(p, (v) => v[prop]));
    },
  }));
  for (const k of Reflect.ownKeys(promiseProto)) {
    Object.defineProperty(proto, k, Object.getOwnPropertyDescriptor(promiseProto, k));
  }
  return proto;
}
function pipelined(p) {
  Object.setPrototypeOf(p, pipelineProto ?? (pipelineProto = makePipelineProto()));
  return p;
}

// importValue turns the references in an RPC result back into stubs
// (native.doCall calls it on a result that is an object).
internal.importValue = importValue;
function importValue(cls, id, ord, v, depth = 0) {
  if (v === null || typeof v !== "object" || depth > 16) return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = importValue(cls, id, ord, v[i], depth + 1);
    return v;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  if (hasOwn(v, kRef)) return targetStub(cls, id, ord, v[kRef], v.kind);
  if (hasOwn(v, kMethodRef)) {
    const m = v[kMethodRef];
    return (...args) => stubCall(cls, id, ord, m, args);
  }
  for (const k of Object.keys(v)) v[k] = importValue(cls, id, ord, v[k], depth + 1);
  return v;
}

// targetStub is the stub of an RpcTarget or function that lives in the
// object's isolate: its calls go back there, through the object's stub.
function targetStub(cls, id, ord, ref, kind) {
  const call = (m, args) => stubCall(cls, id, ord, targetName(ref, m), args);
  const dispose = () => {};
  return new Proxy(function rpcStub() {}, {
    get(t, prop) {
      if (prop === Symbol.dispose) return dispose;
      if (typeof prop === "symbol" || prop === "then") return undefined;
      return member((args) => call(prop, args), () => call("get\0" + prop, []));
    },
    apply(t, self, args) {
      if (kind !== "function") throw new TypeError("This RPC stub is not a function.");
      return call("", args);
    },
    set() { return false; },
  });
}

// A stub is a Proxy: fetch, id and name are its own; any other string
// property is an RPC method of the object. `then` is not, so a stub is not
// mistaken for a promise. The traps are methods of a small handler object
// that holds the stub's class and id.
const connectUnsupported = unsupported("connect() on a Durable Object stub");
class StubHandler {
  constructor(cls, id, ord) {
    this.cls = cls;
    this.id = id;
    this.ord = ord;
  }
  get(t, prop) {
    if (typeof prop === "symbol" || prop === "then") return undefined;
    if (prop === "fetch" || prop === "id" || prop === "name" || prop === "connect") return t[prop];
    // A service binding's stub has its own constructor (the Fetcher's).
    if (prop === "constructor" && hasOwn(t, prop)) return t[prop];
    const { cls, id, ord } = this;
    // member(), written out: two closures instead of four.
    const f = (...args) => stubCall(cls, id, ord, prop, args);
    f.then = (res, rej) => stubCall(cls, id, ord, getName(prop), []).then(res, rej);
    return f;
  }
  has(t, prop) { return typeof prop === "string" && prop !== "then"; }
  set() { return false; }
}
function makeStub(cls, id) {
  const ord = native.doOrder();
  const target = {
    id,
    name: id.name,
    fetch(input, init = undefined) { return stubFetch(cls, id, ord, input, init); },
    connect: connectUnsupported,
  };
  return new Proxy(target, new StubHandler(cls, id, ord));
}
internal.makeStub = makeStub;

// A service binding's stub (95_svc.js): fetch, connect and RPC methods,
// no id or name. stub.constructor is the Fetcher's, as in workerd.
const illegalConstructor = () => { throw new TypeError("Illegal constructor"); };
internal.makeServiceStub = (cls, id) => {
  const ord = native.doOrder();
  const target = {
    fetch(input, init = undefined) { return stubFetch(cls, id, ord, input, init); },
    connect: unsupported("connect() on a service binding"),
    constructor: illegalConstructor,
  };
  return new Proxy(target, new StubHandler(cls, id, ord));
};

// ---- callbacks: functions and RpcTargets passed as arguments --------------

// They stay here; the object gets references (kCb) whose calls come back
// through native.doCallbackCall to internal.callbackInvoke. The most
// recent maxCallbacks stay callable.
const kCb = "\0celld-cb";
const maxCallbacks = 1024;
const callbacks = new Map();
let nextCallback = 1;
// plainArgs: no argument is a function or an object (nothing to export).
function plainArgs(args) {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a !== null && (typeof a === "object" || typeof a === "function")) return false;
  }
  return true;
}
function exportArgs(v, depth = 0) {
  if (typeof v === "function" || v instanceof internal.RpcTarget) {
    const ref = String(nextCallback++);
    callbacks.set(ref, v);
    if (callbacks.size > maxCallbacks) callbacks.delete(callbacks.keys().next().value);
    return { [kCb]: ref, token: native.doCallbackToken(), kind: typeof v === "function" ? "function" : "target" };
  }
  if (v === null || typeof v !== "object" || depth > 16) return v;
  if (Array.isArray(v)) {
    let out = v;
    for (let i = 0; i < v.length; i++) {
      const x = exportArgs(v[i], depth + 1);
      if (x !== v[i]) { if (out === v) out = v.slice(); out[i] = x; }
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  let out = v;
  for (const k of Object.keys(v)) {
    const x = exportArgs(v[k], depth + 1);
    if (x !== v[k]) { if (out === v) out = { ...v }; out[k] = x; }
  }
  return out;
}

// importArgs (in the object) turns callback references into stubs.
function importArgs(v, depth = 0) {
  if (v === null || typeof v !== "object" || depth > 16) return v;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = importArgs(v[i], depth + 1);
    return v;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  if (hasOwn(v, kCb)) {
    const { token, kind } = v;
    const ref = v[kCb];
    const call = (m, args) => pipelined(native.doCallbackCall(token, ref + "\0" + m, exportArgs(args)));
    return new Proxy(function rpcStub() {}, {
      get(t, prop) {
        if (prop === Symbol.dispose) return () => {};
        if (typeof prop === "symbol" || prop === "then") return undefined;
        return member((args) => call(prop, args), () => call("get\0" + prop, []));
      },
      apply(t, self, args) {
        if (kind !== "function") throw new TypeError("This RPC stub is not a function.");
        return call("", args);
      },
      set() { return false; },
    });
  }
  for (const k of Object.keys(v)) v[k] = importArgs(v[k], depth + 1);
  return v;
}
internal.importArgs = importArgs;

internal.callbackInvoke = (ref, args) => {
  const [id, ...rest] = ref.split("\0");
  const target = callbacks.get(id);
  if (target === undefined) throw new Error("celld: this callback is no longer available (more than " + maxCallbacks + " were passed since)");
  const a = importArgs(native.deserialize(args));
  let m = rest.join("\0");
  if (typeof target === "function") {
    if (m !== "") throw new TypeError(`The RPC receiver does not implement the method "${m}".`);
    return target(...a);
  }
  const get = m.startsWith("get\0");
  if (get) m = m.slice(4);
  let v;
  for (let proto = Object.getPrototypeOf(target); proto && proto !== internal.RpcTarget.prototype &&
       proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    if (hasOwn(proto, m)) { v = Reflect.get(proto, m, target); break; }
  }
  if (get) return v;
  if (typeof v !== "function") throw new TypeError(`The RPC receiver does not implement the method "${m}".`);
  return v.apply(target, a);
};
