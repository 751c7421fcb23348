// Host modules served to the bundle's require(): cloudflare:workers and,
// with Node.js compatibility, node:* (83_node.js).

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
internal.RpcTarget = RpcTarget;
internal.WorkerEntrypoint = WorkerEntrypoint;

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
  if (name === "cloudflare:sockets") return internal.socketsModule;
  if (name.startsWith("node:")) {
    const m = internal.nodeRequire(name.slice(5));
    if (m !== undefined) return m;
    // What workerd says when a module is not there (deploy refuses such
    // imports first; this is for bundles made elsewhere).
    throw new Error(`No such module "${name}".`);
  }
  throw new Error(`celld: cannot load module "${name}": the runtime provides only "cloudflare:workers" and "cloudflare:sockets" (bundle everything else into the script)`);
};
