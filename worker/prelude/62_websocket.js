// WebSocket, WebSocketPair, MessageEvent, CloseEvent and
// WebSocketRequestResponsePair. The two ends of a pair talk to each other
// in JavaScript until one end is returned in a Response (or crosses to
// another isolate): from then on that end is a Go Socket (websocket.go)
// and the other end's frames go to the network. A socket accepted with
// ctx.acceptWebSocket lives in Go between events (objects_websocket.go);
// its JavaScript object is rebuilt after hibernation.

const { expose, kCreate } = internal;

class MessageEvent extends Event {
  #data;
  constructor(type, init = undefined) {
    super(type, init);
    this.#data = init && init.data !== undefined ? init.data : null;
  }
  get data() { return this.#data; }
}
class CloseEvent extends Event {
  #code;
  #reason;
  #wasClean;
  constructor(type, init = undefined) {
    super(type, init);
    const o = init || {};
    this.#code = o.code === undefined ? 0 : Number(o.code);
    this.#reason = o.reason === undefined ? "" : String(o.reason);
    this.#wasClean = !!o.wasClean;
  }
  get code() { return this.#code; }
  get reason() { return this.#reason; }
  get wasClean() { return this.#wasClean; }
}
class ErrorEvent extends Event {
  #message;
  #error;
  constructor(type, init = undefined) {
    super(type, init);
    const o = init || {};
    this.#message = o.message === undefined ? "" : String(o.message);
    this.#error = o.error;
  }
  get message() { return this.#message; }
  get error() { return this.#error; }
  get filename() { return ""; }
  get lineno() { return 0; }
  get colno() { return 0; }
}

const CONNECTING = 0, OPEN = 1, CLOSING = 2, CLOSED = 3;
// workerd's rule (wider than RFC 6455's registered ranges): 1000-4999
// except the codes that must never be sent.
const validCloseCode = (c) => c >= 1000 && c <= 4999 && c !== 1004 && c !== 1005 && c !== 1006 && c !== 1015;

// messageData converts what send() was given to a frame: [text, payload].
function messageData(msg) {
  if (typeof msg === "string") return [true, msg];
  if (msg instanceof ArrayBuffer) return [false, new Uint8Array(msg.slice(0))];
  if (ArrayBuffer.isView(msg)) return [false, new Uint8Array(msg.buffer.slice(msg.byteOffset, msg.byteOffset + msg.byteLength))];
  return [true, String(msg)];
}

let wsInternals;

class WebSocket extends EventTarget {
  #rs = OPEN;
  #accepted = null; // null, "accept" or "hibernate"
  #peer = null; // the other end of the pair while both are JavaScript
  #h = null; // the Go socket, once this end talks to one
  #far = null; // this end was handed to Go: the Go socket it is the far side of
  #used = false; // returned in a Response
  #inbox = []; // events that arrived before accept()
  #binaryType = "arraybuffer";
  #url = null;
  #protocol = "";
  #extensions = "";
  #outbound = false; // new WebSocket(url)
  #sentClose = false;
  #attachment = null;
  #flushing = false;
  constructor(url = undefined, protocols = undefined) {
    super();
    if (url === kCreate) {
      this.#rs = OPEN;
      return;
    }
    if (arguments.length === 0) throw new TypeError("Failed to construct 'WebSocket': 1 argument required, but only 0 present.");
    let u = String(url);
    const parsed = native.urlParse(u);
    if (parsed === null) throw new DOMException(`Failed to construct 'WebSocket': The URL '${u}' is invalid.`, "SyntaxError");
    const href = parsed.href;
    if (!href.startsWith("ws:") && !href.startsWith("wss:")) {
      throw new DOMException("WebSocket Constructor: The url scheme must be ws or wss.", "SyntaxError");
    }
    const list = protocols === undefined ? [] : typeof protocols === "string" ? [protocols] : Array.from(protocols, String);
    this.#url = href;
    this.#rs = CONNECTING;
    this.#outbound = true;
    this.#accepted = "accept";
    native.wsDial(href, list, this);
  }
  static {
    wsInternals = {
      pair() {
        const a = new WebSocket(kCreate), b = new WebSocket(kCreate);
        a.#peer = b;
        b.#peer = a;
        return [a, b];
      },
      // fromGo wraps a Go socket: h is its handle; far means this object
      // stands for the far side (a socket returned by a Durable Object,
      // to pass on in a Response), else it is the script's end.
      fromGo(h, far, accepted) {
        const ws = new WebSocket(kCreate);
        if (far) ws.#far = h;
        else ws.#h = h;
        ws.#accepted = accepted;
        return ws;
      },
      // handOff is called when ws is returned in a Response: the Go socket
      // that stands for it from now on.
      handOff(ws) {
        if (ws.#used) throw new TypeError("Can't return WebSocket that was already used in a response.");
        if (ws.#outbound) throw new TypeError("Can't return WebSocket in a Response if it was created with `new WebSocket()`");
        if (ws.#far !== null) {
          ws.#used = true;
          return ws.#far;
        }
        if (ws.#accepted !== null) {
          // workerd completes the handshake and drops the connection.
          internal.reportError(new TypeError("Can't return WebSocket in a Response after calling accept()."));
          ws.#used = true;
          return native.wsAborted();
        }
        const mate = ws.#peer;
        if (mate === null) throw new TypeError("Can't return WebSocket that was already used in a response.");
        ws.#used = true;
        ws.#peer = null;
        mate.#peer = null;
        // The mate talks to Go from now on; what it already sent is queued.
        const h = mate.#h !== null ? mate.#h : native.wsSocket(mate, false);
        mate.#h = h;
        for (const ev of ws.#inbox) {
          if (ev[0] === "m") native.wsSend(h, ev[1], ev[2]);
          else native.wsClose(h, ev[1], ev[2]);
        }
        ws.#inbox = [];
        return h;
      },
      // deliver is how Go hands an event to the script's end.
      deliver(ws, kind, text, data, code, reason, clean) {
        if (kind === "m") ws.#receive(["m", text, data]);
        else if (kind === "e") ws.#receive(["e", code, reason]);
        else ws.#receive(["c", code, reason, clean]);
      },
      opened(ws, h, protocol, extensions) {
        ws.#h = h;
        ws.#protocol = protocol;
        ws.#extensions = extensions;
        if (ws.#rs !== CONNECTING) return;
        ws.#rs = OPEN;
        ws.dispatchEvent(new Event("open"));
      },
      dialFailed(ws, message) {
        ws.#rs = CLOSED;
        ws.dispatchEvent(new ErrorEvent("error", { message, error: new Error(message) }));
        queueMicrotask(() => ws.dispatchEvent(new CloseEvent("close", { code: 1006, reason: "", wasClean: false })));
      },
      hibernate(ws) {
        if (ws.#accepted !== null) throw new Error("Cannot call `acceptWebSocket()` if the WebSocket was already accepted via `accept()`");
        if (ws.#used || ws.#far !== null || ws.#outbound) {
          throw new Error("Cannot call `acceptWebSocket()` on this WebSocket because its pair has already been accepted or used in a Response.");
        }
        if (ws.#peer !== null && ws.#peer.#accepted !== null) {
          throw new Error("Cannot call `acceptWebSocket()` on this WebSocket because its pair has already been accepted or used in a Response.");
        }
        ws.#accepted = "hibernate";
        ws.#h = native.wsSocket(ws, true);
        return ws.#h;
      },
      handle: (ws) => ws.#h,
      isWebSocket: (v) => v !== null && typeof v === "object" && #rs in v,
      markClosed(ws) { ws.#rs = ws.#sentClose ? CLOSED : CLOSING; },
    };
  }
  // Events queue in the inbox and are dispatched in order from a
  // microtask once the end is accepted; an end handed to Go takes its
  // inbox along.
  #receive(ev) {
    this.#inbox.push(ev);
    this.#schedule();
  }
  #schedule() {
    if (this.#accepted === null || this.#flushing || this.#inbox.length === 0) return;
    this.#flushing = true;
    queueMicrotask(() => this.#flush());
  }
  #flush() {
    this.#flushing = false;
    if (this.#accepted === null) return;
    while (this.#inbox.length > 0) this.#dispatch(this.#inbox.shift());
  }
  #dispatch(ev) {
    if (ev[0] === "m") {
      let data = ev[2];
      if (!ev[1]) data = this.#binaryType === "blob" ? new Blob([data]) : data;
      this.dispatchEvent(new MessageEvent("message", { data }));
      return;
    }
    if (ev[0] === "e") {
      this.#rs = CLOSED;
      const message = "WebSocket disconnected without sending Close frame.";
      this.dispatchEvent(new ErrorEvent("error", { message, error: new Error(message) }));
      queueMicrotask(() => this.dispatchEvent(new CloseEvent("close", { code: 1006, reason: "", wasClean: false })));
      return;
    }
    this.#rs = this.#sentClose ? CLOSED : CLOSING;
    this.dispatchEvent(new CloseEvent("close", { code: ev[1], reason: ev[2], wasClean: ev[3] }));
  }
  accept(options = undefined) {
    if (this.#outbound) throw new TypeError("Websockets obtained from the 'new WebSocket()' constructor cannot call accept");
    if (this.#used) throw new TypeError("Can't accept() WebSocket that was already used in a response.");
    if (this.#accepted === "hibernate") throw new TypeError("Can't accept() WebSocket after enabling hibernation.");
    if (this.#accepted !== null) return;
    if (this.#far !== null) {
      // A socket from a Durable Object, used here instead of passed on.
      this.#h = this.#far;
      this.#far = null;
      native.wsAdopt(this.#h, this);
    }
    this.#accepted = "accept";
    if (this.#h !== null) native.wsBind(this.#h, this);
    this.#schedule();
  }
  send(message) {
    if (arguments.length === 0) throw new TypeError("Failed to execute 'send' on 'WebSocket': 1 argument required, but only 0 present.");
    if (this.#rs === CONNECTING) throw new DOMException("Failed to execute 'send' on 'WebSocket': Still in CONNECTING state.", "InvalidStateError");
    if (this.#accepted === null) {
      throw new TypeError("You must call one of accept() or state.acceptWebSocket() on this WebSocket before sending messages.");
    }
    if (this.#sentClose) throw new TypeError("Can't call WebSocket send() after close().");
    const [text, data] = messageData(message);
    if (this.#h !== null) {
      native.wsSend(this.#h, text, data);
      return;
    }
    if (this.#peer !== null) this.#peer.#receive(["m", text, text ? data : data.buffer]);
  }
  close(code = undefined, reason = undefined) {
    if (this.#rs === CONNECTING) {
      // workerd closes a connecting outbound socket once it opens; it
      // never opens here instead.
    }
    let c = 1005;
    if (code !== undefined) {
      c = Math.trunc(Number(code));
      if (!validCloseCode(c)) throw new DOMException(`Invalid WebSocket close code: ${c}.`, "InvalidAccessError");
    }
    const r = reason === undefined ? "" : String(reason);
    if (code === undefined && reason !== undefined) {
      throw new DOMException("If you specify a WebSocket close reason, you must also specify a code.", "InvalidAccessError");
    }
    if (this.#accepted === null && !this.#outbound) {
      throw new TypeError("You must call one of accept() or state.acceptWebSocket() on this WebSocket before sending messages.");
    }
    if (this.#sentClose) return;
    this.#sentClose = true;
    this.#rs = this.#rs === CLOSING ? CLOSED : CLOSING;
    if (this.#h !== null) {
      native.wsClose(this.#h, c, r);
      return;
    }
    if (this.#peer !== null) this.#peer.#receive(["c", c, r, true]);
  }
  get readyState() { return this.#rs; }
  get url() { return this.#url; }
  get protocol() { return this.#protocol; }
  get extensions() { return this.#extensions; }
  get binaryType() { return this.#binaryType; }
  set binaryType(v) {
    if (v === "blob" || v === "arraybuffer") this.#binaryType = v;
  }
  get bufferedAmount() { return 0; }
  serializeAttachment(value) {
    if (this.#h !== null) native.wsSetAttachment(this.#h, value);
    else this.#attachment = native.deserialize(native.wsSerialize(value));
  }
  deserializeAttachment() {
    if (this.#h !== null) return native.wsGetAttachment(this.#h);
    return this.#attachment === null ? null : native.deserialize(native.wsSerialize(this.#attachment));
  }
}
for (const [k, v] of Object.entries({ CONNECTING, OPEN, CLOSING, CLOSED })) {
  Object.defineProperty(WebSocket, k, { value: v, enumerable: true });
  Object.defineProperty(WebSocket.prototype, k, { value: v, enumerable: true });
}
for (const t of ["open", "message", "close", "error"]) internal.defineEventHandler(WebSocket.prototype, t);
Object.defineProperty(WebSocket.prototype, Symbol.toStringTag, { value: "WebSocket", configurable: true });

class WebSocketPair {
  constructor() {
    const [a, b] = wsInternals.pair();
    this[0] = a;
    this[1] = b;
  }
}

class WebSocketRequestResponsePair {
  #request;
  #response;
  constructor(request, response) {
    for (const [i, v] of [request, response].entries()) {
      if (v === undefined) throw new TypeError(`Failed to construct 'WebSocketRequestResponsePair': constructor parameter ${i + 1} is not of type 'string'.`);
    }
    this.#request = String(request);
    this.#response = String(response);
  }
  get request() { return this.#request; }
  get response() { return this.#response; }
  static {
    internal.isAutoPair = (v) => v !== null && typeof v === "object" && #request in v;
  }
}

internal.ws = wsInternals;

// wsFetch is fetch() of a request with Upgrade: websocket: a 101
// response whose webSocket the script must accept().
internal.wsFetch = async (req) => {
  if (req.method !== "GET") throw new TypeError("WebSocket must be initiated with a GET request.");
  const r = await native.wsFetch(req.url, internal.headersFlat(req.headers));
  if (!r.ok) throw new TypeError(r.error);
  const ws = r.socket === undefined ? null : wsInternals.fromGo(r.socket, false, null);
  return internal.makeResponse(r.status, r.statusText, r.headers, null, req.url, false, ws);
};
expose("MessageEvent", MessageEvent);
expose("CloseEvent", CloseEvent);
expose("ErrorEvent", ErrorEvent);
expose("WebSocket", WebSocket);
expose("WebSocketPair", WebSocketPair);
expose("WebSocketRequestResponsePair", WebSocketRequestResponsePair);
