// Static-asset behaviour of workerd's asset server (Miniflare), for
// comparison with celld's (assets package; server.TestAssets_* and
// assets.TestRouter_* assert the same answers). The recorder cannot drive
// an "assets" config, so this runs the scenario itself:
//
//   node internal/conformance/assets/probe.mjs DIR
//
// where DIR/public holds index.html, about.html, blog/index.html, app.js,
// s.css, data.unknownext, d.json, i.svg, t.txt (any content). Observed on
// Miniflare 4.20260426 (workerd 2026-04-26), compatibility date 2026-04-01:
// .js is "text/javascript; charset=utf-8", .html/.css/.txt carry
// charset=utf-8, .json/.svg do not, an unknown extension has no
// Content-Type; ETag is 32 hex digits, quoted; Cache-Control "public,
// max-age=0, must-revalidate"; If-None-Match gives 304; auto-trailing-slash
// 307s (/index.html → /, /about.html → /about keeping the query, /about/ →
// /about, /blog → /blog/); a miss goes to the Worker unless it is a
// navigation (Sec-Fetch-Mode: navigate, which fetch() clients cannot set:
// hence the raw node:http requests), which gets index.html under
// single-page-application; env.ASSETS.fetch of a miss gets index.html, of a
// POST 405 without Allow. Range is ignored locally (200, whole body);
// celld answers 206 as the brief asks (docs/compatibility.md).
const { Miniflare } = await import(process.env.MINIFLARE ?? "/work/rec/node_modules/miniflare/dist/src/index.js");
const mf = new Miniflare({
  modules: true,
  compatibilityDate: "2026-04-01",
  script: `export default { async fetch(req, env) {
    const u = new URL(req.url);
    if (u.pathname === "/api/asset") { const r = await env.ASSETS.fetch(new URL("/app.js", req.url)); return new Response(r.status + " " + r.headers.get("content-type") + " " + (await r.text())); }
    if (u.pathname === "/api/miss") { const r = await env.ASSETS.fetch("http://x/nope/deep"); return new Response(r.status + " " + (await r.text()).slice(0, 15)); }
    if (u.pathname === "/api/post") { const r = await env.ASSETS.fetch("http://x/app.js", {method: "POST"}); return new Response(r.status + " " + r.headers.get("allow")); }
    return new Response("worker " + u.pathname, {status: 404}); } }`,
  assets: { directory: process.argv[2] + "/public", binding: "ASSETS",
    routerConfig: { has_user_worker: true },
    assetConfig: { html_handling: "auto-trailing-slash", not_found_handling: "single-page-application", compatibility_date: "2026-04-01" } },
});
const cases = [
  ["/", {}], ["/index.html", {}], ["/about", {}], ["/about.html", {}], ["/about/", {}], ["/blog", {}], ["/blog/", {}], ["/blog/index.html", {}],
  ["/app.js", {}], ["/s.css", {}], ["/data.unknownext", {}], ["/d.json", {}], ["/i.svg", {}], ["/t.txt", {}],
  ["/app.js", { Range: "bytes=0-6" }], ["/app.js", { Range: "bytes=100-200" }],
  ["/nope", {}], ["/nope", { "Sec-Fetch-Mode": "navigate" }], ["/about.html?x=1", {}],
  ["/api/asset", {}], ["/api/miss", {}], ["/api/post", {}],
];
const base = await mf.ready;
const http = await import("node:http");
const raw = (p, h) => new Promise((res) => http.get(new URL(p, base), { headers: h }, (r) => { let b = ""; r.on("data", (c) => b += c); r.on("end", () => res({ status: r.statusCode, ct: r.headers["content-type"], cr: r.headers["content-range"], body: b.slice(0, 30) })); }));
console.log("RAW navigate", JSON.stringify(await raw("/nope", { "Sec-Fetch-Mode": "navigate" })));
console.log("RAW navigate deep", JSON.stringify(await raw("/a/b/c", { "Sec-Fetch-Mode": "navigate", Accept: "text/html" })));
console.log("RAW range", JSON.stringify(await raw("/app.js", { Range: "bytes=0-6" })));
console.log("RAW nonav", JSON.stringify(await raw("/nope", {})));
let etag;
for (const [p, h] of cases) {
  const r = await mf.dispatchFetch("http://localhost" + p, { headers: h, redirect: "manual" });
  const b = await r.text();
  if (p === "/app.js" && !etag) etag = r.headers.get("etag");
  console.log(JSON.stringify({ p, h, status: r.status, ct: r.headers.get("content-type"), etag: r.headers.get("etag"), cc: r.headers.get("cache-control"), loc: r.headers.get("location"), cr: r.headers.get("content-range"), body: b.slice(0, 30) }));
}
const r = await mf.dispatchFetch("http://localhost/app.js", { headers: { "If-None-Match": etag } });
console.log(JSON.stringify({ p: "/app.js If-None-Match", status: r.status, etag: r.headers.get("etag") }));
const hd = await mf.dispatchFetch("http://localhost/app.js", { method: "HEAD" });
console.log(JSON.stringify({ p: "HEAD /app.js", status: hd.status, len: hd.headers.get("content-length"), body: (await hd.text()).length }));
await mf.dispose();
