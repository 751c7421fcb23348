// SQL storage (ctx.storage.sql) of a Durable Object.

const { kCreate } = internal;

// ---- SQL -------------------------------------------------------------------

// A bound value as workerd takes it: null/undefined are NULL, numbers are
// REAL, strings TEXT, buffers BLOB; anything else becomes its string.
function bindValue(v) {
  if (v === undefined || v === null) return null;
  if (typeof v === "number" || typeof v === "string") return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v).slice();
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice();
  return String(v);
}

class SqlStorage {
  #S;
  constructor(key, S) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#S = S;
  }
  // (...args) rather than `arguments` (see URL); exec.length is set to 1
  // below, as (query, ...bindings) would have it.
  exec(...args) {
    if (args.length === 0) {
      throw new TypeError("Failed to execute 'exec' on 'SqlStorage': parameter 1 is not of type 'string'.");
    }
    const bindings = new Array(args.length - 1);
    for (let i = 1; i < args.length; i++) bindings[i - 1] = bindValue(args[i]);
    return new SqlStorageCursor(kCreate, this.#S.exec(String(args[0]), bindings));
  }
  get databaseSize() { return this.#S.databaseSize(); }
}

Object.defineProperty(SqlStorage.prototype.exec, "length", { value: 1 });

function rowObject(names, row) {
  const o = {};
  for (let i = 0; i < names.length; i++) o[names[i]] = row[i];
  return o;
}

class SqlStorageCursor {
  #c;
  #names;
  constructor(key, c) {
    if (key !== kCreate) throw new TypeError("Illegal constructor");
    this.#c = c;
    this.#names = c.columnNames();
  }
  next() {
    const row = this.#c.next();
    return row === null ? { done: true, value: undefined } : { done: false, value: rowObject(this.#names, row) };
  }
  toArray() { return this.#c.all().map((row) => rowObject(this.#names, row)); }
  one() { return rowObject(this.#names, this.#c.one()); }
  raw() {
    const c = this.#c;
    return {
      next() {
        const row = c.next();
        return row === null ? { done: true, value: undefined } : { done: false, value: row };
      },
      toArray() { return c.all(); },
      [Symbol.iterator]() { return this; },
    };
  }
  get columnNames() { return this.#names.slice(); }
  get rowsRead() { return this.#c.rowsRead(); }
  get rowsWritten() { return this.#c.rowsWritten(); }
  [Symbol.iterator]() { return this; }
}
internal.makeSql = (S) => new SqlStorage(kCreate, S);
