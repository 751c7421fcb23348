import { DurableObject } from "cloudflare:workers";
import { drizzle as d1 } from "drizzle-orm/d1";
import { drizzle as durable } from "drizzle-orm/durable-sqlite";
import { sqliteTable, integer, text, real, blob, index } from "drizzle-orm/sqlite-core";
import { eq, and, gt, desc, asc, sql, count, sum, inArray, like, isNull } from "drizzle-orm";

const users = sqliteTable("users", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  email: text("email"),
  admin: integer("admin", { mode: "boolean" }).notNull().default(false),
  score: real("score").default(1.5),
  prefs: text("prefs", { mode: "json" }).$type(),
  created: integer("created", { mode: "timestamp" }),
});
const posts = sqliteTable("posts", {
  id: integer("id").primaryKey(),
  userId: integer("user_id").notNull().references(() => users.id),
  title: text("title").notNull(),
  body: blob("body", { mode: "buffer" }),
}, (t) => [index("posts_user").on(t.userId)]);

const ddl = [
  "CREATE TABLE IF NOT EXISTS users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, email TEXT, admin INTEGER NOT NULL DEFAULT 0, score REAL DEFAULT 1.5, prefs TEXT, created INTEGER)",
  "CREATE TABLE IF NOT EXISTS posts (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id), title TEXT NOT NULL, body BLOB)",
  "CREATE INDEX IF NOT EXISTS posts_user ON posts(user_id)",
];

const errInfo = (e) => ({ name: e.name, message: String(e.message).split("\n")[0], cause: e.cause ? String(e.cause.message).replace(/^D1_ERROR: /, "") : null });

// scenario runs the same queries on either database; sync tells whether
// the driver is the Durable Object's synchronous one.
async function scenario(db, kind) {
  const out = {};
  out.inserted = await db.insert(users).values([
    { name: "ada", email: "ada@example.com", admin: true, prefs: { theme: "dark", n: [1, 2] }, created: new Date(1700000000000) },
    { name: "bob", score: 3.25 },
    { name: "cy", email: null, prefs: null },
  ]).returning({ id: users.id, name: users.name, admin: users.admin, score: users.score });
  await db.insert(posts).values([
    { id: 10, userId: 1, title: "first", body: new Uint8Array([1, 2, 3]) },
    { id: 11, userId: 1, title: "second" },
    { id: 12, userId: 2, title: "third" },
  ]);
  out.ada = await db.select().from(users).where(eq(users.name, "ada")).get();
  if (out.ada && out.ada.created instanceof Date) out.ada.created = out.ada.created.toISOString();
  out.filtered = await db.select({ name: users.name }).from(users).where(and(gt(users.score, 1), isNull(users.email))).orderBy(desc(users.name)).all();
  out.joined = await db.select({ user: users.name, title: posts.title }).from(posts).innerJoin(users, eq(posts.userId, users.id)).orderBy(asc(posts.id)).all();
  out.counts = await db.select({ userId: posts.userId, n: count() }).from(posts).groupBy(posts.userId).orderBy(posts.userId).all();
  out.sum = await db.select({ total: sum(users.score) }).from(users).get();
  out.updated = await db.update(users).set({ score: sql`${users.score} * 2` }).where(inArray(users.name, ["bob", "cy"])).returning({ name: users.name, score: users.score });
  out.like = await db.select({ id: users.id }).from(users).where(like(users.email, "%@example.com")).all();
  out.raw = await db.all(sql`select typeof(admin) as a, typeof(score) as s, typeof(prefs) as p from users order by id`);
  try {
    await db.insert(users).values({ name: "ada" });
    out.duplicate = "accepted";
  } catch (e) {
    out.duplicate = errInfo(e);
  }
  const prepared = db.select().from(users).where(eq(users.id, sql.placeholder("id"))).prepare();
  out.prepared = (await prepared.get({ id: 2 }))?.name;
  out.deleted = await db.delete(posts).where(eq(posts.userId, 2)).returning({ id: posts.id });
  out.left = (await db.select({ c: count() }).from(posts).get()).c;
  return out;
}

export class Notes extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.db = durable(ctx.storage, { logger: false });
    ctx.blockConcurrencyWhile(async () => {
      for (const q of ddl) ctx.storage.sql.exec(q);
    });
  }
  async run() {
    const out = await scenario(this.db, "durable");
    out.tx = this.db.transaction((tx) => {
      tx.insert(users).values({ name: "tx-1" }).run();
      return tx.select({ c: count() }).from(users).get().c;
    });
    try {
      this.db.transaction((tx) => {
        tx.insert(users).values({ name: "tx-2" }).run();
        throw new Error("roll back");
      });
    } catch (e) {
      out.rolledBack = e.message;
    }
    out.afterRollback = this.db.select({ c: count() }).from(users).get().c;
    return out;
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/d1") {
      for (const q of ddl) await env.DB.prepare(q).run();
      const db = d1(env.DB);
      const out = await scenario(db, "d1");
      const [a, b] = await db.batch([
        db.insert(users).values({ name: "batch-1" }).returning({ id: users.id }),
        db.select({ c: count() }).from(users),
      ]);
      out.batch = { a, b };
      try {
        await db.batch([db.insert(users).values({ name: "batch-2" }), db.insert(users).values({ name: "ada" })]);
      } catch (e) {
        out.batchError = errInfo(e);
      }
      out.afterBatch = (await db.select({ c: count() }).from(users).get()).c;
      return Response.json(out);
    }
    if (url.pathname === "/do") {
      const stub = env.NOTES.get(env.NOTES.idFromName("one"));
      return Response.json(await stub.run());
    }
    return new Response("not found", { status: 404 });
  },
};
