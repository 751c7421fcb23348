// Built-ins goja lacks, and the helpers every other prelude file uses.
//
// This is the one file every isolate runs when it starts. The others are
// loaded on demand (prelude.go): a global or internal name one of them
// defines is looked up through the prototype of the global object (or of
// `internal`), which runs that file the first time, in the same isolate.

const define = (obj, name, value) =>
  Object.defineProperty(obj, name, { value, writable: true, configurable: true, enumerable: false });
internal.define = define;
// originals keeps what the prelude exposed under each name, whatever a
// script later puts there (the wire format recognizes the prelude's own
// classes).
const originals = Object.create(null);
internal.originals = originals;
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
// expose defines a global. A file loaded on demand after a script has
// assigned the name itself leaves the script's value in place.
internal.expose = (name, value) => {
  originals[name] = value;
  if (!hasOwn(global, name)) define(global, name, value);
};
internal.kCreate = Symbol("create");
// settle calls done(true, value) or done(false, error) once value (a
// promise, a thenable or anything else) settles (Go's isolate.await).
internal.settle = (value, done) => {
  Promise.resolve(value).then((v) => done(true, v), (e) => done(false, e));
};

// ---- JSON.parse with V8's error texts ---------------------------------------
// goja's parser reports a bad text in its own words; scripts (and their
// tests) read V8's. On a SyntaxError the text is scanned again natively
// (native_json.go) for the first error and its position, in UTF-16 units.
{
  const parse = JSON.parse;
  const Syntax = SyntaxError;
  const lineTexts = [
    "", "", "Unexpected number", "Expected property name or '}'", "Expected ',' or ']' after array element",
    "Expected ',' or '}' after property value", "Expected ':' after property name", "Expected double-quoted property name",
    "Unterminated string", "Bad control character in string literal", "Bad escaped character", "Bad Unicode escape",
    "No number after minus sign", "Exponent part is missing a number", "Unterminated fractional number",
    "Unexpected non-whitespace character after JSON",
  ];
  const message = (s, kind, pos) => {
    if (kind === 0) return "Unexpected end of JSON input";
    if (kind === 1) {
      if (s === "NaN" || s === "Infinity" || s === "undefined" || s === "[object Object]") return `"${s}" is not valid JSON`;
      const t = `Unexpected token '${s[pos]}', `;
      if (s.length < 21) return `${t}"${s}" is not valid JSON`;
      if (pos < 10) return `${t}"${s.slice(0, pos + 10)}"... is not valid JSON`;
      if (pos < s.length - 10) return `${t}..."${s.slice(pos - 10, pos + 10)}"... is not valid JSON`;
      return `${t}..."${s.slice(pos - 10)}" is not valid JSON`;
    }
    let line = 1;
    for (let i = s.indexOf("\n"); i !== -1 && i < pos; i = s.indexOf("\n", i + 1)) line++;
    const column = pos - s.lastIndexOf("\n", pos - 1);
    const where = ` position ${pos} (line ${line} column ${column})`;
    return kind === 15 ? `${lineTexts[kind]} at${where}` : `${lineTexts[kind]} in JSON at${where}`;
  };
  define(JSON, "parse", {
    parse(text, reviver) {
      const s = typeof text === "string" ? text : `${text}`;
      try {
        return parse(s, reviver);
      } catch (e) {
        if (e instanceof Syntax) {
          const found = native.jsonSyntaxError(s);
          if (found !== null) throw new Syntax(message(s, found[0], found[1]));
        }
        throw e;
      }
    },
  }.parse);
}

// ---- missing language built-ins -------------------------------------------

// esbuild's helpers look symbols up as Symbol[name] and fall back to
// Symbol.for("Symbol." + name); using the same registered symbols keeps
// bundled for-await loops and `using` declarations working.
for (const name of ["asyncIterator", "dispose", "asyncDispose"]) {
  if (!Symbol[name]) Object.defineProperty(Symbol, name, { value: Symbol.for("Symbol." + name) });
}

if (!Promise.withResolvers) {
  define(Promise, "withResolvers", function withResolvers() {
    let resolve, reject;
    const promise = new this((res, rej) => { resolve = res; reject = rej; });
    return { promise, resolve, reject };
  });
}
if (!Promise.try) {
  define(Promise, "try", function (fn, ...args) {
    return new this((resolve) => resolve(fn(...args)));
  });
}
const groupBy = (items, keyFn, make, add) => {
  const out = make();
  let i = 0;
  for (const item of items) add(out, keyFn(item, i++), item);
  return out;
};
if (!Object.groupBy) {
  define(Object, "groupBy", (items, keyFn) =>
    groupBy(items, keyFn, () => Object.create(null), (o, k, v) => {
      k = typeof k === "symbol" ? k : String(k);
      (o[k] || (o[k] = [])).push(v);
    }));
}
if (!Map.groupBy) {
  define(Map, "groupBy", (items, keyFn) =>
    groupBy(items, keyFn, () => new Map(), (m, k, v) => {
      if (!m.has(k)) m.set(k, []);
      m.get(k).push(v);
    }));
}
if (!Array.fromAsync) {
  define(Array, "fromAsync", async function fromAsync(items, mapFn, thisArg) {
    const out = [];
    if (items[Symbol.asyncIterator]) {
      const it = items[Symbol.asyncIterator]();
      for (;;) {
        const r = await it.next();
        if (r.done) break;
        out.push(mapFn ? await mapFn.call(thisArg, r.value, out.length) : r.value);
      }
    } else {
      for (const v of items) out.push(mapFn ? await mapFn.call(thisArg, await v, out.length) : await v);
    }
    return out;
  });
}
if (!Error.captureStackTrace) {
  define(Error, "captureStackTrace", function captureStackTrace(target) {
    if (target === null || typeof target !== "object") throw new TypeError("Invalid argument");
    const lines = String(new Error().stack || "").split("\n").slice(2);
    const head = target.name !== undefined ? `${target.name}: ${target.message}` : "Error";
    define(target, "stack", [head, ...lines].join("\n"));
  });
}
if (Error.stackTraceLimit === undefined) Error.stackTraceLimit = 10;
if (!String.prototype.isWellFormed) {
  define(String.prototype, "isWellFormed", function isWellFormed() {
    return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(String(this));
  });
  define(String.prototype, "toWellFormed", function toWellFormed() {
    return String(this).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
  });
}
// goja's %TypedArray%.from rejects a string source; the spec iterates it
// (Uint8Array.from(atob(s), (c) => c.charCodeAt(0)) is a common idiom).
{
  const TypedArray = Object.getPrototypeOf(Uint8Array);
  const originalFrom = TypedArray.from;
  define(TypedArray, "from", function from(source, ...rest) {
    return originalFrom.call(this, typeof source === "string" ? Array.from(source) : source, ...rest);
  });
}
if (!("detached" in ArrayBuffer.prototype)) {
  Object.defineProperty(ArrayBuffer.prototype, "detached", {
    get() { return native.isDetached(this); }, configurable: true,
  });
}
if (!ArrayBuffer.prototype.transfer) {
  define(ArrayBuffer.prototype, "transfer", function transfer(length) {
    const n = length === undefined ? this.byteLength : Number(length);
    const out = new ArrayBuffer(n);
    new Uint8Array(out).set(new Uint8Array(this, 0, Math.min(n, this.byteLength)));
    native.detach(this);
    return out;
  });
}
// The locale-sensitive methods of the built-ins format with Intl
// (24_intl.js, 25_intl_number.js), which loads on first use.
{
  const dateMethods = { toLocaleString: ["any", "all"], toLocaleDateString: ["date", "date"], toLocaleTimeString: ["time", "time"] };
  for (const [name, [required, defaults]] of Object.entries(dateMethods)) {
    define(Date.prototype, name, {
      [name](locales = undefined, options = undefined) {
        if (!(this instanceof Date)) throw new TypeError(`Method Date.prototype.${name} called on incompatible receiver`);
        return internal.dateToLocale(this, locales, options, required, defaults);
      },
    }[name]);
  }
  define(Number.prototype, "toLocaleString", function toLocaleString(locales = undefined, options = undefined) {
    return internal.numberToLocale(Number.prototype.valueOf.call(this), locales, options);
  });
  define(BigInt.prototype, "toLocaleString", function toLocaleString(locales = undefined, options = undefined) {
    return internal.numberToLocale(BigInt.prototype.valueOf.call(this), locales, options);
  });
  define(String.prototype, "localeCompare", function localeCompare(that, locales = undefined, options = undefined) {
    if (this === null || this === undefined) throw new TypeError("String.prototype.localeCompare called on null or undefined");
    return internal.stringCompare(String(this), String(that), locales, options);
  });
}
// Workers run in UTC, which V8 names "Coordinated Universal Time" in
// Date's toString() and toTimeString(); goja says "UTC".
for (const name of ["toString", "toTimeString"]) {
  const original = Date.prototype[name];
  define(Date.prototype, name, {
    [name]() {
      const s = original.call(this);
      return s.endsWith(" (UTC)") ? s.slice(0, -5) + "(Coordinated Universal Time)" : s;
    },
  }[name]);
}
