// The JavaScript half of a d1_databases binding: D1Database,
// D1DatabaseSession and D1PreparedStatement shaped as workerd's
// (src/cloudflare/internal/d1-api.ts). send(request) returns a promise of
// [error message or null, answer JSON or null]; requests and answers are
// d1/wire.go's.
(function (send) {
  "use strict";
  const kCreate = Symbol("create");

  // An Error as workerd throws it: the prefixed message, and a cause
  // carrying the message without the prefix.
  function d1Error(message) {
    const e = new Error(message);
    const m = /^D1_[A-Z_]+: /.exec(message);
    e.cause = new Error(m ? message.slice(m[0].length) : message);
    return e;
  }

  async function call(request) {
    const [err, answer] = await send(request);
    if (err !== null) throw d1Error(err);
    return JSON.parse(answer);
  }

  // Bound values as workerd's bind() accepts them.
  function bindValue(r) {
    const t = typeof r;
    if (t === "number" || t === "string") return r;
    if (t === "boolean") return r ? 1 : 0;
    if (t === "object") {
      if (r == null) return r;
      if (Array.isArray(r) && r.every((b) => typeof b == "number" && b >= 0 && b < 256)) return r;
      if (r instanceof ArrayBuffer) return Array.from(new Uint8Array(r));
      if (ArrayBuffer.isView(r)) return Array.from(new Uint8Array(r.buffer, r.byteOffset, r.byteLength));
    }
    const detail = `Type '${t}' not supported for value '${r}'`;
    const e = new Error(`D1_TYPE_ERROR: ${detail}`);
    e.cause = new Error(detail);
    throw e;
  }

  function objects(result) {
    const { columns, rows } = result;
    return rows.map((row) => {
      const o = {};
      for (let i = 0; i < columns.length; i++) o[columns[i]] = row[i];
      return o;
    });
  }

  function d1Result(result) {
    return { success: true, meta: result.meta, results: objects(result) };
  }

  class D1DatabaseSession {
    #bookmark;
    constructor(key, constraintOrBookmark) {
      if (key !== kCreate) throw new TypeError("Illegal constructor");
      this.#bookmark =
        constraintOrBookmark === "first-primary" || constraintOrBookmark === "first-unconstrained" ? null : constraintOrBookmark;
    }
    prepare(query) {
      return new D1PreparedStatement(kCreate, this, String(query), []);
    }
    async batch(statements) {
      if (!Array.isArray(statements)) throw new TypeError("batch() expects an array of D1PreparedStatement");
      for (const s of statements) {
        if (!(s instanceof D1PreparedStatement)) throw new TypeError("batch() expects an array of D1PreparedStatement");
      }
      const answer = await this._query(statements.map((s) => s._wire()));
      return answer.results.map(d1Result);
    }
    getBookmark() {
      return this.#bookmark;
    }
    async _query(stmts) {
      const answer = await call(JSON.stringify({ op: "query", stmts }));
      this.#bookmark = answer.bookmark;
      return answer;
    }
    async _exec(query) {
      const answer = await call('{"op":"exec"}\n' + query);
      this.#bookmark = answer.bookmark;
      return { count: answer.count, duration: answer.duration };
    }
  }

  class D1PreparedStatement {
    #session;
    #sql;
    #params;
    constructor(key, session, sql, params) {
      if (key !== kCreate) throw new TypeError("Illegal constructor");
      this.#session = session;
      this.#sql = sql;
      this.#params = params;
    }
    bind(...values) {
      return new D1PreparedStatement(kCreate, this.#session, this.#sql, values.map(bindValue));
    }
    _wire() {
      return { sql: this.#sql, params: this.#params };
    }
    async #one() {
      const answer = await this.#session._query([this._wire()]);
      return answer.results[0];
    }
    async first(colName) {
      const r = await this.#one();
      if (r.rows.length === 0) return null;
      const row = objects({ columns: r.columns, rows: [r.rows[0]] })[0];
      if (colName === undefined) return row;
      if (row[colName] === undefined) {
        const e = new Error(`D1_COLUMN_NOTFOUND: Column not found (${colName})`);
        e.cause = new Error("Column not found");
        throw e;
      }
      return row[colName] ?? null;
    }
    async run() {
      return d1Result(await this.#one());
    }
    async all() {
      return d1Result(await this.#one());
    }
    async raw(options) {
      const r = await this.#one();
      const rows = r.rows;
      if (options?.columnNames) rows.unshift(r.columns);
      return rows;
    }
  }

  class D1Database {
    #primary;
    constructor(key) {
      if (key !== kCreate) throw new TypeError("Illegal constructor");
      this.#primary = new D1DatabaseSession(kCreate, "first-primary");
    }
    prepare(query) {
      return this.#primary.prepare(query);
    }
    batch(statements) {
      return this.#primary.batch(statements);
    }
    exec(query) {
      return this.#primary._exec(String(query));
    }
    withSession(constraintOrBookmark = "first-unconstrained") {
      let c = constraintOrBookmark == null ? "" : String(constraintOrBookmark).trim();
      if (c === "") c = "first-unconstrained";
      return new D1DatabaseSession(kCreate, c);
    }
    async dump() {
      throw d1Error("D1_DUMP_ERROR: dump() is not supported; export with `wrangler d1 export` and load the file with `celld d1 execute DB --file`");
    }
  }

  return new D1Database(kCreate);
});
