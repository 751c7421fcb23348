const errInfo = (e) => ({ name: e?.name });
const parts = ["protocol", "username", "password", "hostname", "port", "pathname", "search", "hash"];
const shape = (p) => Object.fromEntries([...parts.map((k) => [k, p[k]]), ["hasRegExpGroups", p.hasRegExpGroups]]);
const groupsOf = (r) => (r === null ? null : Object.fromEntries(parts.map((k) => [k, [r[k].input, r[k].groups]])));

async function run(cases) {
  const out = {};
  for (const [name, fn] of Object.entries(cases)) {
    try {
      out[name] = await fn();
    } catch (e) {
      out[name] = { error: errInfo(e) };
    }
  }
  return out;
}

const PATTERNS = [
  ["https://example.com/books/:id"],
  ["https://*.example.com/*"],
  ["/api/:version/users/:id?", "https://api.test"],
  ["http{s}?://{:sub.}?example.com/:path*"],
  ["https://example.com/files/*.:ext"],
  ["https://example.com/:id(\\d+)"],
  ["https://example.com/foo/{bar}?"],
  ["https://user:pass@example.com:8080/x?q=1#frag"],
  ["https://example.com/search?q=:query&page=:page"],
  ["https://example.com:443/"],
  ["data\\:foo*"],
  ["https://example.com/(foo|bar)/:rest+"],
  ["https://[\\:\\:1]/"],
  [{ pathname: "/a/:b/c" }],
  [{ hostname: "{*.}?example.com", pathname: "/*" }],
  [{ protocol: "https", search: "x=:x" }],
  [{ pathname: "/Case/:x" }, { ignoreCase: true }],
  [{ pathname: "images/*", baseURL: "https://cdn.test/static/index.html" }],
];

const URLS = [
  "https://example.com/books/123",
  "https://example.com/books/",
  "https://cdn.example.com/a/b/c.png",
  "https://api.test/api/v1/users",
  "https://api.test/api/v2/users/42",
  "https://www.example.com/a/b",
  "http://example.com/",
  "https://example.com/files/report.pdf",
  "https://example.com/987",
  "https://example.com/abc",
  "https://example.com/foo/bar",
  "https://example.com/foo/",
  "https://user:pass@example.com:8080/x?q=1#frag",
  "https://example.com/search?q=cats&page=2",
  "https://example.com/",
  "data:foobar",
  "https://example.com/bar/x/y/z",
  "https://[::1]/",
  "https://other.test/a/value/c",
  "https://example.com/case/ABC",
  "https://cdn.test/static/images/logo.svg",
  "https://example.com/?x=5",
];

const groups = {
  construct: () => run(Object.fromEntries(PATTERNS.map((args, i) => [String(i), () => shape(new URLPattern(...args))]))),
  test: () => run(Object.fromEntries(PATTERNS.map((args, i) => [String(i), () => { const p = new URLPattern(...args); return URLS.map((u) => p.test(u)); }]))),
  exec: () => run({
    books: () => groupsOf(new URLPattern("https://example.com/books/:id").exec("https://example.com/books/42")),
    optional: () => groupsOf(new URLPattern("/api/:version/users/:id?", "https://api.test").exec("https://api.test/api/v1/users")),
    repeat: () => groupsOf(new URLPattern("https://example.com/(foo|bar)/:rest+").exec("https://example.com/bar/x/y/z")),
    wildcard: () => groupsOf(new URLPattern("https://*.example.com/*").exec("https://cdn.example.com/a/b")),
    base: () => groupsOf(new URLPattern({ pathname: "/a/:b" }).exec("/a/value", "https://h.test")),
    init_input: () => groupsOf(new URLPattern({ pathname: "/a/:b" }).exec({ pathname: "/a/x y" })),
    no_match: () => new URLPattern("https://example.com/books/:id").exec("https://example.com/other"),
    inputs: () => { const r = new URLPattern({ pathname: "/x" }).exec("https://h.test/x"); return r.inputs; },
    inputs_base: () => new URLPattern({ pathname: "/x" }).exec("/x", "https://h.test").inputs,
    bad_url: () => new URLPattern({ pathname: "/x" }).exec("not a url"),
    encoded: () => groupsOf(new URLPattern({ pathname: "/caf\u00e9/:x" }).exec("https://h.test/caf%C3%A9/%20y")),
  }),
  errors: () => run({
    relative_no_base: () => new URLPattern("/books/:id"),
    bad_regexp: () => new URLPattern({ pathname: "/(" }),
    capture_group: () => new URLPattern({ pathname: "/((a))" }),
    duplicate: () => new URLPattern({ pathname: "/:a/:a" }),
    bad_name: () => new URLPattern({ pathname: "/:" }),
    init_with_base: () => new URLPattern({ pathname: "/x" }, "https://h.test"),
    bad_port: () => new URLPattern({ port: "abc" }),
    test_init_base: () => new URLPattern({ pathname: "/x" }).test({ pathname: "/x" }, "https://h.test"),
    shape: () => [typeof URLPattern, Object.prototype.toString.call(new URLPattern({})), Object.keys(new URLPattern({}))],
    empty: () => shape(new URLPattern()),
  }),
};

export default {
  async fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    const fn = groups[name];
    if (!fn) return new Response("no such group", { status: 404 });
    return Response.json(await fn());
  },
};
