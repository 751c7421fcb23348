// URL and URLSearchParams. Parsing and setters are native (WHATWG URL);
// the search-params list and its serialization live here.

const kParts = Symbol("url.parts");
const kParams = Symbol("url.params");
const kList = Symbol("params.list");
const kOwner = Symbol("params.url");
const invalidURL = () => new TypeError("Invalid URL string.");
const baseArg = (base) => (base === undefined ? undefined : String(base));

class URL {
  constructor(url, base = undefined) {
    if (arguments.length === 0) throw new TypeError("Failed to construct 'URL': 1 argument required, but only 0 present.");
    const parts = native.urlParse(String(url), baseArg(base));
    if (parts === null) throw invalidURL();
    internal.define(this, kParts, parts);
    internal.define(this, kParams, null);
  }
  static canParse(url, base = undefined) {
    return native.urlParse(String(url), baseArg(base)) !== null;
  }
  static parse(url, base = undefined) {
    const parts = native.urlParse(String(url), baseArg(base));
    if (parts === null) return null;
    const u = Object.create(URL.prototype);
    internal.define(u, kParts, parts);
    internal.define(u, kParams, null);
    return u;
  }
  get href() { return this[kParts].href; }
  set href(v) {
    const parts = native.urlParse(String(v));
    if (parts === null) throw invalidURL();
    this[kParts] = parts;
    syncParams(this);
  }
  get origin() { return this[kParts].origin; }
  get protocol() { return this[kParts].protocol; }
  set protocol(v) { update(this, "protocol", v); }
  get username() { return this[kParts].username; }
  set username(v) { update(this, "username", v); }
  get password() { return this[kParts].password; }
  set password(v) { update(this, "password", v); }
  get host() { return this[kParts].host; }
  set host(v) { update(this, "host", v); }
  get hostname() { return this[kParts].hostname; }
  set hostname(v) { update(this, "hostname", v); }
  get port() { return this[kParts].port; }
  set port(v) { update(this, "port", v); }
  get pathname() { return this[kParts].pathname; }
  set pathname(v) { update(this, "pathname", v); }
  get search() { return this[kParts].search; }
  set search(v) { update(this, "search", v); syncParams(this); }
  get hash() { return this[kParts].hash; }
  set hash(v) { update(this, "hash", v); }
  get searchParams() {
    if (!this[kParams]) {
      const p = new URLSearchParams(this[kParts].search);
      p[kOwner] = this;
      this[kParams] = p;
    }
    return this[kParams];
  }
  toString() { return this[kParts].href; }
  toJSON() { return this[kParts].href; }
}
function update(url, component, value) {
  const parts = native.urlSet(url[kParts].href, component, String(value));
  if (parts !== null) url[kParts] = parts;
}
function syncParams(url) {
  const p = url[kParams];
  if (p) p[kList] = pairs(native.formParse(url[kParts].search.replace(/^\?/, "")));
}
internal.expose("URL", URL);

const pairs = (flat) => {
  const out = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
};

class URLSearchParams {
  constructor(init = "") {
    internal.define(this, kOwner, null);
    let list = [];
    if (init instanceof URLSearchParams) {
      list = init[kList].map(([k, v]) => [k, v]);
    } else if (init !== null && (typeof init === "object" || typeof init === "function")) {
      if (typeof init[Symbol.iterator] === "function") {
        for (const pair of init) {
          const p = typeof pair === "string" ? null : Array.from(pair);
          if (p === null || p.length !== 2) {
            throw new TypeError("To initialize a URLSearchParams object from a sequence, each inner sequence must have exactly two elements.");
          }
          list.push([String(p[0]), String(p[1])]);
        }
      } else {
        for (const k of Object.keys(init)) list.push([k, String(init[k])]);
      }
    } else {
      let s = String(init);
      if (s.startsWith("?")) s = s.slice(1);
      list = pairs(native.formParse(s));
    }
    internal.define(this, kList, list);
  }
  get size() { return this[kList].length; }
  append(name, value) {
    this[kList].push([String(name), String(value)]);
    changed(this);
  }
  delete(name, value = undefined) {
    name = String(name);
    if (value === undefined) this[kList] = this[kList].filter(([k]) => k !== name);
    else {
      value = String(value);
      this[kList] = this[kList].filter(([k, v]) => k !== name || v !== value);
    }
    changed(this);
  }
  get(name) {
    name = String(name);
    const e = this[kList].find(([k]) => k === name);
    return e ? e[1] : null;
  }
  getAll(name) {
    name = String(name);
    return this[kList].filter(([k]) => k === name).map(([, v]) => v);
  }
  has(name, value = undefined) {
    name = String(name);
    if (value === undefined) return this[kList].some(([k]) => k === name);
    value = String(value);
    return this[kList].some(([k, v]) => k === name && v === value);
  }
  set(name, value) {
    name = String(name);
    value = String(value);
    const list = this[kList];
    const i = list.findIndex(([k]) => k === name);
    if (i < 0) list.push([name, value]);
    else {
      list[i][1] = value;
      this[kList] = list.filter(([k], j) => j <= i || k !== name);
    }
    changed(this);
  }
  sort() {
    // Stable, by UTF-16 code units of the name.
    this[kList] = this[kList]
      .map((e, i) => [e, i])
      .sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]))
      .map(([e]) => e);
    changed(this);
  }
  forEach(callback, thisArg = undefined) {
    if (typeof callback !== "function") throw new TypeError("URLSearchParams.forEach: callback must be a function");
    for (let i = 0; i < this[kList].length; i++) {
      const [k, v] = this[kList][i];
      callback.call(thisArg, v, k, this);
    }
  }
  keys() { return this[kList].map(([k]) => k)[Symbol.iterator](); }
  values() { return this[kList].map(([, v]) => v)[Symbol.iterator](); }
  entries() { return this[kList].map(([k, v]) => [k, v])[Symbol.iterator](); }
  [Symbol.iterator]() { return this.entries(); }
  toString() {
    const flat = [];
    for (const [k, v] of this[kList]) flat.push(k, v);
    return native.formSerialize(flat);
  }
}
Object.defineProperty(URLSearchParams.prototype, Symbol.toStringTag, { value: "URLSearchParams", configurable: true });
function changed(params) {
  const url = params[kOwner];
  if (!url) return;
  const s = params.toString();
  const parts = native.urlSet(url[kParts].href, "search", s);
  if (parts !== null) url[kParts] = parts;
}
internal.expose("URLSearchParams", URLSearchParams);
