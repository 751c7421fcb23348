const err = (e) => ({ error: { name: e?.name, message: e?.message } });
const attempt = async (f) => {
  try {
    return await f();
  } catch (e) {
    return err(e);
  }
};
const protoNames = (o) => {
  const out = [];
  for (let p = Object.getPrototypeOf(o); p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    out.push(Object.getOwnPropertyNames(p).sort());
  }
  return out;
};
const setup = (env) =>
  env.B.put("a.txt", "hello r2", {
    httpMetadata: { contentType: "text/plain", cacheControl: "no-store" },
    customMetadata: { z: "1", a: "2" },
    sha256: "f18d11218e7814319b7a555383d8eaa42b97ae6ec36594f37f1e256b0a386b12",
  });

const routes = {
  async "/keys"(env) {
    const put = await setup(env);
    const head = await env.B.head("a.txt");
    const get = await env.B.get("a.txt");
    const ranged = await env.B.get("a.txt", { range: { offset: 1, length: 3 } });
    const list = await env.B.list({ include: ["httpMetadata", "customMetadata"] });
    const bare = await env.B.list();
    return {
      put: Object.keys(put),
      head: Object.keys(head),
      get: Object.keys(get),
      ranged: Object.keys(ranged),
      range: ranged.range,
      list_keys: Object.keys(list),
      list_object: Object.keys(list.objects[0]),
      list_http: list.objects[0].httpMetadata,
      list_custom: list.objects[0].customMetadata,
      bare_http: bare.objects[0].httpMetadata,
      bare_custom: bare.objects[0].customMetadata,
      custom_order: Object.keys(get.customMetadata),
      http: get.httpMetadata,
      "body in get": "body" in get,
      "body in head": "body" in head,
      own_body: Object.prototype.hasOwnProperty.call(get, "body"),
      text: await get.text(),
      ranged_text: await ranged.text(),
    };
  },
  async "/values"(env) {
    await setup(env);
    const o = await env.B.get("a.txt");
    const c = o.checksums;
    return {
      checksum_keys: Object.keys(c),
      md5_type: Object.prototype.toString.call(c.md5),
      md5_len: c.md5?.byteLength ?? null,
      sha256_len: c.sha256?.byteLength ?? null,
      json: c.toJSON(),
      stringify_checksums: JSON.parse(JSON.stringify(c)),
      uploaded_is_date: o.uploaded instanceof Date,
      uploaded_close: Math.abs(o.uploaded.getTime() - Date.now()) < 60000,
      size_type: typeof o.size,
      http_etag: o.httpEtag === `"${o.etag}"`,
      version_type: typeof o.version,
      storage_class: o.storageClass,
      stringify_keys: Object.keys(JSON.parse(JSON.stringify(o))),
      body_is_stream: o.body instanceof ReadableStream,
      same_body: o.body === o.body,
      tag: Object.prototype.toString.call(o),
      proto_names: protoNames(o),
      head_proto_names: protoNames(await env.B.head("a.txt")),
      checksums_proto_names: protoNames(c),
    };
  },
  async "/undefined-values"(env) {
    const put = await setup(env);
    const head = await env.B.head("a.txt");
    const get = await env.B.get("a.txt");
    const list = await env.B.list({ limit: 1 });
    const last = await env.B.list({ startAfter: "a.txt" });
    const kinds = (o) => Object.fromEntries(Object.keys(o).map((k) => [k, o[k] === undefined ? "undefined" : o[k] === null ? "null" : typeof o[k]]));
    return {
      put: kinds(put), head: kinds(head), get: kinds(get), get_range: get.range ?? "none",
      checksums: kinds(get.checksums), list: kinds(list), last: kinds(last), last_objects: last.objects.length,
      tags: [put, head, get, get.checksums, list.objects[0]].map((o) => Object.prototype.toString.call(o)),
      ctor_names: [put, head, get, get.checksums].map((o) => o.constructor.name),
      descriptor: Object.getOwnPropertyDescriptor(get, "key"),
      descriptors: Object.fromEntries(Object.entries(Object.getOwnPropertyDescriptors(head)).map(([k, d]) => [k, [d.writable, d.enumerable, d.configurable]])),
      list_object: kinds(list.objects[0]),
      ranges: [head.range ?? "none", list.objects[0].range ?? "none"],
      list_descriptor: ((d) => [d.writable, d.enumerable, d.configurable])(Object.getOwnPropertyDescriptor(list, "objects")),
    };
  },
  async "/constructors"(env) {
    await setup(env);
    const o = await env.B.get("a.txt");
    const h = await env.B.head("a.txt");
    return {
      get_ctor: await attempt(() => new o.constructor()),
      head_ctor: await attempt(() => new h.constructor()),
      checksums_ctor: await attempt(() => new o.checksums.constructor()),
      same_proto_chain: Object.getPrototypeOf(Object.getPrototypeOf(o)) === Object.getPrototypeOf(h),
      instanceof_head: o instanceof h.constructor,
      text_on_plain: await attempt(() => Object.getPrototypeOf(o).text.call({})),
      body_on_plain: await attempt(() => Object.getOwnPropertyDescriptor(Object.getPrototypeOf(o), "body").get.call({})),
    };
  },
  async "/used"(env) {
    await setup(env);
    const out = {};
    const a = await env.B.get("a.txt");
    out.before = [a.bodyUsed, a.body.locked];
    out.text = await a.text();
    out.after = [a.bodyUsed, a.body.locked];
    out.again = await attempt(() => a.text());
    out.again_ab = await attempt(() => a.arrayBuffer());
    const b = await env.B.get("a.txt");
    const reader = b.body.getReader();
    out.locked_read = await attempt(() => b.text());
    const first = await reader.read();
    out.reader_first = [first.done, first.value?.byteLength ?? null];
    out.reader_used = b.bodyUsed;
    const c = await env.B.get("a.txt");
    // (only the name is compared here; json-errors records the texts)
    out.json_error = (await attempt(() => c.json())).error?.name;
    out.json_used = c.bodyUsed;
    const d = await env.B.get("a.txt");
    out.bytes = Array.from(await d.bytes()).length;
    out.bytes_used = d.bodyUsed;
    const e = await env.B.get("a.txt");
    const blob = await e.blob();
    out.blob = [blob.size, blob.type];
    const f = await env.B.get("a.txt");
    const r = new Response(f.body);
    out.wrapped = [f.bodyUsed, f.body.locked, await r.text(), f.bodyUsed, f.body.locked];
    out.wrapped_again = await attempt(() => f.text());
    return out;
  },
  async "/copy"(env) {
    await setup(env);
    const src = await env.B.get("a.txt");
    const put = await env.B.put("b.txt", src.body);
    const after = [src.bodyUsed, src.body.locked];
    const back = await env.B.get("b.txt");
    return { size: put.size, after, text: await back.text(), again: await attempt(() => src.text()) };
  },
  async "/serve"(env) {
    await setup(env);
    const o = await env.B.get("a.txt");
    return new Response(o.body, { headers: { "x-size": String(o.size) } });
  },
};

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const route = routes[url.pathname];
    if (!route) return new Response("no such route", { status: 404 });
    const out = await route(env, url, request);
    return out instanceof Response ? out : Response.json(out);
  },
};
