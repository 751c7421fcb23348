// The state (ctx) of a Durable Object, its storage, and the dispatch of
// fetch and RPC events: in an object's own isolate only.

const { kCreate, tunnel, unsupported } = internal;

// ---- state and storage (an object's own isolate) ----------------------------

const run = (f) => {
  try {
    return Promise.resolve(f());
  } catch (e) {
    return Promise.reject(e);
  }
};
// alarmTime is setAlarm's argument in ms: a Date or a number (JSG's
// kj::Date conversion), truncated to whole milliseconds.
function alarmTime(t) {
  let ms;
  if (t instanceof Date) ms = t.getTime();
  else if (typeof t === "number") ms = t;
  else throw new TypeError("Failed to execute 'setAlarm' on 'DurableObjectStorage': parameter 1 is not of type 'date'.");
  if (!Number.isFinite(ms)) throw new TypeError("The value cannot be converted because it is not a valid Date.");
  return Math.floor(ms);
}
const getAlarmOp = (S) => run(() => S.getAlarm());
const setAlarmOp = (S, t) => run(() => { S.setAlarm(alarmTime(t)); });
const deleteAlarmOp = (S) => run(() => { S.deleteAlarm(); });
const alarmOps = { getAlarmOp, setAlarmOp, deleteAlarmOp };
const keyOf = (k) => String(k);
const keysOf = (keys) => Array.from(keys, keyOf);
const toMap = (flat) => {
  const m = new Map();
  for (let i = 0; i < flat.length; i += 2) m.set(flat[i], flat[i + 1]);
  return m;
};
const optional = (v) => (v === undefined || v === null ? null : String(v));

// Synchronous forms shared by the async API, transactions and storage.kv.
// Values go to Go as they are: it structured-clones them into the wire
// format (and back), throwing DataCloneError for what cannot be stored.
function getSync(S, keys) {
  if (Array.isArray(keys)) return toMap(S.getMulti(keysOf(keys)));
  return S.get(keyOf(keys));
}
function putSync(S, keyOrEntries, value) {
  if (keyOrEntries !== null && typeof keyOrEntries === "object") {
    const flat = [];
    for (const k of Object.keys(keyOrEntries)) flat.push(k, keyOrEntries[k]);
    S.putMulti(flat);
    return;
  }
  if (value === undefined) throw new TypeError("put() called with undefined value.");
  S.put(keyOf(keyOrEntries), value);
}
function deleteSync(S, keys) {
  return Array.isArray(keys) ? S.deleteMulti(keysOf(keys)) : S.delete(keyOf(keys));
}
function listSync(S, options) {
  const o = options == null ? {} : options;
  const limit = o.limit === undefined || o.limit === null ? null : Number(o.limit);
  return toMap(S.list(optional(o.start), optional(o.startAfter), optional(o.end), optional(o.prefix), limit, !!o.reverse));
}

// Shared with 98_storage.js (transactions and storage.kv).
internal.storageOps = { run, alarmOps, keyOf, getSync, putSync, deleteSync, listSync };

class DurableObjectStorage {
  #S;
  #sql; // made on first use
  #kv;
  constructor(key, S) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#S = S;
  }
  // get and put are the hot ones: no closure per call.
  get(keys, options = undefined) {
    try {
      return Promise.resolve(getSync(this.#S, keys));
    } catch (e) {
      return Promise.reject(e);
    }
  }
  put(keyOrEntries, value = undefined, options = undefined) {
    try {
      return Promise.resolve(putSync(this.#S, keyOrEntries, value));
    } catch (e) {
      return Promise.reject(e);
    }
  }
  delete(keys, options = undefined) { return run(() => deleteSync(this.#S, keys)); }
  list(options = undefined) { return run(() => listSync(this.#S, options)); }
  deleteAll(options = undefined) { return run(() => { this.#S.deleteAll(); }); }
  sync() { return run(() => { this.#S.sync(); }); }
  async transaction(closure, options = undefined) {
    if (typeof closure !== "function") throw new TypeError("transaction() requires a function");
    const S = this.#S;
    const h = S.txnBegin();
    const txn = internal.makeTransaction(S);
    let value;
    try {
      value = await closure(txn);
    } catch (e) {
      S.txnEnd(h, false);
      throw e;
    }
    S.txnEnd(h, !internal.rolledBack(txn));
    return value;
  }
  transactionSync(closure) {
    if (typeof closure !== "function") throw new TypeError("transactionSync() requires a function");
    return this.#S.txnSync(closure);
  }
  get sql() { return this.#sql || (this.#sql = internal.makeSql(this.#S)); }
  get kv() { return this.#kv || (this.#kv = internal.makeSyncKv(this.#S)); }
  getAlarm(options = undefined) { return getAlarmOp(this.#S); }
  setAlarm(scheduledTime, options = undefined) { return setAlarmOp(this.#S, scheduledTime); }
  deleteAlarm(options = undefined) { return deleteAlarmOp(this.#S); }
  getCurrentBookmark() { return Promise.reject(new Error("celld: point-in-time recovery is not supported yet")); }
  getBookmarkForTime() { return Promise.reject(new Error("celld: point-in-time recovery is not supported yet")); }
  onNextSessionRestoreBookmark() { return Promise.reject(new Error("celld: point-in-time recovery is not supported yet")); }
}

// ---- the state (ctx) ---------------------------------------------------------

const bcwLimitMs = 30000;
const kEventTimeout = Symbol("eventTimeout");

class DurableObjectState {
  #S;
  #id;
  #storage;
  constructor(key, S, id) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#S = S;
    this.#id = id;
    this.#storage = new DurableObjectStorage(kCreate, S);
  }
  static {
    internal.stateNatives = (st) => st.#S;
  }
  get id() { return this.#id; }
  get storage() { return this.#storage; }
  get props() { return {}; }
  get exports() { return internal.ctxExports(); }
  waitUntil(promise) { new ExecutionContext(kCreate).waitUntil(promise); }
  // blockConcurrencyWhile holds every other event of this object until the
  // callback settles; a callback that throws, or runs past 30 s, resets
  // the object.
  blockConcurrencyWhile(callback) {
    const S = this.#S;
    S.gate(1);
    let open = true;
    const release = (ok, e) => {
      if (!open) return;
      open = false;
      native.clearTimer(timer);
      S.gate(-1, ok, e);
    };
    const timer = native.setTimer(() => release(false, tunnel(new Error(
      `blockConcurrencyWhile() callback did not settle within ${bcwLimitMs / 1000} seconds; the Durable Object was reset.`))),
    bcwLimitMs, false);
    let p;
    try {
      p = Promise.resolve(callback());
    } catch (e) {
      p = Promise.reject(e);
    }
    return p.then((v) => {
      release(true);
      return v;
    }, (e) => {
      release(false, tunnel(e));
      throw e;
    });
  }
  // abort resets the object: the next event constructs it anew.
  abort(reason = undefined) {
    const e = new Error(reason === undefined ? "Durable Object was aborted." : String(reason));
    this.#S.abort(tunnel(e));
    throw e;
  }
}
// The WebSocket Hibernation API (objects_websocket.go keeps the sockets).
const wsState = (st) => internal.stateNatives(st);
Object.assign(DurableObjectState.prototype, {
  acceptWebSocket(ws, tags = undefined) {
    if (!internal.ws.isWebSocket(ws)) {
      throw new TypeError("Failed to execute 'acceptWebSocket' on 'DurableObjectState': parameter 1 is not of type 'WebSocket'.");
    }
    wsState(this).wsAccept(ws, tags === undefined ? undefined : Array.from(tags, String));
  },
  getWebSockets(tag = undefined) {
    return wsState(this).wsList(tag === undefined ? undefined : String(tag));
  },
  getTags(ws) {
    if (!internal.ws.isWebSocket(ws)) throw new TypeError("Failed to execute 'getTags' on 'DurableObjectState': parameter 1 is not of type 'WebSocket'.");
    return wsState(this).wsTags(ws);
  },
  setWebSocketAutoResponse(pair = undefined) {
    if (pair === undefined) {
      wsState(this).wsSetAuto(undefined);
      return;
    }
    if (!internal.isAutoPair(pair)) {
      throw new TypeError("Failed to execute 'setWebSocketAutoResponse' on 'DurableObjectState': parameter 1 is not of type 'WebSocketRequestResponsePair'.");
    }
    wsState(this).wsSetAuto(pair.request, pair.response);
  },
  getWebSocketAutoResponse() {
    const p = wsState(this).wsGetAuto();
    return p === null ? null : new WebSocketRequestResponsePair(p[0], p[1]);
  },
  getWebSocketAutoResponseTimestamp(ws) {
    if (!internal.ws.isWebSocket(ws)) {
      throw new TypeError("Failed to execute 'getWebSocketAutoResponseTimestamp' on 'DurableObjectState': parameter 1 is not of type 'WebSocket'.");
    }
    const t = wsState(this).wsAutoTS(ws);
    return t === null ? null : new Date(t);
  },
  setHibernatableWebSocketEventTimeout(ms = undefined) {
    this[kEventTimeout] = ms === undefined || ms === null || Number(ms) === 0 ? null : Number(ms);
  },
  getHibernatableWebSocketEventTimeout() { return this[kEventTimeout] === undefined ? null : this[kEventTimeout]; },
});
for (const name of ["acceptWebSocket", "getWebSockets", "getTags", "setWebSocketAutoResponse", "getWebSocketAutoResponse",
  "getWebSocketAutoResponseTimestamp", "setHibernatableWebSocketEventTimeout", "getHibernatableWebSocketEventTimeout"]) {
  Object.defineProperty(DurableObjectState.prototype, name, { enumerable: false });
}
Object.defineProperty(DurableObjectState.prototype, Symbol.toStringTag, { value: "DurableObjectState", configurable: true });

internal.objectState = (S, cls, hex, name) => new DurableObjectState(kCreate, S, internal.makeId(cls, hex, name));
internal.constructObject = (Class, state, env) => new Class(state, env);

// ---- events ----------------------------------------------------------------

// objectFetch runs instance.fetch(request) and returns what it returned
// (Go waits for a promise and serializes the Response, fetch.go), or
// throws.
internal.objectFetch = (instance, request) => {
  if (typeof instance.fetch !== "function") throw new TypeError("Handler does not export a fetch() function.");
  return instance.fetch(request);
};

// objectWebSocket runs the handler of a hibernatable socket's event: a
// message, a close, or an error (then the close that follows it).
internal.objectWebSocket = (instance, ws, kind, data, code, reason, clean) => {
  if (kind === "m") {
    if (typeof instance.webSocketMessage === "function") return instance.webSocketMessage(ws, data);
    return undefined;
  }
  internal.ws.markClosed(ws);
  if (kind === "e") {
    const run = async () => {
      if (typeof instance.webSocketError === "function") {
        await instance.webSocketError(ws, new Error("WebSocket disconnected without sending Close frame."));
      }
      if (typeof instance.webSocketClose === "function") await instance.webSocketClose(ws, 1006, "", false);
    };
    return run();
  }
  if (typeof instance.webSocketClose === "function") return instance.webSocketClose(ws, code, reason, clean);
  return undefined;
};

// objectAlarm runs instance.alarm(alarmInfo).
internal.objectAlarm = (instance, info) => {
  if (typeof instance.alarm !== "function") throw new TypeError("Handler does not export an alarm() function.");
  return instance.alarm(info);
};

const { hasOwnProperty } = Object.prototype;
// reflectGet(proto, name, receiver) is Reflect.get(proto, name, receiver):
// a method's super[name] is [[Get]] of name on its home object's
// prototype with `this` as the receiver. It saves instantiating the
// Reflect built-in (about 10 KB) in every Durable Object's isolate; a
// getter that reenters finds superGet's prototype already read.
const superGet = { __proto__: null, get(name) { return super[name]; } };
const { setPrototypeOf } = Object;
function reflectGet(proto, name, receiver) {
  setPrototypeOf(superGet, proto);
  try {
    return superGet.get.call(receiver, name);
  } finally {
    setPrototypeOf(superGet, null);
  }
}
// rpcBase is the class RPC stops at: DurableObject, or WorkerEntrypoint
// for a service entrypoint (95_svc.js); null for neither.
function rpcBase(instance) {
  if (instance instanceof internal.DurableObject) return internal.DurableObject.prototype;
  if (instance instanceof internal.WorkerEntrypoint) return internal.WorkerEntrypoint.prototype;
  return null;
}
function rpcMember(instance, name) {
  const base = rpcBase(instance);
  if (base === null) return rpcMethod(instance, name);
  if (name !== "constructor") {
    for (let proto = Object.getPrototypeOf(instance); proto && proto !== base &&
         proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      if (hasOwnProperty.call(proto, name)) return reflectGet(proto, name, instance);
    }
  }
  throw new TypeError(`The RPC receiver does not implement the method "${name}".`);
}
function rpcMethod(instance, method) {
  const base = rpcBase(instance);
  if (base === null) {
    throw new TypeError("The receiving Durable Object does not support RPC, because its class was not declared with " +
      "`extends DurableObject`. In order to enable RPC, make sure your class extends the special class " +
      "`DurableObject`, which can be imported from the module \"cloudflare:workers\".");
  }
  // Methods (and getters) of the class and its ancestors, short of
  // DurableObject and Object; instance properties are not exposed.
  // Reflect.get on the prototype that owns the name, with the instance as
  // receiver, is the descriptor's value or its getter's result without
  // making a descriptor object per call.
  if (method !== "constructor") {
    for (let proto = Object.getPrototypeOf(instance); proto && proto !== base &&
         proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      if (!hasOwnProperty.call(proto, method)) continue;
      const fn = reflectGet(proto, method, instance);
      if (typeof fn === "function") return fn;
      break;
    }
  }
  throw new TypeError(`The RPC receiver does not implement the method "${method}".`);
}

// importArgs is internal.importArgs (95_stubs.js), which turns the
// callback references among the arguments into stubs. Arguments with no
// object among them hold none, and a Durable Object that only ever gets
// such calls never loads the stubs file.
function importArgs(a) {
  for (let i = 0; i < a.length; i++) {
    const v = a[i];
    if (v !== null && typeof v === "object") return internal.importArgs(a);
  }
  return a;
}

// objectCall runs an RPC method on its arguments (in the wire format) and
// returns what it returned (Go waits for a promise and serializes the
// value), or throws.
//
// Beyond plain methods, the method name may be one of the forms of
// rpcName (95_stubs.js): a property read ("\0get\0name"), or a call on
// an RpcTarget or function the object returned earlier
// ("\0t\0<target>\0<method>", method "" calling the function itself).
// Go passes an object or function result (once a promise of it settled)
// through internal.exportValue before serializing it.
internal.objectCall = (instance, method, args) => {
  const a = importArgs(native.deserialize(args));
  if (method.charCodeAt(0) === 0) return specialCall(instance, method, a);
  return rpcMethod(instance, method).apply(instance, a);
};
internal.exportValue = (instance, v) => exportValue(instance, v, 0);

// Exported RpcTargets and functions, per instance: the most recent
// maxExports stay callable (a stub to an evicted one fails, naming it).
const maxExports = 1024;
// exportsOf (a WeakMap) is made on first use: most objects never export one.
let exportsOf = null;
const kRef = "\0celld-ref";
function exportRef(instance, v, kind) {
  let ex = exportsOf?.get(instance);
  if (ex === undefined) {
    ex = { next: 1, map: new Map(), prefix: "" };
    (exportsOf ??= new WeakMap()).set(instance, ex);
  }
  const ref = ex.prefix + String(ex.next++);
  ex.map.set(ref, v);
  if (ex.map.size > maxExports) ex.map.delete(ex.map.keys().next().value);
  return { [kRef]: ref, kind };
}
// exportValue replaces RpcTargets and functions in a result (at the top,
// in arrays and in plain objects) with references the caller turns into
// stubs.
function exportValue(instance, v, depth = 0) {
  if (typeof v === "function") return exportRef(instance, v, "function");
  if (v === null || typeof v !== "object" || depth > 16) return v;
  if (v instanceof internal.RpcTarget) return exportRef(instance, v, "target");
  if (Array.isArray(v)) {
    let out = v;
    for (let i = 0; i < v.length; i++) {
      const x = exportValue(instance, v[i], depth + 1);
      if (x !== v[i]) { if (out === v) out = v.slice(); out[i] = x; }
    }
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  let out = v;
  for (const k of Object.keys(v)) {
    const x = exportValue(instance, v[k], depth + 1);
    if (x !== v[k]) { if (out === v) out = { ...v }; out[k] = x; }
  }
  return out;
}

// Service entrypoints are made anew for every call, so what they return
// is kept in one registry per isolate, its references prefixed with the
// isolate's number (services.go routes calls on them there).
let entryRegistry = null;
internal.entryExports = (iso) => {
  if (entryRegistry === null) {
    entryRegistry = {};
    (exportsOf ??= new WeakMap()).set(entryRegistry, { next: 1, map: new Map(), prefix: iso + ":" });
  }
  return entryRegistry;
};
internal.exportValue = exportValue;
internal.rpcMethod = rpcMethod;

const kMethodRef = "\0celld-method";
internal.specialCall = specialCall;
function specialCall(instance, method, args, key = instance) {
  const parts = method.split("\0");
  if (parts[1] === "get") {
    const name = parts.slice(2).join("\0");
    const fn = rpcMember(instance, name);
    if (typeof fn === "function") return { [kMethodRef]: name };
    return fn;
  }
  if (parts[1] === "t") {
    const target = exportsOf?.get(key)?.map.get(parts[2]);
    if (target === undefined) throw new Error("celld: this RPC stub's target is no longer available (its object was reset, or more than " + maxExports + " targets were exported since)");
    const m = parts.slice(3).join("\0");
    if (typeof target === "function") {
      if (m !== "") throw new TypeError(`The RPC receiver does not implement the method "${m}".`);
      return target(...args);
    }
    const get = m.startsWith("get\0");
    const name = get ? m.slice(4) : m;
    const v = targetMember(target, name);
    if (get) return typeof v === "function" ? { [kMethodRef]: name } : v;
    if (typeof v !== "function") throw new TypeError(`The RPC receiver does not implement the method "${name}".`);
    return v.apply(target, args);
  }
  throw new TypeError("celld: unknown RPC call form");
}

// targetMember is a method or getter of an RpcTarget's class (not its own
// properties, as workerd).
function targetMember(target, name) {
  for (let proto = Object.getPrototypeOf(target); proto && proto !== internal.RpcTarget.prototype &&
       proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    if (hasOwnProperty.call(proto, name)) return reflectGet(proto, name, target);
  }
  throw new TypeError(`The RPC receiver does not implement the method "${name}".`);
}
