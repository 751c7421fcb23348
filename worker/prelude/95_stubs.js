// Durable Object stubs: their calls go to Go (native.doCall /
// native.doFetch) and on to the object wherever it runs.

const { unsupported, rebuild, idHex, idName } = internal;
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

const nameArg = (id) => (idName(id) === undefined ? null : idName(id));

// Each stub numbers its events in call order (ord, native.doOrderTake)
// so the object receives them in that order (E-order, objects_order.go).
function stubFetch(cls, id, ord, input, init) {
  const n = native.doOrderTake(ord);
  let req;
  try {
    req = input instanceof Request && init === undefined ? input : new Request(input, init);
  } catch (e) {
    native.doOrderSkip(ord, n);
    return Promise.reject(e);
  }
  return sendFetch(cls, id, ord, n, req);
}

async function sendFetch(cls, id, ord, n, req) {
  let body;
  try {
    body = req.body === null ? null : await req.arrayBuffer();
  } catch (e) {
    native.doOrderSkip(ord, n);
    throw e;
  }
  const r = await native.doFetch(cls, idHex(id), nameArg(id), req.method, req.url, internal.headersFlat(req.headers), body, ord, n);
  if (!r.ok) throw rebuild(r);
  const resBody = r.stream === undefined ? r.body : internal.goStream(r.stream);
  const ws = r.webSocket === undefined ? null : internal.ws.fromGo(r.webSocket, true, null);
  return internal.makeResponse(r.status, r.statusText, r.headers, resBody, "", false, ws);
}

function stubCall(cls, id, ord, method, args) {
  try {
    return native.doCall(cls, idHex(id), nameArg(id), method, args, ord, native.doOrderTake(ord));
  } catch (e) {
    return Promise.reject(e);
  }
}

// A stub is a Proxy: fetch, id and name are its own; any other string
// property is an RPC method of the object. `then` is not, so a stub is not
// mistaken for a promise. The traps are methods of a small handler object
// that holds the stub's class and id.
const connectUnsupported = unsupported("connect() on a Durable Object stub");
class StubHandler {
  constructor(cls, id, ord) {
    this.cls = cls;
    this.id = id;
    this.ord = ord;
  }
  get(t, prop) {
    if (typeof prop === "symbol" || prop === "then") return undefined;
    if (hasOwn(t, prop)) return t[prop];
    const { cls, id, ord } = this;
    return (...args) => stubCall(cls, id, ord, prop, args);
  }
  has(t, prop) { return typeof prop === "string" && prop !== "then"; }
  set() { return false; }
}
function makeStub(cls, id) {
  const ord = native.doOrder();
  const target = {
    id,
    name: id.name,
    fetch(input, init = undefined) { return stubFetch(cls, id, ord, input, init); },
    connect: connectUnsupported,
  };
  return new Proxy(target, new StubHandler(cls, id, ord));
}
internal.makeStub = makeStub;
