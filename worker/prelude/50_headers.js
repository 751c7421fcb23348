// Headers: case-insensitive, iterated sorted by lowercase name (as workerd
// does), values of one name joined with ", " except Set-Cookie, which
// iterates as separate entries.
//
// The map holds, per lowercase name, the value when there is one (the
// common case: no array per header, arrays are costly in goja) and an
// array of them when there are several.

// The state of a Headers object is private: a Map of lowercase name ->
// [value, ...] and a guard ("none" or "immutable"). Functions of this file
// outside the class reach it through mapOf, guardOf and setGuardOf.
const kTrusted = Symbol("headers.trusted");
let mapOf, guardOf, setGuardOf, isHeaders;
const tokenRE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
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
// checkValue strips leading and trailing whitespace and refuses NUL, CR
// and LF (natively: a regexp test per value is costly in goja).
const checkValue = (value) => {
  value = native.headerValue(String(value));
  if (value === null) throw new TypeError("Invalid header value.");
  return value;
};
const immutableError = () => new TypeError("Can't modify immutable headers.");
// add appends a value to name's entry of a header map.
function add(map, name, value) {
  const cur = map.get(name);
  if (cur === undefined) map.set(name, value);
  else if (typeof cur === "string") map.set(name, [cur, value]);
  else cur.push(value);
}
// joined is a header map entry as one value.
const joined = (v) => (typeof v === "string" ? v : v.join(", "));

class Headers {
  #map;
  #guard;
  // No default parameter values in hot constructors: goja compiles them
  // into a slower function prologue. (init === kTrusted: the prelude's own
  // construction, with the map and guard given.)
  constructor(init, map, guard) {
    if (init === kTrusted) {
      this.#map = map;
      this.#guard = guard;
      return;
    }
    this.#map = new Map();
    this.#guard = "none";
    if (init !== undefined && init !== null) fill(this, init);
  }
  static {
    mapOf = (h) => h.#map;
    guardOf = (h) => h.#guard;
    setGuardOf = (h, guard) => { h.#guard = guard; };
    isHeaders = (v) => v !== null && typeof v === "object" && #map in v;
  }
  append(name, value) {
    name = checkName(name);
    value = checkValue(value);
    if (this.#guard === "immutable") throw immutableError();
    add(this.#map, name, value);
  }
  set(name, value) {
    name = checkName(name);
    value = checkValue(value);
    if (this.#guard === "immutable") throw immutableError();
    this.#map.set(name, value);
  }
  delete(name) {
    name = checkName(name);
    if (this.#guard === "immutable") throw immutableError();
    this.#map.delete(name);
  }
  get(name) {
    const v = this.#map.get(checkName(name));
    return v === undefined ? null : joined(v);
  }
  has(name) {
    return this.#map.has(checkName(name));
  }
  getSetCookie() {
    const v = this.#map.get("set-cookie");
    return v === undefined ? [] : typeof v === "string" ? [v] : v.slice();
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
// fill adds init (Headers, a sequence of pairs or a record) to h.
function fill(h, init) {
  if (isHeaders(init)) {
    const map = mapOf(h);
    mapOf(init).forEach((v, k) => { map.set(k, typeof v === "string" ? v : v.slice()); });
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
      h.append(p[0], p[1]);
    }
    return;
  }
  const keys = Object.keys(init);
  for (let i = 0; i < keys.length; i++) h.append(keys[i], init[keys[i]]);
}

// newHeaders is new Headers(init) for the prelude's own use.
internal.newHeaders = (init) => {
  const h = new Headers(kTrusted, new Map(), "none");
  if (init !== undefined && init !== null) fill(h, init);
  return h;
};

Object.defineProperty(Headers.prototype, Symbol.toStringTag, { value: "Headers", configurable: true });

// sortedNames lists a header map's names in order (without an iterator:
// goja allocates a result object per step).
let collecting = null;
const collectName = (_, name) => { collecting.push(name); };
function sortedNames(map) {
  const names = [];
  collecting = names;
  map.forEach(collectName);
  collecting = null;
  return names.length > 1 ? names.sort() : names;
}

function sortedEntries(headers) {
  const map = mapOf(headers);
  const names = sortedNames(map);
  const out = [];
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const v = map.get(name);
    if (name === "set-cookie" && typeof v !== "string") for (let j = 0; j < v.length; j++) out.push([name, v[j]]);
    else out.push([name, joined(v)]);
  }
  return out;
}

internal.setGuard = setGuardOf;
internal.getGuard = guardOf;
// headersFrom builds Headers from trusted name/value pairs (names already
// lowercase), skipping validation.
internal.headersFrom = (flat, guard) => {
  const map = new Map();
  for (let i = 0; i < flat.length; i += 2) add(map, flat[i], flat[i + 1]);
  return new Headers(kTrusted, map, guard);
};
// appendHeaders appends headers to out as name, value, ... (sorted, each
// Set-Cookie on its own) and returns out.
function appendHeaders(out, headers) {
  const map = mapOf(headers);
  const names = sortedNames(map);
  for (let i = 0; i < names.length; i++) {
    const v = map.get(names[i]);
    if (names[i] === "set-cookie" && typeof v !== "string") for (let j = 0; j < v.length; j++) out.push(names[i], v[j]);
    else out.push(names[i], joined(v));
  }
  return out;
}
internal.appendHeaders = appendHeaders;
internal.headersFlat = (headers) => appendHeaders([], headers);
// setDefault sets a trusted header (a lowercase name, a valid value)
// unless the name is present: the content type a body implies.
internal.setDefault = (headers, name, value) => {
  const map = mapOf(headers);
  if (!map.has(name)) map.set(name, value);
};
internal.expose("Headers", Headers);
