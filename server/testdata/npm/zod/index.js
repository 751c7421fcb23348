import { z } from "zod";

// zod (npm), unchanged: schemas parse and reject a signup payload, with
// transforms, refinements, discriminated unions, coercion, async checks,
// error formatting and JSON Schema output (server.TestZod).

const Signup = z
  .object({
    email: z.email(),
    name: z.string().trim().min(2).max(40),
    age: z.coerce.number().int().min(13),
    website: z.url().optional(),
    id: z.uuid(),
    tags: z.array(z.string().toLowerCase()).max(3).default([]),
    role: z.enum(["admin", "member"]).default("member"),
    password: z.string().min(8),
    confirm: z.string(),
    joined: z.coerce.date(),
  })
  .refine((v) => v.password === v.confirm, { message: "passwords differ", path: ["confirm"] });

const good = {
  email: "ada@example.com",
  name: "  Ada Lovelace ",
  age: "36",
  website: "https://example.com/ada",
  id: "2f1c9a5e-7b7d-4c57-9b55-0e6d5d8c3f21",
  tags: ["Math", "ENGINES"],
  password: "analytical",
  confirm: "analytical",
  joined: "1843-07-01T00:00:00Z",
};
const bad = { email: "ada@", name: "A", age: "12.5", website: "not a url", id: "nope", tags: ["a", "b", "c", "d"], role: "owner", password: "short", confirm: "other", joined: "never" };

const Shape = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("circle"), r: z.number().positive() }),
  z.object({ kind: z.literal("rect"), w: z.number(), h: z.number() }),
]);
const area = Shape.transform((s) => (s.kind === "circle" ? Math.round(Math.PI * s.r * s.r * 100) / 100 : s.w * s.h));

const issues = (e) => e.issues.map((i) => ({ path: i.path.join("."), code: i.code, message: i.message }));

const taken = new Set(["taken"]);
const Username = z.string().refine(async (u) => {
  await new Promise((r) => setTimeout(r, 1));
  return !taken.has(u);
}, "username taken");

const routes = {
  "/parse": () => {
    const v = Signup.parse(good);
    return { ...v, joined: v.joined.toISOString() };
  },
  "/errors": () => {
    const r = Signup.safeParse(bad);
    return { success: r.success, issues: issues(r.error), flat: z.flattenError(r.error).fieldErrors.email, name: r.error.name };
  },
  "/pretty": () => z.prettifyError(z.object({ a: z.number(), b: z.object({ c: z.string() }) }).safeParse({ a: "x", b: { c: 1 } }).error),
  "/union": () => ({
    areas: [area.parse({ kind: "circle", r: 2 }), area.parse({ kind: "rect", w: 3, h: 4 })],
    bad: issues(Shape.safeParse({ kind: "triangle" }).error),
  }),
  "/async": async () => ({
    free: await Username.safeParseAsync("ada").then((r) => r.success),
    taken: await Username.safeParseAsync("taken").then((r) => issues(r.error)),
    syncThrows: (() => {
      try {
        Username.parse("ada");
        return "parsed";
      } catch (e) {
        return e.constructor.name;
      }
    })(),
  }),
  "/json-schema": () => z.toJSONSchema(z.object({ id: z.uuid(), n: z.number().int().min(1), tags: z.array(z.string()).optional() })),
  "/misc": () => ({
    record: z.record(z.string(), z.number()).parse({ a: 1, b: 2 }),
    tuple: z.tuple([z.string(), z.boolean()]).safeParse(["x", "no"]).success,
    strict: issues(z.strictObject({ a: z.string() }).safeParse({ a: "1", extra: true }).error),
    pipe: z.string().transform((s) => s.length).pipe(z.number().max(3)).safeParse("abcd").success,
    brand: z.string().brand("Id").parse("k1"),
    nullable: z.number().nullable().parse(null),
    ipv4: z.ipv4().safeParse("10.0.0.256").success,
    regex: z.string().regex(/^[a-z]+-\d+$/).safeParse("cell-42").success,
    bigint: String(z.bigint().parse(10n ** 20n)),
  }),
};

export default {
  async fetch(request) {
    const route = routes[new URL(request.url).pathname];
    if (!route) return new Response("not found", { status: 404 });
    return Response.json(await route());
  },
};
