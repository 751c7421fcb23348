// cloudflare:sockets: connect() and Socket (sockets.go holds the
// connection). Argument checks and their texts are workerd's.

const kCreate = internal.kCreate;

function parseAddress(address) {
  let hostname, port;
  if (address !== null && typeof address === "object") {
    hostname = address.hostname === undefined ? "" : String(address.hostname);
    const p = address.port;
    if (typeof p !== "number" || !Number.isInteger(p)) {
      throw new TypeError("The value cannot be converted because it is not an integer.");
    }
    port = p;
    if (hostname === "") throw new TypeError("Specified address is missing hostname.");
    if (port < 0 || port > 65535) throw new TypeError("Specified address could not be parsed.");
    return [hostname, port];
  }
  const s = String(address);
  let rest;
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    if (end < 0) throw new TypeError("Specified address could not be parsed.");
    hostname = s.slice(1, end);
    rest = s.slice(end + 1);
    if (rest !== "" && !rest.startsWith(":")) throw new TypeError("Specified address could not be parsed.");
    rest = rest.slice(1);
  } else {
    const i = s.lastIndexOf(":");
    hostname = i < 0 ? s : s.slice(0, i);
    rest = i < 0 ? "" : s.slice(i + 1);
  }
  if (hostname === "") throw new TypeError("Specified address is missing hostname.");
  if (rest === "") throw new TypeError("Specified address is missing port.");
  if (!/^[0-9]{1,5}$/.test(rest) || Number(rest) > 65535) throw new TypeError("Specified address could not be parsed.");
  return [hostname, Number(rest)];
}

const modes = { off: true, on: true, starttls: true };

class Socket {
  #h;
  #host;
  #mode;
  #upgraded = false;
  #readable;
  #writable;
  #opened;
  #closed;
  #closing = false;
  #resolveClosed;
  #rejectClosed;
  #readDone = false;
  #writeDone = false;
  constructor(key, h, host, mode) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#h = h;
    this.#host = host;
    this.#mode = mode;
    this.#closed = new Promise((res, rej) => { this.#resolveClosed = res; this.#rejectClosed = rej; });
    this.#closed.catch(() => {});
    this.#opened = native.sockOpened(h);
    this.#opened.catch((e) => this.#rejectClosed(e));
    const self = this;
    this.#readable = new ReadableStream({
      type: "bytes",
      async pull(c) {
        let ab;
        try {
          ab = await native.sockRead(h);
        } catch (e) {
          self.#fail(e);
          throw e;
        }
        if (ab === null) {
          c.close();
          self.#readDone = true;
          self.#maybeClosed();
        } else {
          c.enqueue(new Uint8Array(ab));
        }
      },
      cancel() {
        self.#readDone = true;
        self.#maybeClosed();
      },
    }, { highWaterMark: 0 });
    this.#writable = new WritableStream({
      write(chunk) {
        let u;
        if (typeof chunk === "string") u = new TextEncoder().encode(chunk);
        else u = internal.toU8(chunk);
        if (u === null) throw new TypeError("This WritableStream only supports writing byte types.");
        return native.sockWrite(h, u);
      },
      async close() {
        await native.sockCloseWrite(h);
        self.#writeDone = true;
        self.#maybeClosed();
      },
      abort() { return self.close(); },
    });
  }
  get readable() { return this.#readable; }
  get writable() { return this.#writable; }
  get opened() { return this.#opened; }
  get closed() { return this.#closed; }
  get upgraded() { return this.#upgraded; }
  get secureTransport() { return this.#mode; }
  #fail(e) { this.#rejectClosed(e); }
  #maybeClosed() {
    if (this.#readDone && this.#writeDone) this.close();
  }
  close() {
    if (!this.#closing) {
      this.#closing = true;
      native.sockClose(this.#h).then(() => this.#resolveClosed(), (e) => this.#rejectClosed(e));
    }
    return this.#closed;
  }
  startTls(options = undefined) {
    if (this.#mode !== "starttls") {
      throw new TypeError("The `secureTransport` socket option must be set to 'starttls' for startTls to be used.");
    }
    if (this.#upgraded) throw new TypeError("Cannot startTls() on a socket that has already been upgraded.");
    this.#upgraded = true;
    const host = options && options.expectedServerHostname !== undefined ? String(options.expectedServerHostname) : this.#host;
    const h = native.sockStartTLS(this.#h, host);
    this.#resolveClosed();
    return new Socket(kCreate, h, this.#host, "on");
  }
}
Object.defineProperty(Socket.prototype, Symbol.toStringTag, { value: "Socket", configurable: true });

function connect(address, options = undefined) {
  const [host, port] = parseAddress(address);
  const o = options == null ? {} : options;
  const mode = o.secureTransport === undefined ? "off" : String(o.secureTransport);
  if (!modes[mode]) throw new TypeError(`Unsupported value in secureTransport socket option: ${mode}`);
  const h = native.sockConnect(host, port, mode === "on");
  return new Socket(kCreate, h, host, mode);
}

internal.socketsModule = Object.freeze({ __proto__: null, connect });
