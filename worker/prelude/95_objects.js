// Durable Objects in every isolate: namespace bindings (env.NS), ids, and
// exceptions across the boundary. Stubs are in 95_stubs.js, the state of
// an object's own isolate in 96_state.js and 97_sql.js.

const kCreate = internal.kCreate;
// The standard error classes an exception keeps across the boundary
// (rebuild looks them up when it first needs them).
const stdErrorNames = { Error: true, EvalError: true, RangeError: true, ReferenceError: true, SyntaxError: true, TypeError: true, URIError: true };
let stdErrors = null;
const stdError = (name) => {
  if (stdErrors === null) stdErrors = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  return stdErrors[name];
};
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const unsupported = (what) => () => {
  throw new TypeError(`celld: ${what} is not supported yet`);
};
internal.unsupported = unsupported;

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
    if (typeof name === "string" && hasOwn(stdErrorNames, name)) return { name, message: String(e.message), stack };
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
internal.rebuild = rebuild;
function rebuild(r) {
  const x = r.exception;
  if (x) {
    if (x.dom) return new DOMException(x.message, x.name);
    return new (hasOwn(stdErrorNames, x.name) ? stdError(x.name) : Error)(x.message);
  }
  return new Error(r.error);
}

// ---- ids -------------------------------------------------------------------

let idClass, idHex, idName;
class DurableObjectId {
  #cls;
  #hex;
  #name;
  constructor(key, cls, hex, name) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#cls = cls;
    this.#hex = hex;
    this.#name = name;
  }
  static {
    idClass = (id) => id.#cls;
    idHex = (id) => id.#hex;
    idName = (id) => id.#name;
    internal.idHex = idHex;
    internal.idName = idName;
  }
  toString() { return this.#hex; }
  equals(other) { return other instanceof DurableObjectId && other.#hex === this.#hex; }
  get name() { return this.#name; }
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
    if (idClass(id) !== this.#cls && !native.doIdValid(this.#cls, idHex(id))) throw invalidForNamespace();
    return internal.makeStub(this.#cls, id);
  }
  getByName(name, options = undefined) {
    return this.get(this.idFromName(name), options);
  }
  jurisdiction(j) { return this; }
}
Object.defineProperty(DurableObjectNamespace.prototype, Symbol.toStringTag, { value: "DurableObjectNamespace", configurable: true });
internal.makeNamespace = (cls) => new DurableObjectNamespace(kCreate, cls);
internal.makeId = (cls, hex, name) => new DurableObjectId(kCreate, cls, hex, name);

