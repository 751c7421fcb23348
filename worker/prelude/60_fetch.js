// Request, Response and their bodies (native: request.go, response.go,
// body.go); the glue Go calls to run a fetch handler (internal.dispatch);
// fetch() to the network.

// extractBody turns a BodyInit into a body source (Uint8Array |
// ReadableStream | string), or null for no body, and leaves the content
// type it implies (or null) in extractedType: no result object per body. A
// string is encoded (UTF-8) when the body is first read as bytes: a
// response whose body is text usually goes to Go as the string.
let extractedType = null;
const disturbedError = () => new TypeError("This ReadableStream is disturbed (has already been read from), and cannot be used as a body.");
function extractBody(init) {
  extractedType = null;
  if (init === undefined || init === null) return null;
  if (typeof init === "string") {
    extractedType = "text/plain;charset=UTF-8";
    return init;
  }
  if (internal.isBufferSource(init)) return internal.copyBytes(init);
  if (init instanceof ReadableStream) {
    // A locked stream that nobody read still makes a body (as in workerd;
    // reading that body then fails: locked).
    if (internal.isDisturbed(init)) throw disturbedError();
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

// usedStream stands for a body read whole without a stream: disturbed,
// closed and locked, as workerd's is after text() or arrayBuffer().
const usedStream = () => {
  const s = new ReadableStream({ start(c) { c.close(); } });
  s.getReader().read();
  return s;
};


// ---- Request and Response --------------------------------------------------

// Request and Response are native (request.go, response.go, body.go):
// these classes are their shells (the native returns the instance, an
// ordinary object for a subclass), their accessors and methods are put on
// their prototypes by fetchInstall, the body members on Body.prototype
// (inherited by both, as in workerd). What is easier said here: the
// statics' argument checks and the stream side of bodies (bodyHelpers).
// Derived classes that never call super: a call without `new` throws
// before any code runs, and `new` makes no object of its own.
function Body() { throw new TypeError("Illegal constructor"); }
class Request extends Body {
  constructor(input, init = undefined) {
    return native.requestConstruct(input, init, new.target);
  }
}
class Response extends Body {
  constructor(body = undefined, init = undefined) {
    return native.responseConstruct(body, init, new.target);
  }
}
Object.defineProperty(Request, "length", { value: 0 });
const statics = {
  error() { return native.responseError(); },
  redirect(url, status = 302) {
    const s = String(url);
    const parsed = native.urlParse(s);
    if (parsed === null) throw new TypeError(`Unable to parse URL: ${s}`);
    status = Number(status);
    if (![301, 302, 303, 307, 308].includes(status)) {
      throw new RangeError(`${status} is not a redirect status code. It must be one of: 301, 302, 303, 307, or 308.`);
    }
    return native.responseRedirect(parsed.href, status);
  },
  json(data, init = undefined) {
    const text = JSON.stringify(data);
    return native.responseJSON(text === undefined ? null : text, init);
  },
};
for (const name of Object.keys(statics)) {
  Object.defineProperty(Response, name, { value: statics[name], writable: true, enumerable: true, configurable: true });
}
const isResponse = native.isResponse;

// bodyHelpers are what the native body (body.go) calls for streams.
const jsonParse = JSON.parse;
const bodyHelpers = {
  Uint8Array,
  type: null,
  isDisturbed: internal.isDisturbed,
  usedStream,
  // what Go needs to make and drain lazy bytes streams (body_lazy.go)
  streamProto: ReadableStream.prototype,
  kLazy: internal.kLazyBytes,
  kState: internal.kStreamState,
  drainedState: internal.drainedState,
  checkStream(stream) {
    if (internal.isDisturbed(stream)) throw disturbedError();
  },
  // extract is extractBody for Go: the source, its type in bodyHelpers.type.
  extract(init) {
    const source = extractBody(init);
    bodyHelpers.type = extractedType;
    return source;
  },
  // readStream reads a stream body whole (Go checked it is unlocked and
  // unread, and marked the body used) as how says (body.go, readKind).
  async readStream(stream, how, contentType) {
    let source = internal.drainBodySource(stream);
    if (source === null) {
      // An untouched Go body (an R2 object's, say) is read in Go in one call.
      const handle = internal.takeGoStream(stream);
      source = await (handle !== null ? internal.readGoBody(handle) : internal.readAllBytes(stream));
    }
    if (how <= 1) {
      const text = typeof source === "string" ? source : internal.utf8Decode(source);
      return how === 0 ? text : jsonParse(text);
    }
    const bytes = typeof source === "string" ? internal.utf8Encode(source) : source;
    switch (how) {
      case 2: return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : internal.copyBytes(bytes).buffer;
      case 3: return internal.copyBytes(bytes);
      case 4: return internal.makeBlob(internal.copyBytes(bytes), contentType || "");
      default: return internal.parseForm(contentType, bytes);
    }
  },
  // streamOut takes a stream body for Go (body.go, out): a Go body
  // passed on untouched goes back to Go whole (no chunk crosses the
  // isolate), a stream over bytes at hand gives them; anything else is
  // pulled through its reader (internal.pullChunk, stream.go).
  streamOut(stream) {
    if (stream.locked) throw new TypeError("This ReadableStream is currently locked to a reader.");
    const source = internal.drainBodySource(stream);
    if (source !== null) return source;
    const taken = internal.takeGoStream(stream);
    return taken !== null ? taken : stream.getReader();
  },
  tee: (stream) => stream.tee(),
  makeBlob: internal.makeBlob,
  parseForm: internal.parseForm,
  parseJSON: jsonParse,
  handOff: (ws) => internal.ws.handOff(ws),
  isWebSocket: (ws) => ws instanceof WebSocket,
  // newSignal is a request's own signal, following signal (or null).
  newSignal(signal) {
    const sig = internal.newSignal();
    if (signal) {
      if (signal.aborted) internal.signalAbort(sig, signal.reason);
      else signal.addEventListener("abort", () => internal.signalAbort(sig, signal.reason));
    }
    return sig;
  },
};
native.fetchInstall(Body, Request, Response, bodyHelpers);
Object.defineProperty(Request.prototype, Symbol.toStringTag, { value: "Request", configurable: true });
Object.defineProperty(Response.prototype, Symbol.toStringTag, { value: "Response", configurable: true });
internal.abortRequest = (request) => {
  internal.signalAbort(native.requestSignal(request), new DOMException("The client disconnected before the response was complete.", "AbortError"));
};

// makeResponse builds a response that arrived from elsewhere (a Durable
// Object): any status, trusted lowercase header pairs, immutable headers
// as on a fetch() result, body bytes (an ArrayBuffer), a ReadableStream
// or null. url and redirected are those of a fetch() result.
const nullBodyStatus = (s) => s === 101 || s === 204 || s === 205 || s === 304;
internal.makeResponse = (status, statusText, flatHeaders, body, url = "", redirected = false, webSocket = null) => {
  if (body !== null && nullBodyStatus(status)) {
    if (body instanceof ReadableStream) body.cancel().catch(() => {});
    body = null;
  }
  return native.responseMake(status, statusText, flatHeaders, body, url, redirected, webSocket);
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

// dispatch runs the fetch handler on the incoming request (built in Go),
// all in one call from Go (goja starts its stack afresh for each). It
// returns what the handler returned, or throws what it threw; Go waits for
// a promise (fetch.go). A Response, returned as it is or by an async
// handler that finished without waiting, is handed to Go at once
// (native.responseOut), and box is returned to say so.
internal.dispatch = (handler, env, box, request, props) => {
  const ctx = Object.create(ExecutionContext.prototype); // as new ExecutionContext(kCreate)
  ctx.props = props === undefined ? {} : props;
  let res = callFetch(handler, request, env, ctx);
  if (!isResponse(res)) {
    const v = native.fulfilled(res, box);
    if (v === box || !isResponse(v)) return res;
    res = v;
  }
  native.responseOut(res);
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
  native.responseOut(res);
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
