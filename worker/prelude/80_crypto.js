// crypto and crypto.subtle as workerd has them: every algorithm of
// WebCrypto workerd implements (AES-GCM/CBC/CTR/KW, HMAC, PBKDF2, HKDF,
// RSASSA-PKCS1-v1_5, RSA-PSS, RSA-OAEP, ECDSA, ECDH, Ed25519, X25519), MD5
// digests, crypto.DigestStream and subtle.timingSafeEqual. The math is Go's
// (native_crypto*.go); this file checks arguments and throws workerd's
// errors, word for word (recorded in testdata/celld/webcrypto-*).

const integerViews = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, BigInt64Array, BigUint64Array];
const dom = (name, msg) => new DOMException(msg, name);
const checked = (r) => {
  if (r !== null && typeof r === "object" && typeof r.cryptoError === "string") throw dom(r.cryptoError, r.message);
  return r;
};
const hashNames = { "SHA-1": "SHA-1", "SHA-256": "SHA-256", "SHA-384": "SHA-384", "SHA-512": "SHA-512", MD5: "MD5" };
const hashBlockBits = { "SHA-1": 512, "SHA-256": 512, "SHA-384": 1024, "SHA-512": 1024, MD5: 512 };
const USAGES = ["encrypt", "decrypt", "sign", "verify", "deriveKey", "deriveBits", "wrapKey", "unwrapKey"];
const AES = ["encrypt", "decrypt", "wrapKey", "unwrapKey"];
const ALGS = {
  "AES-GCM": { secret: AES }, "AES-CBC": { secret: AES }, "AES-CTR": { secret: AES }, "AES-KW": { secret: ["wrapKey", "unwrapKey"] },
  HMAC: { secret: ["sign", "verify"] },
  PBKDF2: { secret: ["deriveKey", "deriveBits"], kdf: true }, HKDF: { secret: ["deriveKey", "deriveBits"], kdf: true },
  "RSASSA-PKCS1-v1_5": { kind: "RSA", priv: ["sign"], pub: ["verify"], use: "sig" },
  "RSA-PSS": { kind: "RSA", priv: ["sign"], pub: ["verify"], use: "sig" },
  "RSA-OAEP": { kind: "RSA", priv: ["decrypt", "unwrapKey"], pub: ["encrypt", "wrapKey"], use: "enc" },
  ECDSA: { kind: "EC", priv: ["sign"], pub: ["verify"], use: "sig" },
  ECDH: { kind: "EC", priv: ["deriveKey", "deriveBits"], pub: [], use: "enc" },
  Ed25519: { kind: "Ed25519", priv: ["sign"], pub: ["verify"], use: "sig" },
  X25519: { kind: "X25519", priv: ["deriveKey", "deriveBits"], pub: [], use: "enc" },
};
const canonical = Object.create(null);
for (const n of Object.keys(ALGS)) canonical[n.toUpperCase()] = n;

// normalize returns the algorithm's dictionary, its name as given and its
// canonical name (undefined when unknown).
// An algorithm given by name normalizes the same every time: the few
// names a Worker uses are remembered (frozen, so shared safely).
const namedAlgs = new Map();
const normalize = (alg) => {
  if (typeof alg === "string") {
    let a = namedAlgs.get(alg);
    if (a === undefined) {
      a = Object.freeze({ p: Object.freeze({ name: alg }), raw: alg, name: canonical[alg.toUpperCase()] });
      if (namedAlgs.size < 64) namedAlgs.set(alg, a);
    }
    return a;
  }
  if (alg === null || typeof alg !== "object") throw new TypeError("Algorithm must be a string or an object.");
  const raw = String(alg.name);
  return { p: alg, raw, name: canonical[raw.toUpperCase()] };
};
const hashOf = (h) => {
  const name = hashNames[(typeof h === "string" ? h : String(h?.name)).toUpperCase()];
  if (!name) throw dom("NotSupportedError", "Unrecognized or unimplemented digest algorithm requested.");
  return name;
};
const field = (p, name) => {
  if (p[name] === undefined) throw new TypeError(`Missing field "${name}" in "algorithm".`);
  return p[name];
};
const bufferArg = (v, what) => {
  const u = internal.toU8(v);
  if (u === null) throw new TypeError(`${what} must be an ArrayBuffer or ArrayBufferView`);
  return u;
};
const copyOf = (v, what) => internal.copyBytes(bufferArg(v, what));
const b64url = (u8) => btoa(String.fromCharCode(...u8)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const unb64url = (s) => {
  try {
    return Uint8Array.from(atob(String(s).replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
};

// ---- CryptoKey ----------------------------------------------------------

const kKey = Symbol("key");
const cloneAlg = (a) => {
  const o = {};
  for (const [k, v] of Object.entries(a)) o[k] = v instanceof Uint8Array ? v.slice() : v && typeof v === "object" ? cloneAlg(v) : v;
  return o;
};
class CryptoKey {
  constructor(key) {
    if (key !== internal.kCreate) throw new TypeError("Illegal constructor");
  }
}
Object.defineProperty(CryptoKey.prototype, Symbol.toStringTag, { value: "CryptoKey", configurable: true });
const makeKey = (type, extractable, algorithm, usages, material) => {
  if ((type === "secret" || type === "private") && usages.length === 0) {
    throw dom("SyntaxError", "Secret/private CryptoKeys must have at least one usage.");
  }
  const k = new CryptoKey(internal.kCreate);
  const slot = { type, extractable: !!extractable, algorithm, usages, ...material };
  internal.define(k, kKey, slot);
  // workerd's keys carry these as own, enumerable properties; each read
  // returns a fresh copy.
  Object.defineProperties(k, {
    usages: { get: () => slot.usages.slice(), enumerable: true, configurable: true },
    algorithm: { get: () => cloneAlg(slot.algorithm), enumerable: true, configurable: true },
    extractable: { get: () => slot.extractable, enumerable: true, configurable: true },
    type: { get: () => slot.type, enumerable: true, configurable: true },
  });
  return k;
};
const slotOf = (key) => {
  if (!(key instanceof CryptoKey)) throw new TypeError("Failed to execute operation: parameter is not of type 'CryptoKey'.");
  return key[kKey];
};
// useKey checks that key is for the requested algorithm and usage.
const useKey = (key, raw, usage) => {
  const k = slotOf(key);
  if (raw !== k.algorithm.name && raw.toUpperCase() !== k.algorithm.name.toUpperCase()) {
    throw dom("InvalidAccessError", `Requested algorithm "${raw}" does not match this CryptoKey's algorithm "${k.algorithm.name}".`);
  }
  if (!k.usages.includes(usage)) throw dom("InvalidAccessError", `Requested key usage "${usage}" does not match any usage listed in this CryptoKey.`);
  return k;
};
// usagesFor checks each requested usage against allowed and returns them
// deduplicated in WebCrypto's canonical order.
const usagesFor = (usages, allowed, what) => {
  const list = Array.from(usages ?? [], String);
  for (const u of list) if (!allowed.includes(u)) throw dom("SyntaxError", `Attempt to ${what} key with invalid usage "${u}".`);
  return USAGES.filter((u) => list.includes(u));
};

// ---- import -------------------------------------------------------------

// jwkChecks applies the "use", "key_ops" and "ext" rules; workerd checks
// key_ops only for asymmetric keys.
const jwkChecks = (jwk, name, usages, extractable, use) => {
  if (use !== undefined && usages.length > 0 && jwk.use !== undefined && jwk.use !== use) {
    throw dom("DataError", `Asymmetric "jwk" key import with usages requires a JSON Web Key with Public Key Use parameter "use" ("${jwk.use}") equal to "${use}".`);
  }
  if (use !== undefined && jwk.key_ops !== undefined) {
    const ops = Array.from(jwk.key_ops, String);
    if (!usages.every((u) => ops.includes(u))) {
      throw dom("DataError", "All specified key usages must be present in the JSON Web Key's Key Operations parameter (\"key_ops\").");
    }
  }
  if (jwk.ext === false && extractable) throw dom("DataError", `JWK ext field for "${name}" is set to false but extractable is true`);
};
const jwkObject = (keyData) => {
  if (keyData === null || typeof keyData !== "object" || internal.toU8(keyData) !== null) {
    throw new TypeError("Failed to execute 'importKey': keyData must be a JsonWebKey for the \"jwk\" format.");
  }
  return keyData;
};

function importSecret(format, keyData, a, extractable, usages) {
  const { name, p } = a;
  const spec = ALGS[name];
  if (spec.kdf) {
    if (format !== "raw") throw dom("NotSupportedError", `${name} key must be imported in "raw" format (requested "${format}").`);
    usages = usagesFor(usages, spec.secret, `import secret ${name}`);
    if (extractable) throw dom("SyntaxError", `${name} key cannot be extractable.`);
    return makeKey("secret", false, { name }, usages, { raw: copyOf(keyData, "keyData") });
  }
  if (format !== "raw" && format !== "jwk") throw dom("NotSupportedError", `Unrecognized key import format "${format}".`);
  const hash = name === "HMAC" ? hashOf(field(p, "hash")) : undefined;
  usages = usagesFor(usages, spec.secret, `import secret ${name}`);
  let raw, jwk;
  if (format === "raw") raw = copyOf(keyData, "keyData");
  else {
    jwk = jwkObject(keyData);
    if (jwk.kty !== "oct") throw dom("DataError", `Symmetric "jwk" key import requires a JSON Web Key with Key Type parameter "kty" equal to "oct" (encountered "${jwk.kty}").`);
    raw = jwk.k === undefined ? null : unb64url(jwk.k);
    if (raw === null) throw dom("DataError", "Symmetric \"jwk\" key import requires a base64Url encoding of the key.");
    jwkChecks(jwk, name, usages, extractable);
  }
  const bits = raw.byteLength * 8;
  if (name === "HMAC") {
    const length = p.length !== undefined ? Number(p.length) : bits;
    if (!(length > 0 && length <= bits && length > bits - 8)) {
      throw dom("DataError", `Imported HMAC key length (${length}) must be a non-zero value up to 7 bits less than, and no greater than, the bit length of the raw key data (${bits}).`);
    }
    if (jwk && jwk.alg !== undefined) {
      const want = "HS" + hash.replace("SHA-", "");
      if (jwk.alg !== want) throw dom("DataError", `HMAC "jwk" key import specifies "alg" that is incompatible with the hash name (encountered "${jwk.alg}", expected "${want}").`);
    }
    return makeKey("secret", extractable, { name, hash: { name: hash }, length }, usages, { raw });
  }
  if (bits !== 128 && bits !== 192 && bits !== 256) throw dom("DataError", `Imported AES key length must be 128, 192, or 256 bits but provided ${bits}.`);
  if (jwk && jwk.alg !== undefined) {
    const want = `A${bits}${name.slice(4)}`;
    if (jwk.alg !== want) throw dom("DataError", `Symmetric "jwk" key contains invalid "alg" value "${jwk.alg}", expected "${want}".`);
  }
  return makeKey("secret", extractable, { name, length: bits }, usages, { raw });
}

const curveOf = (p) => {
  const c = String(field(p, "namedCurve"));
  if (c !== "P-256" && c !== "P-384" && c !== "P-521") throw dom("NotSupportedError", `Unrecognized or unimplemented EC curve "${c}" requested.`);
  return c;
};
const kindNames = { RSA: "RSA", EC: "Elliptic curve", Ed25519: "Ed25519", X25519: "X25519" };
const ktyOf = { RSA: "RSA", EC: "EC", Ed25519: "OKP", X25519: "OKP" };

// asymAlgorithm is the algorithm dictionary of an imported or generated
// RSA/EC/OKP key.
const asymAlgorithm = (name, d, hash) => {
  if (d.kind === "RSA") return { name, modulusLength: d.modulusLength, publicExponent: new Uint8Array(d.publicExponent), hash: { name: hash } };
  if (d.kind === "EC") return { name, namedCurve: d.namedCurve };
  return { name };
};

function importAsym(format, keyData, a, extractable, usages) {
  const { name, p } = a;
  const spec = ALGS[name];
  const hash = spec.kind === "RSA" ? hashOf(field(p, "hash")) : undefined;
  const curve = spec.kind === "EC" ? curveOf(p) : undefined;
  let d;
  if (format === "spki" || format === "pkcs8") {
    d = checked(native.asymImport(format, bufferArg(keyData, "keyData")));
    if (spec.kind === "Ed25519" && d.kind === "X25519" && d.type === "public") {
      d = checked(native.asymRaw("Ed25519", "", new Uint8Array(native.asymExport(d.handle, "raw"))));
    }
    if (d.kind !== spec.kind) {
      throw dom("DataError", spec.kind === "RSA" || spec.kind === "EC" ? `Input was not an ${spec.kind} key.` : `Input was not an ${spec.kind} key.`);
    }
    if (curve && d.namedCurve !== curve) throw dom("DataError", `"algorithm.namedCurve" "${curve}" does not match the curve specified by the input key data.`);
  } else if (format === "raw" && spec.kind !== "RSA") {
    const bytes = bufferArg(keyData, "keyData");
    if (spec.kind !== "EC" && bytes.byteLength !== 32) throw dom("DataError", `${name} raw keys must be exactly 32-bytes (provided ${bytes.byteLength}).`);
    d = checked(native.asymRaw(spec.kind, curve || "", bytes));
  } else if (format === "jwk") {
    const jwk = jwkObject(keyData);
    const kty = ktyOf[spec.kind];
    if (jwk.kty !== kty) {
      throw dom("DataError", `${kindNames[spec.kind]} "jwk" key import requires a JSON Web Key with Key Type parameter "kty" ("${jwk.kty}") equal to "${kty}".`);
    }
    if (kty === "OKP" && jwk.crv !== name) throw dom("DataError", `${name} "jwk" key import requires a JSON Web Key with Elliptic Curve parameter "crv" ("${jwk.crv}") equal to "${name}".`);
    const wanted = Array.from(usages ?? [], String);
    jwkChecks(jwk, name, wanted, extractable, spec.use);
    if (name === "Ed25519" && jwk.alg !== undefined && jwk.alg !== "EdDSA") {
      throw dom("DataError", `JSON Web Key Algorithm parameter "alg" ("${jwk.alg}") does not match requested Ed25519 curve.`);
    }
    d = checked(native.asymJwkImport(spec.kind, curve || "", jwk));
  } else {
    throw dom("NotSupportedError", `Unrecognized key import format "${format}".`);
  }
  usages = usagesFor(usages, d.type === "private" ? spec.priv : spec.pub, `import ${d.type} ${name}`);
  return makeKey(d.type, extractable, asymAlgorithm(name, d, hash), usages, { handle: d.handle, kind: d.kind });
}

function importKey(format, keyData, algorithm, extractable, usages) {
  format = String(format);
  const a = normalize(algorithm);
  if (!a.name) throw dom("NotSupportedError", `Unrecognized key import algorithm "${a.raw}" requested.`);
  if (!["raw", "jwk", "spki", "pkcs8"].includes(format)) throw dom("NotSupportedError", `Unrecognized key import format "${format}".`);
  if (ALGS[a.name].secret) return importSecret(format, keyData, a, extractable, usages);
  return importAsym(format, keyData, a, extractable, usages);
}

// ---- export -------------------------------------------------------------

const JWK_FIELDS = ["kty", "use", "key_ops", "alg", "ext", "crv", "x", "y", "d", "n", "e", "p", "q", "dp", "dq", "qi", "oth", "k"];
const jwkAlg = (alg) => {
  const h = alg.hash ? alg.hash.name.replace("SHA-", "") : "";
  switch (alg.name) {
    case "HMAC": return "HS" + h;
    case "RSASSA-PKCS1-v1_5": return "RS" + h;
    case "RSA-PSS": return "PS" + h;
    case "RSA-OAEP": return h === "1" ? "RSA-OAEP" : "RSA-OAEP-" + h;
    case "Ed25519": return "EdDSA";
    case "ECDSA": case "ECDH": case "X25519": return undefined;
  }
  return `A${alg.length}${alg.name.slice(4)}`;
};

function exportKey(format, key) {
  format = String(format);
  const k = slotOf(key);
  const name = k.algorithm.name;
  if (!k.extractable) throw dom("InvalidAccessError", `Attempt to export non-extractable ${name} key.`);
  let fields;
  if (k.type === "secret") {
    if (format === "raw") return internal.copyBytes(k.raw).buffer;
    if (format !== "jwk") {
      if (name.startsWith("AES-")) throw dom("NotSupportedError", `${name} key only supports exporting "raw" & "jwk", not "${format}".`);
      throw dom("NotSupportedError", `Unimplemented key export format "${format}".`);
    }
    fields = { kty: "oct", k: b64url(k.raw) };
  } else {
    if (format === "raw") {
      if (k.kind === "RSA") throw dom("InvalidAccessError", `Cannot export "${name}" in "raw" format.`);
      if (k.type !== "public") {
        throw dom("InvalidAccessError", `Raw export of ${k.kind === "EC" ? "elliptic curve" : name} keys is only allowed for public keys.`);
      }
    } else if (format === "spki" && k.type !== "public") {
      throw dom("InvalidAccessError", `Asymmetric spki export requires public key (not "${k.type}").`);
    } else if (format === "pkcs8" && k.type !== "private") {
      throw dom("InvalidAccessError", `Asymmetric pkcs8 export requires private key (not "${k.type}").`);
    } else if (format !== "jwk" && format !== "spki" && format !== "pkcs8") {
      throw dom("NotSupportedError", `Unimplemented key export format "${format}".`);
    }
    const r = checked(native.asymExport(k.handle, format));
    if (format !== "jwk") return r;
    fields = r;
  }
  const jwk = {};
  const all = { ...fields, key_ops: k.usages.slice(), alg: jwkAlg(k.algorithm), ext: true };
  for (const f of JWK_FIELDS) jwk[f] = all[f];
  return jwk;
}

// ---- generate -----------------------------------------------------------

function generateKey(algorithm, extractable, usages) {
  const a = normalize(algorithm);
  const { name, p } = a;
  const spec = name && ALGS[name];
  if (!spec || spec.kdf) throw dom("NotSupportedError", `Unrecognized key generation algorithm "${a.raw}" requested.`);
  if (spec.secret) {
    if (name === "HMAC") {
      const hash = hashOf(field(p, "hash"));
      const list = usagesFor(usages, spec.secret, `generate ${name}`);
      const length = p.length !== undefined ? Number(p.length) : hashBlockBits[hash];
      const raw = new Uint8Array(native.randomBytes(Math.ceil(length / 8)));
      return makeKey("secret", extractable, { name, hash: { name: hash }, length }, list, { raw });
    }
    const length = Number(field(p, "length"));
    const list = usagesFor(usages, spec.secret, `generate ${name}`);
    if (length !== 128 && length !== 192 && length !== 256) throw dom("OperationError", `Generated AES key length must be 128, 192, or 256 bits but requested ${length}.`);
    return makeKey("secret", extractable, { name, length }, list, { raw: new Uint8Array(native.randomBytes(length / 8)) });
  }
  const all = Array.from(usages ?? [], String);
  usagesFor(all, [...spec.priv, ...spec.pub], `generate ${name}`);
  let hash, param = "", exp = 0;
  if (spec.kind === "RSA") {
    const bits = Number(field(p, "modulusLength"));
    const e = bufferArg(field(p, "publicExponent"), "publicExponent").reduce((n, b) => n * 256 + b, 0);
    hash = hashOf(field(p, "hash"));
    if (!(bits % 8 === 0 && bits >= 256 && bits <= 16384)) {
      throw dom("OperationError", `The modulus length must be a multiple of 8 and between 256 and 16k, but ${bits} was requested.`);
    }
    if (e !== 3 && e !== 65537) throw dom("OperationError", `The "publicExponent" must be either 3 or 65537, but got ${e}.`);
    param = bits;
    exp = e;
  } else if (spec.kind === "EC") {
    param = curveOf(p);
  }
  const privUsages = usagesFor(all.filter((u) => spec.priv.includes(u)), spec.priv, "");
  if (privUsages.length === 0) throw dom("SyntaxError", "Attempt to generate asymmetric keys with no valid private key usages.");
  const [pub, priv] = checked(native.asymGenerate(spec.kind, param, exp));
  const alg = asymAlgorithm(name, priv, hash);
  return {
    publicKey: makeKey("public", true, alg, usagesFor(all.filter((u) => spec.pub.includes(u)), spec.pub, ""), { handle: pub.handle, kind: pub.kind }),
    privateKey: makeKey("private", extractable, alg, privUsages, { handle: priv.handle, kind: priv.kind }),
  };
}

// ---- sign / verify --------------------------------------------------------

// signOrVerify checks its arguments in workerd's order and with its
// messages (recorded in webcrypto-hmac-forms): the algorithm, the key's
// type, the signature's and data's types, then the key's algorithm and
// usages.
const paramBytes = (v, op, index) => {
  const u = internal.toU8(v);
  if (u === null) throw new TypeError(`Failed to execute '${op}' on 'SubtleCrypto': parameter ${index} is not of type 'Array'.`);
  return u;
};
function signOrVerify(verify, algorithm, key, signature, data) {
  const op = verify ? "verify" : "sign";
  if (algorithm === null || algorithm === undefined) {
    throw new TypeError("Cannot initialize N7workerd3api12SubtleCrypto13SignAlgorithmE with required members from an undefined or null value.");
  }
  const a = normalize(algorithm);
  if (!(key instanceof CryptoKey)) throw new TypeError(`Failed to execute '${op}' on 'SubtleCrypto': parameter 2 is not of type 'CryptoKey'.`);
  if (verify) signature = paramBytes(signature, op, 3);
  const bytes = paramBytes(data, op, verify ? 4 : 3);
  const k = useKey(key, a.raw, op);
  const name = k.algorithm.name;
  if (name === "HMAC") {
    if (!k.mac) k.mac = native.keyedHmac(k.algorithm.hash.name, k.raw);
    const mac = native.macSum(k.mac, bytes);
    return verify ? mac.byteLength === signature.byteLength && native.timingSafeEqual(new Uint8Array(mac), signature) : mac;
  }
  let hash = k.algorithm.hash?.name ?? "";
  let salt = 0;
  if (name === "ECDSA") {
    if (a.p.hash === undefined) {
      throw new TypeError("Missing \"hash\" in AlgorithmIdentifier. (ECDSA requires that the hash algorithm be specified at call time rather than on the key. This differs from other WebCrypto algorithms for historical reasons.)");
    }
    hash = hashOf(a.p.hash);
  } else if (name === "RSA-PSS") {
    if (a.p.saltLength === undefined) throw dom("DataError", "RSA-PSS requires that you provide a saltLength.");
    salt = Number(a.p.saltLength);
  }
  if (verify) return native.asymVerify(name, k.handle, hash, signature, bytes, salt);
  return checked(native.asymSign(name, k.handle, hash, bytes, salt));
}

// ---- encrypt / decrypt ----------------------------------------------------

const decryptFailed = (inLen, outLen, name) => dom("OperationError", `Decryption failed. This could be due to a ciphertext authentication failure, bad padding, incorrect CryptoKey, or another algorithm-specific reason. Input length was ${inLen}, output length expected to be ${outLen} for ${name}`);

function cipher(encrypt, algorithm, key, data, usage) {
  const a = normalize(algorithm);
  const k = useKey(key, a.raw, usage);
  const p = a.p;
  const bytes = bufferArg(data, "data");
  switch (k.algorithm.name) {
    case "AES-GCM": {
      const iv = bufferArg(field(p, "iv"), "iv");
      if (iv.byteLength === 0) throw dom("OperationError", "AES-GCM IV must not be empty.");
      const aad = p.additionalData !== undefined ? bufferArg(p.additionalData, "additionalData") : new Uint8Array(0);
      const tagLength = p.tagLength !== undefined ? Number(p.tagLength) : 128;
      if (![32, 64, 96, 104, 112, 120, 128].includes(tagLength)) throw dom("OperationError", `Invalid AES-GCM tag length ${tagLength}.`);
      if (!encrypt && bytes.byteLength * 8 < tagLength) {
        throw dom("OperationError", `Ciphertext length of ${bytes.byteLength * 8} bits must be greater than or equal to the size of the AES-GCM tag length of ${tagLength} bits.`);
      }
      const r = native.aesGcm(encrypt, k.raw, iv, bytes, aad, tagLength / 8);
      if (typeof r === "string") {
        if (!encrypt) throw decryptFailed(bytes.byteLength - tagLength / 8, bytes.byteLength - tagLength / 8, "AES-GCM");
        throw dom("OperationError", r);
      }
      return r;
    }
    case "AES-CBC": {
      const iv = bufferArg(field(p, "iv"), "iv");
      if (iv.byteLength !== 16) throw dom("OperationError", `AES-CBC IV must be 16 bytes long (provided ${iv.byteLength} bytes).`);
      return checked(native.aesCbc(encrypt, k.raw, iv, bytes));
    }
    case "AES-CTR": {
      const counter = bufferArg(field(p, "counter"), "counter");
      if (counter.byteLength !== 16) throw dom("OperationError", `Counter must have length of 16 bytes (provided ${counter.byteLength}).`);
      const length = Number(field(p, "length"));
      if (!(length >= 1 && length <= 128)) throw dom("OperationError", `Invalid counter of ${length} bits length provided.`);
      return checked(native.aesCtr(k.raw, counter, length, bytes));
    }
    case "RSA-OAEP": {
      const label = p.label !== undefined ? bufferArg(p.label, "label") : new Uint8Array(0);
      return checked(native.rsaOaep(encrypt, k.handle, k.algorithm.hash.name, label, bytes));
    }
  }
  throw dom("NotSupportedError", `Unrecognized or unimplemented ${encrypt ? "encrypt" : "decrypt"} algorithm "${a.raw}" requested.`);
}

// ---- wrap / unwrap ----------------------------------------------------------

function wrapKey(format, key, wrappingKey, wrapAlgorithm) {
  const a = normalize(wrapAlgorithm);
  const w = useKey(wrappingKey, a.raw, "wrapKey");
  let bytes = exportKey(format, key);
  bytes = String(format) === "jwk" ? new TextEncoder().encode(JSON.stringify(bytes)) : new Uint8Array(bytes);
  if (w.algorithm.name === "AES-KW") {
    if (bytes.byteLength % 8 !== 0) {
      throw dom("OperationError", `Unwrapped key bit length must be a multiple of 64 bits but unwrapped key has a length of ${bytes.byteLength * 8} bits.`);
    }
    return checked(native.aesKw(true, w.raw, bytes));
  }
  return cipher(true, wrapAlgorithm, wrappingKey, bytes, "wrapKey");
}

function unwrapKey(format, wrappedKey, unwrappingKey, unwrapAlgorithm, unwrappedKeyAlgorithm, extractable, usages) {
  const a = normalize(unwrapAlgorithm);
  const w = useKey(unwrappingKey, a.raw, "unwrapKey");
  const data = bufferArg(wrappedKey, "wrappedKey");
  const bytes = w.algorithm.name === "AES-KW" ? checked(native.aesKw(false, w.raw, data)) : cipher(false, unwrapAlgorithm, unwrappingKey, data, "unwrapKey");
  let keyData = bytes;
  if (String(format) === "jwk") {
    try {
      keyData = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      throw dom("DataError", "Unwrapped key is not a valid JSON Web Key.");
    }
  }
  return importKey(format, keyData, unwrappedKeyAlgorithm, extractable, usages);
}

// ---- derive -----------------------------------------------------------------

function deriveBits(algorithm, baseKey, length, usage = "deriveBits") {
  const a = normalize(algorithm);
  const k = useKey(baseKey, a.raw, usage);
  const p = a.p;
  const name = k.algorithm.name;
  if (name === "PBKDF2" || name === "HKDF") {
    const hash = hashOf(field(p, "hash"));
    const salt = bufferArg(field(p, "salt"), "salt");
    if (length === null || length === undefined) throw dom("OperationError", `${name} cannot derive a key with null length.`);
    length = Number(length);
    if (length % 8 !== 0) throw dom("OperationError", `${name} requires a derived key length that is a multiple of eight (requested ${length}).`);
    if (name === "HKDF") return checked(native.subtleHkdf(hash, k.raw, salt, bufferArg(field(p, "info"), "info"), length / 8));
    const iterations = Number(field(p, "iterations"));
    if (!(iterations > 0)) throw dom("OperationError", `PBKDF2 requires a positive iteration count (requested ${iterations}).`);
    if (length === 0) return new ArrayBuffer(0);
    return checked(native.subtlePbkdf2(hash, k.raw, salt, iterations, length / 8));
  }
  // ECDH and X25519
  const pub = field(p, "public");
  const pk = slotOf(pub);
  if (pk.type !== "public") throw dom("InvalidAccessError", `The provided key has type "${pk.type}", not "public"`);
  if (pk.algorithm.name !== name) throw dom("InvalidAccessError", `Private key for derivation is using "${name}" while public key is using "${pk.algorithm.name}".`);
  if (name === "ECDH" && pk.algorithm.namedCurve !== k.algorithm.namedCurve) {
    throw dom("InvalidAccessError", `Private key for derivation is using curve "${k.algorithm.namedCurve}" while public key is using "${pk.algorithm.namedCurve}".`);
  }
  const secret = new Uint8Array(checked(native.ecdhSecret(k.handle, pk.handle)));
  const max = secret.byteLength * 8;
  if (length === null || length === undefined) return secret.buffer;
  length = Number(length);
  if (length > max) throw dom("OperationError", `Derived key length (${length} bits) is too long (should be at most ${max} bits).`);
  const out = secret.slice(0, Math.ceil(length / 8));
  if (length % 8) out[out.length - 1] &= 0xff << (8 - (length % 8));
  return out.buffer;
}

function deriveKey(algorithm, baseKey, derivedKeyAlgorithm, extractable, usages) {
  const d = normalize(derivedKeyAlgorithm);
  if (!d.name) throw dom("NotSupportedError", `Unrecognized key import algorithm "${d.raw}" requested.`);
  let length = null;
  if (d.name.startsWith("AES-")) length = Number(field(d.p, "length"));
  else if (d.name === "HMAC") length = d.p.length !== undefined ? Number(d.p.length) : hashBlockBits[hashOf(field(d.p, "hash"))];
  const bits = deriveBits(algorithm, baseKey, length, "deriveKey");
  return importKey("raw", bits, derivedKeyAlgorithm, extractable, usages);
}

// ---- digest, DigestStream -----------------------------------------------------

const digestName = (algorithm) => {
  const name = hashNames[normalize(algorithm).raw.toUpperCase()];
  if (!name) throw dom("NotSupportedError", "Unrecognized or unimplemented digest algorithm requested.");
  return name;
};

class DigestStream extends WritableStream {
  constructor(algorithm) {
    const h = native.digestNew(digestName(algorithm));
    const { promise, resolve, reject } = Promise.withResolvers();
    super({
      write(chunk) { native.digestWrite(h, bufferArg(chunk, "DigestStream chunk")); },
      close() { resolve(native.digestSum(h)); },
      abort(reason) { reject(reason); },
    });
    promise.catch(() => {});
    Object.defineProperty(this, "digest", { get: () => promise, enumerable: true, configurable: true });
  }
}
Object.defineProperty(DigestStream.prototype, Symbol.toStringTag, { value: "DigestStream", configurable: true });

// ---- the objects ----------------------------------------------------------------

// hmacSlot is sign's and verify's fast path for HMAC, the call a JWT or
// webhook check makes per request: the slot of an HMAC key that allows
// usage, when the algorithm is "HMAC" (or { name: "HMAC" }); undefined
// otherwise, and then signOrVerify checks everything and throws what
// workerd throws. Its native half refuses anything but a Uint8Array or an
// ArrayBuffer, so the answer is the same either way.
const hmacSlot = (algorithm, key, usage) => {
  if (typeof key !== "object" || key === null) return undefined;
  const k = key[kKey];
  if (k === undefined || k.algorithm.name !== "HMAC") return undefined;
  if (algorithm !== "HMAC" && (typeof algorithm !== "object" || algorithm === null || algorithm.name !== "HMAC")) return undefined;
  if (usage === "sign" ? !(k.canSign ??= k.usages.includes("sign")) : !(k.canVerify ??= k.usages.includes("verify"))) return undefined;
  k.mac ??= native.keyedHmac(k.algorithm.hash.name, k.raw);
  return k;
};
// asymSlot is the same for the asymmetric signatures (a JWT library's
// RS256, PS256, ES256 and EdDSA): the slot and the hash of a key of one of
// those algorithms that allows usage, when the algorithm is named exactly
// as the key's (with, for ECDSA, a hash named exactly as WebCrypto spells
// it, and for RSA-PSS a numeric saltLength); undefined for anything else,
// which signOrVerify then checks in full. The key's hash is read once.
const sigAlgs = new Set(["RSASSA-PKCS1-v1_5", "RSA-PSS", "ECDSA", "Ed25519"]);
const exactHashes = new Map(Object.entries(hashNames));
const asymSlot = (algorithm, key, usage) => {
  if (!(key instanceof CryptoKey)) return undefined;
  const k = key[kKey];
  if (k === undefined) return undefined;
  if (k.fastHash === undefined) {
    if (!sigAlgs.has(k.algorithm.name)) return undefined;
    k.fastHash = k.algorithm.hash?.name ?? "";
  }
  if (usage === "sign" ? !(k.canSign ??= k.usages.includes("sign")) : !(k.canVerify ??= k.usages.includes("verify"))) return undefined;
  const name = k.algorithm.name;
  if (typeof algorithm === "string") {
    return algorithm === name && name !== "ECDSA" && name !== "RSA-PSS" ? k : undefined;
  }
  if (typeof algorithm !== "object" || algorithm === null || algorithm.name !== name) return undefined;
  return k;
};
// asymFast runs sign or verify for asymSlot's key k; null when the
// arguments need signOrVerify's checks after all.
const asymFast = (verify, k, algorithm, signature, data) => {
  const name = k.algorithm.name;
  let hash = k.fastHash;
  let salt = 0;
  if (name === "ECDSA") {
    const h = algorithm.hash;
    hash = exactHashes.get(typeof h === "string" ? h : h?.name);
    if (hash === undefined) return null;
  } else if (name === "RSA-PSS") {
    salt = algorithm.saltLength;
    if (typeof salt !== "number") return null;
  }
  return verify ? native.asymVerifyFast(k.handle, name, hash, signature, data, salt) : native.asymSignFast(k.handle, name, hash, data, salt);
};
// Every operation is asynchronous: a synchronous throw becomes a
// rejection. (Each method is written out with its own parameters, as
// workerd declares them: no rest array and apply per call.)

class SubtleCrypto {
  constructor(key) {
    if (key !== internal.kCreate) throw new TypeError("Illegal constructor");
  }
}
const subtleMethods = {
  digest(algorithm, data) {
    try { return Promise.resolve(native.digest(digestName(algorithm), bufferArg(data, "data"))); } catch (e) { return Promise.reject(e); }
  },
  importKey(format, keyData, algorithm, extractable, usages) {
    try { return Promise.resolve(importKey(format, keyData, algorithm, extractable, usages)); } catch (e) { return Promise.reject(e); }
  },
  exportKey(format, key) {
    try { return Promise.resolve(exportKey(format, key)); } catch (e) { return Promise.reject(e); }
  },
  generateKey(algorithm, extractable, usages) {
    try { return Promise.resolve(generateKey(algorithm, extractable, usages)); } catch (e) { return Promise.reject(e); }
  },
  sign(algorithm, key, data) {
    const k = hmacSlot(algorithm, key, "sign");
    if (k !== undefined) {
      const mac = native.macSign(k.mac, data);
      if (mac !== null) return Promise.resolve(mac);
    }
    try {
      const a = asymSlot(algorithm, key, "sign");
      if (a !== undefined) {
        const sig = asymFast(false, a, algorithm, undefined, data);
        if (sig !== null) return Promise.resolve(checked(sig));
      }
      return Promise.resolve(signOrVerify(false, algorithm, key, undefined, data));
    } catch (e) { return Promise.reject(e); }
  },
  verify(algorithm, key, signature, data) {
    const k = hmacSlot(algorithm, key, "verify");
    if (k !== undefined) {
      const ok = native.macVerify(k.mac, signature, data);
      if (ok !== null) return Promise.resolve(ok);
    }
    try {
      const a = asymSlot(algorithm, key, "verify");
      if (a !== undefined) {
        const ok = asymFast(true, a, algorithm, signature, data);
        if (ok !== null) return Promise.resolve(ok);
      }
      return Promise.resolve(signOrVerify(true, algorithm, key, signature, data));
    } catch (e) { return Promise.reject(e); }
  },
  encrypt(algorithm, key, data) {
    try { return Promise.resolve(cipher(true, algorithm, key, data, "encrypt")); } catch (e) { return Promise.reject(e); }
  },
  decrypt(algorithm, key, data) {
    try { return Promise.resolve(cipher(false, algorithm, key, data, "decrypt")); } catch (e) { return Promise.reject(e); }
  },
  wrapKey(format, key, wrappingKey, wrapAlgorithm) {
    try { return Promise.resolve(wrapKey(format, key, wrappingKey, wrapAlgorithm)); } catch (e) { return Promise.reject(e); }
  },
  unwrapKey(format, wrappedKey, unwrappingKey, unwrapAlgorithm, unwrappedKeyAlgorithm, extractable, usages) {
    try {
      return Promise.resolve(unwrapKey(format, wrappedKey, unwrappingKey, unwrapAlgorithm, unwrappedKeyAlgorithm, extractable, usages));
    } catch (e) { return Promise.reject(e); }
  },
  deriveBits(algorithm, baseKey, length) {
    try { return Promise.resolve(deriveBits(algorithm, baseKey, length)); } catch (e) { return Promise.reject(e); }
  },
  deriveKey(algorithm, baseKey, derivedKeyAlgorithm, extractable, usages) {
    try { return Promise.resolve(deriveKey(algorithm, baseKey, derivedKeyAlgorithm, extractable, usages)); } catch (e) { return Promise.reject(e); }
  },
};
for (const name of Object.keys(subtleMethods)) internal.define(SubtleCrypto.prototype, name, subtleMethods[name]);
// workerd extension: constant-time comparison (synchronous).
internal.define(SubtleCrypto.prototype, "timingSafeEqual", (a, b) => {
  const x = bufferArg(a, "a");
  const y = bufferArg(b, "b");
  if (x.byteLength !== y.byteLength) throw new TypeError("Input buffers must have the same byte length.");
  return native.timingSafeEqual(x, y);
});
Object.defineProperty(SubtleCrypto.prototype, Symbol.toStringTag, { value: "SubtleCrypto", configurable: true });
const subtle = new SubtleCrypto(internal.kCreate);

class Crypto {
  constructor(key) {
    if (key !== internal.kCreate) throw new TypeError("Illegal constructor");
  }
  get subtle() { return subtle; }
  getRandomValues(array) {
    if (!integerViews.some((C) => array instanceof C)) {
      throw dom("TypeMismatchError", "ArrayBufferView argument to getRandomValues() must be an integer-typed view.");
    }
    if (array.byteLength > 65536) {
      throw dom("QuotaExceededError", `getRandomValues() only accepts buffers of size <= 64K but provided ${array.byteLength} bytes.`);
    }
    native.randomFill(array);
    return array;
  }
  randomUUID() { return native.randomUUID(); }
  get DigestStream() { return DigestStream; }
}
Object.defineProperty(Crypto.prototype, Symbol.toStringTag, { value: "Crypto", configurable: true });
const crypto = new Crypto(internal.kCreate);

internal.expose("crypto", crypto);
internal.expose("Crypto", Crypto);
internal.expose("CryptoKey", CryptoKey);
internal.expose("SubtleCrypto", SubtleCrypto);
