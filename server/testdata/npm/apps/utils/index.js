import { DateTime, Duration, Interval, Info, Settings } from "luxon";
import dayjs from "dayjs";
import utc from "dayjs/plugin/utc";
import timezone from "dayjs/plugin/timezone";
import relativeTime from "dayjs/plugin/relativeTime";
import customParseFormat from "dayjs/plugin/customParseFormat";
import { AwsClient, AwsV4Signer } from "aws4fetch";
import { XMLParser, XMLBuilder, XMLValidator } from "fast-xml-parser";
import Ajv from "ajv";
import Mustache from "mustache";
import Handlebars from "handlebars";
import { parseDocument, DomUtils } from "htmlparser2";
import { parseHTML } from "linkedom";
import qs from "qs";
import mime from "mime";
import ms from "ms";
import semver from "semver";
import slugify from "slugify";
import { UAParser } from "ua-parser-js";
import { ulid, decodeTime, monotonicFactory } from "ulid";
import EventEmitter3 from "eventemitter3";
import { produce, enablePatches, produceWithPatches, applyPatches } from "immer";
import { gzipSync, gunzipSync, zipSync, unzipSync, strToU8, strFromU8, deflateSync } from "fflate";
import * as pako from "pako";
import JSZip from "jszip";
import { encode as mpEncode, decode as mpDecode } from "@msgpack/msgpack";
import nacl from "tweetnacl";
import * as OTPAuth from "otpauth";
import * as oauth from "oauth4webapi";
import bcrypt from "bcryptjs";
import jwt from "@tsndr/cloudflare-worker-jwt";
import Stripe from "stripe";

dayjs.extend(utc);
dayjs.extend(timezone);
dayjs.extend(relativeTime);
dayjs.extend(customParseFormat);
enablePatches();

// Compiled at startup, as workerd allows code generation only then.
const ajv = new Ajv({ allErrors: true });
const validateUser = ajv.compile({
  type: "object",
  properties: { name: { type: "string", minLength: 2 }, age: { type: "integer", minimum: 0 }, tags: { type: "array", items: { type: "string" }, uniqueItems: true } },
  required: ["name", "age"],
  additionalProperties: false,
});
Handlebars.registerHelper("upper", (s) => String(s).toUpperCase());
const hbs = Handlebars.compile("<ul>{{#each items}}<li class=\"{{#if @first}}first{{/if}}\">{{upper name}} {{{raw}}} {{esc}}</li>{{/each}}</ul>");
hbs({ items: [] }); // compiles now: handlebars compiles on first use

const caught = async (fn) => { try { return await fn(); } catch (e) { return { error: e.name, message: e.message }; } };
const hex = (u) => Array.from(u, (b) => b.toString(16).padStart(2, "0")).join("");
const routes = {};
const T = Date.UTC(2024, 2, 9, 23, 30); // DST starts in the US the next day

routes["/luxon"] = () => {
  const dt = DateTime.fromMillis(T, { zone: "America/New_York" });
  return {
    iso: dt.toISO(), plus: dt.plus({ days: 1 }).toISO(), offset: dt.offset, zone: dt.zoneName, abbr: dt.offsetNameShort,
    fmt: dt.setLocale("en-US").toFormat("cccc, LLLL d yyyy h:mm a ZZZZ"), de: dt.setLocale("de").toLocaleString(DateTime.DATETIME_FULL),
    fr: dt.setLocale("fr").toFormat("DDDD"), ja: dt.setZone("Asia/Tokyo").setLocale("ja").toLocaleString(DateTime.DATE_HUGE),
    rel: dt.toRelative({ base: dt.plus({ hours: 3 }) }), relDe: dt.setLocale("de").toRelative({ base: dt.plus({ days: 2 }) }),
    dur: Duration.fromObject({ hours: 26, minutes: 5 }).shiftTo("days", "hours", "minutes").toHuman(),
    iv: Interval.fromDateTimes(dt, dt.plus({ weeks: 2 })).length("days"),
    months: Info.months("short", { locale: "es" }), weekdays: Info.weekdays("narrow"), validZone: Info.isValidIANAZone("Europe/Kyiv"),
    parsed: DateTime.fromFormat("2024-07-04 15:30", "yyyy-MM-dd HH:mm", { zone: "Europe/London" }).toUTC().toISO(),
    invalid: DateTime.fromISO("2024-13-40").invalidReason, features: Info.features(),
  };
};

routes["/dayjs"] = () => {
  const d = dayjs.utc(T);
  return {
    utc: d.format(), ny: d.tz("America/New_York").format("YYYY-MM-DD HH:mm Z z"), nyNext: d.tz("America/New_York").add(1, "day").format(),
    tokyo: d.tz("Asia/Tokyo").format("dddd D MMMM YYYY HH:mm"), from: d.from(d.add(3, "hour")), to: d.to(d.add(40, "day")),
    parsed: dayjs.tz("2024-07-04 09:00", "Europe/London").toISOString(), custom: dayjs("04/07/2024", "DD/MM/YYYY").format("YYYY-MM-DD"),
    diff: dayjs.utc("2024-12-25").diff(dayjs.utc("2024-01-01"), "day"), startOf: d.startOf("month").toISOString(),
    valid: dayjs("nope").isValid(),
  };
};

routes["/aws4fetch"] = async () => {
  const signer = new AwsV4Signer({
    url: "https://acct.r2.cloudflarestorage.com/bucket/some%20key.txt?x-id=GetObject", method: "PUT",
    accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", region: "auto", service: "s3",
    datetime: "20240101T000000Z", headers: { "content-type": "text/plain" }, body: "hello",
  });
  const signed = await signer.sign();
  const presign = new AwsV4Signer({
    url: "https://acct.r2.cloudflarestorage.com/bucket/photo.jpg?X-Amz-Expires=3600", accessKeyId: "AKIDEXAMPLE",
    secretAccessKey: "secret", region: "auto", service: "s3", datetime: "20240101T000000Z", signQuery: true,
  });
  const client = new AwsClient({ accessKeyId: "a", secretAccessKey: "b", service: "s3", region: "us-east-1" });
  const req = await client.sign("https://s3.amazonaws.com/b/k", { method: "GET", aws: { datetime: "20240101T000000Z" } });
  return {
    auth: signed.headers.get("authorization"), sha: signed.headers.get("x-amz-content-sha256"), date: signed.headers.get("x-amz-date"),
    url: signed.url.toString(), presigned: (await presign.sign()).url.toString(), clientAuth: req.headers.get("authorization"), method: req.method,
  };
};

routes["/xml"] = () => {
  const xml = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title type="text">News &amp; more</title><entry id="1"><name>a</name><n>5</n></entry><entry id="2"><name><![CDATA[<b>x</b>]]></name></entry></feed>`;
  const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "@_", isArray: (name) => name === "entry" });
  const doc = parser.parse(xml);
  return {
    doc, valid: XMLValidator.validate(xml), invalid: XMLValidator.validate("<a><b></a>"),
    built: new XMLBuilder({ ignoreAttributes: false, format: true }).build({ root: { "@_v": "1", item: ["x", "y"], empty: "" } }),
  };
};

routes["/ajv"] = () => {
  const ok = validateUser({ name: "ada", age: 36, tags: ["a", "b"] });
  const bad = validateUser({ name: "x", age: 1.5, tags: ["a", "a"], extra: true });
  return { ok, bad, errors: validateUser.errors.map((e) => ({ path: e.instancePath, keyword: e.keyword, message: e.message })), text: ajv.errorsText(validateUser.errors) };
};

routes["/ajv-at-request"] = () => {
  try {
    const v = new Ajv().compile({ type: "string" });
    return { compiled: true, valid: v("x") };
  } catch (e) {
    return { compiled: false, name: e.name, message: e.message };
  }
};

routes["/templates"] = () => ({
  mustache: Mustache.render("Hi {{name}}! {{#items}}[{{.}}]{{/items}}{{^none}} none{{/none}} {{{html}}} {{html}} {{> part}}", { name: "<ada>", items: [1, 2], html: "<i>x</i>" }, { part: "partial {{name}}" }),
  handlebars: hbs({ items: [{ name: "a", raw: "<b>1</b>", esc: "<2>" }, { name: "b", raw: "", esc: "&" }] }),
});

routes["/html"] = () => {
  const html = `<html><head><title>T</title></head><body><div id="main" class="a b"><p>One <a href="/x">link</a></p><p>Two</p><!-- c --><ul><li>1</li><li>2</li></ul></div></body></html>`;
  const dom = parseDocument(html);
  const links = DomUtils.getElementsByTagName("a", dom).map((a) => [a.attribs.href, DomUtils.textContent(a)]);
  const { document } = parseHTML(html);
  const main = document.querySelector("#main");
  const li = document.createElement("li");
  li.textContent = "3 & <4>";
  main.querySelector("ul").appendChild(li);
  main.querySelectorAll("p")[1].setAttribute("data-x", "y");
  return {
    links, text: DomUtils.textContent(DomUtils.getElementsByTagName("p", dom)[1]), count: DomUtils.findAll((e) => e.name === "li", dom.children).length,
    title: document.title, classes: [...main.classList], lis: [...document.querySelectorAll("li")].map((e) => e.textContent), out: main.outerHTML,
  };
};

routes["/small"] = () => {
  const mono = monotonicFactory(() => 0.5);
  const a = mono(1700000000000), b = mono(1700000000000);
  const ee = new EventEmitter3();
  const seen = [];
  ee.on("x", (v) => seen.push("on" + v)).once("x", (v) => seen.push("once" + v));
  ee.emit("x", 1); ee.emit("x", 2);
  const ua = new UAParser("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36").getResult();
  return {
    qs: [qs.parse("a[b][c]=1&list[]=x&list[]=y&n=%20z&arr[1]=q"), qs.stringify({ a: { b: [1, 2] }, s: "x y" }), qs.stringify({ a: [1, 2] }, { arrayFormat: "brackets", encode: false })],
    mime: [mime.getType("photo.JPG"), mime.getType("x.webmanifest"), mime.getExtension("text/html; charset=utf-8"), mime.getType("nope")],
    ms: [ms("2 days"), ms("1.5h"), ms(90061000), ms(90061000, { long: true }), ms("nope")],
    semver: [semver.satisfies("1.4.2", "^1.2.0"), semver.maxSatisfying(["1.0.0", "1.5.0", "2.0.0"], "~1.x"), semver.inc("1.2.3-beta.1", "prerelease"), semver.coerce("v3.4 final").version, semver.compare("1.0.0-rc.1", "1.0.0"), semver.valid("x")],
    slugify: [slugify("Héllo Wörld & Friends!", { lower: true, strict: true }), slugify("Ça va? Ünïcödé", "_")],
    ua: { browser: ua.browser.name, major: ua.browser.major, os: ua.os.name, engine: ua.engine.name, cpu: ua.cpu.architecture ?? null },
    ulid: [a, b, decodeTime(a), a < b, ulid().length],
    ee: [seen, ee.listenerCount("x"), ee.eventNames()],
  };
};

routes["/immer"] = () => {
  const base = { todos: [{ id: 1, done: false }, { id: 2, done: false }], meta: { n: 2 } };
  const next = produce(base, (d) => { d.todos[0].done = true; d.todos.push({ id: 3, done: false }); d.meta.n = 3; });
  const [, patches, inverse] = produceWithPatches(base, (d) => { delete d.meta; d.todos.pop(); });
  return {
    next, base, shared: next.todos[1] === base.todos[1], frozen: Object.isFrozen(next.todos), patches, inverse,
    applied: applyPatches(base, patches),
  };
};

routes["/compress"] = async () => {
  const text = "hello hello hello hello compression ".repeat(20);
  const gz = gzipSync(strToU8(text), { mtime: 0 });
  const zip = zipSync({ "a.txt": strToU8("A"), "dir/b.txt": strToU8("B") }, { mtime: new Date(Date.UTC(2024, 0, 1)) });
  const unz = unzipSync(zip);
  const pz = pako.deflate(text);
  const jz = new JSZip();
  jz.file("hello.txt", "Hello JSZip");
  jz.folder("img").file("x.bin", new Uint8Array([1, 2, 3]));
  const zipped = await jz.generateAsync({ type: "uint8array", compression: "DEFLATE" });
  const back = await JSZip.loadAsync(zipped);
  return {
    fflate: [gunzipSync(gz).length, strFromU8(gunzipSync(gz)) === text, Object.keys(unz).sort(), strFromU8(unz["dir/b.txt"]), deflateSync(strToU8("aaaa")).length],
    pako: [pako.inflate(pz, { to: "string" }) === text, hex(pako.deflateRaw("abc")), pako.ungzip(gz, { to: "string" }).length],
    // DecompressionStream reads what fflate wrote.
    web: await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream("gzip"))).text() === text,
    jszip: [Object.keys(back.files).sort(), await back.file("hello.txt").async("string"), Array.from(await back.file("img/x.bin").async("uint8array"))],
  };
};

routes["/binary-formats"] = () => {
  const value = { a: 1, b: [true, null, "s"], c: new Uint8Array([1, 2]), d: 1.5, e: -1, big: 2 ** 40 };
  const mp = mpEncode(value);
  return {
    msgpack: hex(mp), msgpackBack: { ...mpDecode(mp), c: Array.from(mpDecode(mp).c) },
  };
};

routes["/auth-libs"] = async () => {
  const seed = Uint8Array.from({ length: 32 }, (_, i) => i);
  // (tweetnacl's signatures and bcrypt take seconds on goja: not here.)
  const kp = nacl.box.keyPair.fromSecretKey(seed);
  const box = nacl.secretbox(new TextEncoder().encode("secret"), new Uint8Array(24), seed);
  const totp = new OTPAuth.TOTP({ issuer: "celld", label: "ada", algorithm: "SHA1", digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32("JBSWY3DPEHPK3PXP") });
  const token = await jwt.sign({ sub: "ada", iat: 1700000000 }, "secret");
  const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
  return {
    nacl: [hex(kp.publicKey), hex(box), hex(nacl.hash(new TextEncoder().encode("msg"))).slice(0, 32)],
    totp: [totp.generate({ timestamp: 1700000000000 }), totp.validate({ token: totp.generate({ timestamp: 1700000000000 }), timestamp: 1700000000000 }), totp.toString()],
    bcrypt: [bcrypt.getRounds("$2b$10$abcdefghijklmnopqrstuughE8Ev8uGFaUgY2cNEySvxngrb/Jzdm"), bcrypt.getSalt("$2b$10$abcdefghijklmnopqrstuughE8Ev8uGFaUgY2cNEySvxngrb/Jzdm"), bcrypt.truncates("x".repeat(80))],
    cfJwt: [token, await jwt.verify(token, "secret").then((r) => !!r), await jwt.verify(token, "other").then((r) => !!r, (e) => e.message), jwt.decode(token).payload],
    pkce: await oauth.calculatePKCECodeChallenge(verifier),
  };
};

routes["/stripe"] = async () => {
  const stripe = new Stripe("sk_test_123", { httpClient: Stripe.createFetchHttpClient() });
  const secret = "whsec_test_secret";
  const payload = JSON.stringify({ id: "evt_1", object: "event", type: "payment_intent.succeeded", data: { object: { id: "pi_1", amount: 999 } } });
  const cp = Stripe.createSubtleCryptoProvider();
  const header = await stripe.webhooks.generateTestHeaderStringAsync({ payload, secret, timestamp: 1700000000, cryptoProvider: cp });
  const now = Math.floor(Date.now() / 1000);
  const fresh = await stripe.webhooks.generateTestHeaderStringAsync({ payload, secret, timestamp: now, cryptoProvider: cp });
  const event = await stripe.webhooks.constructEventAsync(payload, fresh, secret, undefined, cp);
  return {
    header, type: event.type, amount: event.data.object.amount,
    stale: await caught(() => stripe.webhooks.constructEventAsync(payload, header, secret, 300, cp)),
    wrong: await caught(() => stripe.webhooks.constructEventAsync(payload, fresh, "whsec_other", undefined, cp)),
  };
};

export default {
  async fetch(request) {
    const route = routes[new URL(request.url).pathname];
    if (!route) return new Response("not found", { status: 404 });
    try {
      return Response.json(await route(request));
    } catch (e) {
      return Response.json({ threw: e.name, message: e.message }, { status: 500 });
    }
  },
};
