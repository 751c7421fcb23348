// node:buffer: Buffer on Uint8Array. Encoding, comparison and search are
// Go natives (native_buffer.go); the rest is here.

const { nodeError, invalidArgType, outOfRange } = internal;

class FastBuffer extends Uint8Array {}

const kMaxLength = 2 ** 31 - 1;
const kStringMaxLength = 2 ** 29 - 24;
const customInspect = Symbol.for("nodejs.util.inspect.custom");

const encodings = {
  utf8: "utf8", "utf-8": "utf8", hex: "hex", base64: "base64", base64url: "base64url",
  latin1: "latin1", binary: "latin1", ascii: "ascii",
  ucs2: "utf16le", "ucs-2": "utf16le", utf16le: "utf16le", "utf-16le": "utf16le",
};
const normEnc = (enc) => {
  if (enc === undefined || enc === null || enc === "utf8" || enc === "utf-8") return "utf8";
  const e = encodings[String(enc).toLowerCase()];
  if (e === undefined) throw nodeError(TypeError, "ERR_UNKNOWN_ENCODING", `Unknown encoding: ${enc}`);
  return e;
};
internal.normEnc = normEnc;

const wrap = (ab) => new FastBuffer(ab);

function Buffer(arg, encodingOrOffset, length) {
  if (typeof arg === "number") {
    if (typeof encodingOrOffset === "string") {
      throw invalidArgType("string", "of type string", arg);
    }
    return Buffer.alloc(arg);
  }
  return Buffer.from(arg, encodingOrOffset, length);
}
Object.setPrototypeOf(Buffer, Uint8Array);
Buffer.prototype = FastBuffer.prototype;
Object.defineProperty(FastBuffer.prototype, "constructor", { value: Buffer, writable: true, configurable: true });
Buffer.poolSize = 0; // workerd has no pool

const fromString = (s, enc) => wrap(native.bufFromString(s, normEnc(enc)));

const fromArrayLike = (a) => {
  const n = a.length >>> 0;
  const b = new FastBuffer(n);
  for (let i = 0; i < n; i++) b[i] = a[i];
  return b;
};

Buffer.from = function from(value, encodingOrOffset, length) {
  if (typeof value === "string") return fromString(value, encodingOrOffset);
  if (typeof value === "object" && value !== null) {
    if (value instanceof ArrayBuffer || (typeof SharedArrayBuffer !== "undefined" && value instanceof SharedArrayBuffer)) {
      const off = encodingOrOffset === undefined ? 0 : +encodingOrOffset || 0;
      const max = value.byteLength - off;
      if (max < 0) throw nodeError(RangeError, "ERR_BUFFER_OUT_OF_BOUNDS", '"offset" is outside of buffer bounds');
      let len = length === undefined ? max : +length || 0;
      if (len > max) throw nodeError(RangeError, "ERR_BUFFER_OUT_OF_BOUNDS", '"length" is outside of buffer bounds');
      if (len < 0) len = 0;
      return new FastBuffer(value, off, len);
    }
    if (ArrayBuffer.isView(value)) {
      if (value instanceof Uint8Array) {
        const b = new FastBuffer(value.length);
        b.set(value);
        return b;
      }
      return fromArrayLike(value);
    }
    const prim = value.valueOf && value.valueOf();
    if (prim != null && prim !== value && (typeof prim === "string" || typeof prim === "object")) {
      return Buffer.from(prim, encodingOrOffset, length);
    }
    if (value.length !== undefined || Array.isArray(value)) {
      if (typeof value.length !== "number") return new FastBuffer(0);
      return fromArrayLike(value);
    }
    if (value.type === "Buffer" && Array.isArray(value.data)) return fromArrayLike(value.data);
    if (typeof value[Symbol.toPrimitive] === "function") {
      const p = value[Symbol.toPrimitive]("string");
      if (typeof p === "string") return fromString(p, encodingOrOffset);
    }
  }
  throw nodeError(TypeError, "ERR_INVALID_ARG_TYPE",
    "The first argument must be of type string or an instance of Buffer, TypedArray, ArrayBuffer, SharedArrayBuffer, or Array or an Array-like Object." + internal.nodeReceived(value));
};

const validateSize = (size) => {
  if (typeof size !== "number") throw invalidArgType("size", "of type number", size);
  if (!(size >= 0 && size <= kMaxLength)) throw outOfRange("size", `>= 0 && <= ${kMaxLength}`, size);
};

Buffer.alloc = function alloc(size, fill, encoding) {
  validateSize(size);
  const b = new FastBuffer(size);
  if (fill !== undefined && fill !== 0 && size > 0) b.fill(fill, 0, b.length, encoding);
  return b;
};
Buffer.allocUnsafe = function allocUnsafe(size) {
  validateSize(size);
  return new FastBuffer(size);
};
Buffer.allocUnsafeSlow = Buffer.allocUnsafe;
Buffer.isBuffer = function isBuffer(b) { return b instanceof Buffer; };
Buffer.isEncoding = function isEncoding(enc) {
  return typeof enc === "string" && enc.length !== 0 && encodings[enc.toLowerCase()] !== undefined;
};
Buffer.byteLength = function byteLength(s, enc) {
  if (typeof s !== "string") {
    if (ArrayBuffer.isView(s) || s instanceof ArrayBuffer) return s.byteLength;
    throw invalidArgType("string", "of type string or an instance of Buffer or ArrayBuffer", s);
  }
  let e;
  try { e = normEnc(enc); } catch { e = "utf8"; }
  return native.bufByteLength(s, e);
};
const isU8 = (v) => v instanceof Uint8Array;
Buffer.compare = function compare(a, b) {
  if (!isU8(a)) throw invalidArgType("buf1", "an instance of Buffer or Uint8Array", a);
  if (!isU8(b)) throw invalidArgType("buf2", "an instance of Buffer or Uint8Array", b);
  return native.bufCompare(a, b);
};
Buffer.concat = function concat(list, totalLength) {
  if (!Array.isArray(list)) throw invalidArgType("list", "an instance of Array", list);
  if (list.length === 0) return new FastBuffer(0);
  let n = 0;
  for (let i = 0; i < list.length; i++) {
    if (!isU8(list[i])) {
      throw new TypeError(`Incorrect type for array element ${i}: the provided value is not of type 'JsUint8Array'.`);
    }
    n += list[i].length;
  }
  if (totalLength !== undefined) n = totalLength;
  const out = new FastBuffer(n);
  let off = 0;
  for (const b of list) {
    if (off >= n) break;
    const part = off + b.length > n ? b.subarray(0, n - off) : b;
    out.set(part, off);
    off += part.length;
  }
  return out;
};
Buffer.copyBytesFrom = function copyBytesFrom(view, offset = 0, length) {
  if (!ArrayBuffer.isView(view)) throw invalidArgType("view", "an instance of TypedArray", view);
  const end = length === undefined ? view.length : Math.min(view.length, offset + length);
  const part = view.subarray(offset, end);
  return Buffer.from(new Uint8Array(part.buffer, part.byteOffset, part.byteLength));
};
Buffer.of = function of(...items) { return fromArrayLike(items); };

// ---- prototype ----------------------------------------------------------------

const proto = FastBuffer.prototype;
const def = (name, fn) => Object.defineProperty(proto, name, { value: fn, writable: true, configurable: true });

def("toString", function toString(encoding, start, end) {
  if (arguments.length === 0) return native.bufToString(this, "utf8", 0, this.length);
  const len = this.length;
  start = start === undefined || start <= 0 ? 0 : Math.trunc(start) || 0;
  end = end === undefined || end > len ? len : Math.trunc(end) || 0;
  if (end <= start) return "";
  return native.bufToString(this, normEnc(encoding), start, end);
});
def("toLocaleString", proto.toString);
def("toJSON", function toJSON() { return { type: "Buffer", data: Array.from(this) }; });
def("equals", function equals(other) {
  if (!isU8(other)) throw invalidArgType("otherBuffer", "an instance of Buffer or Uint8Array", other);
  return this === other || (this.length === other.length && native.bufCompare(this, other) === 0);
});
def("compare", function compare(target, tStart = 0, tEnd = target && target.length, sStart = 0, sEnd = this.length) {
  if (!isU8(target)) throw invalidArgType("target", "an instance of Buffer or Uint8Array", target);
  if (tStart < 0 || tStart > target.length) throw outOfRange("targetStart", `>= 0 && <= ${target.length}`, tStart);
  if (tEnd < 0 || tEnd > target.length) throw outOfRange("targetEnd", `>= 0 && <= ${target.length}`, tEnd);
  if (sStart < 0 || sStart > this.length) throw outOfRange("sourceStart", `>= 0 && <= ${this.length}`, sStart);
  if (sEnd < 0 || sEnd > this.length) throw outOfRange("sourceEnd", `>= 0 && <= ${this.length}`, sEnd);
  if (sStart >= sEnd) return tStart >= tEnd ? 0 : -1;
  if (tStart >= tEnd) return 1;
  return native.bufCompare(this.subarray(sStart, sEnd), target.subarray(tStart, tEnd));
});
def("copy", function copy(target, targetStart = 0, sourceStart = 0, sourceEnd = this.length) {
  if (!isU8(target)) throw invalidArgType("target", "an instance of Buffer or Uint8Array", target);
  targetStart = Math.trunc(targetStart) || 0;
  if (targetStart < 0) throw outOfRange("targetStart", ">= 0", targetStart);
  sourceStart = Math.trunc(sourceStart) || 0;
  if (sourceStart < 0 || sourceStart > this.length) throw outOfRange("sourceStart", `>= 0 && <= ${this.length}`, sourceStart);
  sourceEnd = Math.min(Math.trunc(sourceEnd) || 0, this.length);
  if (targetStart >= target.length || sourceStart >= sourceEnd) return 0;
  const n = Math.min(sourceEnd - sourceStart, target.length - targetStart);
  target.set(this.subarray(sourceStart, sourceStart + n), targetStart);
  return n;
});
const view = function slice(start, end) {
  const len = this.length;
  start = start === undefined ? 0 : Math.trunc(start) || 0;
  end = end === undefined ? len : Math.trunc(end) || 0;
  if (start < 0) start = Math.max(len + start, 0); else if (start > len) start = len;
  if (end < 0) end = Math.max(len + end, 0); else if (end > len) end = len;
  if (end < start) end = start;
  return new FastBuffer(this.buffer, this.byteOffset + start, end - start);
};
def("slice", view);
def("subarray", view);
def("write", function write(string, offset, length, encoding) {
  if (typeof string !== "string") throw invalidArgType("argument", "of type string", string);
  if (typeof offset === "string") { encoding = offset; offset = 0; length = this.length; }
  else if (typeof length === "string") { encoding = length; length = undefined; }
  offset = offset === undefined ? 0 : offset >>> 0;
  if (offset > this.length) throw outOfRange("offset", `>= 0 && <= ${this.length}`, offset);
  const remaining = this.length - offset;
  length = length === undefined ? remaining : Math.min(remaining, length >>> 0);
  return native.bufWrite(this, string, offset, length, normEnc(encoding));
});
def("fill", function fill(value, offset, end, encoding) {
  if (typeof offset === "string") { encoding = offset; offset = 0; end = this.length; }
  else if (typeof end === "string") { encoding = end; end = this.length; }
  offset = offset === undefined ? 0 : offset;
  end = end === undefined ? this.length : end;
  if (typeof offset !== "number") throw invalidArgType("offset", "of type number", offset);
  if (offset < 0 || offset > this.length) throw outOfRange("offset", `>= 0 && <= ${this.length}`, offset);
  if (end < 0 || end > this.length) throw outOfRange("end", `>= 0 && <= ${this.length}`, end);
  if (end <= offset) return this;
  if (typeof value === "number") {
    Uint8Array.prototype.fill.call(this, value & 255, offset, end);
    return this;
  }
  if (typeof value === "boolean") {
    Uint8Array.prototype.fill.call(this, +value, offset, end);
    return this;
  }
  let bytes;
  if (typeof value === "string") {
    const enc = normEnc(encoding);
    if (value.length === 1 && enc === "utf8" && value.charCodeAt(0) < 128) {
      Uint8Array.prototype.fill.call(this, value.charCodeAt(0), offset, end);
      return this;
    }
    bytes = fromString(value, enc);
    if (bytes.length === 0) {
      if (value.length === 0) { Uint8Array.prototype.fill.call(this, 0, offset, end); return this; }
      if (enc === "hex") throw new TypeError("The text is not valid hex");
      throw invalidArgValue("value", value);
    }
  } else if (isU8(value)) {
    bytes = value;
  } else if (ArrayBuffer.isView(value)) {
    bytes = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  } else {
    Uint8Array.prototype.fill.call(this, Number(value) & 255, offset, end);
    return this;
  }
  native.bufFill(this, bytes, offset, end);
  return this;
});
const invalidArgValue = (name, value) => nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument '${name}' is invalid. Received '${value}'`);

function search(buf, value, byteOffset, encoding, last) {
  if (typeof byteOffset === "string") { encoding = byteOffset; byteOffset = undefined; }
  let from = byteOffset === undefined ? (last ? buf.length : 0) : +byteOffset;
  if (Number.isNaN(from)) from = last ? buf.length : 0;
  from = Math.trunc(from);
  if (from < 0) from = buf.length + from;
  if (from < 0) {
    if (last) return -1;
    from = 0;
  }
  if (typeof value === "number") {
    const v = value & 255;
    if (last) {
      for (let i = Math.min(from, buf.length - 1); i >= 0; i--) if (buf[i] === v) return i;
    } else {
      for (let i = from; i < buf.length; i++) if (buf[i] === v) return i;
    }
    return -1;
  }
  let needle;
  if (typeof value === "string") needle = fromString(value, encoding);
  else if (isU8(value)) needle = value;
  else throw invalidArgType("value", "one of type number or string or an instance of Buffer or Uint8Array", value);
  if (needle.length === 0) return last ? Math.min(from, buf.length) : Math.min(from, buf.length);
  if (!last && from > buf.length) return -1;
  return native.bufIndexOf(buf, needle, Math.min(from, buf.length), last);
}
def("indexOf", function indexOf(value, byteOffset, encoding) { return search(this, value, byteOffset, encoding, false); });
def("lastIndexOf", function lastIndexOf(value, byteOffset, encoding) { return search(this, value, byteOffset, encoding, true); });
def("includes", function includes(value, byteOffset, encoding) { return search(this, value, byteOffset, encoding, false) !== -1; });

const swap = (size) => function () {
  if (this.length % size !== 0) {
    throw nodeError(RangeError, "ERR_INVALID_BUFFER_SIZE", `Buffer size must be a multiple of ${size * 8}-bits`);
  }
  for (let i = 0; i < this.length; i += size) {
    for (let a = i, b = i + size - 1; a < b; a++, b--) {
      const t = this[a]; this[a] = this[b]; this[b] = t;
    }
  }
  return this;
};
def("swap16", swap(2));
def("swap32", swap(4));
def("swap64", swap(8));

for (const enc of ["utf8", "hex", "base64", "base64url", "latin1", "ascii", "ucs2", "utf16le"]) {
  const e = normEnc(enc);
  def(`${enc}Slice`, function (start = 0, end = this.length) { return native.bufToString(this, e, start, end); });
  def(`${enc}Write`, function (s, offset = 0, length = this.length - offset) { return native.bufWrite(this, s, offset, length, e); });
}
def("latin1Slice", function (start = 0, end = this.length) { return native.bufToString(this, "latin1", start, end); });
def("binarySlice", proto.latin1Slice);

def(customInspect, function inspect() {
  const max = bufferModule.INSPECT_MAX_BYTES;
  let s = native.bufToString(this.subarray(0, max), "hex", 0, max).replace(/(.{2})(?!$)/g, "$1 ");
  if (this.length > max) s += ` ... ${this.length - max} more byte${this.length - max > 1 ? "s" : ""}`;
  return `<${this.constructor.name} ${s}>`.replace(" >", ">");
});
def("inspect", proto[customInspect]);
Object.defineProperty(proto, "parent", { get() { return this instanceof Buffer ? this.buffer : undefined; }, configurable: true });
Object.defineProperty(proto, "offset", { get() { return this instanceof Buffer ? this.byteOffset : undefined; }, configurable: true });

// ---- numbers ------------------------------------------------------------------

const boundsError = (value, length, type) => {
  if (Math.floor(value) !== value) {
    if (typeof value !== "number") throw invalidArgType("offset", "of type number", value);
    return outOfRange(type || "offset", "an integer", value);
  }
  if (length < 0) return nodeError(RangeError, "ERR_BUFFER_OUT_OF_BOUNDS", "Attempt to access memory outside buffer bounds");
  return outOfRange(type || "offset", `>= ${type ? 1 : 0} and <= ${length}`, value);
};
const checkOffset = (buf, offset, size) => {
  if (offset === undefined) offset = 0;
  if (typeof offset !== "number") throw invalidArgType("offset", "of type number", offset);
  if (!Number.isInteger(offset) || offset < 0 || offset + size > buf.length) throw boundsError(offset, buf.length - size);
  return offset;
};
const checkValue = (value, min, max, bigint) => {
  if (bigint) {
    if (typeof value !== "bigint") throw new TypeError("Cannot mix BigInt and other types, use explicit conversions");
  } else if (typeof value !== "number") {
    throw invalidArgType("value", "of type number", value);
  }
  if (value > max || value < min) {
    const n = bigint ? "n" : "";
    const range = bigint
      ? (min === 0n ? `>= 0n and < 2n ** 64n` : `>= -(2n ** 63n) and < 2n ** 63n`)
      : `>= ${min}${n} and <= ${max}${n}`;
    throw outOfRange("value", range, value);
  }
};
const f32 = new Float32Array(1), f64 = new Float64Array(1);
const f32b = new Uint8Array(f32.buffer), f64b = new Uint8Array(f64.buffer);

const readUInt = (buf, off, n, le) => {
  let v = 0;
  if (le) for (let i = n - 1; i >= 0; i--) v = v * 256 + buf[off + i];
  else for (let i = 0; i < n; i++) v = v * 256 + buf[off + i];
  return v;
};
const writeUInt = (buf, off, n, le, v) => {
  for (let i = 0; i < n; i++) {
    const b = v % 256;
    buf[le ? off + i : off + n - 1 - i] = b;
    v = (v - b) / 256;
  }
  return off + n;
};
const methods = {};
for (const [bits, n] of [[8, 1], [16, 2], [32, 4]]) {
  for (const le of [true, false]) {
    const sfx = n === 1 ? "" : le ? "LE" : "BE";
    if (n === 1 && !le) continue;
    const umax = 2 ** bits - 1, smax = 2 ** (bits - 1) - 1, smin = -(2 ** (bits - 1));
    methods[`readUInt${bits}${sfx}`] = function (offset) {
      offset = checkOffset(this, offset, n);
      return readUInt(this, offset, n, le);
    };
    methods[`readInt${bits}${sfx}`] = function (offset) {
      offset = checkOffset(this, offset, n);
      const v = readUInt(this, offset, n, le);
      return v > smax ? v - 2 ** bits : v;
    };
    methods[`writeUInt${bits}${sfx}`] = function (value, offset) {
      value = +value;
      checkValue(value, 0, umax);
      offset = checkOffset(this, offset, n);
      return writeUInt(this, offset, n, le, Math.trunc(value));
    };
    methods[`writeInt${bits}${sfx}`] = function (value, offset) {
      value = +value;
      checkValue(value, smin, smax);
      offset = checkOffset(this, offset, n);
      value = Math.trunc(value);
      return writeUInt(this, offset, n, le, value < 0 ? value + 2 ** bits : value);
    };
  }
}
for (const le of [true, false]) {
  const sfx = le ? "LE" : "BE";
  const rw = (size, scratch, arr) => [
    function (offset) {
      offset = checkOffset(this, offset, size);
      for (let i = 0; i < size; i++) scratch[le ? i : size - 1 - i] = this[offset + i];
      return arr[0];
    },
    function (value, offset) {
      if (typeof value !== "number") value = +value;
      offset = checkOffset(this, offset, size);
      arr[0] = value;
      for (let i = 0; i < size; i++) this[offset + i] = scratch[le ? i : size - 1 - i];
      return offset + size;
    },
  ];
  [methods[`readFloat${sfx}`], methods[`writeFloat${sfx}`]] = rw(4, f32b, f32);
  [methods[`readDouble${sfx}`], methods[`writeDouble${sfx}`]] = rw(8, f64b, f64);
  methods[`readBigUInt64${sfx}`] = function (offset) {
    offset = checkOffset(this, offset, 8);
    let v = 0n;
    for (let i = 0; i < 8; i++) v = (v << 8n) | BigInt(this[offset + (le ? 7 - i : i)]);
    return v;
  };
  methods[`readBigInt64${sfx}`] = function (offset) {
    return BigInt.asIntN(64, methods[`readBigUInt64${sfx}`].call(this, offset));
  };
  const writeBig = (min, max) => function (value, offset) {
    checkValue(value, min, max, true);
    offset = checkOffset(this, offset, 8);
    let v = BigInt.asUintN(64, value);
    for (let i = 0; i < 8; i++) {
      this[offset + (le ? i : 7 - i)] = Number(v & 255n);
      v >>= 8n;
    }
    return offset + 8;
  };
  methods[`writeBigUInt64${sfx}`] = writeBig(0n, 2n ** 64n - 1n);
  methods[`writeBigInt64${sfx}`] = writeBig(-(2n ** 63n), 2n ** 63n - 1n);
  const checkByteLength = (byteLength) => {
    if (typeof byteLength !== "number") throw invalidArgType("byteLength", "of type number", byteLength);
    if (!Number.isInteger(byteLength) || byteLength < 1 || byteLength > 6) throw outOfRange("byteLength", ">= 1 and <= 6", byteLength);
  };
  methods[`readUInt${sfx}`] = function (offset, byteLength) {
    checkByteLength(byteLength);
    offset = checkOffset(this, offset, byteLength);
    return readUInt(this, offset, byteLength, le);
  };
  methods[`readInt${sfx}`] = function (offset, byteLength) {
    checkByteLength(byteLength);
    offset = checkOffset(this, offset, byteLength);
    const v = readUInt(this, offset, byteLength, le);
    return v >= 2 ** (8 * byteLength - 1) ? v - 2 ** (8 * byteLength) : v;
  };
  methods[`writeUInt${sfx}`] = function (value, offset, byteLength) {
    checkByteLength(byteLength);
    value = +value;
    checkValue(value, 0, 2 ** (8 * byteLength) - 1);
    offset = checkOffset(this, offset, byteLength);
    return writeUInt(this, offset, byteLength, le, Math.trunc(value));
  };
  methods[`writeInt${sfx}`] = function (value, offset, byteLength) {
    checkByteLength(byteLength);
    value = +value;
    checkValue(value, -(2 ** (8 * byteLength - 1)), 2 ** (8 * byteLength - 1) - 1);
    offset = checkOffset(this, offset, byteLength);
    value = Math.trunc(value);
    return writeUInt(this, offset, byteLength, le, value < 0 ? value + 2 ** (8 * byteLength) : value);
  };
}
for (const [name, fn] of Object.entries(methods)) {
  def(name, fn);
  if (name.includes("UInt")) def(name.replace("UInt", "Uint"), fn);
}

// ---- the module ---------------------------------------------------------------

function SlowBuffer(size) { return Buffer.allocUnsafeSlow(size); }
SlowBuffer.prototype = Buffer.prototype;

const transcode = (source, from, to) => {
  if (!isU8(source)) throw invalidArgType("source", "an instance of Buffer or Uint8Array", source);
  const s = native.bufToString(source, normEnc(from), 0, source.length);
  return fromString(s, normEnc(to));
};

const bufferModule = {
  Buffer, SlowBuffer, transcode,
  kMaxLength, kStringMaxLength,
  constants: { MAX_LENGTH: kMaxLength, MAX_STRING_LENGTH: kStringMaxLength },
  INSPECT_MAX_BYTES: 50,
  isUtf8: (input) => native.bufIsUtf8(internal.toU8(input) || invalid("input", input)),
  isAscii: (input) => native.bufIsAscii(internal.toU8(input) || invalid("input", input)),
  resolveObjectURL: () => undefined,
};
const invalid = (name, v) => { throw invalidArgType(name, "an instance of ArrayBuffer, Buffer, or TypedArray", v); };
for (const name of ["Blob", "File", "atob", "btoa"]) {
  Object.defineProperty(bufferModule, name, { enumerable: true, configurable: true, get: () => global[name] });
}
internal.FastBuffer = FastBuffer;
internal["node:buffer"] = bufferModule;
