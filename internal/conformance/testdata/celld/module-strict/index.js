function plainThis() {
  return this === undefined;
}

function outcome(fn) {
  try {
    return { ok: fn() };
  } catch (e) {
    return { threw: e.name };
  }
}

const checks = {
  this: () => ({
    plain: plainThis(),
    nested: (function () { return (function () { return typeof this; })(); })(),
    called: plainThis.call(undefined),
    primitive: (function () { return typeof this; }).call("s"),
  }),
  undeclared: () => outcome(() => { notDeclaredAnywhere = 1; return typeof globalThis.notDeclaredAnywhere; }),
  readonly: () => ({
    frozen: outcome(() => { const o = Object.freeze({ a: 1 }); o.a = 2; return o.a; }),
    getterOnly: outcome(() => { const o = { get a() { return 1; } }; o.a = 2; return o.a; }),
    nonExtensible: outcome(() => { const o = Object.preventExtensions({}); o.b = 1; return o.b; }),
    primitiveProp: outcome(() => { const s = "str"; s.x = 1; return s.x; }),
  }),
  arguments: () => {
    function alias(a) { a = 2; return arguments[0]; }
    function callee() { return arguments.callee; }
    return { alias: alias(1), callee: outcome(callee) };
  },
  delete: () => ({
    prototype: outcome(() => delete Object.prototype),
    nonConfigurable: outcome(() => { const o = {}; Object.defineProperty(o, "x", { value: 1 }); return delete o.x; }),
  }),
  classMethod: () => {
    class K { m() { return this === undefined; } }
    const m = new K().m;
    return { detached: m() };
  },
};

export default {
  fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    const check = checks[name];
    if (!check) return new Response("no such check", { status: 404 });
    return Response.json(check());
  },
};
