// Service bindings to the script's own entrypoints and ctx.exports
// (services.go). A service stub is a Durable Object stub whose class
// names the entrypoint and its props; Go runs its events here, in the
// runtime's own isolates.

const svcClass = (entry, props) => "\0svc\0" + entry + "\0" + props;

function makeService(entry, props) {
  const cls = svcClass(entry, props);
  return internal.makeServiceStub(cls, internal.makeId(cls, "", undefined));
}
internal.makeService = makeService;

// entrypointCall runs an RPC method (or a property read, or a call on an
// RpcTarget an entrypoint returned) of the entrypoint handler with fresh
// ctx and env, and returns its result for Go to serialize.
internal.entrypointCall = (handler, env, props, method, args, iso) => {
  const key = internal.entryExports(iso);
  const argv = () => internal.importArgs(native.deserialize(args));
  let res;
  if (method.startsWith("\0t\0")) {
    res = internal.specialCall(null, method, argv(), key);
  } else {
    const instance = instantiate(handler, env, props);
    if (instance === null) {
      // An object default export has handlers, not RPC methods.
      const name = method.charCodeAt(0) === 0 ? method.split("\0").slice(2).join("\0") : method;
      throw new TypeError(`The RPC receiver does not implement the method "${name}".`);
    }
    if (method.charCodeAt(0) === 0) {
      res = internal.specialCall(instance, method, argv(), key);
    } else {
      const fn = internal.rpcMethod(instance, method);
      res = fn.apply(instance, argv());
    }
  }
  if (res !== null && (typeof res === "object" || typeof res === "function") && typeof res.then === "function") {
    return Promise.resolve(res).then((v) => internal.exportValue(key, v));
  }
  return internal.exportValue(key, res);
};

function instantiate(handler, env, props) {
  if (typeof handler === "function") {
    if (!(handler.prototype instanceof internal.WorkerEntrypoint)) {
      // workerd answers such a call with an internal error.
      throw new Error("celld: this entrypoint is a class that does not extend WorkerEntrypoint, so it has no RPC methods");
    }
    const ctx = Object.create(ExecutionContext.prototype);
    ctx.props = props;
    return new handler(ctx, env);
  }
  return null;
}

// ---- ctx.exports ------------------------------------------------------------

// Each entry is callable, as in workerd: ctx.exports.Api({props}) is the
// same binding with other props; ctx.exports.Obj is the class's namespace.
function loopbackService(entry) {
  const base = makeService(entry, "{}");
  return new Proxy(() => {}, {
    get(t, prop) { return base[prop]; },
    has(t, prop) { return prop in base; },
    apply(t, self, args) {
      const o = args[0];
      const props = o !== null && typeof o === "object" && o.props !== undefined ? o.props : {};
      return makeService(entry, JSON.stringify(props));
    },
    set() { return false; },
  });
}
function loopbackNamespace(cls) {
  const ns = internal.makeNamespace(cls);
  return new Proxy(() => {}, {
    get(t, prop) {
      const v = ns[prop];
      return typeof v === "function" ? v.bind(ns) : v;
    },
    has(t, prop) { return prop in ns; },
    apply() { return ns; },
    set() { return false; },
  });
}
let ctxExports = null;
internal.ctxExports = () => {
  if (ctxExports !== null) return ctxExports;
  const out = {};
  const mod = internal.moduleExports;
  const classes = internal.objectClasses || [];
  if (mod !== null && typeof mod === "object") {
    for (const k of Object.keys(mod)) {
      const v = mod[k];
      if (classes.includes(k)) out[k] = loopbackNamespace(k);
      else if (typeof v === "function" || (k === "default" && v !== null && typeof v === "object")) {
        out[k] = loopbackService(k === "default" ? "" : k);
      }
    }
  }
  ctxExports = Object.freeze(out);
  return ctxExports;
};
