// Headers: case-insensitive, iterated sorted by lowercase name (as workerd
// does), values of one name joined with ", " except Set-Cookie, which
// iterates as separate entries.

const kHeaders = Symbol("headers");
const tokenRE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const normalizeValue = (v) => String(v).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
// Validated names are remembered (lowercased): the same few names come
// back on every request, and a regexp test per call is costly in goja.
const knownNames = new Map();
const checkName = (name) => {
  name = String(name);
  let lower = knownNames.get(name);
  if (lower !== undefined) return lower;
  if (!tokenRE.test(name)) throw new TypeError("Invalid header name.");
  lower = name.toLowerCase();
  if (knownNames.size < 1000) knownNames.set(name, lower);
  return lower;
};
const needsWork = /^[\t\n\r ]|[\t\n\r ]$|[\0\r\n]/;
const checkValue = (value) => {
  value = String(value);
  if (!needsWork.test(value)) return value;
  value = normalizeValue(value);
  if (/[\0\r\n]/.test(value)) throw new TypeError("Invalid header value.");
  return value;
};
const immutableError = () => new TypeError("Can't modify immutable headers.");

class Headers {
  // No default parameter values in hot constructors: goja compiles them
  // into a slower function prologue.
  constructor(init) {
    this[kHeaders] = { map: new Map(), guard: "none" };
    if (init === undefined || init === null) return;
    if (init instanceof Headers) {
      for (const [k, values] of init[kHeaders].map) this[kHeaders].map.set(k, values.slice());
      return;
    }
    if (typeof init !== "object" && typeof init !== "function") {
      throw new TypeError("Failed to construct 'Headers': The provided value is not of type '(record<ByteString, ByteString> or sequence<sequence<ByteString>>)'.");
    }
    if (typeof init[Symbol.iterator] === "function") {
      for (const pair of init) {
        const p = typeof pair === "string" ? null : Array.from(pair);
        if (p === null || p.length !== 2) {
          throw new TypeError("To initialize a Headers object from a sequence, each inner sequence must have exactly two elements.");
        }
        this.append(p[0], p[1]);
      }
      return;
    }
    for (const k of Object.keys(init)) this.append(k, init[k]);
  }
  append(name, value) {
    const h = this[kHeaders];
    name = checkName(name);
    value = checkValue(value);
    if (h.guard === "immutable") throw immutableError();
    const list = h.map.get(name);
    if (list) list.push(value);
    else h.map.set(name, [value]);
  }
  set(name, value) {
    const h = this[kHeaders];
    name = checkName(name);
    value = checkValue(value);
    if (h.guard === "immutable") throw immutableError();
    h.map.set(name, [value]);
  }
  delete(name) {
    const h = this[kHeaders];
    name = checkName(name);
    if (h.guard === "immutable") throw immutableError();
    h.map.delete(name);
  }
  get(name) {
    const list = this[kHeaders].map.get(checkName(name));
    return list ? list.join(", ") : null;
  }
  has(name) {
    return this[kHeaders].map.has(checkName(name));
  }
  getSetCookie() {
    const list = this[kHeaders].map.get("set-cookie");
    return list ? list.slice() : [];
  }
  getAll(name) {
    name = checkName(name);
    if (name !== "set-cookie") throw new TypeError("getAll() can only be used with the header name \"Set-Cookie\".");
    return this.getSetCookie();
  }
  forEach(callback, thisArg = undefined) {
    if (typeof callback !== "function") throw new TypeError("Headers.forEach: callback must be a function");
    for (const [k, v] of sortedEntries(this)) callback.call(thisArg, v, k, this);
  }
  keys() { return sortedEntries(this).map(([k]) => k)[Symbol.iterator](); }
  values() { return sortedEntries(this).map(([, v]) => v)[Symbol.iterator](); }
  entries() { return sortedEntries(this)[Symbol.iterator](); }
  [Symbol.iterator]() { return this.entries(); }
}
Object.defineProperty(Headers.prototype, Symbol.toStringTag, { value: "Headers", configurable: true });

function sortedEntries(headers) {
  const map = headers[kHeaders].map;
  const names = Array.from(map.keys()).sort();
  const out = [];
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const list = map.get(name);
    if (name === "set-cookie") for (let j = 0; j < list.length; j++) out.push([name, list[j]]);
    else out.push([name, list.length === 1 ? list[0] : list.join(", ")]);
  }
  return out;
}

internal.setGuard = (headers, guard) => { headers[kHeaders].guard = guard; };
internal.getGuard = (headers) => headers[kHeaders].guard;
// headersFrom builds Headers from trusted name/value pairs (names already
// lowercase), skipping validation.
internal.headersFrom = (flat, guard) => {
  const h = Object.create(Headers.prototype);
  const map = new Map();
  h[kHeaders] = { map, guard };
  for (let i = 0; i < flat.length; i += 2) {
    const list = map.get(flat[i]);
    if (list) list.push(flat[i + 1]);
    else map.set(flat[i], [flat[i + 1]]);
  }
  return h;
};
internal.headersFlat = (headers) => {
  const map = headers[kHeaders].map;
  const names = Array.from(map.keys()).sort();
  const out = [];
  for (let i = 0; i < names.length; i++) {
    const list = map.get(names[i]);
    if (names[i] === "set-cookie") for (let j = 0; j < list.length; j++) out.push(names[i], list[j]);
    else out.push(names[i], list.length === 1 ? list[0] : list.join(", "));
  }
  return out;
};
// setDefault sets a trusted header (a lowercase name, a valid value)
// unless the name is present: the content type a body implies.
internal.setDefault = (headers, name, value) => {
  const map = headers[kHeaders].map;
  if (!map.has(name)) map.set(name, [value]);
};
internal.expose("Headers", Headers);
