import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { Suspense, renderToReadableStream } from "hono/jsx/streaming";
import { jwt, sign, verify, decode } from "hono/jwt";
import { getCookie, setCookie, getSignedCookie, setSignedCookie, deleteCookie } from "hono/cookie";
import { cors } from "hono/cors";
import { etag } from "hono/etag";
import { HTTPException } from "hono/http-exception";
import { validator } from "hono/validator";

type Env = { Bindings: { JWT_SECRET: string } };
const app = new Hono<Env>();

app.use("/api/*", cors({ origin: ["https://app.example"], allowHeaders: ["Authorization"], maxAge: 600 }));
app.use("/api/*", (c, next) => jwt({ secret: c.env.JWT_SECRET, alg: "HS256" })(c, next));

const Layout: FC<{ title: string }> = ({ title, children }) => (
  <html>
    <head><title>{title}</title></head>
    <body>{children}</body>
  </html>
);

const List: FC<{ items: string[] }> = ({ items }) => (
  <ul>{items.map((i) => <li class={i === "b" ? "on" : undefined}>{i}</li>)}</ul>
);

const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
const Slow: FC<{ ms: number; label: string }> = async ({ ms, label }) => {
  await later(ms);
  return <p>{label} after {ms}</p>;
};

app.post("/login", validator("json", (v, c) => {
  if (typeof v.user !== "string" || v.user.length < 2) return c.json({ error: "user must be a string of 2+ characters" }, 400);
  return { user: v.user as string };
}), async (c) => {
  const { user } = c.req.valid("json");
  const token = await sign({ sub: user, role: "admin", iat: 1700000000, exp: 4102444800 }, c.env.JWT_SECRET, "HS256");
  return c.json({ token });
});

app.get("/api/me", (c) => {
  const p = c.get("jwtPayload");
  return c.json({ sub: p.sub, role: p.role });
});

app.get("/jwt-cases", async (c) => {
  const s = c.env.JWT_SECRET;
  const out: Record<string, unknown> = {};
  const good = await sign({ sub: "x", nbf: 1700000000 }, s);
  out.decoded = decode(good);
  out.verified = await verify(good, s, "HS256");
  for (const [name, fn] of Object.entries({
    wrongSecret: () => verify(good, "other", "HS256"),
    expired: async () => verify(await sign({ exp: 1000 }, s), s, "HS256"),
    notYet: async () => verify(await sign({ nbf: 4102444800 }, s), s, "HS256"),
    garbage: () => verify("a.b.c", s, "HS256"),
    algMismatch: async () => verify(await sign({ a: 1 }, s, "HS512"), s, "HS256"),
  })) {
    try {
      await fn();
      out[name] = "accepted";
    } catch (e: any) {
      out[name] = { name: e.name, message: e.message };
    }
  }
  out.hs512 = (await sign({ a: 1 }, s, "HS512")).split(".")[2].length;
  return c.json(out);
});

app.get("/cookies", async (c) => {
  setCookie(c, "plain", "a b;c", { path: "/", httpOnly: true, sameSite: "Lax", maxAge: 60 });
  await setSignedCookie(c, "signed", "v1", c.env.JWT_SECRET, { path: "/" });
  deleteCookie(c, "gone");
  return c.json({ seen: getCookie(c), signed: await getSignedCookie(c, c.env.JWT_SECRET, "sess") });
});

app.get("/page", (c) => c.html(<Layout title="Hono &amp; JSX"><h1>Hello {"<world>"}</h1><List items={["a", "b", "c"]} /></Layout>));

app.get("/stream", (c) => {
  const stream = renderToReadableStream(
    <Layout title="streamed">
      <Suspense fallback={<i>wait 1</i>}><Slow ms={10} label="one" /></Suspense>
      <Suspense fallback={<i>wait 2</i>}><Slow ms={25} label="two" /></Suspense>
    </Layout>,
  );
  return c.body(stream, { headers: { "content-type": "text/html; charset=UTF-8", "transfer-encoding": "chunked" } });
});

app.get("/etag", etag(), (c) => c.text("same body every time"));

app.get("/boom", () => { throw new HTTPException(418, { message: "short and stout" }); });
app.onError((err, c) => {
  if (err instanceof HTTPException) return c.json({ error: err.message, status: err.status }, err.status);
  return c.json({ error: "internal" }, 500);
});
app.notFound((c) => c.json({ missing: c.req.path }, 404));

export default app;
