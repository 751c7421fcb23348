// node:crypto on Go's crypto (native_nodecrypto.go): hashes, HMAC,
// random values, PBKDF2, scrypt, HKDF, AES ciphers and secret KeyObjects.
// webcrypto is the global crypto.

const { nodeError, invalidArgType, outOfRange } = internal;
const B = () => internal["node:buffer"].Buffer;
const kKey = Symbol.for("celld.keyObject");

const toBytes = (v, name, enc) => {
  if (typeof v === "string") return B().from(v, enc);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (v && v[kKey]) return v[kKey];
  throw invalidArgType(name, "of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView", v);
};
const out = (ab, enc) => {
  const b = new (internal.FastBuffer)(ab);
  return enc === undefined || enc === "buffer" ? b : b.toString(enc);
};
const finalized = () => nodeError(Error, "ERR_CRYPTO_HASH_FINALIZED", "Digest already called");

class Hash {
  #h;
  #done = false;
  constructor(algorithm, handle) {
    if (handle) { this.#h = handle; return; }
    internal.validateString(algorithm, "algorithm");
    this.#h = native.nodeHashNew(algorithm);
    if (this.#h === null) throw nodeError(Error, "ERR_OSSL_EVP_UNSUPPORTED", "Digest method not supported");
  }
  update(data, encoding) {
    if (this.#done) throw finalized();
    if (typeof data !== "string" && !ArrayBuffer.isView(data)) {
      throw invalidArgType("data", "of type string or an instance of Buffer, TypedArray, or DataView", data);
    }
    native.nodeHashUpdate(this.#h, toBytes(data, "data", encoding));
    return this;
  }
  digest(encoding) {
    if (this.#done) throw finalized();
    this.#done = true;
    return out(native.nodeHashDigest(this.#h), encoding);
  }
  copy() {
    if (this.#done) throw finalized();
    return new Hash(undefined, native.nodeHashCopy(this.#h));
  }
}
class Hmac {
  #h;
  #done = false;
  constructor(hmac, key) {
    internal.validateString(hmac, "hmac");
    this.#h = native.nodeHmacNew(hmac, toBytes(key, "key"));
    if (this.#h === null) throw new Error("Digest method not supported");
  }
  update(data, encoding) {
    if (this.#done) throw nodeError(Error, "ERR_CRYPTO_HASH_FINALIZED", "Digest already called");
    native.nodeHashUpdate(this.#h, toBytes(data, "data", encoding));
    return this;
  }
  digest(encoding) {
    if (this.#done) return out(new ArrayBuffer(0), encoding);
    this.#done = true;
    return out(native.nodeHashDigest(this.#h), encoding);
  }
}

const later = (cb, ...args) => internal.nextTick(cb, ...args);
const withCallback = (cb, fn) => {
  if (cb === undefined) return fn();
  internal.validateFunction(cb, "callback");
  let result;
  try {
    result = fn();
  } catch (e) {
    later(cb, e);
    return;
  }
  later(cb, null, result);
};

const validateInt = (v, name, lo, hi) => {
  if (typeof v !== "number") throw invalidArgType(name, "of type number", v);
  if (!Number.isInteger(v)) throw outOfRange(name, "an integer", v);
  if (v < lo || v > hi) throw outOfRange(name, `>= ${lo} && <= ${hi}`, v);
};

function randomBytes(size, cb) {
  validateInt(size, "size", 0, 2 ** 31 - 1);
  if (cb !== undefined) internal.validateFunction(cb, "callback");
  return withCallback(cb, () => out(native.nodeRandomBytes(size)));
}
function randomFillSync(buf, offset = 0, size) {
  if (!ArrayBuffer.isView(buf) && !(buf instanceof ArrayBuffer)) {
    throw invalidArgType("buf", "an instance of ArrayBuffer or ArrayBufferView", buf);
  }
  const u = internal.toU8(buf);
  validateInt(offset, "offset", 0, u.length);
  if (size === undefined) size = u.length - offset;
  validateInt(size, "size", 0, u.length - offset);
  native.nodeRandomFill(u.subarray(offset, offset + size));
  return buf;
}
function randomFill(buf, offset, size, cb) {
  if (typeof offset === "function") { cb = offset; offset = 0; size = undefined; }
  else if (typeof size === "function") { cb = size; size = undefined; }
  internal.validateFunction(cb, "callback");
  return withCallback(cb, () => randomFillSync(buf, offset, size));
}
function randomInt(min, max, cb) {
  if (max === undefined || typeof max === "function") { cb = max; max = min; min = 0; }
  if (!Number.isSafeInteger(min)) throw invalidArgType("min", "a safe integer", min);
  if (!Number.isSafeInteger(max)) throw invalidArgType("max", "a safe integer", max);
  if (max <= min) throw outOfRange("max", `greater than the value of "min" (${min})`, max);
  const range = max - min;
  if (range > 2 ** 48) throw outOfRange("max - min", `<= ${2 ** 48}`, range);
  const pick = () => {
    const limit = 2 ** 48 - (2 ** 48 % range);
    for (;;) {
      const b = new Uint8Array(native.nodeRandomBytes(6));
      let x = 0;
      for (const c of b) x = x * 256 + c;
      if (x < limit) return min + (x % range);
    }
  };
  return withCallback(cb, pick);
}

function timingSafeEqual(a, b) {
  if (!ArrayBuffer.isView(a) && !(a instanceof ArrayBuffer)) throw invalidArgType("buf1", "an instance of ArrayBuffer, Buffer, TypedArray, or DataView", a);
  if (!ArrayBuffer.isView(b) && !(b instanceof ArrayBuffer)) throw invalidArgType("buf2", "an instance of ArrayBuffer, Buffer, TypedArray, or DataView", b);
  const ua = internal.toU8(a), ub = internal.toU8(b);
  if (ua.byteLength !== ub.byteLength) {
    throw new TypeError("Input buffers must have the same byte length.");
  }
  return native.nodeTimingSafeEqual(ua, ub);
}

function pbkdf2Sync(password, salt, iterations, keylen, digest) {
  const pw = toBytes(password, "password"), s = toBytes(salt, "salt");
  validateInt(iterations, "iterations", 1, 2 ** 31 - 1);
  validateInt(keylen, "keylen", 0, 2 ** 31 - 1);
  internal.validateString(digest, "digest");
  const r = native.nodePbkdf2(pw, s, iterations, keylen, digest);
  if (r === null) throw new TypeError(`Invalid Pbkdf2 digest: ${digest}.`);
  return out(r);
}
function pbkdf2(password, salt, iterations, keylen, digest, cb) {
  if (typeof digest === "function") { cb = digest; digest = undefined; }
  internal.validateFunction(cb, "callback");
  const key = pbkdf2Sync(password, salt, iterations, keylen, digest);
  later(cb, null, key);
}

function scryptSync(password, salt, keylen, options = {}) {
  const pw = toBytes(password, "password"), s = toBytes(salt, "salt");
  validateInt(keylen, "keylen", 0, 2 ** 31 - 1);
  const o = options || {};
  const N = o.N !== undefined ? o.N : o.cost !== undefined ? o.cost : 16384;
  const r = o.r !== undefined ? o.r : o.blockSize !== undefined ? o.blockSize : 8;
  const p = o.p !== undefined ? o.p : o.parallelization !== undefined ? o.parallelization : 1;
  const maxmem = o.maxmem !== undefined ? o.maxmem : 32 * 1024 * 1024;
  if (128 * N * r > maxmem) {
    throw nodeError(RangeError, "ERR_CRYPTO_INVALID_SCRYPT_PARAMS", "Invalid scrypt params: memory limit exceeded");
  }
  const res = native.scrypt(pw, s, N, r, p, keylen);
  if (typeof res === "string") throw nodeError(RangeError, "ERR_CRYPTO_INVALID_SCRYPT_PARAMS", `Invalid scrypt params: ${res}`);
  return out(res);
}
function scrypt(password, salt, keylen, options, cb) {
  if (typeof options === "function") { cb = options; options = undefined; }
  internal.validateFunction(cb, "callback");
  const key = scryptSync(password, salt, keylen, options);
  later(cb, null, key);
}

function hkdfSync(digest, ikm, salt, info, keylen) {
  internal.validateString(digest, "digest");
  const r = native.nodeHkdf(digest, toBytes(ikm, "ikm"), toBytes(salt, "salt"), toBytes(info, "info"), keylen);
  if (r === null) throw nodeError(TypeError, "ERR_CRYPTO_INVALID_DIGEST", `Invalid digest: ${digest}`);
  return r;
}
function hkdf(digest, ikm, salt, info, keylen, cb) {
  internal.validateFunction(cb, "callback");
  const key = hkdfSync(digest, ikm, salt, info, keylen);
  later(cb, null, key);
}

// ---- ciphers ---------------------------------------------------------------------------

// The errors as workerd throws them: mostly plain, without codes.
const cipherError = (msg, algorithm) => {
  switch (msg) {
    case "Unknown cipher": return new Error(`Unknown or unsupported cipher: ${algorithm}`);
    case "Unsupported state or unable to authenticate data": return new TypeError(msg);
    case "bad decrypt": return new Error("bad decrypt");
  }
  return new Error(msg);
};
class Cipheriv {
  #h;
  #decrypt;
  #decoder = null;
  constructor(algorithm, key, iv, decrypt) {
    internal.validateString(algorithm, "cipher");
    this.#decrypt = decrypt;
    const h = native.cipherNew(algorithm, toBytes(key, "key"), iv === null ? new Uint8Array(0) : toBytes(iv, "iv"), decrypt);
    if (typeof h === "string") throw cipherError(h, algorithm);
    this.#h = h;
  }
  #encode(ab, enc) {
    if (enc === undefined || enc === "buffer") return out(ab);
    if (internal.normEnc(enc) === "utf8") {
      if (!this.#decoder) this.#decoder = new (internal["node:string_decoder"].StringDecoder)("utf8");
      return this.#decoder.write(out(ab));
    }
    return out(ab, enc);
  }
  update(data, inputEncoding, outputEncoding) {
    if (typeof data === "string" && inputEncoding === undefined) {
      throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", "The argument 'inputEncoding' If inputEncoding is not provided then the data must be a Buffer. Received undefined");
    }
    const r = native.cipherUpdate(this.#h, toBytes(data, "data", inputEncoding));
    if (r === null) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation update");
    return this.#encode(r, outputEncoding);
  }
  final(outputEncoding) {
    const r = native.cipherFinal(this.#h);
    if (typeof r === "string") {
      if (r === "Unsupported state") throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation final");
      throw cipherError(r);
    }
    let s = this.#encode(r, outputEncoding);
    if (this.#decoder) s += this.#decoder.end();
    return s;
  }
  setAutoPadding(pad = true) { native.cipherSet(this.#h, "padding", !!pad); return this; }
  setAAD(aad) {
    if (!native.cipherSet(this.#h, "aad", toBytes(aad, "buffer"))) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation setAAD");
    return this;
  }
  getAuthTag() {
    const t = this.#decrypt ? null : native.cipherTag(this.#h);
    if (t === null) throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation getAuthTag");
    return out(t);
  }
  setAuthTag(tag) {
    if (!this.#decrypt || !native.cipherSet(this.#h, "tag", toBytes(tag, "buffer"))) {
      throw nodeError(Error, "ERR_CRYPTO_INVALID_STATE", "Invalid state for operation setAuthTag");
    }
    return this;
  }
}
const ciphers = [];
for (const bits of [128, 192, 256]) for (const mode of ["cbc", "ctr", "ecb", "gcm"]) ciphers.push(`aes-${bits}-${mode}`);

const unsupported = (name) => () => {
  throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", `crypto.${name} is not supported by celld's node:crypto yet (use crypto.subtle)`);
};
const keys = internal.nodeCryptoKeys;

const nodeCrypto = {
  createHash: (algorithm, options) => new Hash(algorithm),
  createHmac: (hmac, key, options) => new Hmac(hmac, key),
  hash: (algorithm, data, outputEncoding = "hex") => new Hash(algorithm).update(data).digest(outputEncoding),
  Hash, Hmac,
  randomBytes, pseudoRandomBytes: randomBytes, randomFillSync, randomFill, randomInt,
  randomUUID: () => crypto.randomUUID(),
  getRandomValues: (a) => crypto.getRandomValues(a),
  timingSafeEqual,
  pbkdf2, pbkdf2Sync, scrypt, scryptSync, hkdf, hkdfSync,
  createCipheriv: (alg, key, iv, options) => new Cipheriv(alg, key, iv, false),
  createDecipheriv: (alg, key, iv, options) => new Cipheriv(alg, key, iv, true),
  Cipheriv, Decipheriv: Cipheriv,
  getHashes: () => native.nodeHashes(),
  getCiphers: () => ciphers.slice(),
  getCurves: () => [],
  getFips: () => 0,
  setFips: () => {},
  constants: keys.constants,
  KeyObject: keys.KeyObject, createSecretKey: keys.createSecretKey,
  createPublicKey: keys.createPublicKey, createPrivateKey: keys.createPrivateKey,
  generateKeyPair: keys.generateKeyPair, generateKeyPairSync: keys.generateKeyPairSync,
  generateKey: unsupported("generateKey"),
  generateKeySync: unsupported("generateKeySync"),
  createSign: keys.createSign, createVerify: keys.createVerify, Sign: keys.Sign, Verify: keys.Verify,
  sign: keys.sign, verify: keys.verify,
  createECDH: unsupported("createECDH"),
  createDiffieHellman: unsupported("createDiffieHellman"),
  publicEncrypt: unsupported("publicEncrypt"),
  privateDecrypt: unsupported("privateDecrypt"),
};
for (const [name, get] of [["webcrypto", () => crypto], ["subtle", () => crypto.subtle]]) {
  Object.defineProperty(nodeCrypto, name, { enumerable: true, configurable: true, get });
}
internal["node:crypto"] = nodeCrypto;
