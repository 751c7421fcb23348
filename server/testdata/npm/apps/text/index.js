import { IntlMessageFormat } from "intl-messageformat";
import i18next from "i18next";
import prettyBytes from "pretty-bytes";
import prettyMs from "pretty-ms";
import humanizeDuration from "humanize-duration";
import { camelCase, snakeCase, pascalCase, kebabCase, sentenceCase, constantCase, dotCase } from "change-case";
import pluralize from "pluralize";
import he from "he";
import validator from "validator";
import { parsePhoneNumberFromString, AsYouType, isValidPhoneNumber } from "libphonenumber-js";
import * as chrono from "chrono-node";
import Decimal from "decimal.js";
import Fuse from "fuse.js";
import { diffWords, diffLines, createTwoFilesPatch, applyPatch } from "diff";
import xss from "xss";

const caught = (fn) => { try { return fn(); } catch (e) { return { error: e.name, message: e.message }; } };
const json = (v) => Response.json(v);
const when = new Date(Date.UTC(2024, 2, 9, 18, 30, 5));

const routes = {
  "/messageformat": () => {
    const m = (src, loc, vals, opts) => caught(() => new IntlMessageFormat(src, loc, undefined, opts).format(vals));
    const plural = "{n, plural, =0 {no files} one {# file} other {# files}}";
    return {
      en: [0, 1, 2, 1000].map((n) => m(plural, "en", { n })),
      pl: [1, 2, 5, 22].map((n) => m("{n, plural, one {# plik} few {# pliki} many {# plików} other {# pliku}}", "pl", { n })),
      ar: [0, 1, 2, 3, 11, 100].map((n) => m("{n, plural, zero {z} one {o} two {t} few {f} many {m} other {x}}", "ar", { n })),
      ordinal: [1, 2, 3, 4, 11, 22].map((n) => m("{n, selectordinal, one {#st} two {#nd} few {#rd} other {#th}}", "en", { n })),
      select: m("{g, select, female {she} male {he} other {they}} left", "en", { g: "x" }),
      number: m("{v, number, ::currency/EUR} · {p, number, percent} · {big, number, ::compact-short}", "de", { v: 1234.5, p: 0.256, big: 1234567 }),
      date: m("{d, date, long} {d, time, short}", "en-US", { d: when }, { timeZone: "UTC" }),
      dateFr: m("{d, date, full}", "fr", { d: when }, { timeZone: "Europe/Paris" }),
      tags: caught(() => new IntlMessageFormat("Hi <b>{name}</b>!", "en").format({ name: "Ada", b: (c) => `[${c.join("")}]` })),
      syntax: m("{oops", "en", {}),
      missing: m("{a} and {b}", "en", { a: 1 }),
    };
  },
  "/i18next": async () => {
    const i = i18next.createInstance();
    await i.init({
      lng: "de", fallbackLng: "en", initAsync: false,
      resources: {
        en: { translation: { hello: "Hello {{name}}", apple_one: "one apple", apple_other: "{{count}} apples", nested: { deep: "deep $t(hello, {\"name\": \"you\"})" }, price: "{{val, currency(USD)}}", when: "{{d, datetime}}", list: "{{items, list}}" } },
        de: { translation: { hello: "Hallo {{name}}", apple_one: "ein Apfel", apple_other: "{{count}} Äpfel" } },
      },
    });
    return {
      hello: i.t("hello", { name: "<Ada>" }), apples: [0, 1, 5].map((count) => i.t("apple", { count })),
      fallback: i.t("nested.deep"), missing: i.t("nope"), price: i.t("price", { val: 1234.5 }),
      when: i.t("when", { d: when, formatParams: { d: { timeZone: "UTC" } } }), list: i.t("list", { items: ["a", "b", "c"] }),
      en: i.getFixedT("en")("apple", { count: 1 }), dir: [i.dir("ar"), i.dir("de")],
    };
  },
  "/humanize": () => ({
    bytes: [0, 1, 999, 1000, 1536, 1e9, -2048, 1e27].map((n) => prettyBytes(n)),
    bytesOpts: [prettyBytes(1536, { binary: true }), prettyBytes(1536, { locale: "de" }), prettyBytes(1337, { bits: true, signed: true }), prettyBytes(1e6, { maximumFractionDigits: 3, minimumFractionDigits: 1 })],
    ms: [prettyMs(1337), prettyMs(133700000), prettyMs(133700000, { compact: true }), prettyMs(95500, { verbose: true }), prettyMs(1.5, { formatSubMilliseconds: true }), prettyMs(3661000, { colonNotation: true })],
    durations: [humanizeDuration(97320000), humanizeDuration(3000, { language: "de" }), humanizeDuration(1234567, { largest: 2, round: true }), humanizeDuration(2.5e9, { language: "ja" }), humanizeDuration(90061000, { units: ["h", "m"], conjunction: " and ", serialComma: false })],
  }),
  "/unicode": () => {
    const s = "héllo 👩‍👩‍👧 日本語 🇯🇵 a\u0301 \u001b[31mred\u001b[0m";
    return {
      cases: ["hello world_foo-Bar", "XMLHttpRequest v2", "ünïcödé wörds"].map((x) => [camelCase(x), snakeCase(x), pascalCase(x), kebabCase(x), sentenceCase(x), constantCase(x), dotCase(x)]),
      plurals: ["person", "ox", "octopus", "sheep", "Status", "quiz"].map((w) => [pluralize(w), pluralize.singular(pluralize(w))]).concat([[pluralize("apple", 1, true), pluralize("apple", 3, true)]]),
      he: [he.encode("café <a> & ∉", { useNamedReferences: true }), he.decode("&lt;&eacute;&#x1F600;&amp;&notin;&NotANamedRef;"), he.escape("<'\"&>")],
      segments: [...new Intl.Segmenter("en", { granularity: "grapheme" }).segment("a👩‍👩‍👧🇯🇵e\u0301")].map((g) => g.segment),
      words: [...new Intl.Segmenter("en", { granularity: "word" }).segment("Hello, world! It's 3.14.")].filter((g) => g.isWordLike).map((g) => g.segment),
    };
  },
  "/validator": () => ({
    emails: ["a@b.co", "a.b+c@sub.example.org", "no@tld", "ünï@exämple.de", "x@[127.0.0.1]"].map((e) => validator.isEmail(e)),
    urls: ["https://example.com/a?b#c", "ftp://x.org", "example.com", "http://localhost:3000", "https://ex ample.com"].map((u) => validator.isURL(u)),
    misc: [validator.isIBAN("DE89370400440532013000"), validator.isCreditCard("4111111111111111"), validator.isUUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), validator.isIP("::ffff:1.2.3.4"), validator.isISO8601("2024-02-30"), validator.isISO8601("2024-02-30", { strict: true }), validator.isMobilePhone("+4915123456789", "de-DE"), validator.isJWT("a.b.c"), validator.isSlug("hello-world"), validator.isAlpha("Ünïcode", "de-DE"), validator.isStrongPassword("Abc!2345"), validator.isPostalCode("SW1A 1AA", "GB"), validator.isLatLong("51.5,-0.12"), validator.isSemVer("1.2.3-beta.1+b")],
    sanitize: [validator.escape("<a href='x'>&</a>"), validator.normalizeEmail("Foo.Bar+tag@GoogleMail.com"), validator.trim("  x  "), validator.toDate("2024-03-09")?.toISOString()],
  }),
  "/phone": () => {
    const p = parsePhoneNumberFromString("+44 20 7946 0958");
    const us = parsePhoneNumberFromString("(213) 373-4253", "US");
    const ayt = new AsYouType("DE"); const typed = "015123456789".split("").map((d) => ayt.input(d)).at(-1);
    return { uk: [p.country, p.nationalNumber, p.formatInternational(), p.formatNational(), p.getURI(), p.isValid(), p.getType() ?? null], us: [us.format("E.164"), us.formatNational(), us.isValid()], typed, valid: [isValidPhoneNumber("+12133734253"), isValidPhoneNumber("+1213373425")], bad: caught(() => parsePhoneNumberFromString("nope")) ?? null };
  },
  "/chrono": () => {
    const ref = new Date(Date.UTC(2024, 2, 9, 12, 0, 0));
    const p = (t, o) => chrono.parse(t, { instant: ref, timezone: "UTC" }, o).map((r) => ({ text: r.text, index: r.index, start: r.start.date().toISOString(), end: r.end?.date().toISOString() ?? null }));
    return {
      a: p("Let's meet next Friday at 5pm"), b: p("from 3 March to 10 March 2025"), c: p("tomorrow noon and in 2 weeks"),
      d: p("2024-06-01T10:00:00Z"), e: p("Sat Aug 17 2013 18:40:39 GMT+0900 (JST)"), f: chrono.de.parse("am 5. Mai um 14 Uhr", ref).map((r) => r.start.date().toISOString()),
      strict: chrono.strict.parseDate("last friday", ref, { forwardDate: false })?.toISOString() ?? null,
    };
  },
  "/decimal": () => {
    const D = Decimal.clone({ precision: 30, rounding: Decimal.ROUND_HALF_EVEN });
    return {
      sum: new D("0.1").plus("0.2").toString(), div: new D(1).div(3).toString(), pow: new D(2).pow(100).toFixed(), sqrt: new D(2).sqrt().toString(),
      exp: D.exp(1).toSignificantDigits(20).toString(), ln: new D(10).ln().toFixed(15), round: [new D("2.5").toDecimalPlaces(0).toString(), new D("3.5").toDecimalPlaces(0).toString(), new D("-1.005").toFixed(2)],
      sci: [new D("1e-20").toString(), new D("123456789012345678901234567890123").toString(), new D("0.000001234").toExponential(2)], frac: new D("0.75").toFraction().map(String), hex: new D(255.5).toHex(), bad: caught(() => new D("abc").toString()),
    };
  },
  "/search": () => {
    const books = [{ title: "The Hobbit", author: "J. R. R. Tolkien" }, { title: "A Wizard of Earthsea", author: "Ursula K. Le Guin" }, { title: "The Dispossessed", author: "Ursula K. Le Guin" }, { title: "Dune", author: "Frank Herbert" }];
    const fuse = new Fuse(books, { keys: ["title", "author"], includeScore: true, includeMatches: true, threshold: 0.4 });
    const r = (q) => fuse.search(q).map((x) => ({ t: x.item.title, s: Math.round(x.score * 1e6) / 1e6, m: x.matches.map((m) => [m.key, m.indices]) }));
    return { hobit: r("hobit"), ursla: r("ursla guin"), ext: new Fuse(books, { keys: ["title"], useExtendedSearch: true }).search("'Wiz | ^Dune").map((x) => x.item.title) };
  },
  "/diff": () => {
    const a = "line one\nline two\nline three\n", b = "line one\nline 2\nline three\nline four\n";
    const patch = createTwoFilesPatch("a.txt", "b.txt", a, b, "old", "new", { context: 1 });
    return { words: diffWords("the quick brown fox", "the slow brown dog").map((p) => [p.added ? "+" : p.removed ? "-" : "=", p.value]), lines: diffLines(a, b).map((p) => [p.count, !!p.added, !!p.removed]), patch, applied: applyPatch(a, patch) === b };
  },
  "/xss": () => ({
    clean: xss('<p onclick="x()">hi <script>alert(1)</script><a href="javascript:alert(1)">l</a><img src=x onerror=alert(1)><b style="color:red">b</b></p>'),
    custom: xss('<div class="a"><span>s</span><em>e</em></div>', { whiteList: { span: [] }, stripIgnoreTag: true }),
  }),
};

export default {
  async fetch(request) {
    const route = routes[new URL(request.url).pathname];
    if (!route) return new Response("not found", { status: 404 });
    return json(await route());
  },
};
