// Host modules served to the bundle's require(): cloudflare:workers.

class DurableObject {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}
class WorkerEntrypoint {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}
class WorkflowEntrypoint {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
  }
}
class RpcTarget {}
internal.DurableObject = DurableObject;

const cloudflareWorkers = Object.freeze({
  __proto__: null,
  DurableObject,
  WorkerEntrypoint,
  WorkflowEntrypoint,
  RpcTarget,
  get env() { return internal.env; },
});

const modules = { "cloudflare:workers": cloudflareWorkers };

internal.require = function require(name) {
  name = String(name);
  if (Object.prototype.hasOwnProperty.call(modules, name)) return modules[name];
  if (name.startsWith("node:")) {
    throw new Error(`celld: module "${name}" is not available: Node.js compatibility modules are not supported yet`);
  }
  throw new Error(`celld: cannot load module "${name}": the runtime provides only "cloudflare:workers" (bundle everything else into the script)`);
};

// APIs of the Workers platform that celld does not provide yet: each says
// so at first use instead of failing later as "undefined is not a function".
const unsupported = (what) => () => {
  throw new TypeError(`celld: ${what} is not supported yet`);
};
for (const name of ["WebSocketPair", "WebSocket", "HTMLRewriter", "EventSource"]) {
  internal.expose(name, function () { unsupported(name)(); });
}
const rejectCache = () => Promise.reject(new TypeError("celld: the Cache API (caches) is not supported yet"));
const cache = { match: rejectCache, put: rejectCache, delete: rejectCache };
internal.expose("caches", { default: cache, open: rejectCache });
