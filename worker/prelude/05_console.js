// console: formats its arguments like Node/workerd (roughly) and hands one
// line to the runtime's logger.

function inspect(value, depth = 2, seen = []) {
  switch (typeof value) {
    case "string": return seen.length ? JSON.stringify(value) : value;
    case "number": return Object.is(value, -0) ? "-0" : String(value);
    case "bigint": return `${value}n`;
    case "undefined": return "undefined";
    case "boolean": return String(value);
    case "symbol": return value.toString();
    case "function": return `[Function: ${value.name || "(anonymous)"}]`;
  }
  if (value === null) return "null";
  if (seen.includes(value)) return "[Circular]";
  if (value instanceof Error) return value.stack || `${value.name}: ${value.message}`;
  if (value instanceof Date) return isNaN(value) ? "Invalid Date" : value.toISOString();
  if (value instanceof RegExp) return String(value);
  const inner = (v) => inspect(v, depth - 1, seen.concat([value]));
  if (Array.isArray(value)) {
    if (depth < 0) return "[Array]";
    return value.length ? `[ ${value.map(inner).join(", ")} ]` : "[]";
  }
  if (ArrayBuffer.isView(value)) {
    const name = value.constructor ? value.constructor.name : "TypedArray";
    return `${name}(${value.length}) [ ${Array.prototype.slice.call(value, 0, 50).join(", ")}${value.length > 50 ? ", ..." : ""} ]`;
  }
  if (value instanceof Map) {
    if (depth < 0) return "[Map]";
    return `Map(${value.size}) { ${[...value].map(([k, v]) => `${inner(k)} => ${inner(v)}`).join(", ")} }`;
  }
  if (value instanceof Set) {
    if (depth < 0) return "[Set]";
    return `Set(${value.size}) { ${[...value].map(inner).join(", ")} }`;
  }
  if (value instanceof Promise) return "Promise { <pending> }";
  const ctor = value.constructor && value.constructor !== Object ? value.constructor.name + " " : "";
  if (depth < 0) return `[${ctor.trim() || "Object"}]`;
  const keys = Object.keys(value);
  if (!keys.length) return `${ctor}{}`;
  const body = keys.map((k) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${inner(value[k])}`);
  return `${ctor}{ ${body.join(", ")} }`;
}
internal.inspect = (v) => inspect(v, 2, []);

function format(args) {
  if (!args.length) return "";
  let out = "";
  let rest = args;
  if (typeof args[0] === "string" && args[0].includes("%") && args.length > 1) {
    let i = 1;
    out = args[0].replace(/%[sdifoOjc%]/g, (m) => {
      if (m === "%%") return "%";
      if (i >= args.length) return m;
      const a = args[i++];
      switch (m) {
        case "%s": return typeof a === "string" ? a : inspect(a, 1, []);
        case "%d": case "%i": return typeof a === "bigint" ? `${a}n` : String(m === "%i" ? parseInt(a) : Number(a));
        case "%f": return String(parseFloat(a));
        case "%j": try { return JSON.stringify(a); } catch { return "[Circular]"; }
        case "%c": return "";
        default: return inspect(a, 2, []);
      }
    });
    rest = args.slice(i);
    if (rest.length) out += " ";
  }
  return out + rest.map((a) => inspect(a, 2, [])).join(" ");
}

const counts = new Map();
const timers = new Map();
let indent = "";
const emit = (level, args) => native.log(level, indent + format(args));
const console = {
  log: (...a) => emit("info", a),
  info: (...a) => emit("info", a),
  debug: (...a) => emit("debug", a),
  warn: (...a) => emit("warn", a),
  error: (...a) => emit("error", a),
  trace: (...a) => emit("debug", [format(a), String(new Error().stack || "").split("\n").slice(2).join("\n")]),
  dir: (v) => emit("info", [v]),
  dirxml: (...a) => emit("info", a),
  table: (...a) => emit("info", a),
  assert: (cond, ...a) => { if (!cond) emit("error", ["Assertion failed" + (a.length ? ":" : ""), ...a]); },
  count: (label = "default") => { const n = (counts.get(label) || 0) + 1; counts.set(label, n); emit("info", [`${label}: ${n}`]); },
  countReset: (label = "default") => { counts.delete(label); },
  time: (label = "default") => { timers.set(label, native.now()); },
  timeLog: (label = "default", ...a) => { if (timers.has(label)) emit("info", [`${label}: ${(native.now() - timers.get(label)).toFixed(3)}ms`, ...a]); },
  timeEnd: (label = "default") => { if (timers.has(label)) { emit("info", [`${label}: ${(native.now() - timers.get(label)).toFixed(3)}ms`]); timers.delete(label); } },
  group: (...a) => { if (a.length) emit("info", a); indent += "  "; },
  groupCollapsed: (...a) => { if (a.length) emit("info", a); indent += "  "; },
  groupEnd: () => { indent = indent.slice(2); },
};
internal.expose("console", console);
