// URL and URLSearchParams. Parsing and setters are native (WHATWG URL);
// the search-params list and its serialization live here.

const kFromParts = Symbol("url.fromParts");
const invalidURL = () => new TypeError("Invalid URL string.");
const baseArg = (base) => (base === undefined ? undefined : String(base));
// The parts of a URL are read-only and may be shared between URL objects
// (native.urlParse remembers recent inputs): a change replaces them.
let partsOf, setParts, paramsOf;

class URL {
  #parts;
  #params; // URLSearchParams, made on first use
  // (...args) rather than (url, base) and `arguments`: goja makes every
  // call of a function that mentions `arguments` much dearer. URL.length is
  // set to 1 below, as (url, base = undefined) would have it.
  constructor(...args) {
    const url = args[0];
    if (url === kFromParts) {
      this.#parts = args[1];
      return;
    }
    if (args.length === 0) throw new TypeError("Failed to construct 'URL': 1 argument required, but only 0 present.");
    const parts = native.urlParse(String(url), baseArg(args[1]));
    if (parts === null) throw invalidURL();
    this.#parts = parts;
  }
  static {
    partsOf = (u) => u.#parts;
    setParts = (u, p) => { u.#parts = p; };
    paramsOf = (u) => u.#params;
  }
  static canParse(url, base = undefined) {
    return native.urlParse(String(url), baseArg(base)) !== null;
  }
  static parse(url, base = undefined) {
    const parts = native.urlParse(String(url), baseArg(base));
    if (parts === null) return null;
    return new URL(kFromParts, parts);
  }
  get href() { return this.#parts.href; }
  set href(v) {
    const parts = native.urlParse(String(v));
    if (parts === null) throw invalidURL();
    this.#parts = parts;
    syncParams(this);
  }
  get origin() { return this.#parts.origin; }
  get protocol() { return this.#parts.protocol; }
  set protocol(v) { update(this, "protocol", v); }
  get username() { return this.#parts.username; }
  set username(v) { update(this, "username", v); }
  get password() { return this.#parts.password; }
  set password(v) { update(this, "password", v); }
  get host() { return this.#parts.host; }
  set host(v) { update(this, "host", v); }
  get hostname() { return this.#parts.hostname; }
  set hostname(v) { update(this, "hostname", v); }
  get port() { return this.#parts.port; }
  set port(v) { update(this, "port", v); }
  get pathname() { return this.#parts.pathname; }
  set pathname(v) { update(this, "pathname", v); }
  get search() { return this.#parts.search; }
  set search(v) { update(this, "search", v); syncParams(this); }
  get hash() { return this.#parts.hash; }
  set hash(v) { update(this, "hash", v); }
  get searchParams() {
    let p = this.#params;
    if (p === undefined) {
      p = new URLSearchParams(this.#parts.search);
      setOwner(p, this);
      this.#params = p;
    }
    return p;
  }
  toString() { return this.#parts.href; }
  toJSON() { return this.#parts.href; }
}
function update(url, component, value) {
  const parts = native.urlSet(partsOf(url).href, component, String(value));
  if (parts !== null) setParts(url, parts);
}
function syncParams(url) {
  const p = paramsOf(url);
  if (p) setList(p, pairs(native.formParse(partsOf(url).search.replace(/^\?/, ""))));
}
Object.defineProperty(URL, "length", { value: 1 });
internal.expose("URL", URL);

function pairs(flat) {
  const out = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

let setList, ownerOf, setOwner;

class URLSearchParams {
  #list; // [[name, value], ...], made from #flat on first use
  #flat; // [name, value, ...] as parsed from a string, until then
  #owner; // the URL the params belong to, if any
  static {
    setList = (p, list) => { p.#list = list; p.#flat = undefined; };
    ownerOf = (p) => p.#owner;
    setOwner = (p, url) => { p.#owner = url; };
  }
  constructor(init = "") {
    let list = [];
    if (init instanceof URLSearchParams) {
      list = init.#items().map(([k, v]) => [k, v]);
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
      // A query string: kept as parsed; get() and size read it as it is.
      let s = String(init);
      if (s.startsWith("?")) s = s.slice(1);
      this.#flat = native.formParse(s);
      return;
    }
    this.#list = list;
  }
  #items() {
    if (this.#list === undefined) {
      this.#list = pairs(this.#flat);
      this.#flat = undefined;
    }
    return this.#list;
  }
  get size() { return this.#list === undefined ? this.#flat.length / 2 : this.#list.length; }
  append(name, value) {
    this.#items().push([String(name), String(value)]);
    changed(this);
  }
  delete(name, value = undefined) {
    name = String(name);
    if (value === undefined) this.#list = this.#items().filter(([k]) => k !== name);
    else {
      value = String(value);
      this.#list = this.#items().filter(([k, v]) => k !== name || v !== value);
    }
    changed(this);
  }
  get(name) {
    name = String(name);
    const list = this.#list;
    if (list === undefined) {
      const flat = this.#flat;
      for (let i = 0; i < flat.length; i += 2) if (flat[i] === name) return flat[i + 1];
      return null;
    }
    for (let i = 0; i < list.length; i++) if (list[i][0] === name) return list[i][1];
    return null;
  }
  getAll(name) {
    name = String(name);
    return this.#items().filter(([k]) => k === name).map(([, v]) => v);
  }
  has(name, value = undefined) {
    name = String(name);
    if (value === undefined) return this.#items().some(([k]) => k === name);
    value = String(value);
    return this.#items().some(([k, v]) => k === name && v === value);
  }
  set(name, value) {
    name = String(name);
    value = String(value);
    const list = this.#items();
    const i = list.findIndex(([k]) => k === name);
    if (i < 0) list.push([name, value]);
    else {
      list[i][1] = value;
      this.#list = list.filter(([k], j) => j <= i || k !== name);
    }
    changed(this);
  }
  sort() {
    // Stable, by UTF-16 code units of the name.
    this.#list = this.#items()
      .map((e, i) => [e, i])
      .sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]))
      .map(([e]) => e);
    changed(this);
  }
  forEach(callback, thisArg = undefined) {
    if (typeof callback !== "function") throw new TypeError("URLSearchParams.forEach: callback must be a function");
    for (let i = 0; i < this.#items().length; i++) {
      const [k, v] = this.#items()[i];
      callback.call(thisArg, v, k, this);
    }
  }
  keys() { return this.#items().map(([k]) => k)[Symbol.iterator](); }
  values() { return this.#items().map(([, v]) => v)[Symbol.iterator](); }
  entries() { return this.#items().map(([k, v]) => [k, v])[Symbol.iterator](); }
  [Symbol.iterator]() { return this.entries(); }
  toString() {
    const flat = [];
    for (const [k, v] of this.#items()) flat.push(k, v);
    return native.formSerialize(flat);
  }
}
Object.defineProperty(URLSearchParams.prototype, Symbol.toStringTag, { value: "URLSearchParams", configurable: true });
function changed(params) {
  const url = ownerOf(params);
  if (!url) return;
  const s = params.toString();
  const parts = native.urlSet(partsOf(url).href, "search", s);
  if (parts !== null) setParts(url, parts);
}
internal.expose("URLSearchParams", URLSearchParams);
