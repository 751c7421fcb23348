// Request, Response and the body mixin; the glue Go calls to run a fetch
// handler (internal.makeRequest, internal.dispatch).

const kBody = Symbol("body");
const usedError = () => new TypeError("Body has already been used. It can only be used once. Use tee() first if you need to read it twice.");

// extractBody turns a BodyInit into { source: Uint8Array | ReadableStream,
// contentType: string | null }, or null for no body.
function extractBody(init) {
  if (init === undefined || init === null) return null;
  if (typeof init === "string") return { source: internal.utf8Encode(init), contentType: "text/plain;charset=UTF-8" };
  if (internal.isBufferSource(init)) return { source: internal.copyBytes(init), contentType: null };
  if (init instanceof ReadableStream) {
    if (init.locked || internal.isDisturbed(init)) {
      throw new TypeError("This ReadableStream is disturbed (has already been read from), and cannot be used as a body.");
    }
    return { source: init, contentType: null };
  }
  if (init instanceof Blob) return { source: internal.copyBytes(internal.blobBytes(init)), contentType: init.type || null };
  if (init instanceof URLSearchParams) {
    return { source: internal.utf8Encode(init.toString()), contentType: "application/x-www-form-urlencoded;charset=UTF-8" };
  }
  if (init instanceof FormData) {
    const f = internal.serializeForm(init);
    return { source: f.bytes, contentType: f.contentType };
  }
  return { source: internal.utf8Encode(String(init)), contentType: "text/plain;charset=UTF-8" };
}

// Body state: { source: null | Uint8Array | ReadableStream, stream, used }.
const newBody = (extracted) => ({ source: extracted ? extracted.source : null, stream: null, used: false });

function bodyStream(b) {
  if (b.source === null) return null;
  if (b.stream === null) b.stream = b.source instanceof ReadableStream ? b.source : internal.bytesStream(b.source);
  return b.stream;
}
const bodyUsed = (b) => b.used || (b.stream !== null && internal.isDisturbed(b.stream));

// consume reads the whole body once, as bytes.
async function consume(obj) {
  const b = obj[kBody];
  if (bodyUsed(b)) throw usedError();
  if (b.source === null) {
    b.used = true;
    return new Uint8Array(0);
  }
  if (b.stream === null && !(b.source instanceof ReadableStream)) {
    b.used = true;
    return b.source;
  }
  const stream = bodyStream(b);
  if (stream.locked) throw new TypeError("This ReadableStream is currently locked to a reader.");
  b.used = true;
  return internal.readAllBytes(stream);
}

const bodyMethods = {
  get body() { return bodyStream(this[kBody]); },
  get bodyUsed() { return bodyUsed(this[kBody]); },
  async arrayBuffer() {
    const bytes = await consume(this);
    return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : internal.copyBytes(bytes).buffer;
  },
  async bytes() { return internal.copyBytes(await consume(this)); },
  async text() { return internal.utf8Decode(await consume(this)); },
  async json() { return JSON.parse(internal.utf8Decode(await consume(this))); },
  async blob() {
    const bytes = await consume(this);
    return internal.makeBlob(internal.copyBytes(bytes), this.headers.get("content-type") || "");
  },
  async formData() {
    const ct = this.headers.get("content-type");
    const bytes = await consume(this);
    return internal.parseForm(ct, bytes);
  },
};
function mixBody(proto) {
  for (const name of Object.getOwnPropertyNames(bodyMethods)) {
    Object.defineProperty(proto, name, Object.getOwnPropertyDescriptor(bodyMethods, name));
  }
}

// cloneBody tees a stream body so both objects can read it.
function cloneBody(obj) {
  const b = obj[kBody];
  if (bodyUsed(b)) throw new TypeError("Body has already been used. It can only be used once. Use tee() first if you need to read it twice.");
  if (b.source === null) return newBody(null);
  if (b.stream === null && !(b.source instanceof ReadableStream)) return { source: b.source, stream: null, used: false };
  const [s1, s2] = bodyStream(b).tee();
  b.source = s1;
  b.stream = s1;
  return { source: s2, stream: s2, used: false };
}

// ---- Request ---------------------------------------------------------------

const kReq = Symbol("request");
const normalMethods = { DELETE: 1, GET: 1, HEAD: 1, OPTIONS: 1, POST: 1, PUT: 1, PATCH: 1 };
const normalizeMethod = (m) => {
  m = String(m);
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(m)) throw new TypeError(`Invalid HTTP method string: ${m}`);
  const up = m.toUpperCase();
  return normalMethods[up] ? up : m;
};

class Request {
  constructor(input, init = undefined) {
    if (arguments.length === 0) throw new TypeError("Failed to construct 'Request': 1 argument required, but only 0 present.");
    init = init || {};
    let url;
    let method = "GET";
    let headers;
    let body = null;
    let signal = null;
    let redirect = "follow";
    let cf;
    if (input instanceof Request) {
      const r = input[kReq];
      url = r.url;
      method = r.method;
      headers = new Headers(input.headers);
      redirect = r.redirect;
      signal = input.signal;
      cf = r.cf;
      if (init.body === undefined && input[kBody].source !== null) {
        if (bodyUsed(input[kBody])) throw usedError();
        body = { source: input[kBody].stream || input[kBody].source, stream: null, used: false };
        input[kBody].used = true;
      }
    } else {
      const s = String(input);
      const parsed = native.urlParse(s);
      if (parsed === null) throw new TypeError(`Invalid URL: ${s}`);
      url = parsed.href;
    }
    if (init.method !== undefined) method = normalizeMethod(init.method);
    if (init.headers !== undefined) headers = new Headers(init.headers);
    if (!headers) headers = new Headers();
    if (init.redirect !== undefined) redirect = String(init.redirect);
    if (init.signal !== undefined) signal = init.signal;
    if (init.cf !== undefined) cf = init.cf;
    if (init.body !== undefined && init.body !== null) {
      if (method === "GET" || method === "HEAD") throw new TypeError("Request with a GET or HEAD method cannot have a body.");
      const ex = extractBody(init.body);
      body = newBody(ex);
      if (ex.contentType !== null) internal.setDefault(headers, "content-type", ex.contentType);
    } else if (init.body === null) {
      body = null;
    }
    const sig = internal.newSignal();
    if (signal) {
      if (signal.aborted) internal.signalAbort(sig, signal.reason);
      else signal.addEventListener("abort", () => internal.signalAbort(sig, signal.reason));
    }
    this[kReq] = { url, method, headers, redirect, signal: sig, cf };
    this[kBody] = body || newBody(null);
  }
  get method() { return this[kReq].method; }
  get url() { return this[kReq].url; }
  get headers() { return this[kReq].headers; }
  get redirect() { return this[kReq].redirect; }
  get signal() {
    const r = this[kReq];
    if (r.signal === null) r.signal = internal.newSignal();
    return r.signal;
  }
  get cf() { return this[kReq].cf; }
  get fetcher() { return null; }
  get integrity() { return ""; }
  get keepalive() { return false; }
  get cache() { return undefined; }
  clone() {
    const r = Object.create(Request.prototype);
    const s = this[kReq];
    r[kBody] = cloneBody(this);
    r[kReq] = { ...s, headers: new Headers(s.headers) };
    internal.setGuard(r[kReq].headers, internal.getGuard(s.headers));
    return r;
  }
}
mixBody(Request.prototype);
Object.defineProperty(Request.prototype, Symbol.toStringTag, { value: "Request", configurable: true });
// makeRequest builds the incoming request: immutable headers, a body
// stream over the bytes (or null).
internal.makeRequest = (method, url, flatHeaders, body) => {
  const r = Object.create(Request.prototype);
  // The signal is made on first use: most handlers never look at it.
  r[kReq] = { url, method, headers: internal.headersFrom(flatHeaders, "immutable"), redirect: "manual", signal: null, cf: {} };
  r[kBody] = newBody(body === null ? null : { source: new Uint8Array(body) });
  return r;
};

internal.abortRequest = (request) => {
  const r = request[kReq];
  if (r.signal === null) r.signal = internal.newSignal();
  internal.signalAbort(r.signal, new DOMException("The client disconnected before the response was complete.", "AbortError"));
};

// ---- Response --------------------------------------------------------------

const kRes = Symbol("response");
const reasons = {
  100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
  200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
  205: "Reset Content", 206: "Partial Content", 207: "Multi-Status", 208: "Already Reported", 226: "IM Used",
  300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
  305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
  400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
  405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
  409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Payload Too Large",
  414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
  418: "I'm a teapot", 421: "Misdirected Request", 422: "Unprocessable Entity", 423: "Locked", 424: "Failed Dependency",
  425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
  431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
  500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
  504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
  507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
};
const nullBodyStatus = (s) => s === 101 || s === 204 || s === 205 || s === 304;

class Response {
  constructor(body, init) {
    if (body === undefined) body = null;
    init = init || {};
    let status = 200;
    if (init.status !== undefined) {
      // WebIDL unsigned short: truncate, wrap modulo 2^16.
      status = Math.trunc(Number(init.status)) || 0;
      status = ((status % 65536) + 65536) % 65536;
      if (!(status >= 200 && status <= 599)) {
        throw new RangeError("Responses may only be constructed with status codes in the range 200 to 599, inclusive.");
      }
    }
    const statusText = init.statusText !== undefined ? String(init.statusText) : reasons[status] || "";
    const headers = new Headers(init.headers);
    const ex = extractBody(body);
    if (ex !== null && nullBodyStatus(status)) {
      throw new TypeError("Response with null body status (101, 204, 205, or 304) cannot have a body.");
    }
    if (ex !== null && ex.contentType !== null) internal.setDefault(headers, "content-type", ex.contentType);
    this[kRes] = {
      status, statusText, headers, type: "default", url: "", redirected: false,
      webSocket: init.webSocket || null, cf: init.cf,
    };
    this[kBody] = newBody(ex);
  }
  get status() { return this[kRes].status; }
  get statusText() { return this[kRes].statusText; }
  get ok() { const s = this[kRes].status; return s >= 200 && s <= 299; }
  get headers() { return this[kRes].headers; }
  get type() { return this[kRes].type; }
  get url() { return this[kRes].url; }
  get redirected() { return this[kRes].redirected; }
  get webSocket() { return this[kRes].webSocket; }
  get cf() { return this[kRes].cf; }
  clone() {
    const r = Object.create(Response.prototype);
    const s = this[kRes];
    r[kBody] = cloneBody(this);
    r[kRes] = { ...s, headers: new Headers(s.headers) };
    internal.setGuard(r[kRes].headers, internal.getGuard(s.headers));
    return r;
  }
  static error() {
    const r = new Response(null, {});
    r[kRes].status = 0;
    r[kRes].statusText = "";
    r[kRes].type = "error";
    internal.setGuard(r[kRes].headers, "immutable");
    return r;
  }
  static redirect(url, status = 302) {
    const s = String(url);
    const parsed = native.urlParse(s);
    if (parsed === null) throw new TypeError(`Unable to parse URL: ${s}`);
    status = Number(status);
    if (![301, 302, 303, 307, 308].includes(status)) {
      throw new RangeError(`${status} is not a redirect status code. It must be one of: 301, 302, 303, 307, or 308.`);
    }
    const r = new Response(null, { status, headers: { location: parsed.href } });
    internal.setGuard(r[kRes].headers, "immutable");
    return r;
  }
  static json(data, init = undefined) {
    const text = JSON.stringify(data);
    if (text === undefined) throw new TypeError("Response.json: the value cannot be serialized as JSON");
    const r = new Response(internal.utf8Encode(text), init);
    internal.setDefault(r[kRes].headers, "content-type", "application/json");
    return r;
  }
}
mixBody(Response.prototype);
Object.defineProperty(Response.prototype, Symbol.toStringTag, { value: "Response", configurable: true });

// serializeResponse flattens a response for Go once its body is complete:
// synchronously when the body is already bytes (or absent), otherwise as
// a promise that drains the stream.
function serializeResponse(res) {
  const s = res[kRes];
  if (s.type === "error") {
    throw new TypeError("Return value from serve handler must not be an error response (like Response.error()).");
  }
  const b = res[kBody];
  const out = { status: s.status, statusText: s.statusText, headers: internal.headersFlat(s.headers), body: null };
  if (b.source === null) return out;
  if (bodyUsed(b)) throw usedError();
  if (b.stream === null && !(b.source instanceof ReadableStream)) {
    b.used = true;
    out.body = b.source;
    return out;
  }
  return consume(res).then((bytes) => {
    out.body = bytes;
    return out;
  });
}

internal.serializeResponse = serializeResponse;
// makeResponse builds a response that arrived from elsewhere (a Durable
// Object): any status, trusted lowercase header pairs, immutable headers
// as on a fetch() result, body bytes (an ArrayBuffer) or null.
internal.makeResponse = (status, statusText, flatHeaders, body) => {
  const r = Object.create(Response.prototype);
  r[kRes] = {
    status, statusText, headers: internal.headersFrom(flatHeaders, "immutable"), type: "default", url: "",
    redirected: false, webSocket: null, cf: undefined,
  };
  r[kBody] = newBody(body === null || nullBodyStatus(status) ? null : { source: new Uint8Array(body) });
  return r;
};

// ---- ExecutionContext and dispatch ----------------------------------------

const waitUntilLimitMs = 30000;

class ExecutionContext {
  constructor(key) {
    if (key !== internal.kCreate) throw new TypeError("Illegal constructor");
    this.props = {};
  }
  // waitUntil keeps the isolate's timers and loop serving the promise after
  // the response, for at most waitUntilLimitMs; a promise that never
  // settles is then given up on (and logged) so it cannot pin the isolate.
  waitUntil(promise) {
    native.background(1);
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      native.clearTimer(timer);
      native.background(-1);
    };
    const timer = native.setTimer(() => {
      if (settled) return;
      settled = true;
      native.log("warn", `ctx.waitUntil(): promise still pending after ${waitUntilLimitMs / 1000} s; no longer waiting for it`);
      native.background(-1);
    }, waitUntilLimitMs, false);
    Promise.resolve(promise).then(finish, (e) => {
      internal.reportError(e, "Uncaught (in waitUntil)");
      finish();
    });
  }
  passThroughOnException() {}
}
internal.expose("ExecutionContext", ExecutionContext);

function callFetch(handler, request, env, ctx) {
  if (typeof handler === "function" && handler.prototype && typeof handler.prototype.fetch === "function") {
    const instance = new handler(ctx, env);
    return instance.fetch(request);
  }
  if (handler && typeof handler.fetch === "function") return handler.fetch(request, env, ctx);
  throw new Error("Handler does not export a fetch() function.");
}

// dispatch runs one request; done(true, serialized) or done(false, error)
// is called exactly once.
internal.dispatch = (handler, request, env, done) => {
  const ctx = new ExecutionContext(internal.kCreate);
  let p;
  try {
    const res = callFetch(handler, request, env, ctx);
    if (res instanceof Response) {
      // Answered synchronously with a complete body: no promise round trip.
      const out = serializeResponse(res);
      if (!(out instanceof Promise)) return done(true, out);
      out.then((o) => done(true, o), (e) => done(false, e));
      return;
    }
    p = Promise.resolve(res);
  } catch (e) {
    p = Promise.reject(e);
  }
  p.then((res) => {
    if (!(res instanceof Response)) {
      throw new TypeError("Incorrect type for Promise: the Promise did not resolve to 'Response'.");
    }
    return serializeResponse(res);
  }).then((out) => done(true, out), (e) => done(false, e));
};

// fetch() to the network: the request is read whole, sent by Go, and the
// response arrives as an immutable-headers Response with its final URL.
internal.expose("fetch", async function fetch(input, init = undefined) {
  const req = input instanceof Request && init === undefined ? input : new Request(input, init);
  const signal = req.signal;
  if (signal && signal.aborted) throw signal.reason;
  const body = req.body === null ? null : await req.arrayBuffer();
  const r = await native.httpFetch(req.method, req.url, internal.headersFlat(req.headers), body, req.redirect || "follow");
  if (signal && signal.aborted) throw signal.reason;
  if (!r.ok) throw new TypeError(r.error);
  const res = internal.makeResponse(r.status, r.statusText, r.headers, r.body);
  res[kRes].url = r.url;
  res[kRes].redirected = r.redirected;
  return res;
});
internal.expose("Request", Request);
internal.expose("Response", Response);
