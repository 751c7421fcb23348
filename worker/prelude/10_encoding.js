// TextEncoder, TextDecoder, atob, btoa and byte helpers shared by the other
// prelude files.

// toU8 views any BufferSource as a Uint8Array (no copy); null otherwise.
const toU8 = (src) => {
  if (src instanceof Uint8Array) return src;
  if (ArrayBuffer.isView(src)) return new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
  if (src instanceof ArrayBuffer) return new Uint8Array(src);
  return null;
};
internal.toU8 = toU8;
internal.isBufferSource = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);
// copyBytes returns a fresh Uint8Array with its own buffer.
internal.copyBytes = (src) => {
  const u = toU8(src);
  const out = new Uint8Array(u.byteLength);
  out.set(u);
  return out;
};
internal.concatBytes = (chunks) => {
  if (chunks.length === 1) return chunks[0];
  let n = 0;
  for (const c of chunks) n += c.byteLength;
  const out = new Uint8Array(n);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
};
internal.utf8Encode = (s) => new Uint8Array(native.utf8Encode(String(s)));
// utf8Decode decodes like TextDecoder: a leading BOM is dropped, invalid
// sequences become U+FFFD.
internal.utf8Decode = (bytes) => {
  const r = native.decode("utf-8", bytes, false, false);
  const s = r[0];
  return s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
};

class TextEncoder {
  get encoding() { return "utf-8"; }
  encode(input = "") {
    return new Uint8Array(native.utf8Encode(String(input)));
  }
  encodeInto(source, destination) {
    if (!(destination instanceof Uint8Array)) {
      throw new TypeError("Failed to execute 'encodeInto' on 'TextEncoder': parameter 2 is not of type 'Uint8Array'.");
    }
    const r = native.utf8EncodeInto(String(source), destination);
    return { read: r[0], written: r[1] };
  }
}

class TextDecoder {
  #encoding;
  #fatal;
  #ignoreBOM;
  #pending = null;
  #bomSeen = false;
  constructor(label = "utf-8", options = undefined) {
    const name = native.encodingName(String(label));
    if (name === null) throw new RangeError(`"${label}" is not a valid encoding.`);
    this.#encoding = name;
    this.#fatal = !!(options && options.fatal);
    this.#ignoreBOM = !!(options && options.ignoreBOM);
  }
  get encoding() { return this.#encoding; }
  get fatal() { return this.#fatal; }
  get ignoreBOM() { return this.#ignoreBOM; }
  decode(input = undefined, options = undefined) {
    const stream = !!(options && options.stream);
    let bytes;
    if (input === undefined || input === null) bytes = new Uint8Array(0);
    else {
      bytes = toU8(input);
      if (bytes === null) {
        throw new TypeError("Failed to execute 'decode' on 'TextDecoder': parameter 1 is not of type 'ArrayBuffer or ArrayBufferView'.");
      }
    }
    if (this.#pending) {
      bytes = internal.concatBytes([this.#pending, bytes]);
      this.#pending = null;
    }
    const r = native.decode(this.#encoding, bytes, this.#fatal, stream);
    if (r === null) {
      this.#bomSeen = false;
      throw new TypeError("Failed to decode input.");
    }
    let text = r[0];
    if (r[1] < bytes.byteLength) this.#pending = bytes.slice(r[1]);
    if (!this.#bomSeen && text.length) {
      this.#bomSeen = true;
      if (!this.#ignoreBOM && text.charCodeAt(0) === 0xfeff && this.#encoding.startsWith("utf-")) text = text.slice(1);
    }
    if (!stream) {
      this.#pending = null;
      this.#bomSeen = false;
    }
    return text;
  }
}
internal.expose("TextEncoder", TextEncoder);
internal.expose("TextDecoder", TextDecoder);

internal.expose("btoa", function btoa(data) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'btoa': 1 argument required, but only 0 present.");
  const r = native.btoa(String(data));
  if (r === null) {
    throw new DOMException("btoa() can only operate on characters in the Latin1 (ISO/IEC 8859-1) range.", "InvalidCharacterError");
  }
  return r;
});
internal.expose("atob", function atob(data) {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'atob': 1 argument required, but only 0 present.");
  const r = native.atob(String(data));
  if (r === null) {
    throw new DOMException(
      "atob() called with invalid base64-encoded data. (Only whitespace, '+', '/', alphanumeric ASCII, and up to two terminal '=' signs when the input data length is divisible by 4 are allowed.)",
      "InvalidCharacterError",
    );
  }
  return r;
});
