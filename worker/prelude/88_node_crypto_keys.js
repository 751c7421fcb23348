// node:crypto's KeyObject (secret and asymmetric), Sign and Verify, key
// generation: RSA (PKCS#1 v1.5, PSS), ECDSA (P-256/384/521), Ed25519 on
// Go's crypto (native_nodekeys.go).

const { nodeError, invalidArgType } = internal;
const B = () => internal["node:buffer"].Buffer;
const kKey = Symbol.for("celld.keyObject"); // a secret key's bytes
const kHandle = Symbol("asymmetricKey");

const constants = {
  RSA_PKCS1_PADDING: 1, RSA_NO_PADDING: 3, RSA_PKCS1_OAEP_PADDING: 4, RSA_PKCS1_PSS_PADDING: 6,
  RSA_PSS_SALTLEN_DIGEST: -1, RSA_PSS_SALTLEN_MAX_SIGN: -2, RSA_PSS_SALTLEN_AUTO: -2,
  POINT_CONVERSION_COMPRESSED: 2, POINT_CONVERSION_UNCOMPRESSED: 4, POINT_CONVERSION_HYBRID: 6,
};

const bytesOf = (v, name, enc) => {
  if (typeof v === "string") return B().from(v, enc);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  throw invalidArgType(name, "of type string or an instance of ArrayBuffer, Buffer, TypedArray, or DataView", v);
};

class KeyObject {
  constructor(type, handle) {
    if (type !== "secret" && type !== "public" && type !== "private") {
      throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument 'type' is invalid. Received '${type}'`);
    }
    Object.defineProperty(this, "type", { value: type, enumerable: true });
    if (type === "secret") Object.defineProperty(this, kKey, { value: handle });
    else Object.defineProperty(this, kHandle, { value: handle });
  }
  get symmetricKeySize() { return this.type === "secret" ? this[kKey].length : undefined; }
  get asymmetricKeyType() { return this.type === "secret" ? undefined : native.keyInfo(this[kHandle])[1]; }
  get asymmetricKeyDetails() {
    if (this.type === "secret") return undefined;
    return { ...native.keyInfo(this[kHandle])[2] };
  }
  export(options) {
    if (this.type === "secret") {
      if (options && options.format === "jwk") return { kty: "oct", k: B().from(this[kKey]).toString("base64url") };
      return B().from(this[kKey]);
    }
    if (!options || typeof options !== "object") throw invalidArgType("options", "of type object", options);
    const format = options.format || "pem";
    if (format === "jwk") throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "exporting an asymmetric key as JWK is not supported by celld");
    const type = options.type || (this.type === "public" ? "spki" : "pkcs8");
    const r = native.keyExport(this[kHandle], format, type);
    if (r === null) throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The property 'options.type' is invalid. Received '${type}'`);
    return typeof r === "string" ? r : B().from(r);
  }
  equals(other) {
    if (!(other instanceof KeyObject)) throw invalidArgType("otherKeyObject", "an instance of KeyObject", other);
    if (other.type !== this.type) return false;
    if (this.type === "secret") {
      return other[kKey].length === this[kKey].length && native.nodeTimingSafeEqual(this[kKey], other[kKey]);
    }
    const a = this.export({ format: "der" }), b = other.export({ format: "der" });
    return a.equals(b);
  }
  static from(key) {
    throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "KeyObject.from is not supported by celld");
  }
  get [Symbol.toStringTag]() { return "KeyObject"; }
}

const createSecretKey = (key, encoding) => new KeyObject("secret", B().from(bytesOf(key, "key", encoding)));

// keyFrom turns what Node accepts as a key (KeyObject, PEM string or
// Buffer, or { key, format, type }) into a KeyObject of kind want
// ("private", "public", or "" for either).
function keyFrom(input, want, name = "key") {
  let key = input, format = "pem", type = "";
  if (key instanceof KeyObject) return key;
  if (key && typeof key === "object" && !ArrayBuffer.isView(key) && !(key instanceof ArrayBuffer)) {
    if (key.key instanceof KeyObject) return key.key;
    format = key.format || "pem";
    type = key.type || "";
    if (key.passphrase !== undefined) {
      throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "encrypted private keys are not supported by celld");
    }
    key = key.key;
  }
  if (format === "jwk") throw nodeError(Error, "ERR_FEATURE_UNAVAILABLE_ON_PLATFORM", "JWK keys are not supported by celld's node:crypto (use crypto.subtle)");
  if (typeof key !== "string" && !ArrayBuffer.isView(key) && !(key instanceof ArrayBuffer)) {
    throw invalidArgType(name, "of type string or an instance of ArrayBuffer, Buffer, TypedArray, DataView, KeyObject, or CryptoKey", input);
  }
  const h = native.keyParse(bytesOf(key, name), format === "der", type, want);
  if (typeof h === "string") {
    const e = new Error(h === "Unsupported key format" ? "error:1E08010C:DECODER routines::unsupported" : h);
    e.code = "ERR_OSSL_UNSUPPORTED";
    throw e;
  }
  return new KeyObject(native.keyInfo(h)[0], h);
}
const createPrivateKey = (key) => keyFrom(key, "private");
const createPublicKey = (key) => {
  const k = keyFrom(key, "public");
  return k.type === "private" ? new KeyObject("public", native.keyPublic(k[kHandle])) : k;
};

const signOptions = (key) => {
  const o = key && typeof key === "object" && !(key instanceof KeyObject) && !ArrayBuffer.isView(key) ? key : {};
  return {
    pss: o.padding === constants.RSA_PKCS1_PSS_PADDING,
    // workerd signs and verifies PSS with a digest-length salt by default
    // (Node signs with the longest salt and verifies any length).
    salt: o.saltLength === undefined ? constants.RSA_PSS_SALTLEN_DIGEST : o.saltLength,
    p1363: o.dsaEncoding === "ieee-p1363",
  };
};
const doSign = (algorithm, data, key) => {
  const k = keyFrom(key, "private");
  if (k.type !== "private") throw nodeError(TypeError, "ERR_CRYPTO_INVALID_KEY_OBJECT_TYPE", `Invalid key object type ${k.type}, expected private.`);
  const o = signOptions(key);
  const r = native.keySign(algorithm || "", data, k[kHandle], o.pss, o.salt, o.p1363);
  if (typeof r === "string") throw new Error(r);
  return B().from(r);
};
const doVerify = (algorithm, data, key, signature) => {
  const k = keyFrom(key, "");
  const o = signOptions(key);
  return native.keyVerify(algorithm || "", data, k[kHandle], signature, o.pss, o.salt, o.p1363);
};

class Sign {
  #alg;
  #chunks = [];
  constructor(algorithm) {
    internal.validateString(algorithm, "algorithm");
    this.#alg = algorithm;
  }
  update(data, encoding) { this.#chunks.push(bytesOf(data, "data", encoding)); return this; }
  sign(privateKey, outputEncoding) {
    const sig = doSign(this.#alg, internal.concatBytes(this.#chunks.length ? this.#chunks : [new Uint8Array(0)]), privateKey);
    return outputEncoding && outputEncoding !== "buffer" ? sig.toString(outputEncoding) : sig;
  }
}
class Verify {
  #alg;
  #chunks = [];
  constructor(algorithm) {
    internal.validateString(algorithm, "algorithm");
    this.#alg = algorithm;
  }
  update(data, encoding) { this.#chunks.push(bytesOf(data, "data", encoding)); return this; }
  verify(key, signature, sigEncoding) {
    const sig = bytesOf(signature, "signature", sigEncoding);
    return doVerify(this.#alg, internal.concatBytes(this.#chunks.length ? this.#chunks : [new Uint8Array(0)]), key, sig);
  }
}

const withCb = (cb, fn) => {
  if (typeof cb !== "function") return fn();
  let r;
  try { r = fn(); } catch (e) { internal.nextTick(cb, e); return undefined; }
  internal.nextTick(cb, null, r);
  return undefined;
};

function generateKeyPairSync(type, options = {}) {
  const h = native.keyGenerate(String(type), options.modulusLength || 0, options.publicExponent || 0, options.namedCurve || "");
  if (typeof h === "string") throw nodeError(TypeError, "ERR_INVALID_ARG_VALUE", `The argument 'type' is invalid: ${h}`);
  const privateKey = new KeyObject("private", h);
  const publicKey = new KeyObject("public", native.keyPublic(h));
  const enc = (k, e) => (e ? k.export(e) : k);
  return { publicKey: enc(publicKey, options.publicKeyEncoding), privateKey: enc(privateKey, options.privateKeyEncoding) };
}
function generateKeyPair(type, options, cb) {
  if (typeof options === "function") { cb = options; options = {}; }
  internal.validateFunction(cb, "callback");
  let pair;
  try {
    pair = generateKeyPairSync(type, options);
  } catch (e) {
    internal.nextTick(cb, e);
    return;
  }
  internal.nextTick(cb, null, pair.publicKey, pair.privateKey);
}

internal.nodeCryptoKeys = {
  constants, KeyObject, createSecretKey, createPrivateKey, createPublicKey,
  Sign, Verify,
  createSign: (algorithm) => new Sign(algorithm),
  createVerify: (algorithm) => new Verify(algorithm),
  sign: (algorithm, data, key, cb) => withCb(cb, () => doSign(algorithm, bytesOf(data, "data"), key)),
  verify: (algorithm, data, key, signature, cb) => withCb(cb, () => doVerify(algorithm, bytesOf(data, "data"), key, bytesOf(signature, "signature"))),
  generateKeyPairSync, generateKeyPair,
};
