// The Cache API: caches.default and caches.open(name), with
// Cloudflare's rules on what is stored.

const json = (v) => new Response(JSON.stringify(v), { headers: { "content-type": "application/json" } });
const err = (e) => ({ name: e?.name, message: e?.message });
async function settle(f) {
  try { return { ok: await f() }; } catch (e) { return { err: err(e) }; }
}
const K = (p) => "https://cache.test" + p;

async function describe(r) {
  if (r === undefined) return "miss";
  return { status: r.status, body: await r.text(), cc: r.headers.get("cache-control"), x: r.headers.get("x-v"),
    cr: r.headers.get("content-range"), etag: r.headers.get("etag"), status2: r.headers.get("cf-cache-status") };
}
const resp = (body, headers = {}, status = 200) => new Response(body, { status, headers });

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const p = url.pathname;
    const c = caches.default;
    if (p === "/shape") {
      return json({
        type: typeof caches, defaultIsCache: c instanceof Cache, openType: typeof caches.open,
        same: caches.default === caches.default,
        ctor: (() => { try { new Cache(); return "constructed"; } catch (e) { return err(e); } })(),
        keys: typeof c.keys, add: typeof c.add,
        named: (await caches.open("x")) instanceof Cache,
        emptyMatch: await describe(await c.match(K("/nothing"))),
      });
    }
    if (p === "/put-basic") {
      const r1 = await settle(() => c.put(K("/a"), resp("A", { "cache-control": "max-age=300", "x-v": "1" })));
      return json({ put: r1, hit: await describe(await c.match(K("/a"))), req: await describe(await c.match(new Request(K("/a")))) });
    }
    if (p === "/rules") {
      const out = {};
      const cases = {
        nostore: { "cache-control": "no-store" },
        private: { "cache-control": "private" },
        nocache: { "cache-control": "no-cache" },
        maxage0: { "cache-control": "max-age=0" },
        smaxage: { "cache-control": "max-age=0, s-maxage=300" },
        none: {},
        expiresPast: { "expires": "Thu, 01 Jan 1970 00:00:00 GMT" },
        expiresFuture: { "expires": "Thu, 01 Jan 2099 00:00:00 GMT" },
        cookie: { "cache-control": "max-age=300", "set-cookie": "a=b" },
        cookiePrivate: { "cache-control": "max-age=300, private=Set-Cookie", "set-cookie": "a=b" },
        publicMaxage: { "cache-control": "public, max-age=300" },
      };
      for (const [k, h] of Object.entries(cases)) {
        const put = await settle(() => c.put(K("/r/" + k), resp(k, h)));
        const m = await c.match(K("/r/" + k));
        out[k] = { put: put.err ?? "ok", hit: m === undefined ? "miss" : { body: await m.text(), cookie: m.headers.get("set-cookie") } };
      }
      const st = {};
      for (const s of [201, 204, 301, 404, 500]) {
        const put = await settle(() => c.put(K("/s/" + s), resp(s === 204 || s === 301 ? null : "s" + s, { "cache-control": "max-age=300", ...(s === 301 ? { location: "/x" } : {}) }, s)));
        const m = await c.match(K("/s/" + s));
        st[s] = { put: put.err ?? "ok", hit: m === undefined ? "miss" : m.status };
      }
      out.statuses = st;
      return json(out);
    }
    if (p === "/errors") {
      return json({
        post: await settle(() => c.put(new Request(K("/p"), { method: "POST", body: "x" }), resp("x", { "cache-control": "max-age=60" }))),
        head: await settle(() => c.put(new Request(K("/p"), { method: "HEAD" }), resp("x", { "cache-control": "max-age=60" }))),
        partial: await settle(() => c.put(K("/p"), resp("x", { "cache-control": "max-age=60", "content-range": "bytes 0-0/2" }, 206))),
        varyStar: await settle(() => c.put(K("/p"), resp("x", { "cache-control": "max-age=60", vary: "*" }))),
        used: await settle(async () => { const r = resp("x", { "cache-control": "max-age=60" }); await r.text(); return c.put(K("/p"), r); }),
        notResponse: await settle(() => c.put(K("/p"), "text")),
        badUrl: await settle(() => c.put("not a url", resp("x"))),
        ws: await settle(() => c.match(K("/p"), { ignoreMethod: true })).then((x) => x.err ?? "ok"),
        putReturns: await settle(async () => String(await c.put(K("/ret"), resp("r", { "cache-control": "max-age=60" })))),
      });
    }
    if (p === "/methods") {
      await c.put(K("/m"), resp("M", { "cache-control": "max-age=300" }));
      return json({
        post: await describe(await c.match(new Request(K("/m"), { method: "POST", body: "x" }))),
        postIgnore: await describe(await c.match(new Request(K("/m"), { method: "POST", body: "x" }), { ignoreMethod: true })),
        head: await describe(await c.match(new Request(K("/m"), { method: "HEAD" }))),
        query: await describe(await c.match(K("/m?x=1"))),
        hash: await describe(await c.match(K("/m#frag"))),
        del: await c.delete(K("/m")),
        delAgain: await c.delete(K("/m")),
        after: await describe(await c.match(K("/m"))),
        delPost: await c.delete(new Request(K("/m"), { method: "POST", body: "x" })),
      });
    }
    if (p === "/named") {
      const a = await caches.open("one");
      const b = await caches.open("two");
      await a.put(K("/n"), resp("one", { "cache-control": "max-age=300" }));
      return json({ a: await describe(await a.match(K("/n"))), b: await describe(await b.match(K("/n"))),
        def: await describe(await c.match(K("/n"))), again: await describe(await (await caches.open("one")).match(K("/n"))) });
    }
    if (p === "/vary") {
      await c.put(new Request(K("/v"), { headers: { "accept-language": "en" } }), resp("en", { "cache-control": "max-age=300", vary: "Accept-Language" }));
      return json({
        same: await describe(await c.match(new Request(K("/v"), { headers: { "accept-language": "en" } }))),
        other: await describe(await c.match(new Request(K("/v"), { headers: { "accept-language": "fr" } }))),
        none: await describe(await c.match(K("/v"))),
      });
    }
    if (p === "/range") {
      await c.put(K("/g"), resp("0123456789", { "cache-control": "max-age=300", etag: '"v1"' }));
      const r = (h) => c.match(new Request(K("/g"), { headers: h }));
      return json({
        range: await describe(await r({ range: "bytes=2-4" })),
        suffix: await describe(await r({ range: "bytes=-3" })),
        bad: await describe(await r({ range: "bytes=50-60" })),
        inm: await describe(await r({ "if-none-match": '"v1"' })),
        inmOther: await describe(await r({ "if-none-match": '"v2"' })),
      });
    }
    if (p === "/more") {
      const st = {};
      for (const s of [203, 204, 302, 303, 307, 308, 400, 403, 405, 410, 414, 501, 503]) {
        const put = await settle(() => c.put(K("/s2/" + s), resp(s === 204 ? null : "b", { "cache-control": "max-age=300", location: "/x" }, s)));
        const m = await c.match(K("/s2/" + s));
        st[s] = { put: put.err ?? "ok", hit: m === undefined ? "miss" : m.status };
      }
      const un = {};
      for (const m of ["add", "addAll", "keys", "matchAll"]) un[m] = await settle(() => c[m](K("/u")));
      const mix = {};
      for (const [k, cc] of Object.entries({ storeAndAge: "max-age=300, no-store", upper: "MAX-AGE=300", spaces: " max-age = 300 ", smaxageZero: "max-age=300, s-maxage=0", privateField: 'private="x-a"', mustRevalidate: "max-age=300, must-revalidate", noCacheField: 'max-age=300, no-cache="set-cookie"', noCacheFieldX: 'max-age=300, no-cache="x-a"' })) {
        await c.put(K("/mix/" + k), resp(k, { "cache-control": cc, "x-a": "1", ...(k.startsWith("noCache") ? { "set-cookie": "z=1" } : {}) }));
        const m = await c.match(K("/mix/" + k));
        mix[k] = m === undefined ? "miss" : { body: await m.text(), xa: m.headers.get("x-a"), cookie: m.headers.get("set-cookie") };
      }
      return json({ statuses: st, unimplemented: un, mix });
    }
    if (p === "/ttl-put") {
      await c.put(K("/t"), resp("T", { "cache-control": "max-age=1" }));
      return json(await describe(await c.match(K("/t"))));
    }
    if (p === "/ttl-check") return json(await describe(await c.match(K("/t"))));
    if (p === "/replace") {
      await c.put(K("/x"), resp("old", { "cache-control": "max-age=300" }));
      await c.put(K("/x"), resp("new", { "cache-control": "max-age=300" }));
      return json(await describe(await c.match(K("/x"))));
    }
    return new Response("not found", { status: 404 });
  },
};
