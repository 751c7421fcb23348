// node:path (POSIX), node:querystring, node:string_decoder and node:url.

const { validateString } = internal;

// ---- path -------------------------------------------------------------------------------

function normalizeParts(path, allowAboveRoot) {
  const out = [];
  for (const seg of path.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length && out[out.length - 1] !== "..") out.pop();
      else if (allowAboveRoot) out.push("..");
      continue;
    }
    out.push(seg);
  }
  return out.join("/");
}
const path = {
  sep: "/",
  delimiter: ":",
  resolve(...args) {
    let resolved = "";
    let absolute = false;
    for (let i = args.length - 1; i >= -1 && !absolute; i--) {
      const p = i >= 0 ? args[i] : "/";
      validateString(p, `paths[${i}]`);
      if (p.length === 0) continue;
      resolved = `${p}/${resolved}`;
      absolute = p.charCodeAt(0) === 47;
    }
    resolved = normalizeParts(resolved, !absolute);
    return absolute ? `/${resolved}` : resolved.length ? resolved : ".";
  },
  normalize(p) {
    validateString(p, "path");
    if (p.length === 0) return ".";
    const abs = p.charCodeAt(0) === 47;
    const trailing = p.charCodeAt(p.length - 1) === 47;
    let out = normalizeParts(p, !abs);
    if (out.length === 0) {
      if (abs) return "/";
      return trailing ? "./" : ".";
    }
    if (trailing) out += "/";
    return abs ? `/${out}` : out;
  },
  isAbsolute(p) { validateString(p, "path"); return p.length > 0 && p.charCodeAt(0) === 47; },
  join(...args) {
    if (args.length === 0) return ".";
    for (const a of args) validateString(a, "path");
    const joined = args.filter((a) => a.length > 0).join("/");
    return joined.length ? path.normalize(joined) : ".";
  },
  relative(from, to) {
    validateString(from, "from");
    validateString(to, "to");
    if (from === to) return "";
    from = path.resolve(from);
    to = path.resolve(to);
    if (from === to) return "";
    const f = from === "/" ? [] : from.slice(1).split("/");
    const t = to === "/" ? [] : to.slice(1).split("/");
    let i = 0;
    while (i < f.length && i < t.length && f[i] === t[i]) i++;
    return [...Array(f.length - i).fill(".."), ...t.slice(i)].join("/");
  },
  toNamespacedPath(p) { return p; },
  dirname(p) {
    validateString(p, "path");
    if (p.length === 0) return ".";
    const abs = p.charCodeAt(0) === 47;
    let end = -1;
    let matched = true;
    for (let i = p.length - 1; i >= 1; --i) {
      if (p.charCodeAt(i) === 47) {
        if (!matched) { end = i; break; }
      } else {
        matched = false;
      }
    }
    if (end === -1) return abs ? "/" : ".";
    if (abs && end === 1) return "//";
    return p.slice(0, end);
  },
  basename(p, suffix) {
    validateString(p, "path");
    if (suffix !== undefined) validateString(suffix, "suffix");
    let end = p.length;
    while (end > 0 && p.charCodeAt(end - 1) === 47) end--;
    if (end === 0) return "";
    const start = p.lastIndexOf("/", end - 1) + 1;
    let base = p.slice(start, end);
    if (suffix !== undefined && suffix !== base && base.endsWith(suffix)) base = base.slice(0, base.length - suffix.length);
    return base;
  },
  extname(p) {
    validateString(p, "path");
    const base = path.basename(p);
    const dot = base.lastIndexOf(".");
    if (dot <= 0 || dot === base.length - 1 && base === "..") return dot > 0 && base !== ".." ? base.slice(dot) : "";
    return base.slice(dot);
  },
  parse(p) {
    validateString(p, "path");
    const root = p.charCodeAt(0) === 47 ? "/" : "";
    const base = path.basename(p);
    const ext = path.extname(p);
    let dir = path.dirname(p);
    if (dir === "." && !p.startsWith(".") && !p.includes("/")) dir = "";
    return { root, dir: p === "/" ? "/" : dir, base, ext, name: ext ? base.slice(0, -ext.length) : base };
  },
  format(o) {
    if (o === null || typeof o !== "object") throw internal.invalidArgType("pathObject", "of type object", o);
    const dir = o.dir || o.root;
    const base = o.base || `${o.name || ""}${o.ext ? (o.ext[0] === "." ? "" : ".") + o.ext : ""}`;
    if (!dir) return base;
    return dir === o.root ? `${dir}${base}` : `${dir}/${base}`;
  },
  matchesGlob() { throw internal.nodeError(Error, "ERR_METHOD_NOT_IMPLEMENTED", "The path.matchesGlob method is not implemented"); },
};
path.posix = path;
internal["node:path"] = path;

// ---- querystring -------------------------------------------------------------------------

const qsUnescape = (s) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/%([0-9a-fA-F]{2})/g, (m, h) => String.fromCharCode(parseInt(h, 16)));
  }
};
const qsEscape = (s) => {
  if (typeof s !== "string") s = typeof s === "object" ? String(s) : `${s}`;
  try {
    return encodeURIComponent(s);
  } catch {
    throw internal.nodeError(URIError, "ERR_INVALID_URI", "URI malformed");
  }
};
const stringifyPrimitive = (v) => {
  if (typeof v === "string") return v;
  if ((typeof v === "number" && Number.isFinite(v)) || typeof v === "bigint") return `${v}`;
  if (typeof v === "boolean") return v ? "true" : "false";
  return "";
};
const querystring = {
  escape: qsEscape,
  unescape: qsUnescape,
  unescapeBuffer: (s) => internal["node:buffer"].Buffer.from(qsUnescape(s)),
  parse(qs, sep = "&", eq = "=", options = {}) {
    const obj = Object.create(null);
    if (typeof qs !== "string" || qs.length === 0) return obj;
    sep = sep || "&";
    eq = eq || "=";
    const maxKeys = options && typeof options.maxKeys === "number" ? options.maxKeys : 1000;
    const decode = (options && options.decodeURIComponent) || qsUnescape;
    let parts = qs.split(sep);
    if (maxKeys > 0) parts = parts.slice(0, maxKeys);
    for (const part of parts) {
      if (part.length === 0 && parts.length > 1) continue;
      const idx = part.indexOf(eq);
      const rawK = idx >= 0 ? part.slice(0, idx) : part;
      const rawV = idx >= 0 ? part.slice(idx + eq.length) : "";
      const k = decode(rawK.replace(/\+/g, " "));
      const v = decode(rawV.replace(/\+/g, " "));
      if (!(k in obj)) obj[k] = v;
      else if (Array.isArray(obj[k])) obj[k].push(v);
      else obj[k] = [obj[k], v];
    }
    return obj;
  },
  stringify(obj, sep = "&", eq = "=", options = {}) {
    sep = sep || "&";
    eq = eq || "=";
    const encode = (options && options.encodeURIComponent) || qsEscape;
    if (obj === null || typeof obj !== "object") return "";
    const out = [];
    for (const k of Object.keys(obj)) {
      const v = obj[k];
      const ks = encode(stringifyPrimitive(k)) + eq;
      if (Array.isArray(v)) {
        for (const x of v) out.push(ks + encode(stringifyPrimitive(x)));
      } else {
        out.push(ks + encode(stringifyPrimitive(v)));
      }
    }
    return out.join(sep);
  },
};
querystring.decode = querystring.parse;
querystring.encode = querystring.stringify;
internal["node:querystring"] = querystring;

// ---- string_decoder --------------------------------------------------------------------------

class StringDecoder {
  #pending = null;
  constructor(encoding) {
    this.encoding = internal.normEnc(encoding);
  }
  #take(buf) {
    let b = typeof buf === "string" ? internal["node:buffer"].Buffer.from(buf) : internal.toU8(buf);
    if (b === null) throw internal.invalidArgType("buf", "an instance of Buffer, TypedArray, or DataView", buf);
    if (this.#pending) {
      b = internal.concatBytes([this.#pending, b]);
      this.#pending = null;
    }
    return b;
  }
  write(buf) {
    if (typeof buf === "string") return buf;
    const b = this.#take(buf);
    let keep = 0;
    switch (this.encoding) {
      case "utf8": {
        // An incomplete sequence at the end waits for the next write.
        for (let i = b.length - 1, n = 1; i >= 0 && n <= 3; i--, n++) {
          const c = b[i];
          if ((c & 0xc0) === 0x80) continue;
          const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
          if (need > n) keep = n;
          break;
        }
        break;
      }
      case "utf16le": {
        keep = b.length % 2;
        if (!keep && b.length >= 2) {
          const hi = b[b.length - 1];
          if (hi >= 0xd8 && hi <= 0xdb) keep = 2;
        }
        break;
      }
      case "base64":
      case "base64url":
        keep = b.length % 3;
        break;
    }
    if (keep) this.#pending = b.slice(b.length - keep);
    const body = keep ? b.subarray(0, b.length - keep) : b;
    return native.bufToString(body, this.encoding, 0, body.length);
  }
  end(buf) {
    let s = buf === undefined ? "" : this.write(buf);
    if (this.#pending) {
      const p = this.#pending;
      this.#pending = null;
      s += this.encoding === "utf8" ? "\ufffd" : native.bufToString(p, this.encoding, 0, p.length);
    }
    return s;
  }
  text(buf, offset) { return this.write(buf.subarray(offset)); }
  get lastNeed() { return this.#pending ? 1 : 0; }
  get lastTotal() { return this.#pending ? this.#pending.length + 1 : 0; }
}
internal["node:string_decoder"] = { StringDecoder };

// ---- url ---------------------------------------------------------------------------------------

function Url() {
  this.protocol = null; this.slashes = null; this.auth = null; this.host = null; this.port = null;
  this.hostname = null; this.hash = null; this.search = null; this.query = null; this.pathname = null;
  this.path = null; this.href = null;
}
const slashedProtocols = new Set(["http:", "https:", "ftp:", "gopher:", "file:", "ws:", "wss:"]);
const legacyParse = (str, parseQuery = false, slashesDenoteHost = false) => {
  if (str instanceof Url) return str;
  validateString(str, "url");
  const u = new Url();
  let rest = str.trim();
  const hashAt = rest.indexOf("#");
  if (hashAt >= 0) { u.hash = rest.slice(hashAt); rest = rest.slice(0, hashAt); }
  const qAt = rest.indexOf("?");
  if (qAt >= 0) { u.search = rest.slice(qAt); u.query = rest.slice(qAt + 1); rest = rest.slice(0, qAt); }
  else if (parseQuery) { u.search = ""; u.query = {}; }
  const proto = /^([a-zA-Z][a-zA-Z0-9+.-]*:)/.exec(rest);
  if (proto) { u.protocol = proto[1].toLowerCase(); rest = rest.slice(proto[1].length); }
  const slashes = rest.startsWith("//");
  if (slashes && (slashesDenoteHost || proto || true) && !(u.protocol === "javascript:")) {
    if (proto || slashesDenoteHost) {
      u.slashes = true;
      rest = rest.slice(2);
      let end = rest.search(/[/\\]/);
      if (end < 0) end = rest.length;
      let host = rest.slice(0, end);
      rest = rest.slice(end);
      const at = host.lastIndexOf("@");
      if (at >= 0) { u.auth = decodeURIComponent(host.slice(0, at)); host = host.slice(at + 1); }
      const port = /:(\d*)$/.exec(host);
      if (port) { u.port = port[1] || null; host = host.slice(0, port.index); }
      u.hostname = host.toLowerCase();
      u.host = u.hostname + (u.port ? `:${u.port}` : "");
      if (slashedProtocols.has(u.protocol) && rest === "") rest = "/";
    }
  }
  u.pathname = rest || (u.slashes && slashedProtocols.has(u.protocol) ? "/" : null);
  if (u.pathname === "" ) u.pathname = null;
  if (parseQuery && typeof u.query === "string") u.query = querystring.parse(u.query);
  u.path = (u.pathname || "") + (u.search || "") || null;
  u.href = legacyFormat(u);
  return u;
};
const legacyFormat = (u) => {
  if (typeof u === "string") u = legacyParse(u);
  if (u instanceof URL) return u.href;
  let auth = u.auth ? encodeURIComponent(u.auth).replace(/%3A/i, ":") + "@" : "";
  let protocol = u.protocol || "";
  if (protocol && !protocol.endsWith(":")) protocol += ":";
  let host = "";
  if (u.host) host = auth + u.host;
  else if (u.hostname) host = auth + (u.hostname.includes(":") ? `[${u.hostname}]` : u.hostname) + (u.port ? `:${u.port}` : "");
  let pathname = u.pathname || "";
  let search = u.search || "";
  if (!search && u.query && typeof u.query === "object" && Object.keys(u.query).length) search = "?" + querystring.stringify(u.query);
  else if (!search && typeof u.query === "string" && u.query) search = "?" + u.query;
  if (search && search[0] !== "?") search = "?" + search;
  let hash = u.hash || "";
  if (hash && hash[0] !== "#") hash = "#" + hash;
  if (u.slashes || slashedProtocols.has(protocol) && host) {
    host = "//" + host;
    if (pathname && pathname[0] !== "/") pathname = "/" + pathname;
  }
  return protocol + host + pathname.replace(/[?#]/g, encodeURIComponent) + search.replace("#", "%23") + hash;
};
const url = {
  Url,
  parse: legacyParse,
  format(u, options) {
    if (u instanceof URL) {
      const o = { auth: true, fragment: true, search: true, unicode: false, ...options };
      const c = new URL(u.href);
      if (!o.auth) { c.username = ""; c.password = ""; }
      if (!o.fragment) c.hash = "";
      if (!o.search) c.search = "";
      return c.href;
    }
    return legacyFormat(u);
  },
  resolve(from, to) { return new URL(to, new URL(from, "resolve://")).href.replace(/^resolve:\/\/\/?/, from.startsWith("/") ? "/" : ""); },
  resolveObject(from, to) { return legacyParse(url.resolve(from, to)); },
  domainToASCII(d) { try { return new URL(`http://${d}`).hostname; } catch { return ""; } },
  domainToUnicode(d) { return String(d); },
  fileURLToPath(u) {
    const v = typeof u === "string" ? new URL(u) : u;
    if (!(v instanceof URL)) throw internal.invalidArgType("path", "of type string or an instance of URL", u);
    if (v.protocol !== "file:") throw internal.nodeError(Error, "ERR_INVALID_URL_SCHEME", "The URL must be of scheme file");
    if (v.hostname !== "") throw internal.nodeError(TypeError, "ERR_INVALID_FILE_URL_HOST", `File URL host must be "localhost" or empty on linux`);
    if (/%2f/i.test(v.pathname)) throw internal.nodeError(TypeError, "ERR_INVALID_FILE_URL_PATH", "File URL path must not include encoded / characters");
    return decodeURIComponent(v.pathname);
  },
  pathToFileURL(p) {
    let resolved = path.resolve(p);
    if (p.endsWith("/") && !resolved.endsWith("/")) resolved += "/";
    return new URL("file://" + resolved.replace(/%/g, "%25").replace(/\\/g, "%5C").replace(/\n/g, "%0A").replace(/\r/g, "%0D").replace(/\t/g, "%09").replace(/#/g, "%23").replace(/\?/g, "%3F"));
  },
  urlToHttpOptions(u) {
    const o = {
      protocol: u.protocol, hostname: u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname,
      hash: u.hash, search: u.search, pathname: u.pathname, path: `${u.pathname || ""}${u.search || ""}`, href: u.href,
    };
    if (u.port !== "") o.port = Number(u.port);
    if (u.username || u.password) o.auth = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
    return o;
  },
};
for (const name of ["URL", "URLSearchParams"]) {
  Object.defineProperty(url, name, { enumerable: true, configurable: true, get: () => global[name] });
}
internal["node:url"] = url;
