const errInfo = (e) => ({ name: e?.name, message: e?.message });
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
const show = (v) => (v instanceof ArrayBuffer ? { arrayBuffer: [...new Uint8Array(v)] } : Array.isArray(v) ? { array: v } : v);

export default {
  async fetch(request, env) {
    const db = env.DB;
    const bind = async (v) => {
      const row = await db.prepare("SELECT typeof(?1) AS t, ?1 AS v").bind(v).first();
      return [row.t, typeof row.v, show(row.v)];
    };
    const path = new URL(request.url).pathname;
    if (path === "/bind") {
      return Response.json(await run({
        int: () => bind(42),
        negative: () => bind(-7),
        zero: () => bind(0),
        neg_zero: () => bind(-0),
        float: () => bind(1.5),
        whole_float: () => bind(3.0),
        big_int: () => bind(2 ** 53),
        huge: () => bind(1e300),
        true: () => bind(true),
        false: () => bind(false),
        null: () => bind(null),
        string: () => bind("text"),
        empty_string: () => bind(""),
        uint8: () => bind(new Uint8Array([1, 2, 255])),
        arraybuffer: () => bind(new Uint8Array([9, 8]).buffer),
        array: () => bind([1, 2]),
        nan: () => bind(NaN),
        infinity: () => bind(Infinity),
        undefined: () => bind(undefined),
        object: () => bind({ a: 1 }),
        bigint: () => bind(5n),
        date: () => bind(new Date(0)),
        concat: async () => db.prepare("SELECT 'id-' || ? AS a, 'id-' || ? AS b, 'id-' || ? AS c").bind(5, 1.5, true).first(),
        into_untyped: async () => { await db.exec("CREATE TABLE IF NOT EXISTS u (v, i INTEGER, s TEXT)"); await db.prepare("INSERT INTO u VALUES (?, ?, ?)").bind(5, 5, 5).run(); return db.prepare("SELECT typeof(v) AS tv, v, typeof(i) AS ti, i, typeof(s) AS ts, s FROM u").first(); },
      }));
    }
    if (path === "/results") {
      await db.exec("CREATE TABLE IF NOT EXISTS t (i INTEGER, r REAL, s TEXT, b BLOB, n)");
      await db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)").bind(9007199254740993, 2.25, "s", new Uint8Array([0, 1]), null).run();
      await db.exec("INSERT INTO t VALUES (9223372036854775807, 1e308, 'x', x'ff', 1)");
      const all = await db.prepare("SELECT * FROM t").all();
      const raw = await db.prepare("SELECT i, r, b FROM t").raw();
      const cols = await db.prepare("SELECT i, r FROM t").raw({ columnNames: true });
      return Response.json({
        rows: all.results.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, [typeof v, show(v)]]))),
        raw: raw.map((r) => r.map((v) => [typeof v, show(v)])),
        cols,
        literal: await db.prepare("SELECT 1 AS one, 1.0 AS onef, 'a' || 1 AS cat, x'00' AS blob, NULL AS nul, 1 > 0 AS cmp").first(),
        first_col: await db.prepare("SELECT 5 AS five").first("five"),
        first_missing: await db.prepare("SELECT 5 AS five").first("nope").catch(errInfo),
      });
    }
    return new Response("not found", { status: 404 });
  },
};
