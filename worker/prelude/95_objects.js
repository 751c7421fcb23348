// Durable Objects. In every isolate: namespace bindings (env.NS), ids and
// stubs, whose calls go to Go (native.doCall / native.doFetch) and on to
// the object wherever it runs. In an object's own isolate: the state
// (ctx) with its storage, and the dispatch of fetch and RPC events.

const kCreate = internal.kCreate;
const stdErrors = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const unsupported = (what) => () => {
  throw new TypeError(`celld: ${what} is not supported yet`);
};

// ---- exceptions across the boundary ----------------------------------------

// tunnel describes a value thrown in an object the way workerd carries it
// to the caller: a standard error class keeps its class and message; any
// other error arrives as an Error whose message is its toString() (so a
// custom name survives in the text); a DOMException keeps its name.
function tunnel(e) {
  const stack = e instanceof Error && typeof e.stack === "string" ? e.stack : "";
  if (e instanceof DOMException) return { name: String(e.name), message: String(e.message), dom: true, stack };
  if (e instanceof Error) {
    const name = e.name;
    if (typeof name === "string" && hasOwn(stdErrors, name)) return { name, message: String(e.message), stack };
    let text;
    try { text = String(e); } catch { text = "Error"; }
    return { name: "Error", message: text, stack };
  }
  let text;
  try { text = String(e); } catch { text = Object.prototype.toString.call(e); }
  return { name: "Error", message: text, stack };
}
internal.tunnel = tunnel;

// rebuild turns a failed outcome from Go back into the error to throw.
function rebuild(r) {
  const x = r.exception;
  if (x) {
    if (x.dom) return new DOMException(x.message, x.name);
    return new (hasOwn(stdErrors, x.name) ? stdErrors[x.name] : Error)(x.message);
  }
  return new Error(r.error);
}

// ---- ids -------------------------------------------------------------------

const kId = Symbol("id");
class DurableObjectId {
  constructor(key, cls, hex, name) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    internal.define(this, kId, { cls, hex, name });
  }
  toString() { return this[kId].hex; }
  equals(other) { return other instanceof DurableObjectId && other[kId].hex === this[kId].hex; }
  get name() { return this[kId].name; }
  get jurisdiction() { return undefined; }
}
Object.defineProperty(DurableObjectId.prototype, Symbol.toStringTag, { value: "DurableObjectId", configurable: true });

const invalidForNamespace = () => new TypeError("Durable Object ID is not valid for this namespace.");

class DurableObjectNamespace {
  #cls;
  constructor(key, cls) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#cls = cls;
  }
  idFromName(name) {
    name = String(name);
    return new DurableObjectId(kCreate, this.#cls, native.doIdFromName(this.#cls, name), name);
  }
  newUniqueId(options = undefined) {
    return new DurableObjectId(kCreate, this.#cls, native.doNewUniqueId(this.#cls), undefined);
  }
  idFromString(s) {
    s = String(s);
    if (!/^[0-9a-fA-F]{64}$/.test(s)) throw new TypeError("Invalid Durable Object ID: must be 64 hex digits");
    const hex = s.toLowerCase();
    if (!native.doIdValid(this.#cls, hex)) throw invalidForNamespace();
    return new DurableObjectId(kCreate, this.#cls, hex, undefined);
  }
  get(id, options = undefined) {
    if (!(id instanceof DurableObjectId)) {
      throw new TypeError("Failed to execute 'get' on 'DurableObjectNamespace': parameter 1 is not of type 'DurableObjectId'.");
    }
    if (id[kId].cls !== this.#cls && !native.doIdValid(this.#cls, id[kId].hex)) throw invalidForNamespace();
    return makeStub(this.#cls, id);
  }
  getByName(name, options = undefined) {
    return this.get(this.idFromName(name), options);
  }
  jurisdiction(j) { return this; }
}
Object.defineProperty(DurableObjectNamespace.prototype, Symbol.toStringTag, { value: "DurableObjectNamespace", configurable: true });
internal.makeNamespace = (cls) => new DurableObjectNamespace(kCreate, cls);

// ---- stubs -----------------------------------------------------------------

const nameArg = (id) => (id[kId].name === undefined ? null : id[kId].name);

async function stubFetch(cls, id, input, init) {
  const req = input instanceof Request && init === undefined ? input : new Request(input, init);
  const body = req.body === null ? null : await req.arrayBuffer();
  const r = await native.doFetch(cls, id[kId].hex, nameArg(id), req.method, req.url, internal.headersFlat(req.headers), body);
  if (!r.ok) throw rebuild(r);
  return internal.makeResponse(r.status, r.statusText, r.headers, r.body);
}

function stubCall(cls, id, method, args) {
  let bytes;
  try {
    bytes = internal.serialize(args);
  } catch (e) {
    return Promise.reject(e);
  }
  return native.doCall(cls, id[kId].hex, nameArg(id), method, bytes).then((r) => {
    if (!r.ok) throw rebuild(r);
    return internal.deserialize(r.value);
  });
}

// A stub is a Proxy: fetch, id and name are its own; any other string
// property is an RPC method of the object. `then` is not, so a stub is not
// mistaken for a promise.
function makeStub(cls, id) {
  const target = {
    id,
    name: id.name,
    fetch(input, init = undefined) { return stubFetch(cls, id, input, init); },
    connect: unsupported("connect() on a Durable Object stub"),
  };
  return new Proxy(target, {
    get(t, prop) {
      if (typeof prop === "symbol" || prop === "then") return undefined;
      if (hasOwn(t, prop)) return t[prop];
      return (...args) => stubCall(cls, id, prop, args);
    },
    has(t, prop) { return typeof prop === "string" && prop !== "then"; },
    set() { return false; },
  });
}

// ---- state and storage (an object's own isolate) ----------------------------

const run = (f) => {
  try {
    return Promise.resolve(f());
  } catch (e) {
    return Promise.reject(e);
  }
};
const alarmsUnsupported = () => Promise.reject(new Error("celld: Durable Object alarms are not supported yet"));
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

const kRolledBack = Symbol("rolledBack");
class DurableObjectTransaction {
  #S;
  constructor(key, S) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#S = S;
    this[kRolledBack] = false;
  }
  get(keys, options = undefined) { return run(() => getSync(this.#S, keys)); }
  put(keyOrEntries, value = undefined, options = undefined) { return run(() => putSync(this.#S, keyOrEntries, value)); }
  delete(keys, options = undefined) { return run(() => deleteSync(this.#S, keys)); }
  list(options = undefined) { return run(() => listSync(this.#S, options)); }
  rollback() { this[kRolledBack] = true; }
  getAlarm() { return alarmsUnsupported(); }
  setAlarm() { return alarmsUnsupported(); }
  deleteAlarm() { return alarmsUnsupported(); }
}

class SyncKvStorage {
  #S;
  constructor(key, S) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#S = S;
  }
  get(key) { return getSync(this.#S, keyOf(key)); }
  put(key, value) { putSync(this.#S, keyOf(key), value); }
  delete(key) { return this.#S.delete(keyOf(key)); }
  list(options = undefined) { return listSync(this.#S, options).entries(); }
}

class DurableObjectStorage {
  #S;
  #sql = null;
  #kv = null;
  constructor(key, S) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#S = S;
  }
  get(keys, options = undefined) { return run(() => getSync(this.#S, keys)); }
  put(keyOrEntries, value = undefined, options = undefined) { return run(() => putSync(this.#S, keyOrEntries, value)); }
  delete(keys, options = undefined) { return run(() => deleteSync(this.#S, keys)); }
  list(options = undefined) { return run(() => listSync(this.#S, options)); }
  deleteAll(options = undefined) { return run(() => { this.#S.deleteAll(); }); }
  sync() { return run(() => { this.#S.sync(); }); }
  async transaction(closure, options = undefined) {
    if (typeof closure !== "function") throw new TypeError("transaction() requires a function");
    const S = this.#S;
    const h = S.txnBegin();
    const txn = new DurableObjectTransaction(kCreate, S);
    let value;
    try {
      value = await closure(txn);
    } catch (e) {
      S.txnEnd(h, false);
      throw e;
    }
    S.txnEnd(h, !txn[kRolledBack]);
    return value;
  }
  transactionSync(closure) {
    if (typeof closure !== "function") throw new TypeError("transactionSync() requires a function");
    return this.#S.txnSync(closure);
  }
  get sql() { return this.#sql || (this.#sql = new SqlStorage(kCreate, this.#S)); }
  get kv() { return this.#kv || (this.#kv = new SyncKvStorage(kCreate, this.#S)); }
  getAlarm() { return alarmsUnsupported(); }
  setAlarm() { return alarmsUnsupported(); }
  deleteAlarm() { return alarmsUnsupported(); }
  getCurrentBookmark() { return Promise.reject(new Error("celld: point-in-time recovery is not supported yet")); }
  getBookmarkForTime() { return Promise.reject(new Error("celld: point-in-time recovery is not supported yet")); }
  onNextSessionRestoreBookmark() { return Promise.reject(new Error("celld: point-in-time recovery is not supported yet")); }
}

// ---- SQL -------------------------------------------------------------------

// A bound value as workerd takes it: null/undefined are NULL, numbers are
// REAL, strings TEXT, buffers BLOB; anything else becomes its string.
function bindValue(v) {
  if (v === undefined || v === null) return null;
  if (typeof v === "number" || typeof v === "string") return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v).slice();
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
  return String(v);
}

class SqlStorage {
  #S;
  constructor(key, S) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#S = S;
  }
  exec(query, ...bindings) {
    if (arguments.length === 0) {
      throw new TypeError("Failed to execute 'exec' on 'SqlStorage': parameter 1 is not of type 'string'.");
    }
    return new SqlStorageCursor(kCreate, this.#S.exec(String(query), bindings.map(bindValue)));
  }
  get databaseSize() { return this.#S.databaseSize(); }
}

function rowObject(names, row) {
  const o = {};
  for (let i = 0; i < names.length; i++) o[names[i]] = row[i];
  return o;
}

class SqlStorageCursor {
  #c;
  #names;
  constructor(key, c) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#c = c;
    this.#names = c.columnNames();
  }
  next() {
    const row = this.#c.next();
    return row === null ? { done: true, value: undefined } : { done: false, value: rowObject(this.#names, row) };
  }
  toArray() { return this.#c.all().map((row) => rowObject(this.#names, row)); }
  one() { return rowObject(this.#names, this.#c.one()); }
  raw() {
    const c = this.#c;
    return {
      next() {
        const row = c.next();
        return row === null ? { done: true, value: undefined } : { done: false, value: row };
      },
      toArray() { return c.all(); },
      [Symbol.iterator]() { return this; },
    };
  }
  get columnNames() { return this.#names.slice(); }
  get rowsRead() { return this.#c.rowsRead(); }
  get rowsWritten() { return this.#c.rowsWritten(); }
  [Symbol.iterator]() { return this; }
}

// ---- the state (ctx) ---------------------------------------------------------

const bcwLimitMs = 30000;

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
  get id() { return this.#id; }
  get storage() { return this.#storage; }
  get props() { return {}; }
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
for (const name of ["acceptWebSocket", "getWebSockets", "getTags", "setWebSocketAutoResponse", "getWebSocketAutoResponse",
  "getWebSocketAutoResponseTimestamp", "setHibernatableWebSocketEventTimeout", "getHibernatableWebSocketEventTimeout"]) {
  internal.define(DurableObjectState.prototype, name, unsupported(`ctx.${name}()`));
}
Object.defineProperty(DurableObjectState.prototype, Symbol.toStringTag, { value: "DurableObjectState", configurable: true });

internal.objectState = (S, cls, hex, name) => new DurableObjectState(kCreate, S, new DurableObjectId(kCreate, cls, hex, name));
internal.constructObject = (Class, state, env) => new Class(state, env);

// ---- events ----------------------------------------------------------------

// objectFetch runs instance.fetch(request); done(true, serialized) or
// done(false, tunneled) is called exactly once.
internal.objectFetch = (instance, request, done) => {
  let p;
  try {
    if (typeof instance.fetch !== "function") throw new TypeError("Handler does not export a fetch() function.");
    p = Promise.resolve(instance.fetch(request));
  } catch (e) {
    p = Promise.reject(e);
  }
  p.then((res) => {
    if (!(res instanceof Response)) {
      throw new TypeError("Incorrect type for Promise: the Promise did not resolve to 'Response'.");
    }
    return internal.serializeResponse(res);
  }).then((out) => done(true, out), (e) => done(false, tunnel(e)));
};

function rpcMethod(instance, method) {
  if (!(instance instanceof internal.DurableObject)) {
    throw new TypeError("The receiving Durable Object does not support RPC, because its class was not declared with " +
      "`extends DurableObject`. In order to enable RPC, make sure your class extends the special class " +
      "`DurableObject`, which can be imported from the module \"cloudflare:workers\".");
  }
  const notImplemented = () => new TypeError(`The RPC receiver does not implement the method "${method}".`);
  if (method === "constructor") throw notImplemented();
  // Methods (and getters) of the class and its ancestors, short of
  // DurableObject and Object; instance properties are not exposed.
  for (let proto = Object.getPrototypeOf(instance); proto && proto !== internal.DurableObject.prototype &&
       proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, method);
    if (!d) continue;
    const fn = d.get ? d.get.call(instance) : d.value;
    if (typeof fn === "function") return fn;
    throw notImplemented();
  }
  throw notImplemented();
}

// objectCall runs an RPC method: args and result in the wire format.
internal.objectCall = (instance, method, args, done) => {
  let p;
  try {
    const fn = rpcMethod(instance, method);
    p = Promise.resolve(fn.apply(instance, internal.deserialize(args)));
  } catch (e) {
    p = Promise.reject(e);
  }
  p.then((v) => internal.serialize(v)).then((out) => done(true, out), (e) => done(false, tunnel(e)));
};
