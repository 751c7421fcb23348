// The Cache API: caches.default and caches.open(name), on the node's
// store (native.cachePut/cacheMatch/cacheDelete, cache.go). The argument
// rules and their texts are workerd's.

const notImplemented = (m) => () =>
  Promise.reject(new Error(`Failed to execute '${m}' on 'Cache': the method is not implemented.`));

// cacheKey is the request a key names (a URL string or a Request) and
// the URL it is stored under (without its fragment).
function cacheKey(request) {
  const req = request instanceof Request ? request : new Request(request);
  const url = req.url;
  const hash = url.indexOf("#");
  return [req, hash < 0 ? url : url.slice(0, hash)];
}

class Cache {
  #ns;
  constructor(key, ns) {
    if (key !== internal.kCreate) throw new TypeError("Illegal constructor");
    this.#ns = ns;
  }
  async match(request, options = undefined) {
    const [req, url] = cacheKey(request);
    if (req.method !== "GET" && !(options && options.ignoreMethod)) return undefined;
    const hit = native.cacheMatch(this.#ns, url, internal.headersFlat(req.headers));
    if (hit === null) return undefined;
    const body = hit.status === 304 || hit.status === 204 ? null : hit.body;
    return internal.makeResponse(hit.status, "", hit.headers, body);
  }
  async put(request, response) {
    const [req, url] = cacheKey(request);
    if (!(response instanceof Response)) {
      throw new TypeError("Failed to execute 'put' on 'Cache': parameter 2 is not of type 'Response'.");
    }
    if (req.method !== "GET") throw new TypeError("Cannot cache response to non-GET request.");
    if (response.status === 206) throw new TypeError("Cannot cache response to a range request (206 Partial Content).");
    const vary = response.headers.get("vary");
    if (vary !== null && vary.split(",").some((v) => v.trim() === "*")) {
      throw new TypeError("Cannot cache response with 'Vary: *' header.");
    }
    if (response.bodyUsed) {
      throw new TypeError("Body has already been used. It can only be used once. Use tee() first if you need to read it twice.");
    }
    const body = await response.arrayBuffer();
    native.cachePut(this.#ns, url, response.status, internal.headersFlat(response.headers), body);
    return undefined;
  }
  async delete(request, options = undefined) {
    const [req, url] = cacheKey(request);
    if (req.method !== "GET" && !(options && options.ignoreMethod)) return false;
    return native.cacheDelete(this.#ns, url);
  }
}
for (const m of ["add", "addAll", "keys", "matchAll"]) {
  Object.defineProperty(Cache.prototype, m, { value: notImplemented(m), writable: true, configurable: true });
}
Object.defineProperty(Cache.prototype, Symbol.toStringTag, { value: "Cache", configurable: true });

let defaultCache = null;
class CacheStorage {
  constructor(key) {
    if (key !== internal.kCreate) throw new TypeError("Illegal constructor");
  }
  get default() {
    if (defaultCache === null) defaultCache = new Cache(internal.kCreate, "");
    return defaultCache;
  }
  async open(cacheName) {
    return new Cache(internal.kCreate, "named:" + String(cacheName));
  }
}
Object.defineProperty(CacheStorage.prototype, Symbol.toStringTag, { value: "CacheStorage", configurable: true });

internal.expose("Cache", Cache);
internal.expose("CacheStorage", CacheStorage);
internal.expose("caches", new CacheStorage(internal.kCreate));
