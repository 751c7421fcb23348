// node:zlib on Go's compress/flate, compress/zlib and compress/gzip
// (native_zlib.go): the sync and callback functions and the Transform
// streams. Brotli is not there (Go has no brotli): those functions throw.

const { nodeError } = internal;
const B = () => internal["node:buffer"].Buffer;

const constants = {
  Z_NO_FLUSH: 0, Z_PARTIAL_FLUSH: 1, Z_SYNC_FLUSH: 2, Z_FULL_FLUSH: 3, Z_FINISH: 4, Z_BLOCK: 5,
  Z_OK: 0, Z_STREAM_END: 1, Z_NEED_DICT: 2, Z_ERRNO: -1, Z_STREAM_ERROR: -2, Z_DATA_ERROR: -3,
  Z_MEM_ERROR: -4, Z_BUF_ERROR: -5, Z_VERSION_ERROR: -6,
  Z_NO_COMPRESSION: 0, Z_BEST_SPEED: 1, Z_BEST_COMPRESSION: 9, Z_DEFAULT_COMPRESSION: -1,
  Z_FILTERED: 1, Z_HUFFMAN_ONLY: 2, Z_RLE: 3, Z_FIXED: 4, Z_DEFAULT_STRATEGY: 0, ZLIB_VERNUM: 4865,
  DEFLATE: 1, INFLATE: 2, GZIP: 3, GUNZIP: 4, DEFLATERAW: 5, INFLATERAW: 6, UNZIP: 7,
  Z_MIN_WINDOWBITS: 8, Z_MAX_WINDOWBITS: 15, Z_DEFAULT_WINDOWBITS: 15,
  Z_MIN_CHUNK: 64, Z_MAX_CHUNK: Infinity, Z_DEFAULT_CHUNK: 16384,
  Z_MIN_MEMLEVEL: 1, Z_MAX_MEMLEVEL: 9, Z_DEFAULT_MEMLEVEL: 8,
  Z_MIN_LEVEL: -1, Z_MAX_LEVEL: 9, Z_DEFAULT_LEVEL: -1,
};
const codes = {
  header: ["incorrect header check", -3, "Z_DATA_ERROR"],
  checksum: ["incorrect data check", -3, "Z_DATA_ERROR"],
  data: ["invalid compressed data", -3, "Z_DATA_ERROR"],
  eof: ["unexpected end of file", -5, "Z_BUF_ERROR"],
};
const zlibError = (code) => {
  const [message, errno] = codes[code] || codes.data;
  const e = new Error(message); // workerd's errors have no code
  e.errno = errno;
  return e;
};

const input = (buffer) => {
  if (typeof buffer === "string") return B().from(buffer);
  if (buffer instanceof ArrayBuffer) return new Uint8Array(buffer);
  if (ArrayBuffer.isView(buffer)) return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  throw internal.invalidArgType("buffer", "of type string or an instance of Buffer, TypedArray, DataView, or ArrayBuffer", buffer);
};
const levelOf = (opts) => {
  const level = opts && opts.level !== undefined ? opts.level : -1;
  if (typeof level !== "number" || level < -1 || level > 9 || !Number.isInteger(level)) {
    throw new RangeError(`The value of "options.level" is out of range. It must be >= -1 and <= 9. Received ${level}`);
  }
  return level;
};
const runSync = (kind, buffer, opts) => {
  const r = native.zlibSync(kind, input(buffer), levelOf(opts));
  if (typeof r === "string") throw zlibError(r);
  const b = new (internal.FastBuffer)(r);
  return opts && opts.info ? { buffer: b, engine: null } : b;
};

const kinds = ["deflate", "inflate", "gzip", "gunzip", "deflateRaw", "inflateRaw", "unzip"];
const zlib = { constants, codes: { Z_OK: 0, Z_STREAM_END: 1, Z_NEED_DICT: 2, Z_ERRNO: -1, Z_STREAM_ERROR: -2, Z_DATA_ERROR: -3, Z_MEM_ERROR: -4, Z_BUF_ERROR: -5, Z_VERSION_ERROR: -6 } };
for (const [k, v] of Object.entries(constants)) zlib[k] = v;

let Transform;
const streamClass = (kind) => {
  const Name = kind[0].toUpperCase() + kind.slice(1);
  const cls = {
    [Name]: function (opts) {
      if (!(this instanceof cls)) return new cls(opts);
      Transform = Transform || internal["node:stream"].Transform;
      Transform.call(this, { ...opts, objectMode: false, encoding: undefined });
      this._handle = native.zlibNew(kind, levelOf(opts));
      this.bytesWritten = 0;
      this._kind = kind;
    },
  }[Name];
  return cls;
};
const classes = {};
const ensureProto = (cls) => {
  if (Object.getPrototypeOf(cls.prototype) !== Object.prototype) return;
  Transform = Transform || internal["node:stream"].Transform;
  Object.setPrototypeOf(cls.prototype, Transform.prototype);
  Object.setPrototypeOf(cls, Transform);
  cls.prototype._transform = function (chunk, encoding, cb) {
    const bytes = input(chunk);
    this.bytesWritten += bytes.length;
    const r = native.zlibWrite(this._handle, bytes, false);
    if (r && r.byteLength) this.push(new (internal.FastBuffer)(r));
    cb();
  };
  cls.prototype._flush = function (cb) {
    const r = native.zlibEnd(this._handle);
    if (typeof r === "string") return cb(zlibError(r));
    if (r.byteLength) this.push(new (internal.FastBuffer)(r));
    cb();
  };
  cls.prototype.flush = function (kind, cb) {
    if (typeof kind === "function") cb = kind;
    const r = native.zlibWrite(this._handle, new Uint8Array(0), true);
    if (r && r.byteLength) this.push(new (internal.FastBuffer)(r));
    if (typeof cb === "function") internal.nextTick(cb);
  };
  cls.prototype.params = function (level, strategy, cb) { if (typeof cb === "function") internal.nextTick(cb); };
  cls.prototype.reset = function () { this._handle = native.zlibNew(this._kind, -1); };
  cls.prototype.close = function (cb) { if (cb) internal.nextTick(cb); this.destroy(); };
};
for (const kind of kinds) {
  const Name = kind[0].toUpperCase() + kind.slice(1);
  const cls = streamClass(kind);
  classes[Name] = cls;
  Object.defineProperty(zlib, Name, { enumerable: true, configurable: true, get: () => { ensureProto(cls); return cls; } });
  zlib[`create${Name}`] = (opts) => { ensureProto(cls); return new cls(opts); };
  zlib[`${kind}Sync`] = (buffer, opts) => runSync(kind, buffer, opts);
  zlib[kind] = (buffer, opts, cb) => {
    if (typeof opts === "function") { cb = opts; opts = {}; }
    internal.validateFunction(cb, "callback");
    let result;
    try {
      result = runSync(kind, buffer, opts);
    } catch (e) {
      internal.nextTick(cb, e);
      return;
    }
    internal.nextTick(cb, null, result);
  };
}
const noBrotli = (name) => () => {
  throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", `zlib.${name} is not supported by celld (no Brotli)`);
};
for (const name of ["brotliCompress", "brotliCompressSync", "brotliDecompress", "brotliDecompressSync",
  "createBrotliCompress", "createBrotliDecompress", "BrotliCompress", "BrotliDecompress"]) {
  zlib[name] = noBrotli(name);
}

let crcTable = null;
zlib.crc32 = (data, value = 0) => {
  if (!crcTable) {
    crcTable = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c;
    }
  }
  const b = input(data);
  let crc = (value ^ -1) | 0;
  for (let i = 0; i < b.length; i++) crc = crcTable[(crc ^ b[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
};
internal["node:zlib"] = zlib;
