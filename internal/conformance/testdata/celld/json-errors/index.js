const inputs = [
  "", " ", "hello r2", "h", "{", "[", "[1,", "[1 2]", "{\"a\"", "{\"a\":", "{\"a\":1", "{\"a\":1,", "{a:1}", "{'a':1}",
  "{\"a\" 1}", "{\"a\":1 \"b\":2}", "{,}", "[,]", "[1,]", "{\"a\":1,}", "1 2", "{} x", "[]]", "\"abc", "\"a\\qb\"",
  "\"a\u0001b\"", "\"\\u12\"", "-", "-x", "1.", "1.e5", "1e", "1e+", "01", "tru", "truex", "nul", "NaN", "undefined",
  "Infinity", "+1", ".5", "\"\\", "[\"a\",\n  \"b\"\n  x]", "{\n  \"a\": 1,\n  \"b\": [1, 2,\n}",
  "x".repeat(10), "x".repeat(40), "{\"key\": \"" + "v".repeat(60) + "\", oops}", "[" + "1,".repeat(50) + "x]",
  "\u00e9", "{\"a\":\"\u00e9\"} \u00e9", "\ud83d\ude00", "[1] \ud83d\ude00",
  "\"\\u12", "trux", "[NaN]", "nulx", "{\"a\":1}}", "[1]x", "-01", "1.5e", "2.x", "[-]", "{\"a\":-}",
  "\"\\u00zz\"", "  \"abc", "{\"a\" ", "[1, 2", "\r\n[\r\n1 x]", "[\"\u2028\", x]", "\u00e9\u00e9 [1 x]",
  "[1, \"" + "\u00e9".repeat(30) + "\" x]", "[object Object]", " NaN", "{\"a\": true false}",
];
const attempt = (f) => {
  try {
    return { ok: f() };
  } catch (e) {
    return { name: e.name, message: e.message };
  }
};

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/parse") {
      return Response.json(inputs.map((s) => [s.length > 30 ? s.slice(0, 30) + "…" : s, attempt(() => JSON.parse(s))]));
    }
    if (url.pathname === "/function") {
      return Response.json({
        name: JSON.parse.name, length: JSON.parse.length, has_prototype: "prototype" in JSON.parse,
        own: Object.getOwnPropertyNames(JSON).sort(), descriptor: ((d) => [d.writable, d.enumerable, d.configurable])(Object.getOwnPropertyDescriptor(JSON, "parse")),
        reviver_error: attempt(() => JSON.parse('{"a":1}', () => { throw new SyntaxError("the reviver's own"); })),
        reviver: JSON.parse('{"a":1,"b":[2,3]}', (k, v) => (typeof v === "number" ? v * 10 : v)),
        to_string_once: (() => { let n = 0; const o = { toString() { n++; return "[1,"; } }; const r = attempt(() => JSON.parse(o)); return [n, r]; })(),
        symbol: attempt(() => JSON.parse(Symbol("s"))).name,
        construct: attempt(() => new JSON.parse("1")).name,
      });
    }
    if (url.pathname === "/values") {
      return Response.json([undefined, null, 1, {}, [], true, new Date(0)].map((v) => attempt(() => JSON.parse(v))).concat([attempt(() => JSON.parse())]));
    }
    if (url.pathname === "/request") {
      try {
        return Response.json({ ok: await request.json() });
      } catch (e) {
        return Response.json({ name: e.name, message: e.message });
      }
    }
    if (url.pathname === "/response") {
      const out = [];
      for (const s of ["", "{", "nope", "[1,2,]"]) {
        try {
          out.push(await new Response(s).json());
        } catch (e) {
          out.push({ name: e.name, message: e.message });
        }
      }
      return Response.json(out);
    }
    return new Response("?", { status: 404 });
  },
};
