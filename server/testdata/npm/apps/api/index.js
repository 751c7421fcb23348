import { initTRPC, TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { z } from "zod";
import { graphql, buildSchema, parse, validate, GraphQLError } from "graphql";
import { Hono } from "hono";
import { zValidator } from "@hono/zod-validator";

// ---- tRPC
// isDev off: error answers carry no stack (whose text is the engine's).
const t = initTRPC.context().create({ isDev: false });
// Module state is per isolate, and a node may run several: the list is fixed.
const todos = [{ id: 1, title: "seeded", done: true }];
const appRouter = t.router({
  hello: t.procedure.input(z.object({ name: z.string().min(2) })).query(({ input }) => ({ greeting: `hello ${input.name}` })),
  add: t.procedure.input(z.object({ title: z.string(), done: z.boolean().default(false) })).mutation(({ input }) => {
    return { id: todos.length + 1, ...input };
  }),
  list: t.procedure.query(() => todos),
  secret: t.procedure.query(({ ctx }) => {
    if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "log in first" });
    return { user: ctx.user };
  }),
});

// ---- GraphQL
const schema = buildSchema(`
  type Book { id: ID!, title: String!, author: Author!, year: Int }
  type Author { name: String!, books: [Book!]! }
  type Query { books(minYear: Int): [Book!]!, book(id: ID!): Book, boom: String }
  type Mutation { rename(id: ID!, title: String!): Book }
`);
const authors = { tolkien: { name: "Tolkien" }, le_guin: { name: "Le Guin" } };
const books = [
  { id: "1", title: "The Hobbit", author: "tolkien", year: 1937 },
  { id: "2", title: "A Wizard of Earthsea", author: "le_guin", year: 1968 },
  { id: "3", title: "The Dispossessed", author: "le_guin", year: 1974 },
];
const bookOut = (b) => b && { ...b, author: () => ({ ...authors[b.author], books: () => books.filter((x) => x.author === b.author).map(bookOut) }) };
const rootValue = {
  books: ({ minYear }) => books.filter((b) => minYear === undefined || b.year >= minYear).map(bookOut),
  book: async ({ id }) => { await new Promise((r) => setTimeout(r, 1)); return bookOut(books.find((b) => b.id === id)); },
  boom: () => { throw new GraphQLError("resolver failed", { extensions: { code: "BOOM" } }); },
  rename: ({ id, title }) => { const b = books.find((x) => x.id === id); if (b) b.title = title; return bookOut(b); },
};

// ---- Hono + zod
const hono = new Hono();
hono.post("/hono/users", zValidator("json", z.object({ email: z.email(), age: z.coerce.number().int().min(18) })), (c) => c.json({ ok: true, user: c.req.valid("json") }, 201));
hono.get("/hono/search", zValidator("query", z.object({ q: z.string().min(1), page: z.coerce.number().default(1) }), (result, c) => {
  if (!result.success) return c.json({ invalid: result.error.issues.map((i) => ({ path: i.path, code: i.code, message: i.message })) }, 422);
}), (c) => c.json(c.req.valid("query")));

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname.startsWith("/trpc")) {
      return fetchRequestHandler({
        endpoint: "/trpc", req: request, router: appRouter,
        createContext: ({ req }) => ({ user: req.headers.get("x-user") }),
        onError: () => {},
      });
    }
    if (url.pathname === "/graphql") {
      const { query, variables } = await request.json();
      const result = await graphql({ schema, source: query, rootValue, variableValues: variables });
      return Response.json(result);
    }
    if (url.pathname === "/graphql-validate") {
      const errors = validate(schema, parse("{ books { nope } book { title } }"));
      return Response.json(errors.map((e) => ({ message: e.message, locations: e.locations })));
    }
    return hono.fetch(request);
  },
};
