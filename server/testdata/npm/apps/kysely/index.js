import { Kysely, sql } from "kysely";
import { D1Dialect } from "kysely-d1";

const caught = async (fn) => { try { return await fn(); } catch (e) { return { error: e.name, message: e.message }; } };

export default {
  async fetch(request, env) {
    const db = new Kysely({ dialect: new D1Dialect({ database: env.DB }) });
    const { pathname } = new URL(request.url);
    if (pathname === "/setup") {
      await db.schema.dropTable("pet").ifExists().execute();
      await db.schema.dropTable("person").ifExists().execute();
      await db.schema.createTable("person")
        .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
        .addColumn("name", "text", (c) => c.notNull().unique())
        .addColumn("age", "integer")
        .addColumn("created", "text", (c) => c.defaultTo(sql`'2024-01-01'`))
        .execute();
      await db.schema.createTable("pet")
        .addColumn("id", "integer", (c) => c.primaryKey())
        .addColumn("owner_id", "integer", (c) => c.references("person.id").onDelete("cascade").notNull())
        .addColumn("species", "text").addColumn("name", "text").execute();
      await db.schema.createIndex("pet_owner").on("pet").column("owner_id").execute();
      const people = await db.insertInto("person").values([{ name: "Ada", age: 36 }, { name: "Grace", age: 85 }, { name: "Linus", age: null }]).returning(["id", "name", "created"]).execute();
      await db.insertInto("pet").values([{ id: 1, owner_id: 1, species: "cat", name: "Tom" }, { id: 2, owner_id: 1, species: "dog", name: "Rex" }, { id: 3, owner_id: 2, species: "cat", name: "Kit" }]).execute();
      return Response.json({ people });
    }
    if (pathname === "/query") {
      const joined = await db.selectFrom("person").innerJoin("pet", "pet.owner_id", "person.id")
        .select(["person.name as owner", "pet.name as pet", "pet.species"]).orderBy("pet.id").execute();
      const grouped = await db.selectFrom("pet").select(["species", db.fn.count("id").as("n"), db.fn.max("name").as("last")]).groupBy("species").orderBy("species").execute();
      const sub = await db.selectFrom("person").select(["name", (eb) => eb.selectFrom("pet").whereRef("pet.owner_id", "=", "person.id").select(eb.fn.countAll().as("c")).as("pets")])
        .where("age", "is not", null).orderBy("name", "desc").execute();
      const filtered = await db.selectFrom("person").selectAll().where((eb) => eb.or([eb("age", ">", 50), eb("name", "like", "L%")])).orderBy("id").execute();
      const raw = await sql`select ${"x"} as s, ${1.5} as f, ${true} as b, ${null} as n, json_object('k', ${2}) as j`.execute(db);
      const compiled = db.selectFrom("person").select("name").where("id", "in", [1, 2]).limit(5).compile();
      return Response.json({ joined, grouped, sub, filtered, raw: raw.rows, sql: compiled.sql, params: compiled.parameters });
    }
    if (pathname === "/mutate") {
      const upd = await db.updateTable("person").set((eb) => ({ age: eb("age", "+", 1) })).where("name", "=", "Ada").returning(["name", "age"]).executeTakeFirst();
      const upsert = await db.insertInto("person").values({ name: "Grace", age: 1 }).onConflict((oc) => oc.column("name").doUpdateSet({ age: (eb) => eb.ref("excluded.age") })).returning(["name", "age"]).execute();
      const del = await db.deleteFrom("pet").where("species", "=", "dog").executeTakeFirst();
      const dup = await caught(() => db.insertInto("person").values({ name: "Ada" }).execute());
      const nul = await caught(() => db.insertInto("pet").values({ id: 9, owner_id: null }).execute());
      const count = await db.selectFrom("pet").select(db.fn.countAll().as("n")).executeTakeFirstOrThrow();
      const none = await caught(() => db.selectFrom("person").selectAll().where("id", "=", 999).executeTakeFirstOrThrow());
      return Response.json({ upd, upsert, deleted: String(del.numDeletedRows), dup, nul, count, none });
    }
    return new Response("not found", { status: 404 });
  },
};
