// structuredClone: the HTML structured clone algorithm over the types a
// Worker can clone (primitives, wrappers, Date, RegExp, ArrayBuffer and
// views, Map, Set, Error, arrays, plain objects, Blob/File), with cycles,
// shared references and ArrayBuffer transfer.

const cloneError = (what) => new DOMException(`${what} could not be cloned.`, "DataCloneError");
const errorCtors = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
const tagOf = (v) => Object.prototype.toString.call(v).slice(8, -1);
const typedArrays = {
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
  Float32Array, Float64Array, BigInt64Array, BigUint64Array,
};
const describeUncloneable = (v) => {
  if (typeof v === "function") return String(v);
  if (typeof v === "symbol") return v.toString();
  return `#<${tagOf(v)}>`;
};
// uncloneable is the DataCloneError for a value structured clone refuses
// (shared with the wire format in 72_wire.js).
internal.uncloneable = (v) => cloneError(describeUncloneable(v));

function cloneValue(value, memory) {
  switch (typeof value) {
    case "undefined": case "boolean": case "number": case "string": case "bigint":
      return value;
    case "symbol": case "function":
      throw cloneError(describeUncloneable(value));
  }
  if (value === null) return null;
  if (memory.has(value)) return memory.get(value);
  const tag = tagOf(value);
  let out;
  switch (tag) {
    case "Boolean": out = Object(Boolean.prototype.valueOf.call(value)); break;
    case "Number": out = Object(Number.prototype.valueOf.call(value)); break;
    case "String": out = Object(String.prototype.valueOf.call(value)); break;
    case "BigInt": out = Object(BigInt.prototype.valueOf.call(value)); break;
    case "Date": out = new Date(Date.prototype.getTime.call(value)); break;
    case "RegExp": out = new RegExp(value.source, value.flags); break;
    case "ArrayBuffer":
      if (value.detached) throw new DOMException("An ArrayBuffer is detached and could not be cloned.", "DataCloneError");
      out = value.slice(0);
      break;
    case "DataView": {
      const buf = cloneValue(value.buffer, memory);
      out = new DataView(buf, value.byteOffset, value.byteLength);
      break;
    }
    default:
      if (typedArrays[tag] && ArrayBuffer.isView(value)) {
        const buf = cloneValue(value.buffer, memory);
        out = new typedArrays[tag](buf, value.byteOffset, value.length);
      }
  }
  if (out !== undefined) {
    memory.set(value, out);
    return out;
  }
  if (value instanceof Blob) {
    out = value instanceof File
      ? new File([value], value.name, { type: value.type, lastModified: value.lastModified })
      : value.slice(0, value.size, value.type);
    memory.set(value, out);
    return out;
  }
  if (tag === "Map") {
    out = new Map();
    memory.set(value, out);
    for (const [k, v] of Map.prototype.entries.call(value)) out.set(cloneValue(k, memory), cloneValue(v, memory));
    return out;
  }
  if (tag === "Set") {
    out = new Set();
    memory.set(value, out);
    for (const v of Set.prototype.values.call(value)) out.add(cloneValue(v, memory));
    return out;
  }
  if (value instanceof Error && !(value instanceof DOMException)) {
    const name = errorCtors[value.name] ? value.name : "Error";
    out = new errorCtors[name](value.message);
    memory.set(value, out);
    if (value.stack !== undefined) internal.define(out, "stack", String(value.stack));
    if ("cause" in value) internal.define(out, "cause", cloneValue(value.cause, memory));
    return out;
  }
  if (value instanceof DOMException) {
    out = new DOMException(value.message, value.name);
    memory.set(value, out);
    return out;
  }
  if (Array.isArray(value)) {
    out = new Array(value.length);
    memory.set(value, out);
    for (const k of Object.keys(value)) out[k] = cloneValue(value[k], memory);
    return out;
  }
  if (tag !== "Object" || value instanceof Promise || value instanceof WeakMap || value instanceof WeakSet ||
      value instanceof ReadableStream || value instanceof Request || value instanceof Response || value instanceof Headers) {
    throw cloneError(describeUncloneable(value));
  }
  // Plain objects and class instances: own enumerable string keys only;
  // the prototype (and so any getter or method on it) is not kept.
  out = {};
  memory.set(value, out);
  for (const k of Object.keys(value)) out[k] = cloneValue(value[k], memory);
  return out;
}

function structuredClone(value, options = undefined) {
  if (arguments.length === 0) {
    throw new TypeError("Failed to execute 'structuredClone': 1 argument required, but only 0 present.");
  }
  const transfer = options && options.transfer ? Array.from(options.transfer) : [];
  for (const t of transfer) {
    if (!(t instanceof ArrayBuffer)) throw new DOMException("Value not transferable", "DataCloneError");
    if (t.detached) throw new DOMException("An ArrayBuffer is detached and could not be cloned.", "DataCloneError");
  }
  const out = cloneValue(value, new Map());
  for (const t of transfer) native.detach(t);
  return out;
}
internal.expose("structuredClone", structuredClone);
