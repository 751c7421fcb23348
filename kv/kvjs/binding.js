// The env object of a kv_namespaces binding. Evaluates to a factory that
// takes the natives (kv/kvjs/binding.go) and returns the namespace. Argument
// checks and their texts are workerd's (src/workerd/api/kv.c++); failures
// the KV service reports arrive from Go as "KV <OP> failed: ..." messages
// and are thrown as plain Errors, as workerd does.
(function (native) {
  "use strict";

  const kvFailed = (op, status, text) => new Error(`KV ${op} failed: ${status} ${text}`);

  const utf8Length = (s) => {
    let n = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) n += 1;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
        n += 4;
        i++;
      } else n += 3;
    }
    return n;
  };

  const keyName = (method, name) => {
    name = String(name);
    if (name === "") throw new TypeError("Key name cannot be empty.");
    if (name === ".") throw new TypeError('"." is not allowed as a key name.');
    if (name === "..") throw new TypeError('".." is not allowed as a key name.');
    const n = utf8Length(name);
    if (n > 512) throw kvFailed(method, 414, `UTF-8 encoded length of ${n} exceeds key length limit of 512.`);
    return name;
  };

  // getOptions splits get()'s second argument into its type and cacheTtl.
  const getOptions = (options) => {
    let type, cacheTtl;
    if (typeof options === "string") type = options;
    else if (options !== undefined && options !== null) {
      if (options.type !== undefined) type = String(options.type);
      if (options.cacheTtl !== undefined) cacheTtl = Math.trunc(Number(options.cacheTtl));
    }
    return { type, cacheTtl };
  };

  const checkCacheTtl = (op, cacheTtl) => {
    if (cacheTtl !== undefined && !(cacheTtl >= 30)) {
      throw kvFailed(op, 400, `Invalid cache_ttl of ${cacheTtl}. Cache TTL must be at least 30.`);
    }
  };

  const textOf = (v) => (typeof v === "string" ? v : new TextDecoder().decode(v));

  // convert turns a stored value (a string when it was asked as text and
  // is valid UTF-8, else an ArrayBuffer) into the requested type.
  const convert = (v, type) => {
    switch (type === undefined ? "text" : type) {
      case "text":
        return textOf(v);
      case "json":
        return JSON.parse(textOf(v));
      case "arrayBuffer":
        return v;
      case "stream":
        return new Response(v).body;
    }
    throw new TypeError('Unknown response type. Possible types are "text", "arrayBuffer", "json", and "stream".');
  };

  const wantsText = (type) => type === undefined || type === "text" || type === "json";

  const getOne = async (name, options, withMetadata) => {
    name = keyName("GET", name);
    const { type, cacheTtl } = getOptions(options);
    checkCacheTtl("GET", cacheTtl);
    const r = await native.get(name, wantsText(type));
    if (r === null) return withMetadata ? { value: null, metadata: null, cacheStatus: null } : null;
    const value = convert(r[0], type);
    if (!withMetadata) return value;
    return { value, metadata: r[1] === null ? null : JSON.parse(r[1]), cacheStatus: null };
  };

  const getBulk = async (names, options, withMetadata) => {
    names = Array.from(names, String);
    const { type, cacheTtl } = getOptions(options);
    if (type !== undefined && type !== "" && type !== "text" && type !== "json") {
      throw kvFailed("GET_BULK", 400, `"${type}" is not a valid type. Use "json" or "text"`);
    }
    checkCacheTtl("GET_BULK", cacheTtl);
    const rows = await native.getBulk(names);
    const out = new Map();
    for (let i = 0; i < names.length; i++) {
      const r = rows[i];
      if (r === null) {
        out.set(names[i], null);
        continue;
      }
      let value = textOf(r[0]);
      if (type === "json") {
        try {
          value = JSON.parse(value);
        } catch {
          throw kvFailed("GET_BULK", 400, "At least one of the requested keys corresponds to a non-json value");
        }
      }
      out.set(names[i], withMetadata ? { value, metadata: r[1] === null ? null : JSON.parse(r[1]) } : value);
    }
    return out;
  };

  const badValue = () =>
    new TypeError("KV put() accepts only strings, ArrayBuffers, ArrayBufferViews, and ReadableStreams as values.");

  // body is what put() sends: a string, or a Uint8Array of its own.
  const body = async (value) => {
    if (typeof value === "string") return value;
    if (value === null || (typeof value !== "object" && typeof value !== "function")) return String(value);
    if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
    if (ArrayBuffer.isView(value)) {
      return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
    }
    if (value instanceof ReadableStream) return new Uint8Array(await new Response(value).arrayBuffer());
    throw badValue();
  };

  const optionalInt = (v) => (v === undefined || v === null ? undefined : Math.trunc(Number(v)));

  class KvNamespace {
    get(name, options) {
      if (Array.isArray(name)) return getBulk(name, options, false);
      return getOne(name, options, false);
    }

    getWithMetadata(name, options) {
      if (Array.isArray(name)) return getBulk(name, options, true);
      return getOne(name, options, true);
    }

    async put(name, value, options) {
      name = keyName("PUT", name);
      let expiration, expirationTtl, metadata;
      if (options !== undefined && options !== null) {
        expiration = optionalInt(options.expiration);
        expirationTtl = optionalInt(options.expirationTtl);
        if (options.metadata !== undefined && options.metadata !== null) {
          metadata = JSON.stringify(options.metadata);
        }
      }
      const b = await body(value);
      await native.put(name, b, expiration, expirationTtl, metadata);
    }

    async delete(name) {
      await native.delete(keyName("DELETE", name));
    }

    async list(options) {
      let prefix = "", cursor = "", limit = 0;
      if (options !== undefined && options !== null) {
        if (options.prefix !== undefined && options.prefix !== null) prefix = String(options.prefix);
        if (options.cursor !== undefined && options.cursor !== null) cursor = String(options.cursor);
        if (options.limit !== undefined) {
          limit = Math.trunc(Number(options.limit)) || 0;
          if (limit < 0) limit = 0;
        }
      }
      const res = JSON.parse(await native.list(prefix, cursor, limit));
      res.cacheStatus = null;
      return res;
    }
  }

  return new KvNamespace();
})
