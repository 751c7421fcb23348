// Durable Object stubs: their calls go to Go (native.doCall /
// native.doFetch) and on to the object wherever it runs.

const { unsupported, rebuild, idHex, idName } = internal;
const hasOwn = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

const nameArg = (id) => (idName(id) === undefined ? null : idName(id));

async function stubFetch(cls, id, input, init) {
  const req = input instanceof Request && init === undefined ? input : new Request(input, init);
  const body = req.body === null ? null : await req.arrayBuffer();
  const r = await native.doFetch(cls, idHex(id), nameArg(id), req.method, req.url, internal.headersFlat(req.headers), body);
  if (!r.ok) throw rebuild(r);
  const resBody = r.stream === undefined ? r.body : internal.goStream(r.stream);
  const ws = r.webSocket === undefined ? null : internal.ws.fromGo(r.webSocket, true, null);
  return internal.makeResponse(r.status, r.statusText, r.headers, resBody, "", false, ws);
}

function stubCall(cls, id, method, args) {
  try {
    return native.doCall(cls, idHex(id), nameArg(id), method, args);
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
  constructor(cls, id) {
    this.cls = cls;
    this.id = id;
  }
  get(t, prop) {
    if (typeof prop === "symbol" || prop === "then") return undefined;
    if (hasOwn(t, prop)) return t[prop];
    const { cls, id } = this;
    return (...args) => stubCall(cls, id, prop, args);
  }
  has(t, prop) { return typeof prop === "string" && prop !== "then"; }
  set() { return false; }
}
function makeStub(cls, id) {
  const target = {
    id,
    name: id.name,
    fetch(input, init = undefined) { return stubFetch(cls, id, input, init); },
    connect: connectUnsupported,
  };
  return new Proxy(target, new StubHandler(cls, id));
}
internal.makeStub = makeStub;
