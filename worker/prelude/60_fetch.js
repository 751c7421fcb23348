// Request, Response and the body mixin; the glue Go calls to run a fetch
// handler (internal.makeRequest, internal.dispatch); fetch() to the
// network.

const usedError = () => new TypeError("Body has already been used. It can only be used once. Use tee() first if you need to read it twice.");

// extractBody turns a BodyInit into a body source (Uint8Array |
// ReadableStream | string), or null for no body, and leaves the content
// type it implies (or null) in extractedType: no result object per body. A
// string is encoded (UTF-8) when the body is first read as bytes: a
// response whose body is text usually goes to Go as the string.
let extractedType = null;
function extractBody(init) {
  extractedType = null;
  if (init === undefined || init === null) return null;
  if (typeof init === "string") {
    extractedType = "text/plain;charset=UTF-8";
    return init;
  }
  if (internal.isBufferSource(init)) return internal.copyBytes(init);
  if (init instanceof ReadableStream) {
    if (init.locked || internal.isDisturbed(init)) {
      throw new TypeError("This ReadableStream is disturbed (has already been read from), and cannot be used as a body.");
    }
    return init;
  }
  if (init instanceof Blob) {
    extractedType = init.type || null;
    return internal.copyBytes(internal.blobBytes(init));
  }
  if (init instanceof URLSearchParams) {
    extractedType = "application/x-www-form-urlencoded;charset=UTF-8";
    return internal.utf8Encode(init.toString());
  }
  if (init instanceof FormData) {
    const f = internal.serializeForm(init);
    extractedType = f.contentType;
    return f.bytes;
  }
  extractedType = "text/plain;charset=UTF-8";
  return String(init);
}

// Body state: { source: null | Uint8Array | ReadableStream | string, stream, used }.
const newBody = (source) => ({ source, stream: null, used: false });
// isStream tells a stream source from bytes or a string (no instanceof:
// goja allocates for each).
const isStream = (src) => typeof src === "object" && src !== null && !ArrayBuffer.isView(src);
// sourceBytes is a body's source as bytes (not a stream).
function sourceBytes(b) {
  if (typeof b.source === "string") b.source = internal.utf8Encode(b.source);
  return b.source;
}

// usedStream stands for a body read whole without a stream: disturbed,
// closed and locked, as workerd's is after text() or arrayBuffer().
const usedStream = () => {
  const s = new ReadableStream({ start(c) { c.close(); } });
  s.getReader().read();
  return s;
};

function bodyStream(b) {
  if (b.source === null) return null;
  if (b.stream === null && b.used) b.stream = usedStream();
  if (b.stream === null) b.stream = isStream(b.source) ? b.source : internal.bytesStream(b.source);
  return b.stream;
}
const bodyUsed = (b) => b.used || (b.stream !== null && internal.isDisturbed(b.stream));

// bodyOf is the body state of a Request or a Response.
const bodyOf = (obj) => {
  const b = resBody(obj);
  return b !== undefined ? b : reqBody(obj);
};

// consume reads the whole body once, as bytes.
async function consume(obj) {
  const b = bodyOf(obj);
  if (bodyUsed(b)) throw usedError();
  // A null body reads as empty any number of times, and stays unused.
  if (b.source === null) return new Uint8Array(0);
  if (b.stream === null && !(isStream(b.source))) {
    b.used = true;
    return sourceBytes(b);
  }
  const stream = bodyStream(b);
  if (stream.locked) throw new TypeError("This ReadableStream is currently locked to a reader.");
  b.used = true;
  const bytes = internal.drainBytesStream(stream);
  if (bytes !== null) return bytes;
  const handle = internal.takeGoStream(stream);
  return handle !== null ? internal.readGoBody(handle) : internal.readAllBytes(stream);
}

const bodyMethods = {
  get body() { return bodyStream(bodyOf(this)); },
  get bodyUsed() { return bodyUsed(bodyOf(this)); },
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
  const b = bodyOf(obj);
  // workerd's text, trailing comma included.
  if (bodyUsed(b) || (b.stream !== null && b.stream.locked)) throw new TypeError("This ReadableStream is currently locked to a reader,");
  if (b.source === null) return newBody(null);
  if (b.stream === null && !(isStream(b.source))) return { source: b.source, stream: null, used: false };
  const [s1, s2] = bodyStream(b).tee();
  b.source = s1;
  b.stream = s1;
  return { source: s2, stream: s2, used: false };
}

// ---- Request ---------------------------------------------------------------

// The methods workerd's HTTP layer knows (CONNECT and unknown ones are
// refused), matched without regard to case.
const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "PURGE", "OPTIONS", "TRACE", "COPY", "LOCK", "MKCOL", "MOVE", "PROPFIND", "PROPPATCH", "SEARCH", "UNLOCK", "ACL", "REPORT", "MKACTIVITY", "CHECKOUT", "MERGE", "M-SEARCH", "NOTIFY", "SUBSCRIBE", "UNSUBSCRIBE", "QUERY"]);
const normalizeMethod = (m) => {
  m = String(m);
  const up = m.toUpperCase();
  if (!knownMethods.has(up)) throw new TypeError(`Invalid HTTP method string: ${m}`);
  return up;
};

// The state of a Request is private, like a Response's. An incoming
// request (makeRequest) makes its headers, signal and cf on first use:
// most handlers never look at them.
const kLazy = {};
let isRequest, reqBody, makeRequest, abortRequest;
// makeRequest's arguments, for the constructor (no array per request).
let making = false;
let inMethod, inUrl, inFlat, inBody;

class Request {
  #url;
  #method;
  #headers;
  #flat; // an incoming request's [name, value, ...] until #headers is made
  #redirect;
  #signal;
  #cf;
  #body;
  // (...args) rather than `arguments` (see URL); Request.length is set to 1
  // below, as (input, init = undefined) would have it.
  constructor(...args) {
    const input = args[0];
    if (input === kLazy && making) {
      making = false;
      this.#url = inUrl;
      this.#method = inMethod;
      this.#headers = null;
      this.#flat = inFlat;
      this.#redirect = "manual";
      this.#signal = null;
      this.#cf = kLazy;
      // null: made on first use; a ReadableStream: a body read as it arrives
      this.#body = inBody === null ? null : newBody(inBody instanceof ReadableStream ? inBody : new Uint8Array(inBody));
      inFlat = inBody = null;
      return;
    }
    if (args.length === 0) throw new TypeError("Failed to construct 'Request': 1 argument required, but only 0 present.");
    const init = args[1] || {};
    let url;
    let method = "GET";
    let headers;
    let body = null;
    let signal = null;
    let redirect = "follow";
    let cf;
    if (isRequest(input)) {
      url = input.#url;
      method = input.#method;
      headers = new Headers(input.headers);
      redirect = input.#redirect;
      signal = input.signal;
      cf = input.cf;
      const ib = reqBody(input);
      if (init.body === undefined && ib.source !== null) {
        if (bodyUsed(ib)) throw new TypeError("Cannot reconstruct a Request with a used body.");
        if (ib.stream !== null && ib.stream.locked) throw new TypeError("The ReadableStream has been locked to a reader.");
        body = { source: ib.stream || ib.source, stream: null, used: false };
        ib.used = true;
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
    if (init.redirect !== undefined) {
      redirect = String(init.redirect);
      if (redirect !== "follow" && redirect !== "manual" && redirect !== "error") {
        throw new TypeError(`Failed to construct 'Request': '${redirect}' is not a valid value for redirect.`);
      }
    }
    if (init.signal !== undefined) signal = init.signal;
    if (init.cf !== undefined) cf = init.cf;
    if ((init.body !== undefined && init.body !== null) || (init.body === undefined && body !== null)) {
      if (method === "GET" || method === "HEAD") throw new TypeError("Request with a GET or HEAD method cannot have a body.");
    }
    if (init.body !== undefined && init.body !== null) {
      body = newBody(extractBody(init.body));
      if (extractedType !== null) internal.setDefault(headers, "content-type", extractedType);
    } else if (init.body === null) {
      body = null;
    }
    const sig = internal.newSignal();
    if (signal) {
      if (signal.aborted) internal.signalAbort(sig, signal.reason);
      else signal.addEventListener("abort", () => internal.signalAbort(sig, signal.reason));
    }
    this.#url = url;
    this.#method = method;
    this.#headers = headers;
    this.#flat = null;
    this.#redirect = redirect;
    this.#signal = sig;
    this.#cf = cf;
    this.#body = body || newBody(null);
  }
  static {
    isRequest = (v) => v !== null && typeof v === "object" && #url in v;
    reqBody = (v) => v.#body || (v.#body = newBody(null));
    // makeRequest builds the incoming request: immutable headers, a body
    // stream over the bytes (or null).
    makeRequest = (method, url, flatHeaders, body) => {
      making = true;
      inMethod = method;
      inUrl = url;
      inFlat = flatHeaders;
      inBody = body;
      return new Request(kLazy);
    };
    abortRequest = (request) => {
      if (request.#signal === null) request.#signal = internal.newSignal();
      internal.signalAbort(request.#signal, new DOMException("The client disconnected before the response was complete.", "AbortError"));
    };
  }
  get method() { return this.#method; }
  get url() { return this.#url; }
  get headers() {
    if (this.#headers === null) {
      this.#headers = internal.headersFrom(this.#flat, "immutable");
      this.#flat = null;
    }
    return this.#headers;
  }
  get redirect() { return this.#redirect; }
  get signal() {
    if (this.#signal === null) this.#signal = internal.newSignal();
    return this.#signal;
  }
  get cf() {
    if (this.#cf === kLazy) this.#cf = {};
    return this.#cf;
  }
  get fetcher() { return null; }
  get integrity() { return ""; }
  get keepalive() { return false; }
  get cache() { return undefined; }
  clone() {
    const headers = this.headers;
    const cf = this.cf; // the clone shares it
    const body = cloneBody(this);
    const r = makeRequest(this.#method, this.#url, null, null);
    r.#headers = new Headers(headers);
    internal.setGuard(r.#headers, internal.getGuard(headers));
    r.#redirect = this.#redirect;
    r.#signal = this.#signal;
    r.#cf = cf;
    r.#body = body;
    return r;
  }
}
Object.defineProperty(Request, "length", { value: 1 });
mixBody(Request.prototype);
Object.defineProperty(Request.prototype, Symbol.toStringTag, { value: "Request", configurable: true });
internal.makeRequest = makeRequest;
internal.abortRequest = abortRequest;

// ---- Response --------------------------------------------------------------

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

const noInit = Object.freeze({});
const kTrusted = Symbol("response.trusted");
// The state of a Response is private (goja stores private fields far more
// cheaply than an object of properties). isResponse tells a Response by it
// (no instanceof: goja allocates for each); resBody, serializeResponse and
// makeResponse reach it from outside the class.
let isResponse, resBody, serializeResponse, makeResponse;

class Response {
  #status;
  #statusText;
  #headers;
  #type;
  #url;
  #redirected;
  #webSocket;
  #cf;
  #body;
  constructor(body, init) {
    if (body === kTrusted) return; // makeResponse fills it in
    if (body === undefined) body = null;
    init = init || noInit;
    let status = 200;
    if (init.status !== undefined) {
      // WebIDL unsigned short: truncate, wrap modulo 2^16.
      status = Math.trunc(Number(init.status)) || 0;
      status = ((status % 65536) + 65536) % 65536;
      if (!(status >= 200 && status <= 599) && !(status === 101 && init.webSocket != null)) {
        throw new RangeError("Responses may only be constructed with status codes in the range 200 to 599, inclusive.");
      }
    }
    const statusText = init.statusText !== undefined ? String(init.statusText) : reasons[status] || "";
    if (init.statusText !== undefined && !/^[\t\x20-\x7e\x80-\xff]*$/.test(statusText)) throw new TypeError("Invalid statusText");
    const headers = internal.newHeaders(init.headers);
    const source = extractBody(body);
    if (source !== null && nullBodyStatus(status)) {
      throw new TypeError("Response with null body status (101, 204, 205, or 304) cannot have a body.");
    }
    if (source !== null && extractedType !== null) internal.setDefault(headers, "content-type", extractedType);
    this.#status = status;
    this.#statusText = statusText;
    this.#headers = headers;
    this.#type = "default";
    this.#url = "";
    this.#redirected = false;
    this.#webSocket = init.webSocket || null;
    if (this.#webSocket !== null && status !== 101) throw new RangeError("Responses with a WebSocket must have status code 101.");
    this.#cf = init.cf;
    this.#body = newBody(source);
  }
  static {
    isResponse = (v) => v !== null && typeof v === "object" && #status in v;
    resBody = (v) => (v !== null && typeof v === "object" && #body in v ? v.#body : undefined);
    makeResponse = (status, statusText, headers, body, url, redirected, webSocket = null) => {
      const r = new Response(kTrusted);
      r.#status = status;
      r.#statusText = statusText;
      r.#headers = headers;
      r.#type = "default";
      r.#url = url;
      r.#redirected = redirected;
      r.#webSocket = webSocket;
      r.#cf = undefined;
      r.#body = body;
      return r;
    };
    // serializeResponse flattens a response for Go as [status,
    // statusText, bytes | string | reader | null, headers], which Go reads
    // at once (fetch.go, toResponse). A stream body goes as its reader: Go
    // pulls it chunk by chunk (internal.pullChunk, stream.go) while the
    // status and headers are already on their way.
    serializeResponse = (res) => {
      if (res.#type === "error") {
        throw new TypeError("Return value from serve handler must not be an error response (like Response.error()).");
      }
      const b = res.#body;
      const out = [res.#status, res.#statusText, null, res.#headers];
      if (res.#webSocket !== null && res.#status === 101) out.webSocket = internal.ws.handOff(res.#webSocket);
      if (b.source === null) return out;
      if (bodyUsed(b)) throw usedError();
      if (b.stream === null && !(isStream(b.source))) {
        b.used = true;
        out[2] = b.source;
        return out;
      }
      const stream = bodyStream(b);
      if (stream.locked) throw new TypeError("This ReadableStream is currently locked to a reader.");
      b.used = true;
      // A Go body passed on untouched goes back to Go whole (no chunk
      // crosses the isolate); anything else is pulled through its reader.
      const source = internal.drainBodySource(stream);
      if (source !== null) {
        out[2] = source;
        return out;
      }
      const taken = internal.takeGoStream(stream);
      out[2] = taken !== null ? taken : stream.getReader();
      return out;
    };
  }
  get status() { return this.#status; }
  get statusText() { return this.#statusText; }
  get ok() { const s = this.#status; return s >= 200 && s <= 299; }
  get headers() { return this.#headers; }
  get type() { return this.#type; }
  get url() { return this.#url; }
  get redirected() { return this.#redirected; }
  get webSocket() { return this.#webSocket; }
  get cf() { return this.#cf; }
  clone() {
    const body = cloneBody(this);
    const r = new Response(kTrusted);
    r.#status = this.#status;
    r.#statusText = this.#statusText;
    r.#headers = new Headers(this.#headers);
    internal.setGuard(r.#headers, internal.getGuard(this.#headers));
    r.#type = this.#type;
    r.#url = this.#url;
    r.#redirected = this.#redirected;
    r.#webSocket = this.#webSocket;
    r.#cf = this.#cf;
    r.#body = body;
    return r;
  }
  static error() {
    const r = new Response(null, {});
    r.#status = 0;
    r.#statusText = "";
    r.#type = "error";
    internal.setGuard(r.#headers, "immutable");
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
    internal.setGuard(r.#headers, "immutable");
    return r;
  }
  static json(data, init = undefined) {
    const text = JSON.stringify(data);
    const r = new Response(text === undefined ? null : internal.utf8Encode(text), init);
    internal.setDefault(r.#headers, "content-type", "application/json");
    return r;
  }
}
mixBody(Response.prototype);
Object.defineProperty(Response.prototype, Symbol.toStringTag, { value: "Response", configurable: true });

// makeResponse builds a response that arrived from elsewhere (a Durable
// Object): any status, trusted lowercase header pairs, immutable headers
// as on a fetch() result, body bytes (an ArrayBuffer), a ReadableStream
// or null. url and redirected are those of a fetch() result.
internal.makeResponse = (status, statusText, flatHeaders, body, url = "", redirected = false, webSocket = null) => {
  if (body !== null && nullBodyStatus(status)) {
    if (body instanceof ReadableStream) body.cancel().catch(() => {});
    body = null;
  }
  const source = body === null || body instanceof ReadableStream ? body : new Uint8Array(body);
  return makeResponse(status, statusText, internal.headersFrom(flatHeaders, "immutable"), newBody(source), url, redirected, webSocket);
};
// goStream is a Go body (native.bodyRead) as a ReadableStream; an abort
// of signal (optional) errors it with the signal's reason and closes the
// Go body.
// kGoHandle marks a goStream with its Go handle (see takeGoStream).
const kGoHandle = Symbol("go body");
// takeGoStream returns the Go handle of an unlocked, unread goStream and
// locks the stream, or null when stream is anything else: a Go body handed
// on unread (new Response(r2object.body), a stub's response returned as
// is) goes back to Go without its bytes passing through JavaScript.
internal.takeGoStream = (stream) => {
  const handle = stream[kGoHandle];
  if (handle === undefined || handle === null || stream.locked || internal.isDisturbed(stream)) return null;
  if (!native.bodyTake(handle)) return null;
  stream[kGoHandle] = null;
  internal.lockTaken(stream);
  return handle;
};

// scrubCalls(n) nests n calls (see scrubCalls in stream_in.go).
internal.scrubCalls = function scrubCalls(n) {
  if (n > 0) scrubCalls(n - 1);
};
// Its source's methods live on a prototype, so a stream made per R2 get
// or fetch() costs no closures.
class GoSource {
  constructor(handle, signal) {
    this.type = "bytes";
    this.handle = handle;
    this.signal = signal;
  }
  start(c) {
    const { handle, signal } = this;
    if (!signal) return;
    signal.addEventListener("abort", () => {
      try { c.error(signal.reason); } catch {}
      native.bodyCancel(handle);
    }, { once: true });
  }
  async pull(c) {
    const ab = await native.bodyRead(this.handle);
    if (ab === null) c.close();
    else c.enqueue(new Uint8Array(ab));
  }
  cancel() { native.bodyCancel(this.handle); }
}
const goStrategy = Object.freeze({ highWaterMark: 0 });
// Every goStream is marked with its handle (kGoHandle), so Go can take
// the body back whole while nobody has read it: an R2 object's, a
// fetch() response's or a Durable Object's answer returned as is, or read
// whole with text(). One without an abort signal is lazy (30_readable.js).
internal.goStream = (handle, signal = null) => {
  const s = signal === null ? internal.lazySourceStream(new GoSource(handle, null)) : new ReadableStream(new GoSource(handle, signal), goStrategy);
  native.defineHidden(s, kGoHandle, handle);
  return s;
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
  // exports are loopback bindings to the script's own exports
  // (95_svc.js).
  get exports() { return internal.ctxExports(); }
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

// dispatch builds the incoming request (into box[1]) and runs the fetch
// handler on it, all in one call from Go (goja starts its stack afresh for
// each). It returns what the handler returned, or throws what it threw; Go
// waits for a promise (fetch.go). A Response, returned as it is or by an
// async handler that finished without waiting, is serialized at once into
// box[0], and box is returned.
internal.dispatch = (handler, env, box, method, url, flatHeaders, body, props) => {
  const request = makeRequest(method, url, flatHeaders, body);
  box[1] = request;
  const ctx = Object.create(ExecutionContext.prototype); // as new ExecutionContext(kCreate)
  ctx.props = props === undefined ? {} : props;
  let res = callFetch(handler, request, env, ctx);
  if (!isResponse(res)) {
    const v = native.fulfilled(res, box);
    if (v === box || !isResponse(v)) return res;
    res = v;
  }
  box[0] = serializeResponse(res);
  return box;
};
// pullChunk reads the next chunk of a response body for Go: a promise of
// bytes, or of null at the end. A chunk that is not bytes fails the body.
internal.pullChunk = (reader) => reader.read().then(({ value, done }) => {
  if (done) return null;
  const u = internal.toU8(value);
  if (u === null) {
    const err = new TypeError("This ReadableStream did not return bytes.");
    reader.cancel(err).catch(() => {});
    throw err;
  }
  return u;
});
// cancelBody cancels a response body nobody will read (the client went
// away): the stream's source sees cancel(reason).
internal.cancelBody = (reader) => {
  reader.cancel(new DOMException("The client disconnected.", "AbortError")).catch(() => {});
};
// respond serializes what a handler's promise resolved to.
internal.respond = (res) => {
  if (!isResponse(res)) {
    throw new TypeError("Incorrect type for Promise: the Promise did not resolve to 'Response'.");
  }
  return serializeResponse(res);
};

// fetch() to the network: the request is read whole, sent by Go, and the
// response arrives as an immutable-headers Response with its final URL,
// its body streamed as the network delivers it.
internal.expose("fetch", async function fetch(input, init = undefined) {
  const req = input instanceof Request && init === undefined ? input : new Request(input, init);
  const signal = req.signal;
  if (signal && signal.aborted) throw signal.reason;
  if (String(req.headers.get("upgrade")).toLowerCase() === "websocket") return internal.wsFetch(req);
  const body = req.body === null ? null : await req.arrayBuffer();
  const r = await native.httpFetch(req.method, req.url, req.headers, body, req.redirect || "follow");
  if (signal && signal.aborted) throw signal.reason;
  if (!r.ok) throw new TypeError(r.error);
  const resBody = r.stream === undefined ? r.body : internal.goStream(r.stream, signal);
  return internal.makeResponse(r.status, r.statusText, r.headers, resBody, r.url, r.redirected);
});
internal.expose("Request", Request);
internal.expose("Response", Response);
