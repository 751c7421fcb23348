// URLPattern, after the WHATWG URL Pattern standard: the tokenizer, the
// pattern parser, regular expression and pattern string generation, the
// constructor string parser, and canonicalization through URL.

const COMPONENTS = ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash"];
const SPECIAL = { "ftp": "21", "file": "", "http": "80", "https": "443", "ws": "80", "wss": "443" };
const fail = (msg) => { throw new TypeError(msg); };
const isNameStart = (c) => /[A-Za-z_$\u00AA-\uFFFF]/.test(c);
const isNameChar = (c) => /[A-Za-z0-9_$\u00AA-\uFFFF\u200C\u200D]/.test(c);
const isASCII = (c) => c.charCodeAt(0) < 128;

// ---- tokenizer ----------------------------------------------------------

function tokenize(input, strict) {
  const tokens = [];
  let i = 0;
  const add = (type, start, next, value) => { tokens.push({ type, index: start, value }); i = next; };
  const error = (start, next, msg) => {
    if (strict) fail(`Invalid pattern '${input}': ${msg}`);
    add("invalid-char", start, next, input.slice(start, next));
  };
  while (i < input.length) {
    const c = input[i];
    if (c === "*") { add("asterisk", i, i + 1, c); continue; }
    if (c === "+" || c === "?") { add("other-modifier", i, i + 1, c); continue; }
    if (c === "\\") {
      if (i === input.length - 1) { error(i, i + 1, "incomplete escape"); continue; }
      add("escaped-char", i, i + 2, input[i + 1]);
      continue;
    }
    if (c === "{") { add("open", i, i + 1, c); continue; }
    if (c === "}") { add("close", i, i + 1, c); continue; }
    if (c === ":") {
      let j = i + 1;
      while (j < input.length && (j === i + 1 ? isNameStart(input[j]) : isNameChar(input[j]))) j++;
      if (j === i + 1) { error(i, i + 1, "missing parameter name"); continue; }
      add("name", i, j, input.slice(i + 1, j));
      continue;
    }
    if (c === "(") {
      let depth = 1, j = i + 1, ok = true, value = "";
      if (input[j] === "?") { error(i, j, "regexp group cannot start with '?'"); continue; }
      while (j < input.length) {
        const d = input[j];
        if (!isASCII(d)) { ok = false; break; }
        if (d === "\\") {
          if (j === input.length - 1 || !isASCII(input[j + 1])) { ok = false; break; }
          value += d + input[j + 1];
          j += 2;
          continue;
        }
        if (d === ")") {
          if (--depth === 0) { j++; break; }
        } else if (d === "(") {
          depth++;
          if (input[j + 1] !== "?") { ok = false; break; }
        }
        value += d;
        j++;
      }
      if (!ok || depth !== 0 || value === "") { error(i, j, "invalid regexp group"); continue; }
      add("regexp", i, j, value);
      continue;
    }
    add("char", i, i + 1, c);
  }
  tokens.push({ type: "end", index: input.length, value: "" });
  return tokens;
}

// ---- pattern parser -------------------------------------------------------

const escapeRegexp = (s) => s.replace(/[.+*?^${}()[\]|/\\]/g, "\\$&");
const escapePattern = (s) => s.replace(/[+*?:{}()\\]/g, "\\$&");
const modifierOf = (t) => (t ? t.value : "");
const segmentWildcard = (opts) => `[^${escapeRegexp(opts.delimiter)}]+?`;

function parsePattern(input, opts, encode) {
  const tokens = tokenize(input, true);
  const parts = [];
  let pending = "", index = 0, nextName = 0;
  const sw = segmentWildcard(opts);
  const tryConsume = (type) => (tokens[index].type === type ? tokens[index++] : null);
  const tryModifier = () => tryConsume("other-modifier") || tryConsume("asterisk");
  const tryRegexpOrWildcard = (name) => {
    const t = tryConsume("regexp");
    return !name && !t ? tryConsume("asterisk") : t;
  };
  const required = (type) => tryConsume(type) || fail(`Invalid pattern '${input}': expected ${type}`);
  const text = () => {
    let s = "";
    for (let t; (t = tryConsume("char") || tryConsume("escaped-char"));) s += t.value;
    return s;
  };
  const flush = () => {
    if (pending === "") return;
    parts.push({ type: "fixed", value: encode(pending), modifier: "", name: "", prefix: "", suffix: "" });
    pending = "";
  };
  const addPart = (prefix, nameT, reT, suffix, modT) => {
    const modifier = modifierOf(modT);
    if (!nameT && !reT && !modifier) { pending += prefix; return; }
    flush();
    if (!nameT && !reT) {
      if (prefix !== "") parts.push({ type: "fixed", value: encode(prefix), modifier, name: "", prefix: "", suffix: "" });
      return;
    }
    let value = !reT ? sw : reT.type === "asterisk" ? ".*" : reT.value;
    let type = "regexp";
    if (value === sw) { type = "segment-wildcard"; value = ""; } else if (value === ".*") { type = "full-wildcard"; value = ""; }
    const name = nameT ? nameT.value : String(nextName++);
    if (parts.some((p) => p.name === name)) fail(`Invalid pattern '${input}': duplicate name '${name}'`);
    parts.push({ type, value, modifier, name, prefix: encode(prefix), suffix: encode(suffix) });
  };
  while (index < tokens.length) {
    const charT = tryConsume("char");
    let nameT = tryConsume("name");
    let reT = tryRegexpOrWildcard(nameT);
    if (nameT || reT) {
      let prefix = charT ? charT.value : "";
      if (prefix !== "" && prefix !== opts.prefix) { pending += prefix; prefix = ""; }
      flush();
      addPart(prefix, nameT, reT, "", tryModifier());
      continue;
    }
    const fixed = charT || tryConsume("escaped-char");
    if (fixed) { pending += fixed.value; continue; }
    if (tryConsume("open")) {
      const prefix = text();
      nameT = tryConsume("name");
      reT = tryRegexpOrWildcard(nameT);
      const suffix = text();
      required("close");
      addPart(prefix, nameT, reT, suffix, tryModifier());
      continue;
    }
    flush();
    required("end");
  }
  return parts;
}

function regexpOf(parts, opts) {
  let re = "^";
  const names = [];
  for (const p of parts) {
    const mod = p.modifier;
    if (p.type === "fixed") {
      re += mod === "" ? escapeRegexp(p.value) : `(?:${escapeRegexp(p.value)})${mod}`;
      continue;
    }
    names.push(p.name);
    const value = p.type === "segment-wildcard" ? segmentWildcard(opts) : p.type === "full-wildcard" ? ".*" : p.value;
    if (p.prefix === "" && p.suffix === "") {
      re += mod === "" || mod === "?" ? `(${value})${mod}` : `((?:${value})${mod})`;
      continue;
    }
    const pre = escapeRegexp(p.prefix), suf = escapeRegexp(p.suffix);
    if (mod === "" || mod === "?") { re += `(?:${pre}(${value})${suf})${mod}`; continue; }
    re += `(?:${pre}((?:${value})(?:${suf}${pre}(?:${value}))*)${suf})`;
    if (mod === "*") re += "?";
  }
  return { re: re + "$", names };
}

function patternStringOf(parts, opts) {
  let out = "";
  parts.forEach((p, i) => {
    const prev = parts[i - 1], next = parts[i + 1];
    if (p.type === "fixed") {
      out += p.modifier === "" ? escapePattern(p.value) : `{${escapePattern(p.value)}}${p.modifier}`;
      return;
    }
    const custom = !/^[0-9]/.test(p.name);
    let group = p.suffix !== "" || (p.prefix !== "" && p.prefix !== opts.prefix);
    if (!group && custom && p.type === "segment-wildcard" && p.modifier === "" && next && next.prefix === "" && next.suffix === "") {
      group = next.type === "fixed" ? next.value !== "" && isNameChar(next.value[0]) : /^[0-9]/.test(next.name);
    }
    if (!group && p.prefix === "" && prev && prev.type === "fixed" && prev.value.at(-1) === opts.prefix && opts.prefix !== "") group = true;
    if (group) out += "{";
    out += escapePattern(p.prefix);
    if (custom) out += ":" + p.name;
    if (p.type === "regexp") out += `(${p.value})`;
    else if (p.type === "segment-wildcard" && !custom) out += `(${segmentWildcard(opts)})`;
    else if (p.type === "full-wildcard") {
      out += !custom && (!prev || prev.type === "fixed" || prev.modifier !== "" || group || p.prefix !== "") ? "*" : "(.*)";
    }
    if (p.type === "segment-wildcard" && custom && p.suffix !== "" && isNameChar(p.suffix[0])) out += "\\";
    out += escapePattern(p.suffix);
    if (group) out += "}";
    out += p.modifier;
  });
  return out;
}

function compile(input, encode, opts, ignoreCase) {
  const parts = parsePattern(input, opts, encode);
  const { re, names } = regexpOf(parts, opts);
  let regexp;
  try {
    regexp = new RegExp(re, ignoreCase ? "ui" : "u");
  } catch {
    fail(`Invalid pattern '${input}': invalid regular expression`);
  }
  return { pattern: patternStringOf(parts, opts), regexp, names, hasRegExpGroups: parts.some((p) => p.type === "regexp") };
}

const DEFAULT = { delimiter: "", prefix: "" };
const HOSTNAME = { delimiter: ".", prefix: "" };
const PATHNAME = { delimiter: "/", prefix: "/" };

// ---- canonicalization -----------------------------------------------------

const parseOr = (s, what) => {
  try {
    return new URL(s);
  } catch {
    return fail(`Invalid ${what}`);
  }
};
const canon = {
  protocol: (v) => (v === "" ? "" : (/^[A-Za-z][A-Za-z0-9+.-]*$/.test(v) || fail("Invalid protocol"), parseOr(`${v}://dummy.invalid/`, "protocol").protocol.slice(0, -1))),
  username: (v) => { if (v === "") return ""; const u = new URL("fake://dummy.invalid/"); u.username = v; return u.username; },
  password: (v) => { if (v === "") return ""; const u = new URL("fake://dummy.invalid/"); u.password = v; return u.password; },
  hostname: (v) => {
    if (v === "") return "";
    if (/[\x00\t\n\r #%/:<>?@[\\\]^|]/.test(v)) fail("Invalid hostname");
    return parseOr(`https://${v}/`, "hostname").hostname;
  },
  ipv6: (v) => {
    if (!/^[0-9a-fA-F:.[\]]*$/.test(v)) fail("Invalid IPv6 hostname");
    return v.toLowerCase();
  },
  port: (v, protocol) => {
    if (v === "") return "";
    if (!/^[0-9]+$/.test(v)) fail("Invalid port");
    const scheme = protocol && protocol in SPECIAL ? protocol : "fake";
    return parseOr(`${scheme}://dummy.invalid:${v}/`, "port").port;
  },
  pathname: (v) => {
    if (v === "") return "";
    const slash = v[0] === "/";
    const p = parseOr("fake://dummy.invalid" + (slash ? "" : "/-") + v.replace(/\?/g, "%3F").replace(/#/g, "%23"), "pathname").pathname;
    return slash ? p : p.slice(2);
  },
  opaque: (v) => (v === "" ? "" : parseOr("fake:" + v.replace(/\?/g, "%3F").replace(/#/g, "%23"), "pathname").pathname),
  search: (v) => { if (v === "") return ""; const u = new URL("fake://dummy.invalid/"); u.search = v; return u.search.slice(1); },
  hash: (v) => { if (v === "") return ""; const u = new URL("fake://dummy.invalid/"); u.hash = v; return u.hash.slice(1); },
};

function processInit(init, type) {
  const r = {};
  if (type === "url") for (const c of COMPONENTS) r[c] = "";
  const base = (s) => (type === "pattern" ? escapePattern(s) : s);
  const has = (...names) => names.some((n) => init[n] !== undefined);
  let baseURL = null;
  if (init.baseURL !== undefined) {
    baseURL = parseOr(String(init.baseURL), "baseURL");
    if (!has("protocol")) r.protocol = base(baseURL.protocol.slice(0, -1));
    if (type !== "pattern" && !has("protocol", "hostname", "port", "username")) r.username = base(baseURL.username);
    if (type !== "pattern" && !has("protocol", "hostname", "port", "username", "password")) r.password = base(baseURL.password);
    if (!has("protocol", "hostname")) r.hostname = base(baseURL.hostname);
    if (!has("protocol", "hostname", "port")) r.port = base(baseURL.port);
    if (!has("protocol", "hostname", "port", "pathname")) r.pathname = base(baseURL.pathname);
    if (!has("protocol", "hostname", "port", "pathname", "search")) r.search = base(baseURL.search.slice(1));
    if (!has("protocol", "hostname", "port", "pathname", "search", "hash")) r.hash = base(baseURL.hash.slice(1));
  }
  const str = (n) => String(init[n]);
  if (init.protocol !== undefined) {
    const v = str("protocol").replace(/:$/, "");
    r.protocol = type === "pattern" ? v : canon.protocol(v);
  }
  if (init.username !== undefined) r.username = type === "pattern" ? str("username") : canon.username(str("username"));
  if (init.password !== undefined) r.password = type === "pattern" ? str("password") : canon.password(str("password"));
  if (init.hostname !== undefined) r.hostname = type === "pattern" ? str("hostname") : canon.hostname(str("hostname"));
  if (init.port !== undefined) r.port = type === "pattern" ? str("port") : canon.port(str("port"), r.protocol);
  if (init.pathname !== undefined) {
    let p = str("pathname");
    const absolute = p[0] === "/" || (type === "pattern" && p.length >= 2 && (p[0] === "\\" || p[0] === "{") && p[1] === "/");
    const opaque = baseURL && !(baseURL.protocol.slice(0, -1) in SPECIAL) && !baseURL.href.slice(baseURL.protocol.length).startsWith("/");
    if (baseURL && !opaque && !absolute) {
      const bp = base(baseURL.pathname);
      const slash = bp.lastIndexOf("/");
      if (slash >= 0) p = bp.slice(0, slash + 1) + p;
    }
    if (type !== "pattern") p = r.protocol === "" || r.protocol in SPECIAL ? canon.pathname(p) : canon.opaque(p);
    r.pathname = p;
  }
  if (init.search !== undefined) {
    const v = str("search").replace(/^\?/, "");
    r.search = type === "pattern" ? v : canon.search(v);
  }
  if (init.hash !== undefined) {
    const v = str("hash").replace(/^#/, "");
    r.hash = type === "pattern" ? v : canon.hash(v);
  }
  return r;
}

// ---- constructor string parser ------------------------------------------------

function parseConstructorString(input) {
  const tokens = tokenize(input, false);
  const result = {};
  let state = "init", start = 0, index = 0, inc = 1, groupDepth = 0, v6Depth = 0, special = false;
  const at = (i) => tokens[Math.min(i, tokens.length - 1)];
  const plain = (i, value) => { const t = at(i); return t.value === value && (t.type === "char" || t.type === "escaped-char" || t.type === "invalid-char"); };
  const componentString = () => input.slice(at(start).index, tokens[index].index);
  const isSearchPrefix = () => {
    if (plain(index, "?")) return true;
    if (tokens[index].value !== "?") return false;
    if (index === 0) return true;
    return !["name", "regexp", "close", "asterisk"].includes(at(index - 1).type);
  };
  const rewind = () => { index = start; inc = 0; };
  const change = (next, skip) => {
    if (state !== "init" && state !== "authority" && state !== "done") result[state] = componentString();
    if (state !== "init" && next !== "done") {
      const pre = ["protocol", "authority", "username", "password"];
      if (pre.includes(state) && ["port", "pathname", "search", "hash"].includes(next) && result.hostname === undefined) result.hostname = "";
      if ([...pre, "hostname", "port"].includes(state) && (next === "search" || next === "hash") && result.pathname === undefined) result.pathname = special ? "/" : "";
      if ([...pre, "hostname", "port", "pathname"].includes(state) && next === "hash" && result.search === undefined) result.search = "";
    }
    state = next;
    index += skip;
    start = index;
    inc = 0;
  };
  while (index < tokens.length) {
    inc = 1;
    const t = tokens[index];
    if (t.type === "end") {
      if (state === "init") {
        rewind();
        if (plain(index, "#")) change("hash", 1);
        else if (isSearchPrefix()) change("search", 1);
        else change("pathname", 0);
        index += inc;
        continue;
      }
      if (state === "authority") { rewind(); state = "hostname"; index += inc; continue; }
      change("done", 0);
      break;
    }
    if (t.type === "open") { groupDepth++; index += inc; continue; }
    if (groupDepth > 0) {
      if (t.type === "close") groupDepth--;
      else { index += inc; continue; }
    }
    switch (state) {
      case "init":
        if (plain(index, ":")) { rewind(); state = "protocol"; }
        break;
      case "protocol":
        if (plain(index, ":")) {
          const proto = compile(componentString(), canon.protocol, DEFAULT, false);
          special = Object.keys(SPECIAL).some((s) => proto.regexp.test(s));
          let next = "pathname", skip = 1;
          if (plain(index + 1, "/") && plain(index + 2, "/")) { next = "authority"; skip = 3; } else if (special) next = "authority";
          change(next, skip);
        }
        break;
      case "authority":
        if (plain(index, "@")) { rewind(); state = "username"; } else if (plain(index, "/") || isSearchPrefix() || plain(index, "#")) { rewind(); state = "hostname"; }
        break;
      case "username":
        if (plain(index, ":")) change("password", 1);
        else if (plain(index, "@")) change("hostname", 1);
        break;
      case "password":
        if (plain(index, "@")) change("hostname", 1);
        break;
      case "hostname":
        if (plain(index, "[")) v6Depth++;
        else if (plain(index, "]")) v6Depth--;
        else if (plain(index, ":") && v6Depth === 0) change("port", 1);
        else if (plain(index, "/")) change("pathname", 0);
        else if (isSearchPrefix()) change("search", 1);
        else if (plain(index, "#")) change("hash", 1);
        break;
      case "port":
        if (plain(index, "/")) change("pathname", 0);
        else if (isSearchPrefix()) change("search", 1);
        else if (plain(index, "#")) change("hash", 1);
        break;
      case "pathname":
        if (isSearchPrefix()) change("search", 1);
        else if (plain(index, "#")) change("hash", 1);
        break;
      case "search":
        if (plain(index, "#")) change("hash", 1);
        break;
    }
    index += inc;
  }
  if (result.hostname !== undefined && result.port === undefined) result.port = "";
  return result;
}

// ---- URLPattern -------------------------------------------------------------------

const kP = Symbol("urlpattern");
const isIPv6Pattern = (s) => s.length >= 2 && (s[0] === "[" || (s[0] === "{" && s[1] === "[") || (s[0] === "\\" && s[1] === "["));

class URLPattern {
  constructor(input = {}, baseURL = undefined, options = undefined) {
    if (baseURL !== null && typeof baseURL === "object" && options === undefined) { options = baseURL; baseURL = undefined; }
    const ignoreCase = !!(options && options.ignoreCase);
    let init;
    if (typeof input === "string") {
      init = parseConstructorString(input);
      if (baseURL === undefined && init.protocol === undefined) fail("Relative constructor string must have a base URL.");
      if (baseURL !== undefined) init.baseURL = String(baseURL);
    } else {
      if (input === null || typeof input !== "object") fail("Invalid URLPattern input.");
      if (baseURL !== undefined) fail("A base URL must not be given with a URLPatternInit.");
      init = input;
    }
    const p = processInit(init, "pattern");
    for (const c of COMPONENTS) if (p[c] === undefined) p[c] = "*";
    if (p.protocol in SPECIAL && p.port === SPECIAL[p.protocol]) p.port = "";
    const c = {};
    c.protocol = compile(p.protocol, canon.protocol, DEFAULT, false);
    c.username = compile(p.username, canon.username, DEFAULT, false);
    c.password = compile(p.password, canon.password, DEFAULT, false);
    c.hostname = compile(p.hostname, isIPv6Pattern(p.hostname) ? canon.ipv6 : canon.hostname, HOSTNAME, false);
    c.port = compile(p.port, (v) => canon.port(v, p.protocol), DEFAULT, false);
    const special = Object.keys(SPECIAL).some((s) => c.protocol.regexp.test(s));
    c.pathname = special ? compile(p.pathname, canon.pathname, PATHNAME, ignoreCase) : compile(p.pathname, canon.opaque, DEFAULT, ignoreCase);
    c.search = compile(p.search, canon.search, DEFAULT, ignoreCase);
    c.hash = compile(p.hash, canon.hash, DEFAULT, ignoreCase);
    internal.define(this, kP, c);
  }
  test(input = {}, baseURL = undefined) { return match(this, input, baseURL) !== null; }
  exec(input = {}, baseURL = undefined) { return match(this, input, baseURL); }
  get hasRegExpGroups() { return COMPONENTS.some((c) => this[kP][c].hasRegExpGroups); }
}
for (const c of COMPONENTS) Object.defineProperty(URLPattern.prototype, c, { get() { return this[kP][c].pattern; }, enumerable: true, configurable: true });
Object.defineProperty(URLPattern.prototype, Symbol.toStringTag, { value: "URLPattern", configurable: true });

function match(pattern, input, baseURL) {
  const c = pattern[kP];
  const inputs = [input];
  let values;
  if (typeof input === "string" || input instanceof URL) {
    if (baseURL !== undefined) inputs.push(String(baseURL));
    let url;
    try {
      url = baseURL !== undefined ? new URL(String(input), String(baseURL)) : new URL(String(input));
    } catch {
      return null;
    }
    values = {
      protocol: url.protocol.slice(0, -1), username: url.username, password: url.password, hostname: url.hostname,
      port: url.port, pathname: url.pathname, search: url.search.slice(1), hash: url.hash.slice(1),
    };
  } else {
    if (input === null || typeof input !== "object") fail("Invalid URLPattern input.");
    if (baseURL !== undefined) fail("A base URL must not be given with a URLPatternInit.");
    try {
      values = processInit(input, "url");
    } catch {
      return null;
    }
  }
  const out = { inputs };
  for (const k of COMPONENTS) {
    const m = c[k].regexp.exec(values[k]);
    if (m === null) return null;
    const groups = {};
    c[k].names.forEach((n, i) => { groups[n] = m[i + 1]; });
    out[k] = { input: values[k], groups };
  }
  return out;
}

internal.expose("URLPattern", URLPattern);
