// node:util: inspect and format as Node prints, promisify, types, and the
// deep equality node:assert shares.

const customInspect = Symbol.for("nodejs.util.inspect.custom");
const kCustomPromisify = Symbol.for("nodejs.util.promisify.custom");
const TypedArray = Object.getPrototypeOf(Uint8Array);
const toStringTag = (v) => Object.prototype.toString.call(v).slice(8, -1);

// ---- types --------------------------------------------------------------------------

const typedArrayName = (v) => (ArrayBuffer.isView(v) && !(v instanceof DataView) ? v[Symbol.toStringTag] : undefined);
const types = {
  isAnyArrayBuffer: (v) => v instanceof ArrayBuffer || (typeof SharedArrayBuffer !== "undefined" && v instanceof SharedArrayBuffer),
  isArrayBuffer: (v) => v instanceof ArrayBuffer,
  isSharedArrayBuffer: (v) => typeof SharedArrayBuffer !== "undefined" && v instanceof SharedArrayBuffer,
  isArrayBufferView: (v) => ArrayBuffer.isView(v),
  isAsyncFunction: (v) => typeof v === "function" && toStringTag(v) === "AsyncFunction",
  isGeneratorFunction: (v) => typeof v === "function" && /GeneratorFunction$/.test(toStringTag(v)),
  isGeneratorObject: (v) => toStringTag(v) === "Generator",
  isBooleanObject: (v) => typeof v === "object" && v !== null && toStringTag(v) === "Boolean",
  isNumberObject: (v) => typeof v === "object" && v !== null && toStringTag(v) === "Number",
  isStringObject: (v) => typeof v === "object" && v !== null && toStringTag(v) === "String",
  isSymbolObject: (v) => typeof v === "object" && v !== null && toStringTag(v) === "Symbol",
  isBigIntObject: (v) => typeof v === "object" && v !== null && toStringTag(v) === "BigInt",
  isBoxedPrimitive: (v) => ["Boolean", "Number", "String", "Symbol", "BigInt"].includes(toStringTag(v)) && typeof v === "object",
  isDataView: (v) => v instanceof DataView,
  isDate: (v) => v instanceof Date,
  isMap: (v) => v instanceof Map,
  isSet: (v) => v instanceof Set,
  isWeakMap: (v) => v instanceof WeakMap,
  isWeakSet: (v) => v instanceof WeakSet,
  isMapIterator: (v) => toStringTag(v) === "Map Iterator",
  isSetIterator: (v) => toStringTag(v) === "Set Iterator",
  isNativeError: (v) => v instanceof Error,
  isPromise: (v) => v instanceof Promise,
  isProxy: (v) => native.isProxy(v),
  isRegExp: (v) => v instanceof RegExp,
  isTypedArray: (v) => v instanceof TypedArray,
  isExternal: () => false,
  isModuleNamespaceObject: (v) => toStringTag(v) === "Module",
  isKeyObject: (v) => !!(v && v[Symbol.for("celld.keyObject")]),
  isCryptoKey: (v) => typeof CryptoKey !== "undefined" && v instanceof CryptoKey,
};
for (const t of ["Uint8Array", "Uint8ClampedArray", "Uint16Array", "Uint32Array", "Int8Array", "Int16Array", "Int32Array",
  "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"]) {
  types[`is${t}`] = (v) => typedArrayName(v) === t;
}

// ---- inspect -------------------------------------------------------------------------

const inspectDefaults = {
  showHidden: false, depth: 2, colors: false, customInspect: true, showProxy: false,
  maxArrayLength: 100, maxStringLength: 10000, breakLength: 80, compact: 3, sorted: false, getters: false,
  numericSeparator: false,
};
const identifier = /^[a-zA-Z_][a-zA-Z_0-9]*$/;
const quote = (s) => {
  const q = !s.includes("'") ? "'" : !s.includes('"') ? '"' : !s.includes("`") && !s.includes("${") ? "`" : "'";
  const body = s.replace(/[\\\x00-\x1f\x7f]/g, (c) => {
    switch (c) {
      case "\\": return "\\\\";
      case "\n": return "\\n";
      case "\t": return "\\t";
      case "\r": return "\\r";
      case "\b": return "\\b";
      case "\f": return "\\f";
      case "\v": return "\\v";
    }
    return "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0").toUpperCase();
  });
  return q + (q === "'" ? body.replace(/'/g, "\\'") : body) + q;
};
const keyString = (k) => (typeof k === "symbol" ? k.toString() : identifier.test(k) ? k : quote(k));

function formatPrimitive(v, ctx) {
  switch (typeof v) {
    case "string": {
      let s = v;
      let trailer = "";
      if (s.length > ctx.maxStringLength) {
        trailer = `... ${s.length - ctx.maxStringLength} more character${s.length - ctx.maxStringLength > 1 ? "s" : ""}`;
        s = s.slice(0, ctx.maxStringLength);
      }
      return quote(s) + trailer;
    }
    case "number": return Object.is(v, -0) ? "-0" : String(v);
    case "bigint": return `${v}n`;
    case "boolean": return String(v);
    case "undefined": return "undefined";
    case "symbol": return v.toString();
  }
  return String(v);
}

const ctorName = (v) => {
  let o = v;
  while (o) {
    const d = Object.getOwnPropertyDescriptor(o, "constructor");
    if (d && typeof d.value === "function" && d.value.name) return d.value.name;
    o = Object.getPrototypeOf(o);
  }
  return null;
};

function formatValue(ctx, v, depth, typedArrayLike) {
  if (typeof v !== "object" && typeof v !== "function") return formatPrimitive(v, ctx);
  if (v === null) return "null";
  if (ctx.customInspect) {
    const custom = v[customInspect];
    if (typeof custom === "function" && custom !== inspect) {
      const r = custom.call(v, ctx.depth - depth, { ...ctx, stylize: (s) => s }, inspect);
      if (r !== v) return typeof r === "string" ? r : formatValue(ctx, r, depth);
    }
  }
  if (ctx.seen.includes(v)) {
    if (!ctx.circular) ctx.circular = new Map();
    if (!ctx.circular.has(v)) ctx.circular.set(v, ctx.circular.size + 1);
    return `[Circular *${ctx.circular.get(v)}]`;
  }
  const s = formatRaw(ctx, v, depth);
  if (ctx.circular && ctx.circular.has(v)) return `<ref *${ctx.circular.get(v)}> ${s}`;
  return s;
}

function formatRaw(ctx, v, depth) {
  const ctor = ctorName(v);
  let keys = Object.keys(v);
  if (ctx.showHidden) keys = Object.getOwnPropertyNames(v);
  const syms = Object.getOwnPropertySymbols(v).filter((s) => ctx.showHidden || Object.getOwnPropertyDescriptor(v, s).enumerable);
  let braces, base = "", extras = "object", entries = null;
  const prefix = (fallback, size) => {
    const name = ctor || `[${fallback}: null prototype]`;
    return `${name}${size !== undefined ? `(${size})` : ""} `;
  };
  if (Array.isArray(v)) {
    braces = [`${ctor === "Array" ? "" : prefix("Array", v.length)}[`, "]"];
    extras = "array";
    keys = keys.filter((k) => !(String(k >>> 0) === k && k >>> 0 < v.length));
    if (v.length === 0 && keys.length + syms.length === 0) return `${braces[0]}]`;
    entries = (d) => formatList(ctx, v, d, v.length);
  } else if (typeof v === "function") {
    const kind = types.isAsyncFunction(v) ? "AsyncFunction" : types.isGeneratorFunction(v) ? "GeneratorFunction" : /^class\s/.test(Function.prototype.toString.call(v)) ? "class" : "Function";
    base = kind === "class" ? `[class ${v.name || "(anonymous)"}]` : `[${kind}${v.name ? `: ${v.name}` : " (anonymous)"}]`;
    keys = keys.filter((k) => k !== "prototype");
    if (keys.length + syms.length === 0) return base;
    braces = ["{", "}"];
  } else if (v instanceof RegExp) {
    base = RegExp.prototype.toString.call(v);
    if (keys.length + syms.length === 0) return base;
    braces = ["{", "}"];
  } else if (v instanceof Date) {
    base = Number.isNaN(v.getTime()) ? "Invalid Date" : v.toISOString();
    if (keys.length + syms.length === 0) return base;
    braces = ["{", "}"];
  } else if (v instanceof Error) {
    base = formatError(v);
    keys = keys.filter((k) => k !== "stack" && k !== "message");
    if (keys.length + syms.length === 0) return base;
    braces = ["{", "}"];
  } else if (v instanceof Map) {
    braces = [`${prefix("Map", v.size)}{`, "}"];
    if (v.size === 0 && keys.length + syms.length === 0) return `${braces[0]}}`;
    entries = (d) => {
      const out = [];
      for (const [k, val] of v) out.push(`${formatValue(ctx, k, d)} => ${formatValue(ctx, val, d)}`);
      return out;
    };
  } else if (v instanceof Set) {
    braces = [`${prefix("Set", v.size)}{`, "}"];
    if (v.size === 0 && keys.length + syms.length === 0) return `${braces[0]}}`;
    entries = (d) => [...v].map((x) => formatValue(ctx, x, d));
  } else if (v instanceof TypedArray) {
    braces = [`${prefix(v[Symbol.toStringTag], v.length)}[`, "]"];
    if (v.length === 0 && keys.length + syms.length === 0) return `${braces[0]}]`;
    keys = keys.filter((k) => !(String(k >>> 0) === k));
    entries = () => {
      const n = Math.min(v.length, ctx.maxArrayLength);
      const out = [];
      for (let i = 0; i < n; i++) out.push(formatPrimitive(v[i], ctx));
      if (v.length > n) out.push(`... ${v.length - n} more item${v.length - n > 1 ? "s" : ""}`);
      return out;
    };
    extras = "array";
  } else if (v instanceof ArrayBuffer) {
    const u = new Uint8Array(v);
    const hex = Array.from(u.subarray(0, 50), (b) => b.toString(16).padStart(2, "0")).join(" ");
    braces = [`ArrayBuffer {`, "}"];
    entries = () => [`[Uint8Contents]: <${hex}${u.length > 50 ? ` ... ${u.length - 50} more bytes` : ""}>`, `byteLength: ${v.byteLength}`];
  } else if (v instanceof Promise) {
    braces = ["Promise {", "}"];
    entries = () => ["<pending>"];
  } else if (v instanceof WeakMap || v instanceof WeakSet) {
    return `${ctor} { <items unknown> }`;
  } else if (types.isBoxedPrimitive(v)) {
    const t = toStringTag(v);
    if (t === "String") keys = keys.filter((k) => !(String(k >>> 0) === k && k >>> 0 < v.length));
    base = `[${t}: ${formatPrimitive(v.valueOf(), ctx)}]`;
    if (keys.length + syms.length === 0) return base;
    braces = ["{", "}"];
  } else {
    const tag = v[Symbol.toStringTag];
    let name = ctor === "Object" ? "" : ctor === null ? "[Object: null prototype] " : `${ctor} `;
    if (typeof tag === "string" && tag !== "" && tag !== ctor) name = `${name || "Object "}[${tag}] `;
    braces = [`${name}{`, "}"];
    if (keys.length + syms.length === 0) {
      return `${name}{}`;
    }
  }
  if (depth > ctx.depth) {
    if (Array.isArray(v)) return "[Array]";
    return `[${ctor || toStringTag(v)}]`;
  }
  ctx.seen.push(v);
  ctx.currentDepth = depth;
  // Children are measured against breakLength two columns further in.
  ctx.indentation += 2;
  const output = entries ? entries(depth + 1) : [];
  for (const k of keys) output.push(formatProperty(ctx, v, k, depth + 1, extras));
  for (const s of syms) output.push(formatProperty(ctx, v, s, depth + 1, extras));
  ctx.indentation -= 2;
  ctx.seen.pop();
  return reduce(ctx, output, base, braces, depth, extras === "array" ? v : undefined);
}

// groupColumns lays the entries of a long array out in aligned columns,
// as Node prints more than six short entries: numbers right-aligned,
// anything else left-aligned. It returns output unchanged when the
// entries are too long or too uneven to share lines.
function groupColumns(ctx, output, arr) {
  const more = output.length > ctx.maxArrayLength ? 1 : 0;
  const n = output.length - more;
  const widths = output.slice(0, n).map((o) => o.length);
  const widest = Math.max(...widths);
  const total = widths.reduce((a, w) => a + w + 2, 0);
  const cell = widest + 2;
  if (cell * 3 + ctx.indentation >= ctx.breakLength || (total / cell <= 5 && widest > 6)) return output;
  const bias = Math.sqrt(cell - total / output.length);
  const biased = Math.max(cell - 3 - bias, 1);
  const columns = Math.min(
    Math.round(Math.sqrt(2.5 * biased * n) / biased),
    Math.floor((ctx.breakLength - ctx.indentation) / cell),
    ctx.compact * 4,
    15,
  );
  if (columns <= 1) return output;
  const colWidth = [];
  for (let c = 0; c < columns; c++) {
    let w = 0;
    for (let j = c; j < output.length; j += columns) if (widths[j] > w) w = widths[j];
    colWidth.push(w + 2);
  }
  let numeric = true;
  for (let i = 0; i < output.length; i++) {
    if (typeof arr[i] !== "number" && typeof arr[i] !== "bigint") { numeric = false; break; }
  }
  const rows = [];
  for (let i = 0; i < n; i += columns) {
    const end = Math.min(i + columns, n);
    let row = "";
    for (let j = i; j < end; j++) {
      const last = j === end - 1;
      const text = last ? output[j] : `${output[j]}, `;
      const width = last ? colWidth[j - i] - 2 : colWidth[j - i];
      row += numeric ? text.padStart(width) : last ? text : text.padEnd(width);
    }
    rows.push(row);
  }
  if (more) rows.push(output[n]);
  return rows;
}

function formatList(ctx, arr, depth, len) {
  const out = [];
  const n = Math.min(len, ctx.maxArrayLength);
  let holes = 0;
  for (let i = 0; i < n; i++) {
    if (!Object.prototype.hasOwnProperty.call(arr, i)) {
      holes++;
      continue;
    }
    if (holes) { out.push(`<${holes} empty item${holes > 1 ? "s" : ""}>`); holes = 0; }
    out.push(formatValue(ctx, arr[i], depth));
  }
  if (holes) out.push(`<${holes} empty item${holes > 1 ? "s" : ""}>`);
  if (len > n) out.push(`... ${len - n} more item${len - n > 1 ? "s" : ""}`);
  return out;
}

function formatProperty(ctx, v, key, depth, extras) {
  const desc = Object.getOwnPropertyDescriptor(v, key) || { value: v[key], enumerable: true };
  let str;
  if (desc.value !== undefined || !("get" in desc)) {
    str = formatValue(ctx, desc.value, depth);
  } else if (desc.get) {
    str = desc.set ? "[Getter/Setter]" : "[Getter]";
  } else {
    str = desc.set ? "[Setter]" : "undefined";
  }
  const name = desc.enumerable === false ? `[${typeof key === "symbol" ? key.toString() : key}]` : keyString(key);
  return `${name}: ${str}`;
}

function formatError(e) {
  const stack = typeof e.stack === "string" && e.stack ? e.stack : `${e.name || "Error"}: ${e.message}`;
  return stack.includes("\n    at") || stack.includes("\n\tat") ? stack : stack;
}

function reduce(ctx, output, base, braces, depth, arr) {
  const entries = output.length;
  if (arr !== undefined && typeof ctx.compact === "number" && ctx.compact >= 1 && entries > 6) output = groupColumns(ctx, output, arr);
  const start = output.length + ctx.indentation + braces[0].length + base.length + 10;
  if (ctx.compact !== true && typeof ctx.compact === "number" && ctx.compact >= 1 && ctx.currentDepth - depth < ctx.compact && entries === output.length) {
    let total = output.length + start;
    let fits = total <= ctx.breakLength;
    for (let i = 0; fits && i < output.length; i++) {
      total += output[i].length;
      if (total > ctx.breakLength) fits = false;
    }
    if (fits && !base.includes("\n")) {
      const joined = output.join(", ");
      if (!joined.includes("\n")) return `${base ? `${base} ` : ""}${braces[0]} ${joined} ${braces[1]}`;
    }
  }
  if (ctx.compact === true) return `${base ? `${base} ` : ""}${braces[0]} ${output.join(", ")} ${braces[1]}`;
  // Nested output is indented by its parent (below), so lines start at 0.
  const ind = "\n";
  const inner = output.map((o) => o.replace(/\n/g, "\n  "));
  return `${base ? `${base} ` : ""}${braces[0]}${ind}  ${inner.join(`,${ind}  `)}${ind}${braces[1]}`;
}

function inspect(value, opts) {
  const ctx = { ...inspectDefaults, seen: [], indentation: 0, currentDepth: 0 };
  if (typeof opts === "boolean") ctx.showHidden = opts;
  else if (opts && typeof opts === "object") Object.assign(ctx, opts);
  if (arguments.length > 2 && arguments[2] !== undefined) ctx.depth = arguments[2];
  if (ctx.depth === null) ctx.depth = Infinity;
  return formatValue(ctx, value, 0);
}
inspect.custom = customInspect;
inspect.defaultOptions = inspectDefaults;
internal.nodeInspect = (v, opts) => inspect(v, opts);

// ---- format ----------------------------------------------------------------------------

function formatWithOptions(opts, ...args) {
  const first = args[0];
  let out = "";
  let i = 0;
  if (typeof first === "string") {
    i = 1;
    out = "";
    let last = 0;
    for (let j = 0; j < first.length - 1; j++) {
      if (first.charCodeAt(j) !== 37) continue; // %
      const c = first[j + 1];
      if (c === "%") { out += first.slice(last, j) + "%"; last = j + 2; j++; continue; }
      if (i >= args.length || !"sdifjoOc".includes(c)) continue;
      const a = args[i];
      let s;
      switch (c) {
        case "s":
          if (typeof a === "bigint") s = `${a}n`;
          else if (typeof a === "object" && a !== null) s = inspect(a, { ...opts, depth: 0, colors: false, compact: 3 });
          else if (typeof a === "symbol") s = a.toString();
          else s = Object.is(a, -0) ? "-0" : String(a);
          break;
        case "d": s = typeof a === "bigint" ? `${a}n` : typeof a === "symbol" ? "NaN" : formatPrimitive(Number(a), {}); break;
        case "i": s = typeof a === "bigint" ? `${a}n` : typeof a === "symbol" ? "NaN" : String(parseInt(a)); break;
        case "f": s = typeof a === "symbol" ? "NaN" : String(parseFloat(a)); break;
        case "j": try { s = JSON.stringify(a); } catch { s = "[Circular]"; } break;
        case "o": s = inspect(a, { ...opts, showHidden: true, showProxy: true, depth: 4 }); break;
        case "O": s = inspect(a, opts); break;
        case "c": s = ""; break;
      }
      out += first.slice(last, j) + s;
      last = j + 2;
      j++;
      i++;
    }
    out += first.slice(last);
  }
  for (; i < args.length; i++) {
    const a = args[i];
    out += (out || i > 0 ? " " : "") + (typeof a === "string" ? a : inspect(a, opts));
  }
  return out;
}
const format = (...args) => formatWithOptions(undefined, ...args);

// ---- deep equality (shared with node:assert) -------------------------------------------

function isDeepEqual(a, b, strict, memo = []) {
  if (a === b) return a !== 0 || !strict || Object.is(a, b);
  if (strict) {
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) {
      return typeof a === "number" && typeof b === "number" && Number.isNaN(a) && Number.isNaN(b);
    }
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  } else {
    if (a === null || typeof a !== "object") {
      if (b === null || typeof b !== "object") return a == b || (Number.isNaN(a) && Number.isNaN(b));
      return false;
    }
    if (b === null || typeof b !== "object") return false;
  }
  if (toStringTag(a) !== toStringTag(b)) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  for (const [x, y] of memo) if (x === a && y === b) return true;
  memo = memo.concat([[a, b]]);
  if (a instanceof Date) { if (a.getTime() !== b.getTime()) return false; }
  else if (a instanceof RegExp) { if (String(a) !== String(b) || a.lastIndex !== b.lastIndex) return false; }
  else if (a instanceof Error) { if (a.message !== b.message || a.name !== b.name) return false; }
  else if (ArrayBuffer.isView(a)) {
    if (a.byteLength !== b.byteLength) return false;
    const ua = new Uint8Array(a.buffer, a.byteOffset, a.byteLength), ub = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    if (!strict && !(a instanceof Float32Array || a instanceof Float64Array)) {
      for (let i = 0; i < ua.length; i++) if (ua[i] !== ub[i]) return false;
    } else {
      for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i]) && !(a[i] === b[i])) return false;
    }
  } else if (a instanceof ArrayBuffer) {
    if (!isDeepEqual(new Uint8Array(a), new Uint8Array(b), strict, memo)) return false;
  } else if (types.isBoxedPrimitive(a)) {
    if (!Object.is(a.valueOf(), b.valueOf())) return false;
  }
  if (a instanceof Set) {
    if (a.size !== b.size) return false;
    outer: for (const x of a) {
      if (b.has(x)) continue;
      if (typeof x !== "object" || x === null) { if (strict || !b.has(x)) return false; }
      for (const y of b) if (isDeepEqual(x, y, strict, memo)) continue outer;
      return false;
    }
  } else if (a instanceof Map) {
    if (a.size !== b.size) return false;
    outer2: for (const [k, v] of a) {
      if (b.has(k)) { if (!isDeepEqual(v, b.get(k), strict, memo)) return false; continue; }
      for (const [k2, v2] of b) if (isDeepEqual(k, k2, strict, memo) && isDeepEqual(v, v2, strict, memo)) continue outer2;
      return false;
    }
  }
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!isDeepEqual(a[k], b[k], strict, memo)) return false;
  }
  if (strict) {
    const sa = Object.getOwnPropertySymbols(a).filter((s) => Object.prototype.propertyIsEnumerable.call(a, s));
    const sb = Object.getOwnPropertySymbols(b).filter((s) => Object.prototype.propertyIsEnumerable.call(b, s));
    if (sa.length !== sb.length) return false;
    for (const s of sa) if (!isDeepEqual(a[s], b[s], strict, memo)) return false;
  }
  return true;
}
internal.isDeepEqual = isDeepEqual;

// ---- the rest ---------------------------------------------------------------------------

function promisify(original) {
  internal.validateFunction(original, "original");
  if (original[kCustomPromisify]) {
    const fn = original[kCustomPromisify];
    internal.validateFunction(fn, "util.promisify.custom");
    return Object.defineProperty(fn, kCustomPromisify, { value: fn, enumerable: false, writable: false, configurable: true });
  }
  function fn(...args) {
    return new Promise((resolve, reject) => {
      original.call(this, ...args, (err, ...values) => {
        if (err) return reject(err);
        resolve(values.length > 1 ? values : values[0]);
      });
    });
  }
  Object.setPrototypeOf(fn, Object.getPrototypeOf(original));
  Object.defineProperty(fn, kCustomPromisify, { value: fn, enumerable: false, writable: false, configurable: true });
  return Object.defineProperties(fn, Object.getOwnPropertyDescriptors(original));
}
promisify.custom = kCustomPromisify;

function callbackify(original) {
  internal.validateFunction(original, "original");
  function callbackified(...args) {
    const cb = args.pop();
    internal.validateFunction(cb, "last argument");
    const onOk = (v) => internal.nextTick(cb, null, v);
    const onErr = (e) => {
      if (!e) {
        const wrapped = internal.nodeError(Error, "ERR_FALSY_VALUE_REJECTION", "Promise was rejected with falsy value");
        wrapped.reason = e;
        e = wrapped;
      }
      internal.nextTick(cb, e);
    };
    Reflect.apply(original, this, args).then(onOk, onErr);
  }
  Object.defineProperties(callbackified, Object.getOwnPropertyDescriptors(original));
  return callbackified;
}

function inherits(ctor, superCtor) {
  if (ctor === undefined || ctor === null) throw internal.invalidArgType("ctor", "of type function", ctor);
  if (superCtor === undefined || superCtor === null) throw internal.invalidArgType("superCtor", "of type function", superCtor);
  if (superCtor.prototype === undefined) throw internal.invalidArgType("superCtor.prototype", "of type object", superCtor.prototype);
  Object.defineProperty(ctor, "super_", { value: superCtor, writable: true, configurable: true });
  Object.setPrototypeOf(ctor.prototype, superCtor.prototype);
}

function deprecate(fn, msg, code) {
  let warned = false;
  function deprecated(...args) {
    if (!warned) {
      warned = true;
      console.warn(`${code ? `[${code}] ` : ""}DeprecationWarning: ${msg}`);
    }
    return new.target ? Reflect.construct(fn, args, new.target) : fn.apply(this, args);
  }
  Object.setPrototypeOf(deprecated, fn);
  if (fn.prototype) deprecated.prototype = fn.prototype;
  return deprecated;
}

const debuglog = (section) => {
  const fn = () => {};
  fn.enabled = false;
  return fn;
};

const aborted = (signal, resource) => new Promise((resolve) => {
  if (signal.aborted) return resolve();
  signal.addEventListener("abort", () => resolve(), { once: true });
});

const stripVTControlCharacters = (s) => {
  internal.validateString(s, "str");
  return s.replace(/[\u001B\u009B][[\]()#;?]*(?:(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]+)*|[a-zA-Z\d]+(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007)|(?:(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-ntqry=><~]))/g, "");
};

const util = {
  inspect, format, formatWithOptions, promisify, callbackify, inherits, deprecate, debuglog, debug: debuglog,
  isDeepStrictEqual: (a, b) => isDeepEqual(a, b, true),
  types, aborted, stripVTControlCharacters,
  toUSVString: (s) => String(s).toWellFormed(),
  styleText: (format, text) => String(text),
  getSystemErrorName: (n) => `Unknown system error ${n}`,
  getSystemErrorMap: () => new Map(),
  _extend: (target, source) => {
    if (source === null || typeof source !== "object") return target;
    for (const k of Object.keys(source)) target[k] = source[k];
    return target;
  },
  isArray: Array.isArray,
  isBoolean: (v) => typeof v === "boolean",
  isBuffer: (v) => v instanceof Uint8Array && v.constructor && v.constructor.name === "Buffer",
  isDate: (v) => v instanceof Date,
  isError: (v) => v instanceof Error,
  isFunction: (v) => typeof v === "function",
  isNull: (v) => v === null,
  isNullOrUndefined: (v) => v == null,
  isNumber: (v) => typeof v === "number",
  isObject: (v) => v !== null && typeof v === "object",
  isPrimitive: (v) => v === null || (typeof v !== "object" && typeof v !== "function"),
  isRegExp: (v) => v instanceof RegExp,
  isString: (v) => typeof v === "string",
  isSymbol: (v) => typeof v === "symbol",
  isUndefined: (v) => v === undefined,
  log: (...args) => console.log(format(...args)),
  // workerd exports it but does not implement it.
  parseArgs: () => { throw new Error("node:util parseArgs is not implemented"); },
};
for (const name of ["TextEncoder", "TextDecoder"]) {
  Object.defineProperty(util, name, { enumerable: true, configurable: true, get: () => global[name] });
}
internal["node:util"] = util;
