// The env object of an r2_buckets binding. Evaluates to a factory that
// takes the natives (r2/r2js/binding.go) and returns the R2Bucket. Option
// parsing and argument errors are done here, in workerd's shapes
// (src/workerd/api/r2-bucket.c++); the store's failures arrive from Go as
// messages "<op>: <text> (<code>)" and are thrown as Errors.
(function (native) {
  "use strict";

  const kCreate = Symbol("r2 internal");
  const hexOf = (u8) => Array.from(u8, (b) => b.toString(16).padStart(2, "0")).join("");
  const isObject = (v) => v !== null && (typeof v === "object" || typeof v === "function");
  const dateMs = (v, what) => {
    if (v instanceof Date) return v.getTime();
    throw new TypeError(`${what} must be a Date.`);
  };

  // parseEtags reads an etag list as a conditional header holds it.
  const parseEtags = (s) => {
    const out = [];
    for (let part of String(s).split(",")) {
      part = part.trim();
      if (part === "") continue;
      if (part === "*") out.push({ wildcard: true });
      else if (part.startsWith('W/"') && part.endsWith('"') && part.length >= 4) out.push({ value: part.slice(3, -1), weak: true });
      else if (part.startsWith('"') && part.endsWith('"') && part.length >= 2) out.push({ value: part.slice(1, -1) });
      else out.push({ value: part });
    }
    return out;
  };

  // etagsOf reads an R2Conditional etag: bare, never quoted, or "*".
  const etagsOf = (v) => {
    v = String(v);
    if (v === "*") return [{ wildcard: true }];
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) {
      throw new TypeError(`Conditional ETag should not be wrapped in quotes (${v}).`);
    }
    return [{ value: v }];
  };

  const conditional = (onlyIf) => {
    if (onlyIf === undefined || onlyIf === null) return undefined;
    if (onlyIf instanceof Headers) {
      const c = { secondsGranularity: true };
      const im = onlyIf.get("if-match"), inm = onlyIf.get("if-none-match");
      const ims = onlyIf.get("if-modified-since"), ius = onlyIf.get("if-unmodified-since");
      if (im !== null) c.etagMatches = parseEtags(im);
      if (inm !== null) c.etagDoesNotMatch = parseEtags(inm);
      if (ims !== null) c.uploadedAfter = Date.parse(ims);
      if (ius !== null) c.uploadedBefore = Date.parse(ius);
      return c;
    }
    if (!isObject(onlyIf)) throw new TypeError("onlyIf must be an R2Conditional or a Headers object.");
    const c = {};
    if (onlyIf.etagMatches !== undefined) c.etagMatches = etagsOf(onlyIf.etagMatches);
    if (onlyIf.etagDoesNotMatch !== undefined) c.etagDoesNotMatch = etagsOf(onlyIf.etagDoesNotMatch);
    if (onlyIf.uploadedBefore !== undefined) c.uploadedBefore = dateMs(onlyIf.uploadedBefore, "uploadedBefore");
    if (onlyIf.uploadedAfter !== undefined) c.uploadedAfter = dateMs(onlyIf.uploadedAfter, "uploadedAfter");
    if (onlyIf.secondsGranularity) c.secondsGranularity = true;
    return c;
  };

  const rangeOf = (range) => {
    if (range === undefined || range === null) return undefined;
    if (range instanceof Headers) {
      const h = range.get("range");
      if (h === null) return undefined;
      const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/.exec(h);
      if (m === null || (m[1] === "" && m[2] === "")) return undefined; // several or malformed: the whole object
      if (m[1] === "") return { suffix: Number(m[2]) };
      const offset = Number(m[1]);
      if (m[2] === "") return { offset };
      const end = Number(m[2]);
      if (end < offset) return undefined;
      return { offset, length: end - offset + 1 };
    }
    if (!isObject(range)) throw new TypeError("range must be an R2Range or a Headers object.");
    const r = {};
    for (const k of ["offset", "length", "suffix"]) {
      if (range[k] !== undefined) {
        const n = Number(range[k]);
        if (!Number.isFinite(n)) throw new TypeError(`range.${k} must be a number.`);
        r[k] = Math.trunc(n);
      }
    }
    if (r.suffix !== undefined) {
      if (r.offset !== undefined) throw new TypeError("Suffix is incompatible with offset.");
      if (r.length !== undefined) throw new TypeError("Suffix is incompatible with length.");
      if (r.suffix < 0) throw new RangeError(`Invalid suffix. Suffix (${r.suffix}) must be greater than or equal to 0.`);
    }
    if (r.offset !== undefined && r.offset < 0) throw new RangeError("Invalid range. Offset must be non-negative.");
    if (r.length !== undefined && r.length < 0) throw new RangeError("Invalid range. Length must be non-negative.");
    return r;
  };

  const httpFields = ["contentType", "contentLanguage", "contentDisposition", "contentEncoding", "cacheControl"];
  const headerOf = {
    contentType: "content-type", contentLanguage: "content-language", contentDisposition: "content-disposition",
    contentEncoding: "content-encoding", cacheControl: "cache-control",
  };

  const httpMetadataOf = (m) => {
    if (m === undefined || m === null) return {};
    const out = {};
    if (m instanceof Headers) {
      for (const f of httpFields) {
        const v = m.get(headerOf[f]);
        if (v !== null) out[f] = v;
      }
      const exp = m.get("expires");
      if (exp !== null && !Number.isNaN(Date.parse(exp))) out.cacheExpiry = Date.parse(exp);
      return out;
    }
    if (!isObject(m)) throw new TypeError("httpMetadata must be an R2HTTPMetadata or a Headers object.");
    for (const f of httpFields) if (m[f] !== undefined && m[f] !== null) out[f] = String(m[f]);
    if (m.cacheExpiry !== undefined && m.cacheExpiry !== null) out.cacheExpiry = dateMs(m.cacheExpiry, "cacheExpiry");
    return out;
  };

  const customMetadataOf = (m) => {
    if (m === undefined || m === null) return {};
    if (!isObject(m)) throw new TypeError("customMetadata must be an object.");
    const out = {};
    for (const k of Object.keys(m)) out[k] = String(m[k]);
    return out;
  };

  const hashLengths = { md5: 16, sha1: 20, sha256: 32, sha384: 48, sha512: 64 };
  const hashNames = { md5: "MD5", sha1: "SHA-1", sha256: "SHA-256", sha384: "SHA-384", sha512: "SHA-512" };
  const checksumsOf = (options) => {
    const out = {};
    let n = 0;
    for (const f of Object.keys(hashLengths)) {
      const v = options[f];
      if (v === undefined || v === null) continue;
      if (++n > 1) throw new TypeError("You cannot specify multiple hashing algorithms.");
      let hex;
      if (typeof v === "string") {
        if (!/^[0-9a-fA-F]*$/.test(v) || v.length !== hashLengths[f] * 2) {
          throw new TypeError(`${hashNames[f]} is ${hashLengths[f] * 2} hex characters, not ${v.length}`);
        }
        hex = v.toLowerCase();
      } else if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) {
        const u8 = v instanceof ArrayBuffer ? new Uint8Array(v) : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
        if (u8.length !== hashLengths[f]) throw new TypeError(`${hashNames[f]} is ${hashLengths[f]} bytes, not ${u8.length}`);
        hex = hexOf(u8);
      } else {
        throw new TypeError(`${f} must be an ArrayBuffer, an ArrayBufferView or a hex string.`);
      }
      out[f] = hex;
    }
    return out;
  };

  // bodyOf turns a put value into what the native takes: a string, a
  // Uint8Array of its own, or a ReadableStream.
  const bodyOf = async (value, method) => {
    if (value === null || value === undefined) return "";
    if (typeof value === "string") return value;
    if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
    if (ArrayBuffer.isView(value)) {
      return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
    }
    if (value instanceof ReadableStream) {
      if (value.locked) throw new TypeError("This ReadableStream is currently locked to a reader.");
      return value;
    }
    if (value instanceof Blob) return new Uint8Array(await value.arrayBuffer());
    throw new TypeError(
      `Failed to execute '${method}' on 'R2Bucket': parameter 2 is not of type 'ReadableStream or ArrayBuffer or ArrayBufferView or string or Blob'.`);
  };

  // call runs a native and rethrows its failure as workerd does.
  const rethrow = (e) => {
    if (e instanceof Error) throw e;
    throw new Error(String(e?.message ?? e));
  };
  const call = (p) => p.then(undefined, rethrow);

  // Checksums, HeadResult and GetResult values are built in Go
  // (objects.go) on these prototypes, with their hidden state under kHex
  // (a checksums' hex strings) and kBody (an object's stream).
  const kHex = Symbol("r2 checksums");
  const kBody = Symbol("r2 body");

  const illegalInvocation = () =>
    new TypeError("Illegal invocation: function called with incorrect `this` reference. See https://developers.cloudflare.com/workers/observability/errors/#illegal-invocation-errors for details.");
  // The classes have workerd's names (HeadResult is R2Object, GetResult
  // R2ObjectBody): a script sees them as constructor.name and in
  // Object.prototype.toString.
  const tagged = (cls, name) => Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: name, configurable: true });

  class Checksums {
    constructor() {
      throw new TypeError("Illegal constructor");
    }
    toJSON() {
      const hex = this?.[kHex];
      if (hex === undefined) throw illegalInvocation();
      return { ...hex };
    }
  }
  tagged(Checksums, "Checksums");

  const writeHttpMetadata = (m, headers) => {
    for (const f of httpFields) if (m[f] !== undefined) headers.set(headerOf[f], m[f]);
    if (m.cacheExpiry !== undefined) headers.set("expires", m.cacheExpiry.toUTCString());
  };

  class HeadResult {
    constructor() {
      throw new TypeError("Illegal constructor");
    }
    writeHttpMetadata(headers) {
      if (!(headers instanceof Headers)) {
        throw new TypeError("Failed to execute 'writeHttpMetadata' on 'R2Object': parameter 1 is not of type 'Headers'.");
      }
      writeHttpMetadata(this.httpMetadata, headers);
    }
  }

  const bodyOfObject = (o) => {
    const body = o?.[kBody];
    if (body === undefined) throw illegalInvocation();
    return body;
  };
  // responseOf is a Response over the object's unused, unlocked body
  // (reading it then uses the body).
  const responseOf = (o) => {
    const body = bodyOfObject(o);
    if (native.disturbed(body)) throw new TypeError("Body has already been used. It can only be used once. Use tee() first if you need to read it twice.");
    if (body.locked) throw new TypeError("This ReadableStream is currently locked to a reader.");
    return new Response(body);
  };

  class GetResult extends HeadResult {
    get body() {
      return bodyOfObject(this);
    }
    get bodyUsed() {
      return native.disturbed(bodyOfObject(this));
    }
    async arrayBuffer() {
      return responseOf(this).arrayBuffer();
    }
    async bytes() {
      return new Uint8Array(await responseOf(this).arrayBuffer());
    }
    async text() {
      return responseOf(this).text();
    }
    async json() {
      return responseOf(this).json();
    }
    async blob() {
      const type = this.httpMetadata.contentType ?? "";
      return new Blob([await responseOf(this).arrayBuffer()], { type });
    }
  }
  tagged(HeadResult, "HeadResult");
  tagged(GetResult, "GetResult");
  native.shapes(HeadResult.prototype, GetResult.prototype, Checksums.prototype, kHex, kBody, Date);

  class R2MultipartUpload {
    constructor(key, objectKey, uploadId) {
      if (key !== kCreate) throw new TypeError("Illegal constructor");
      Object.defineProperty(this, "key", { value: objectKey, enumerable: true });
      Object.defineProperty(this, "uploadId", { value: uploadId, enumerable: true });
    }
    async uploadPart(partNumber, value, options) {
      partNumber = Math.trunc(Number(partNumber));
      const body = await bodyOf(value, "uploadPart");
      const etag = await call(native.uploadPart(this.key, this.uploadId, partNumber, body));
      return { partNumber, etag };
    }
    async abort() {
      await call(native.abort(this.key, this.uploadId));
    }
    async complete(uploadedParts) {
      if (!Array.isArray(uploadedParts)) {
        throw new TypeError("Failed to execute 'complete' on 'R2MultipartUpload': parameter 1 is not of type 'Array'.");
      }
      const parts = uploadedParts.map((p) => ({ n: Math.trunc(Number(p?.partNumber)), etag: String(p?.etag) }));
      return await call(native.complete(this.key, this.uploadId, JSON.stringify(parts)));
    }
  }

  class R2Bucket {
    // head and get are the hot calls: plain functions returning the
    // native's promise (an async function would add a promise and a
    // resumption per call); a throw before the call still rejects.
    head(key) {
      try {
        return native.head(String(key)).then(undefined, rethrow);
      } catch (e) {
        return Promise.reject(e);
      }
    }

    get(key, options) {
      try {
        key = String(key);
        let opts;
        if (isObject(options)) {
          opts = JSON.stringify({ range: rangeOf(options.range), onlyIf: conditional(options.onlyIf) });
        }
        return native.get(key, opts).then(undefined, rethrow);
      } catch (e) {
        return Promise.reject(e);
      }
    }

    async put(key, value, options) {
      key = String(key);
      const o = {};
      if (isObject(options)) {
        o.onlyIf = conditional(options.onlyIf);
        o.httpMetadata = httpMetadataOf(options.httpMetadata);
        o.customMetadata = customMetadataOf(options.customMetadata);
        o.customKeys = Object.keys(o.customMetadata);
        o.checksums = checksumsOf(options);
        if (options.storageClass !== undefined) o.storageClass = String(options.storageClass);
      }
      const body = await bodyOf(value, "put");
      return await call(native.put(key, body, isObject(options) ? JSON.stringify(o) : undefined));
    }

    async delete(keys) {
      const list = Array.isArray(keys) ? keys.map(String) : [String(keys)];
      await call(native.delete(list));
    }

    async list(options) {
      const o = {};
      if (isObject(options)) {
        for (const k of ["prefix", "delimiter", "cursor", "startAfter"]) {
          if (options[k] !== undefined && options[k] !== null) o[k] = String(options[k]);
        }
        if (options.limit !== undefined && options.limit !== null) o.limit = Math.trunc(Number(options.limit));
        if (options.include !== undefined && options.include !== null) {
          o.include = Array.from(options.include, String);
          for (const i of o.include) {
            if (i !== "httpMetadata" && i !== "customMetadata") {
              throw new TypeError(`Unknown include value '${i}'.`);
            }
          }
        }
      }
      return await call(native.list(JSON.stringify(o)));
    }

    async createMultipartUpload(key, options) {
      key = String(key);
      const o = {};
      if (isObject(options)) {
        o.httpMetadata = httpMetadataOf(options.httpMetadata);
        o.customMetadata = customMetadataOf(options.customMetadata);
        o.customKeys = Object.keys(o.customMetadata);
        if (options.storageClass !== undefined) o.storageClass = String(options.storageClass);
      }
      const id = await call(native.create(key, JSON.stringify(o)));
      return new R2MultipartUpload(kCreate, key, id);
    }

    resumeMultipartUpload(key, uploadId) {
      return new R2MultipartUpload(kCreate, String(key), String(uploadId));
    }
  }

  return new R2Bucket();
})
