// Node.js compatibility: which node:* modules a script may require, the
// globals nodejs_compat_v2 adds, and the error helpers the node files
// share. Each module lives in its own file as internal["node:NAME"] and
// runs the first time something requires it.

const NODE_ALS = 1, NODE_V2 = 3;
let nodeMode = 0;
let envPairs = [];

// Subpath modules are parts of another module's exports.
const aliases = {
  "assert/strict": () => internal["node:assert"].strict,
  "path/posix": () => internal["node:path"],
  "stream/promises": () => internal["node:stream"].promises,
  "stream/web": () => internal.nodeStreamWeb(),
  "timers/promises": () => internal["node:timers"].promises,
  "util/types": () => internal["node:util"].types,
};
const provided = new Set([
  "assert", "async_hooks", "buffer", "crypto", "diagnostics_channel", "events", "path",
  "process", "querystring", "stream", "string_decoder", "timers", "url", "util", "zlib",
  ...Object.keys(aliases),
]);

// nodeRequire returns node:NAME's exports, or undefined when the script's
// compatibility flags do not provide it.
internal.nodeRequire = (name) => {
  if (!provided.has(name)) return undefined;
  if (nodeMode === 0 || (nodeMode === NODE_ALS && name !== "async_hooks")) return undefined;
  return aliases[name] ? aliases[name]() : internal["node:" + name];
};

internal.nodeEnvPairs = () => envPairs;

// nodeSetup(mode, [name, value, ...]) runs once per isolate (node.go).
internal.nodeSetup = (mode, env) => {
  nodeMode = mode;
  envPairs = env;
  if (mode !== NODE_V2) return;
  // Defined as accessors so that the files behind them run on first use;
  // assigning replaces them like any global.
  const lazy = (name, get) => Object.defineProperty(global, name, {
    configurable: true, enumerable: false,
    get,
    set(v) { Object.defineProperty(global, name, { value: v, writable: true, configurable: true, enumerable: false }); },
  });
  lazy("Buffer", () => internal["node:buffer"].Buffer);
  lazy("process", () => internal["node:process"]);
  lazy("setImmediate", () => internal["node:timers"].setImmediate);
  lazy("clearImmediate", () => internal["node:timers"].clearImmediate);
  lazy("global", () => global);
};

// ---- errors as Node words them ---------------------------------------------

const nodeError = (Base, code, message) => {
  const e = new Base(message);
  Object.defineProperty(e, "code", { value: code, writable: true, configurable: true, enumerable: true });
  return e;
};
internal.nodeError = nodeError;

const received = (v) => {
  if (v == null) return ` Received ${v}`;
  if (typeof v === "function") return ` Received function ${v.name || "<anonymous>"}`;
  if (typeof v === "object") {
    if (v.constructor && v.constructor.name) return ` Received an instance of ${v.constructor.name}`;
    return ` Received ${internal.nodeInspect ? internal.nodeInspect(v, { depth: -1 }) : "[Object: null prototype]"}`;
  }
  let shown = typeof v === "string" ? v : String(v);
  if (typeof v === "string") {
    if (shown.length > 28) shown = shown.slice(0, 25) + "...";
    shown = `'${shown}'`;
  }
  if (typeof v === "bigint") shown += "n";
  return ` Received type ${typeof v} (${shown})`;
};
internal.nodeReceived = received;

// invalidArgType: ERR_INVALID_ARG_TYPE for argument name, expecting what
// ("of type string", "an instance of Buffer, TypedArray, or DataView").
internal.invalidArgType = (name, what, value) => {
  const label = name.includes(".") ? `The "${name}" property` : `The "${name}" argument`;
  return nodeError(TypeError, "ERR_INVALID_ARG_TYPE", `${label} must be ${what}.${received(value)}`);
};
internal.outOfRange = (name, range, value) => {
  let shown = String(value);
  if (typeof value === "number" && Number.isInteger(value) && Math.abs(value) > 2 ** 32) {
    shown = String(value).replace(/(\d)(?=(\d{3})+$)/g, "$1_");
  }
  if (typeof value === "bigint") shown += "n";
  return nodeError(RangeError, "ERR_OUT_OF_RANGE", `The value of "${name}" is out of range. It must be ${range}. Received ${shown}`);
};
internal.invalidArgValue = (name, value, reason = "is invalid") => {
  const shown = internal.nodeInspect ? internal.nodeInspect(value) : String(value);
  return nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument '${name}' ${reason}. Received ${shown}`);
};
internal.validateFunction = (fn, name) => {
  if (typeof fn !== "function") throw internal.invalidArgType(name, "of type function", fn);
};
internal.validateString = (s, name) => {
  if (typeof s !== "string") throw internal.invalidArgType(name, "of type string", s);
};
internal.validateNumber = (n, name, lo, hi) => {
  if (typeof n !== "number") throw internal.invalidArgType(name, "of type number", n);
  if ((lo !== undefined && n < lo) || (hi !== undefined && n > hi) || Number.isNaN(n)) {
    throw internal.outOfRange(name, `>= ${lo} && <= ${hi}`, n);
  }
};
// process.nextTick: each callback is a microtask of its own, in order
// with promise jobs (workerd's order, unlike Node's separate tick queue).
const resolvedTick = Promise.resolve();
internal.nextTick = (fn, ...args) => {
  resolvedTick.then(() => {
    try { fn(...args); } catch (e) { internal.reportError(e); }
  });
};
