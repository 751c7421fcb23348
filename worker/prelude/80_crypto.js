// crypto and crypto.subtle: getRandomValues, randomUUID, digest (SHA-1,
// SHA-256/384/512 and MD5), HMAC and AES-GCM keys. Anything else rejects
// with NotSupportedError naming what was asked for.

const integerViews = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array];
const notSupported = (msg) => new DOMException(msg, "NotSupportedError");
const hashNames = { "SHA-1": "SHA-1", "SHA-256": "SHA-256", "SHA-384": "SHA-384", "SHA-512": "SHA-512", MD5: "MD5" };

const algName = (alg) => {
  if (typeof alg === "string") return alg;
  if (alg !== null && typeof alg === "object" && alg.name !== undefined) return String(alg.name);
  throw new TypeError("Algorithm: name is required");
};
const hashOf = (h) => hashNames[algName(h).toUpperCase()];
const bufferArg = (v, what) => {
  const u = internal.toU8(v);
  if (u === null) throw new TypeError(`${what} must be an ArrayBuffer or ArrayBufferView`);
  return u;
};

const kKey = Symbol("key");
class CryptoKey {
  constructor(key) {
    if (key !== internal.kCreate) throw new TypeError("Illegal constructor");
  }
  get type() { return this[kKey].type; }
  get extractable() { return this[kKey].extractable; }
  get algorithm() { return this[kKey].algorithm; }
  get usages() { return this[kKey].usages.slice(); }
}
const makeKey = (algorithm, raw, extractable, usages) => {
  const k = new CryptoKey(internal.kCreate);
  internal.define(k, kKey, { type: "secret", extractable: !!extractable, algorithm, usages: Array.from(usages || []), raw });
  return k;
};
const requireKey = (key, name, usage) => {
  if (!(key instanceof CryptoKey)) throw new TypeError("key must be a CryptoKey");
  const k = key[kKey];
  if (k.algorithm.name !== name) throw new DOMException(`Requested algorithm "${name}" does not match this CryptoKey's algorithm "${k.algorithm.name}".`, "InvalidAccessError");
  if (!k.usages.includes(usage)) throw new DOMException(`Requested key usage "${usage}" does not match any usage listed in this CryptoKey.`, "InvalidAccessError");
  return k;
};

function importSecret(format, keyData, algorithm, extractable, usages) {
  const name = algName(algorithm).toUpperCase();
  let raw;
  if (format === "raw") raw = internal.copyBytes(bufferArg(keyData, "keyData"));
  else if (format === "jwk") {
    if (!keyData || keyData.kty !== "oct" || typeof keyData.k !== "string") throw new DOMException("Invalid JWK: expected an \"oct\" key with \"k\"", "DataError");
    const b64 = keyData.k.replace(/-/g, "+").replace(/_/g, "/");
    raw = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } else {
    throw notSupported(`Unrecognized or unimplemented key import format "${format}" for ${name}.`);
  }
  if (name === "HMAC") {
    const hash = hashOf(algorithm.hash);
    if (!hash || hash === "MD5") throw notSupported("Unrecognized or unimplemented hash algorithm requested.");
    return makeKey({ name: "HMAC", hash: { name: hash }, length: raw.byteLength * 8 }, raw, extractable, usages);
  }
  if (name === "AES-GCM") {
    if (![16, 24, 32].includes(raw.byteLength)) throw new DOMException(`Imported AES key length must be 128, 192, or 256 bits but provided ${raw.byteLength * 8}.`, "DataError");
    return makeKey({ name: "AES-GCM", length: raw.byteLength * 8 }, raw, extractable, usages);
  }
  throw notSupported(`Unrecognized or unimplemented key import algorithm "${algName(algorithm)}" requested.`);
}

const subtle = {
  async digest(algorithm, data) {
    const bytes = bufferArg(data, "data");
    const name = hashNames[algName(algorithm).toUpperCase()];
    if (!name) throw notSupported("Unrecognized or unimplemented digest algorithm requested.");
    return native.digest(name, bytes);
  },
  async importKey(format, keyData, algorithm, extractable, usages) {
    return importSecret(String(format), keyData, algorithm, extractable, usages);
  },
  async exportKey(format, key) {
    if (!(key instanceof CryptoKey)) throw new TypeError("key must be a CryptoKey");
    const k = key[kKey];
    if (!k.extractable) throw new DOMException("Attempt to export a key which is not extractable.", "InvalidAccessError");
    if (format === "raw") return internal.copyBytes(k.raw).buffer;
    if (format === "jwk") {
      const b64 = btoa(String.fromCharCode(...k.raw)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      const alg = k.algorithm.name === "HMAC" ? "HS" + k.algorithm.hash.name.slice(4) : `A${k.algorithm.length}GCM`;
      return { kty: "oct", k: b64, alg, ext: true, key_ops: k.usages.slice() };
    }
    throw notSupported(`Unrecognized or unimplemented key export format "${format}".`);
  },
  async generateKey(algorithm, extractable, usages) {
    const name = algName(algorithm).toUpperCase();
    if (name === "HMAC") {
      const hash = hashOf(algorithm.hash);
      if (!hash) throw notSupported("Unrecognized or unimplemented hash algorithm requested.");
      const bits = algorithm.length !== undefined ? Number(algorithm.length) : hash === "SHA-384" || hash === "SHA-512" ? 1024 : 512;
      return importSecret("raw", new Uint8Array(native.randomBytes(Math.ceil(bits / 8))), { name, hash }, extractable, usages);
    }
    if (name === "AES-GCM") {
      const bits = Number(algorithm.length);
      if (![128, 192, 256].includes(bits)) throw new DOMException("AES key length must be 128, 192, or 256 bits.", "OperationError");
      return importSecret("raw", new Uint8Array(native.randomBytes(bits / 8)), { name }, extractable, usages);
    }
    throw notSupported(`Unrecognized or unimplemented key generation algorithm "${algName(algorithm)}" requested.`);
  },
  async sign(algorithm, key, data) {
    const name = algName(algorithm).toUpperCase();
    if (name !== "HMAC") throw notSupported(`Unrecognized or unimplemented sign algorithm "${algName(algorithm)}" requested.`);
    const k = requireKey(key, "HMAC", "sign");
    return native.hmac(k.algorithm.hash.name, k.raw, bufferArg(data, "data"));
  },
  async verify(algorithm, key, signature, data) {
    const name = algName(algorithm).toUpperCase();
    if (name !== "HMAC") throw notSupported(`Unrecognized or unimplemented verify algorithm "${algName(algorithm)}" requested.`);
    const k = requireKey(key, "HMAC", "verify");
    const mac = native.hmac(k.algorithm.hash.name, k.raw, bufferArg(data, "data"));
    return native.timingSafeEqual(new Uint8Array(mac), bufferArg(signature, "signature"));
  },
  async encrypt(algorithm, key, data) { return aesGcm(true, algorithm, key, data); },
  async decrypt(algorithm, key, data) { return aesGcm(false, algorithm, key, data); },
};
for (const name of ["deriveBits", "deriveKey", "wrapKey", "unwrapKey"]) {
  subtle[name] = async () => { throw notSupported(`celld: crypto.subtle.${name}() is not supported yet`); };
}

function aesGcm(encrypt, algorithm, key, data) {
  const name = algName(algorithm).toUpperCase();
  if (name !== "AES-GCM") throw notSupported(`Unrecognized or unimplemented ${encrypt ? "encrypt" : "decrypt"} algorithm "${algName(algorithm)}" requested.`);
  const k = requireKey(key, "AES-GCM", encrypt ? "encrypt" : "decrypt");
  const iv = bufferArg(algorithm.iv, "iv");
  const aad = algorithm.additionalData !== undefined ? bufferArg(algorithm.additionalData, "additionalData") : new Uint8Array(0);
  const tagLength = algorithm.tagLength !== undefined ? Number(algorithm.tagLength) : 128;
  if (![32, 64, 96, 104, 112, 120, 128].includes(tagLength)) throw new DOMException(`Invalid AES-GCM tag length ${tagLength}.`, "OperationError");
  const r = native.aesGcm(encrypt, k.raw, iv, bufferArg(data, "data"), aad, tagLength / 8);
  if (typeof r === "string") throw new DOMException(r, "OperationError");
  return r;
}

const crypto = {
  subtle,
  getRandomValues(array) {
    if (!integerViews.some((C) => array instanceof C)) {
      throw new DOMException("ArrayBufferView argument to getRandomValues() must be an integer-typed view.", "TypeMismatchError");
    }
    if (array.byteLength > 65536) {
      throw new DOMException(`getRandomValues() only accepts buffers of size <= 64K but provided ${array.byteLength} bytes.`, "QuotaExceededError");
    }
    native.randomFill(array);
    return array;
  },
  randomUUID() { return native.randomUUID(); },
};
// workerd extension: constant-time comparison.
subtle.timingSafeEqual = (a, b) => {
  const x = bufferArg(a, "a");
  const y = bufferArg(b, "b");
  if (x.byteLength !== y.byteLength) throw new TypeError("Input buffers must have the same byte length.");
  return native.timingSafeEqual(x, y);
};
internal.expose("crypto", crypto);
internal.expose("CryptoKey", CryptoKey);
internal.expose("SubtleCrypto", function SubtleCrypto() { throw new TypeError("Illegal constructor"); });
