const err = (e) => ({ error: { name: e?.name, message: e?.message } });
const attempt = async (f) => {
  try {
    return await f();
  } catch (e) {
    return err(e);
  }
};
const view = (o) =>
  o === null
    ? null
    : {
        key: o.key,
        size: o.size,
        etag: o.etag,
        has_body: "body" in o,
        range: o.range ?? null,
        http: o.httpMetadata ?? null,
        custom: o.customMetadata ?? null,
        checksums: o.checksums?.toJSON?.() ?? null,
        storage_class: o.storageClass,
      };
const read = async (o) => (o === null ? null : "body" in o ? { ...view(o), text: await o.text() } : view(o));

async function multipart(env) {
  const up = await env.B.createMultipartUpload("big.bin", { httpMetadata: { contentType: "application/x-big" }, customMetadata: { p: "q" } });
  const p1 = await up.uploadPart(1, new Uint8Array(5 * 1024 * 1024).fill(97));
  const p2 = await up.uploadPart(2, "tail");
  const obj = await up.complete([p1, p2]);
  const got = await env.B.get("big.bin", { range: { suffix: 4 } });
  const resumed = env.B.resumeMultipartUpload("other.bin", "not-an-upload");
  const ab = await env.B.createMultipartUpload("gone.bin");
  await ab.abort();
  return {
    keys: [up.key, typeof up.uploadId],
    parts: [p1.partNumber, p2.partNumber, typeof p1.etag],
    size: obj.size,
    etag_suffix: obj.etag.slice(-2),
    http: obj.httpMetadata,
    custom: obj.customMetadata,
    tail: await got.text(),
    resumed_key: resumed.key,
    resumed_part: await attempt(async () => (await resumed.uploadPart(1, "x")).partNumber),
    aborted_part: await attempt(async () => (await ab.uploadPart(1, "x")).partNumber),
    too_small: await attempt(async () => {
      const u = await env.B.createMultipartUpload("small.bin");
      const a = await u.uploadPart(1, "aaa");
      const b = await u.uploadPart(2, "bbb");
      return view(await u.complete([a, b]));
    }),
    gone: await env.B.head("gone.bin"),
  };
}

const routes = {
  async "/setup"(env) {
    const a = await env.B.put("a.txt", "0123456789", { httpMetadata: { contentType: "text/plain" }, customMetadata: { k: "v" } });
    for (const k of ["dir/", "dir/x", "dir/y/z", "e1", "e2", "e3"]) await env.B.put(k, k);
    return view(a);
  },
  async "/ranges"(env) {
    const out = {};
    const cases = {
      off_len: { offset: 2, length: 3 },
      off: { offset: 7 },
      len: { length: 4 },
      suffix: { suffix: 3 },
      suffix_big: { suffix: 50 },
      len_big: { offset: 8, length: 100 },
      hdr: new Headers({ range: "bytes=2-4" }),
      hdr_suffix: new Headers({ range: "bytes=-3" }),
      hdr_open: new Headers({ range: "bytes=6-" }),
    };
    for (const [name, range] of Object.entries(cases)) out[name] = await attempt(async () => read(await env.B.get("a.txt", { range })));
    return out;
  },
  async "/range-errors"(env) {
    const out = {};
    const cases = {
      past_end: { offset: 10 },
      zero_len: { offset: 0, length: 0 },
      neg_suffix: { suffix: -1 },
      suffix_and_offset: { offset: 1, suffix: 2 },
    };
    for (const [name, range] of Object.entries(cases)) out[name] = await attempt(async () => read(await env.B.get("a.txt", { range })));
    return out;
  },
  async "/conditionals"(env) {
    const head = await env.B.head("a.txt");
    const past = new Date(head.uploaded.getTime() - 3600e3), future = new Date(head.uploaded.getTime() + 3600e3);
    const cases = {
      etag_match: { etagMatches: head.etag },
      etag_match_quoted: { etagMatches: head.httpEtag },
      etag_miss: { etagMatches: "0000" },
      etag_none_match: { etagDoesNotMatch: head.etag },
      etag_none_miss: { etagDoesNotMatch: "0000" },
      wildcard: { etagMatches: "*" },
      after_past: { uploadedAfter: past },
      after_future: { uploadedAfter: future },
      before_future: { uploadedBefore: future },
      before_past: { uploadedBefore: past },
      hdr_inm: new Headers({ "if-none-match": head.httpEtag }),
      hdr_im_miss: new Headers({ "if-match": '"abc"' }),
      hdr_ims_future: new Headers({ "if-modified-since": future.toUTCString() }),
    };
    const out = {};
    for (const [name, onlyIf] of Object.entries(cases)) {
      out[name] = await attempt(async () => {
        const o = await env.B.get("a.txt", { onlyIf });
        return { has_body: o !== null && "body" in o, is_null: o === null };
      });
    }
    out.missing_with_cond = await attempt(async () => (await env.B.get("nope", { onlyIf: { etagMatches: "x" } })) === null);
    return out;
  },
  async "/conditional-put"(env) {
    const head = await env.B.head("e1");
    return {
      wrong_etag: await attempt(async () => view(await env.B.put("e1", "new", { onlyIf: { etagMatches: "0000" } }))),
      none_match_star_existing: await attempt(async () => view(await env.B.put("e1", "new", { onlyIf: { etagDoesNotMatch: "*" } }))),
      none_match_star_new: await attempt(async () => (await env.B.put("fresh", "new", { onlyIf: { etagDoesNotMatch: "*" } }))?.key ?? null),
      right_etag: await attempt(async () => (await env.B.put("e1", "newer", { onlyIf: { etagMatches: head.etag } }))?.size ?? null),
      after: await (await env.B.get("e1")).text(),
    };
  },
  async "/list"(env) {
    const pages = [];
    let cursor;
    for (let i = 0; i < 10; i++) {
      const r = await env.B.list({ limit: 3, cursor });
      pages.push({ keys: r.objects.map((o) => o.key), truncated: r.truncated, has_cursor: typeof r.cursor === "string" });
      if (!r.truncated) break;
      cursor = r.cursor;
    }
    const delim = await env.B.list({ delimiter: "/" });
    const inDir = await env.B.list({ prefix: "dir/", delimiter: "/" });
    const after = await env.B.list({ startAfter: "dir/x" });
    const plain = await env.B.list({ prefix: "a" });
    const dpages = [];
    cursor = undefined;
    for (let i = 0; i < 10; i++) {
      const r = await env.B.list({ limit: 1, delimiter: "/", cursor });
      dpages.push({ keys: r.objects.map((o) => o.key), prefixes: r.delimitedPrefixes, truncated: r.truncated });
      if (!r.truncated) break;
      cursor = r.cursor;
    }
    return {
      pages,
      dpages,
      delim: { keys: delim.objects.map((o) => o.key), prefixes: delim.delimitedPrefixes },
      in_dir: { keys: inDir.objects.map((o) => o.key), prefixes: inDir.delimitedPrefixes },
      after: after.objects.map((o) => o.key),
      no_include: { http: plain.objects[0].httpMetadata ?? "absent", custom: plain.objects[0].customMetadata ?? "absent" },
      limit_zero: await attempt(async () => (await env.B.list({ limit: 0 })).objects.length),
      limit_big: await attempt(async () => (await env.B.list({ limit: 1001 })).objects.length),
      trailing_slash_head: view(await env.B.head("dir/")),
    };
  },
  async "/checksums"(env) {
    const md5 = "781e5e245d69b566979b86e28d23f2c7"; // md5("0123456789")
    const sha256 = "84d89877f0d4041efb6bf91a16f0248f2fd573e6af05c19f96bedb9f882f7882";
    return {
      md5_ok: await attempt(async () => view(await env.B.put("c1", "0123456789", { md5 }))),
      sha256_ok: await attempt(async () => view(await env.B.put("c2", "0123456789", { sha256 }))),
      md5_bad: await attempt(async () => view(await env.B.put("c3", "0123456789", { md5: "00".repeat(16) }))),
      two: await attempt(async () => view(await env.B.put("c4", "x", { md5, sha256 }))),
      c3_after: view(await env.B.head("c3")),
    };
  },
  async "/delete-many"(env) {
    await env.B.delete(["e2", "e3", "never-there"]);
    return {
      e2: await env.B.head("e2"),
      e3: await env.B.head("e3"),
      too_many: await attempt(async () => env.B.delete(Array.from({ length: 1001 }, (_, i) => `k${i}`))),
    };
  },
  async "/multipart"(env) {
    return attempt(() => multipart(env));
  },
  async "/errors"(env) {
    const long = "k".repeat(1025);
    return {
      long_put: await attempt(async () => view(await env.B.put(long, "x"))),
      long_get: await attempt(async () => view(await env.B.get(long))),
      big_meta: await attempt(async () => view(await env.B.put("m", "x", { customMetadata: { k: "v".repeat(3000) } }))),
      bad_value: await attempt(async () => view(await env.B.put("v", 42))),
      null_value: await attempt(async () => (await env.B.put("nullv", null)).size),
      blob_value: await attempt(async () => (await env.B.put("blobv", new Blob(["abc"]))).size),
      stream_value: await attempt(async () => {
        const { readable, writable } = new FixedLengthStream(5);
        const w = writable.getWriter();
        w.write(new TextEncoder().encode("hello"));
        w.close();
        return (await env.B.put("streamv", readable)).size;
      }),
      stream_text: await (await env.B.get("streamv"))?.text(),
    };
  },
  async "/serve-range"(env, url, request) {
    const o = await env.B.get("a.txt", { range: request.headers, onlyIf: request.headers });
    if (o === null) return new Response("missing", { status: 404 });
    const h = new Headers();
    o.writeHttpMetadata(h);
    h.set("etag", o.httpEtag);
    if (!("body" in o)) return new Response(null, { status: 304, headers: h });
    return new Response(o.body, { status: o.range && o.range.length !== o.size ? 206 : 200, headers: h });
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
