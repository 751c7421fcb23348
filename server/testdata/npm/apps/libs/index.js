import { AutoRouter, error, json, withParams } from "itty-router";
import { v1, v4, v5, v6, v7, validate, version, parse as uuidParse, stringify as uuidStringify, NIL, MAX } from "uuid";
import { parseCookie, stringifyCookie, stringifySetCookie, parseSetCookie } from "cookie";
import { sha256, sha512, sha384 } from "@noble/hashes/sha2.js";
import { sha3_256, keccak_256 } from "@noble/hashes/sha3.js";
import { blake2b } from "@noble/hashes/blake2.js";
import { blake3 } from "@noble/hashes/blake3.js";
import { hmac } from "@noble/hashes/hmac.js";
import { hkdf } from "@noble/hashes/hkdf.js";
import { pbkdf2 } from "@noble/hashes/pbkdf2.js";
import { scrypt } from "@noble/hashes/scrypt.js";
import { bytesToHex, utf8ToBytes, hexToBytes } from "@noble/hashes/utils.js";
import { ed25519, x25519 } from "@noble/curves/ed25519.js";
import { secp256k1 } from "@noble/curves/secp256k1.js";
import { p256 } from "@noble/curves/nist.js";
import superjson from "superjson";
import * as v from "valibot";
import { marked } from "marked";
import YAML from "yaml";
import { groupBy, sortBy, cloneDeep, merge, debounce, chunk, template, kebabCase, isEqual, get, set, uniqBy, pick } from "lodash-es";
import { format, addDays, differenceInCalendarDays, parseISO, formatDistanceStrict, startOfWeek, eachDayOfInterval } from "date-fns";
import { TZDate, tz } from "@date-fns/tz";
import { formatInTimeZone, toZonedTime, fromZonedTime, getTimezoneOffset } from "date-fns-tz";
import * as jose from "jose";

const router = AutoRouter();
const te = (s) => utf8ToBytes(s);
const caught = (fn) => { try { return fn(); } catch (e) { return { error: e.name, message: e.message }; } };

router.get("/uuid", () => {
  const seed = { random: Uint8Array.from({ length: 16 }, (_, i) => i * 7) };
  const u4 = v4();
  return {
    v4ok: validate(u4) && version(u4) === 4,
    v4seeded: v4(seed),
    v7seeded: v7({ msecs: 1700000000000, seq: 5, random: seed.random }),
    v7ok: version(v7()) === 7,
    v1seeded: v1({ msecs: 1700000000000, nsecs: 12, clockseq: 0x1234, node: Uint8Array.of(1, 2, 3, 4, 5, 6) }),
    v6seeded: v6({ msecs: 1700000000000, nsecs: 12, clockseq: 0x1234, node: Uint8Array.of(1, 2, 3, 4, 5, 6) }),
    v5: v5("hello", v5.URL),
    roundtrip: uuidStringify(uuidParse("6ba7b810-9dad-11d1-80b4-00c04fd430c8")),
    nil: NIL, max: MAX,
    invalid: caught(() => uuidParse("nope")),
  };
});

router.get("/cookie", (req) => ({
  parsed: parseCookie(req.headers.get("cookie") ?? ""),
  stringified: stringifyCookie({ a: "1", b: "x y" }),
  serialized: [
    stringifySetCookie({ name: "sid", value: "a b/c", httpOnly: true, secure: true, sameSite: "strict", path: "/", maxAge: 3600, expires: new Date(Date.UTC(2030, 0, 1)) }),
    stringifySetCookie({ name: "x", value: "", partitioned: true, priority: "high", domain: "example.com" }),
  ],
  setCookie: parseSetCookie("id=a%20b; Max-Age=60; Path=/p; HttpOnly; SameSite=Lax"),
  bad: caught(() => stringifySetCookie({ name: "bad name", value: "v" })),
}));

router.get("/noble-hashes", () => {
  const m = te("abc");
  return {
    sha256: bytesToHex(sha256(m)), sha384: bytesToHex(sha384(m)), sha512: bytesToHex(sha512(m)),
    sha3: bytesToHex(sha3_256(m)), keccak: bytesToHex(keccak_256(m)),
    blake2b: bytesToHex(blake2b(m, { dkLen: 32 })), blake3: bytesToHex(blake3(m)),
    hmac: bytesToHex(hmac(sha256, te("key"), te("The quick brown fox jumps over the lazy dog"))),
    hkdf: bytesToHex(hkdf(sha256, te("ikm"), te("salt"), te("info"), 42)),
    pbkdf2: bytesToHex(pbkdf2(sha256, "password", "salt", { c: 50, dkLen: 32 })),
    scrypt: bytesToHex(scrypt("password", "salt", { N: 64, r: 4, p: 1, dkLen: 32 })),
    streaming: bytesToHex(sha256.create().update(te("a")).update(te("bc")).digest()),
  };
});

router.get("/noble-curves", () => {
  const priv = hexToBytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
  const msg = te("message");
  const edSig = ed25519.sign(msg, priv);
  const kPriv = hexToBytes("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721");
  const kSig = secp256k1.sign(sha256(msg), kPriv, { prehash: false });
  const pSig = p256.sign(msg, kPriv);
  const a = x25519.getPublicKey(priv), b = x25519.getPublicKey(kPriv);
  return {
    edPub: bytesToHex(ed25519.getPublicKey(priv)),
    edSig: bytesToHex(edSig),
    edOk: ed25519.verify(edSig, msg, ed25519.getPublicKey(priv)),
    edBad: ed25519.verify(edSig, te("other"), ed25519.getPublicKey(priv)),
    k1Pub: bytesToHex(secp256k1.getPublicKey(kPriv)),
    k1Sig: bytesToHex(kSig),
    k1Ok: secp256k1.verify(kSig, sha256(msg), secp256k1.getPublicKey(kPriv), { prehash: false }),
    p256Sig: bytesToHex(pSig),
    p256Ok: p256.verify(pSig, msg, p256.getPublicKey(kPriv)),
    x25519Same: bytesToHex(x25519.getSharedSecret(priv, b)) === bytesToHex(x25519.getSharedSecret(kPriv, a)),
    x25519: bytesToHex(x25519.getSharedSecret(priv, b)),
  };
});

router.get("/superjson", () => {
  const value = {
    when: new Date(Date.UTC(2024, 1, 29, 12)), big: 12345678901234567890n, set: new Set([1, "two"]),
    map: new Map([["k", { deep: [1, undefined] }]]), re: /a+b/gi, undef: undefined, nan: NaN, inf: -Infinity,
    url: new URL("https://example.com/p?q=1"), err: new Error("bad"),
  };
  const { json: j, meta } = superjson.serialize(value);
  const back = superjson.parse(superjson.stringify(value));
  return {
    json: j, meta,
    back: {
      when: back.when.toISOString(), big: typeof back.big + ":" + back.big, set: [...back.set], map: [...back.map.keys()],
      re: back.re.flags + back.re.source, undef: "undef" in back, nan: Number.isNaN(back.nan), url: back.url.href, err: back.err.message,
    },
  };
});

const Signup = v.object({
  email: v.pipe(v.string(), v.trim(), v.email("bad email")),
  age: v.pipe(v.unknown(), v.transform(Number), v.number(), v.integer(), v.minValue(18, "too young")),
  tags: v.optional(v.array(v.picklist(["a", "b"])), []),
  role: v.fallback(v.picklist(["user", "admin"]), "user"),
});
router.post("/valibot", async (req) => {
  const body = await req.json();
  const r = v.safeParse(Signup, body);
  if (r.success) return { ok: true, output: r.output };
  return { ok: false, flat: v.flatten(r.issues), issues: r.issues.map((i) => ({ kind: i.kind, type: i.type, message: i.message, path: i.path?.map((p) => p.key) })) };
});

const md = `# Title *one*

Some **bold** text with \`code\` and a [link](https://example.com "t").

- item 1
- item <2>

| a | b |
|---|:-:|
| 1 | 2 |

\`\`\`js
const x = 1 < 2;
\`\`\`

> quote
`;
router.get("/marked", () => new Response(marked.parse(md, { gfm: true }), { headers: { "content-type": "text/html" } }));

router.get("/yaml", () => {
  const doc = YAML.parse("a: 1\nb: [x, 'y', 2.5]\nc:\n  d: true\n  e: null\nf: |\n  line1\n  line2\nanchor: &x {k: v}\nref: *x\ndate: 2024-01-02\n");
  return {
    doc,
    out: YAML.stringify({ list: [1, { two: "2" }], s: "multi\nline", empty: {}, q: "yes" }),
    bad: caught(() => YAML.parse("a: [1, 2\nb")),
  };
});

router.get("/lodash", () => {
  const people = [{ n: "a", age: 30, team: "x" }, { n: "b", age: 20, team: "y" }, { n: "c", age: 25, team: "x" }];
  let called = 0;
  const d = debounce(() => called++, 10);
  d(); d();
  const orig = { a: { b: [1, { c: 2 }] } };
  const copy = cloneDeep(orig);
  copy.a.b[1].c = 3;
  const obj = {};
  set(obj, "x.y[0].z", 5);
  return {
    groups: groupBy(people, "team"), sorted: sortBy(people, ["age"]).map((p) => p.n),
    orig, copy, merged: merge({ a: { x: 1 } }, { a: { y: 2 } }), chunks: chunk([1, 2, 3, 4, 5], 2),
    kebab: kebabCase("Hello World_fooBar"), eq: isEqual({ a: [1] }, { a: [1] }), get: get(obj, "x.y[0].z"), obj,
    uniq: uniqBy(people, "team").map((p) => p.n), pick: pick(people[0], ["n", "age"]), debouncedSync: called,
    // _.template compiles with Function: refused inside a request.
    template: caught(() => template("hi <%= name %>")({ name: "x" })),
  };
});

router.get("/dates", () => {
  const d = new Date(Date.UTC(2024, 2, 9, 23, 30)); // 2024-03-09T23:30Z, DST starts in the US the next day
  const ny = new TZDate(d.getTime(), "America/New_York");
  return {
    utcFormat: format(parseISO("2024-02-29T12:00:00Z"), "yyyy-MM-dd"),
    ny: format(ny, "yyyy-MM-dd HH:mm zzz xxx"),
    nyPlus1: format(addDays(ny, 1), "yyyy-MM-dd HH:mm xxx"),
    tokyo: format(new TZDate(d.getTime(), "Asia/Tokyo"), "EEEE d MMMM yyyy HH:mm xxx"),
    inTz: format(d, "HH:mm", { in: tz("Europe/Berlin") }),
    week: startOfWeek(ny).toISOString(),
    kolkata: formatInTimeZone(d, "Asia/Kolkata", "yyyy-MM-dd HH:mm:ss XXX (zzz)"),
    zoned: toZonedTime(d, "Australia/Sydney").getHours(),
    fromZoned: fromZonedTime("2024-07-01 09:00", "Europe/London").toISOString(),
    offset: getTimezoneOffset("America/Los_Angeles", d) / 60000,
    days: differenceInCalendarDays(new Date(2024, 11, 25), new Date(2024, 0, 1)),
    distance: formatDistanceStrict(new Date(2024, 0, 1), new Date(2024, 0, 1, 5)),
    range: eachDayOfInterval({ start: new Date(Date.UTC(2024, 1, 27)), end: new Date(Date.UTC(2024, 2, 1)) }).length,
    toLocale: new TZDate(d.getTime(), "Europe/Paris").toString(),
  };
});

router.get("/jwks", async () => {
  const { publicKey, privateKey } = await jose.generateKeyPair("ES256", { extractable: true });
  const other = await jose.generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  const jwk2 = { ...(await jose.exportJWK(other.publicKey)), kid: "k2", alg: "ES256" };
  const JWKS = jose.createLocalJWKSet({ keys: [jwk2, jwk] });
  const token = await new jose.SignJWT({ scope: "read" }).setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setIssuedAt(1700000000).setIssuer("iss").setAudience("aud").setExpirationTime(1700007200).sign(privateKey);
  const r = await jose.jwtVerify(token, JWKS, { issuer: "iss", audience: "aud", currentDate: new Date(1700000000000) });
  const out = { payload: r.payload, kid: r.protectedHeader.kid, thumbprint: (await jose.calculateJwkThumbprint(jwk)).length };
  for (const [name, fn] of Object.entries({
    unknownKid: async () => jose.jwtVerify(await new jose.SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "zz" }).sign(privateKey), JWKS),
    wrongAud: () => jose.jwtVerify(token, JWKS, { audience: "other", currentDate: new Date(1700000000000) }),
    wrongKey: async () => jose.jwtVerify(await new jose.SignJWT({}).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(other.privateKey), JWKS),
  })) {
    try { await fn(); out[name] = "accepted"; } catch (e) { out[name] = { code: e.code, message: e.message }; }
  }
  const secret = new TextEncoder().encode("0123456789abcdef0123456789abcdef");
  const jwe = await new jose.EncryptJWT({ secret: 1 }).setProtectedHeader({ alg: "dir", enc: "A256GCM" }).encrypt(secret);
  out.jwe = (await jose.jwtDecrypt(jwe, secret)).payload;
  return out;
});

router.get("/params/:id/:rest+", withParams, ({ id, rest, query }) => ({ id, rest, query }));
router.get("/fail", () => error(422, { detail: "nope" }));
router.get("/throws", () => { throw new Error("handler threw"); });
router.get("/text", () => new Response("plain", { headers: { "x-lib": "itty" } }));

export default { ...router };
