// Intl.Collator (Go's golang.org/x/text/collate), Intl.PluralRules (CLDR
// rules from golang.org/x/text/feature/plural), and English
// RelativeTimeFormat, ListFormat and Segmenter; Intl.Locale's parsing.

const { intlLocale: resolveLocale, intlOption: option, intlRequested: requestedLocales } = internal;

// ---- Collator -------------------------------------------------------------

const kC = Symbol("Collator");
class Collator {
  constructor(locales = undefined, options = undefined) {
    const o = options === undefined ? {} : Object(options);
    const { locale } = resolveLocale(locales);
    const usage = option(o, "usage", ["sort", "search"], "sort", "Collator");
    const sensitivity = option(o, "sensitivity", ["base", "accent", "case", "variant"], "variant", "Collator");
    const ignorePunctuation = option(o, "ignorePunctuation", true, false, "Collator");
    const numeric = option(o, "numeric", true, false, "Collator");
    const caseFirst = option(o, "caseFirst", ["upper", "lower", "false"], "false", "Collator");
    const c = native.collator(locale, sensitivity, numeric, ignorePunctuation);
    internal.define(this, kC, { locale, usage, sensitivity, ignorePunctuation, numeric, caseFirst, c });
  }
  get compare() {
    const k = this[kC];
    if (!k.bound) k.bound = (a, b) => native.collate(k.c, String(a), String(b));
    return k.bound;
  }
  resolvedOptions() {
    const { locale, usage, sensitivity, ignorePunctuation, numeric, caseFirst } = this[kC];
    return { locale, usage, sensitivity, ignorePunctuation, collation: "default", numeric, caseFirst };
  }
  static supportedLocalesOf(locales) { return requestedLocales(locales); }
}
Object.defineProperty(Collator.prototype, Symbol.toStringTag, { value: "Intl.Collator", configurable: true });
const collators = new Map();
internal.stringCompare = (a, b, locales, options) => {
  if (options !== undefined) return new Collator(locales, options).compare(a, b);
  const key = locales === undefined ? "" : String(locales);
  let c = collators.get(key);
  if (!c) {
    c = new Collator(locales);
    if (collators.size < 64) collators.set(key, c);
  }
  return c.compare(a, b);
};

// ---- PluralRules --------------------------------------------------------------

const kPR = Symbol("PluralRules");
const CATEGORIES = ["zero", "one", "two", "few", "many", "other"];
class PluralRules {
  constructor(locales = undefined, options = undefined) {
    const o = options === undefined ? {} : Object(options);
    const { locale } = resolveLocale(locales);
    const type = option(o, "type", ["cardinal", "ordinal"], "cardinal", "PluralRules");
    const minFrac = o.minimumFractionDigits === undefined ? 0 : Number(o.minimumFractionDigits);
    const maxFrac = o.maximumFractionDigits === undefined ? Math.max(3, minFrac) : Number(o.maximumFractionDigits);
    internal.define(this, kPR, { locale, type, minFrac, maxFrac });
  }
  select(n) {
    const k = this[kPR];
    n = Number(n);
    if (!Number.isFinite(n)) return "other";
    const [i, v, w, f, t] = internal.pluralOperands(n, k.minFrac, k.maxFrac);
    return native.plural(k.locale, k.type === "ordinal", i, v, w, f, t);
  }
  resolvedOptions() {
    const k = this[kPR];
    const seen = new Set();
    for (let i = 0; i <= 200; i++) seen.add(this.select(i));
    for (const x of [0.5, 1.5, 2.5, 0.1, 1000000]) seen.add(this.select(x));
    return { locale: k.locale, type: k.type, minimumIntegerDigits: 1, minimumFractionDigits: k.minFrac, maximumFractionDigits: k.maxFrac, pluralCategories: CATEGORIES.filter((c) => seen.has(c)), roundingIncrement: 1, roundingMode: "halfExpand", roundingPriority: "auto", trailingZeroDisplay: "auto" };
  }
  static supportedLocalesOf(locales) { return requestedLocales(locales); }
}
Object.defineProperty(PluralRules.prototype, Symbol.toStringTag, { value: "Intl.PluralRules", configurable: true });

// ---- RelativeTimeFormat (English) ------------------------------------------------

const RT_UNITS = ["second", "minute", "hour", "day", "week", "month", "quarter", "year"];
const RT_SHORT = { second: ["sec.", "sec."], minute: ["min.", "min."], hour: ["hr.", "hr."], day: ["day", "days"], week: ["wk.", "wk."], month: ["mo.", "mo."], quarter: ["qtr.", "qtrs."], year: ["yr.", "yr."] };
const RT_AUTO = {
  day: { "-2": null, "-1": "yesterday", 0: "today", 1: "tomorrow" },
  year: { "-1": "last year", 0: "this year", 1: "next year" }, month: { "-1": "last month", 0: "this month", 1: "next month" },
  week: { "-1": "last week", 0: "this week", 1: "next week" }, quarter: { "-1": "last quarter", 0: "this quarter", 1: "next quarter" },
  hour: { 0: "this hour" }, minute: { 0: "this minute" }, second: { 0: "now" },
};
const kRT = Symbol("RelativeTimeFormat");
class RelativeTimeFormat {
  constructor(locales = undefined, options = undefined) {
    const o = options === undefined ? {} : Object(options);
    const { locale } = resolveLocale(locales);
    const style = option(o, "style", ["long", "short", "narrow"], "long", "RelativeTimeFormat");
    const numeric = option(o, "numeric", ["always", "auto"], "always", "RelativeTimeFormat");
    internal.define(this, kRT, { locale, style, numeric, nf: new internal.IntlNumberFormat(locale) });
  }
  formatToParts(value, unit) {
    const k = this[kRT];
    const u = String(unit).replace(/s$/, "");
    if (!RT_UNITS.includes(u)) throw new RangeError(`Invalid unit argument for Intl.RelativeTimeFormat.prototype.format() '${unit}'`);
    const v = Number(value);
    if (!Number.isFinite(v)) throw new RangeError("Invalid time value");
    if (k.numeric === "auto") {
      const word = RT_AUTO[u]?.[Object.is(v, -0) ? 0 : v];
      if (word) return [{ type: "literal", value: word }];
    }
    const negative = v < 0 || Object.is(v, -0);
    const num = k.nf.formatToParts(Math.abs(v)).map((p) => ({ ...p, unit: u }));
    const one = Math.abs(v) === 1;
    const label = k.style === "long" ? (one ? u : u + "s") : RT_SHORT[u][one ? 0 : 1];
    return negative ? [...num, { type: "literal", value: ` ${label} ago` }] : [{ type: "literal", value: "in " }, ...num, { type: "literal", value: ` ${label}` }];
  }
  format(value, unit) { return this.formatToParts(value, unit).map((p) => p.value).join(""); }
  resolvedOptions() {
    const { locale, style, numeric } = this[kRT];
    return { locale, style, numeric, numberingSystem: "latn" };
  }
  static supportedLocalesOf(locales) { return requestedLocales(locales); }
}
Object.defineProperty(RelativeTimeFormat.prototype, Symbol.toStringTag, { value: "Intl.RelativeTimeFormat", configurable: true });

// ---- ListFormat ----------------------------------------------------------------------

const LIST_WORDS = { en: ["and", "or"], de: ["und", "oder"], fr: ["et", "ou"], es: ["y", "o"], it: ["e", "o"], pt: ["e", "ou"], nl: ["en", "of"] };
const kLF = Symbol("ListFormat");
class ListFormat {
  constructor(locales = undefined, options = undefined) {
    const o = options === undefined ? {} : Object(options);
    const { locale, lang } = resolveLocale(locales);
    const type = option(o, "type", ["conjunction", "disjunction", "unit"], "conjunction", "ListFormat");
    const style = option(o, "style", ["long", "short", "narrow"], "long", "ListFormat");
    internal.define(this, kLF, { locale, lang, type, style });
  }
  formatToParts(list) {
    const { lang, type, style } = this[kLF];
    const items = Array.from(list ?? [], (x) => {
      if (typeof x !== "string") throw new TypeError("Iterable yielded " + String(x) + " which is not a string");
      return x;
    });
    const parts = [];
    const [and, or] = LIST_WORDS[lang] || LIST_WORDS.en;
    const english = !LIST_WORDS[lang] || lang === "en";
    let pair, last, middle = ", ";
    if (type === "unit") {
      pair = last = style === "narrow" ? " " : ", ";
      if (style === "narrow") middle = " ";
    } else {
      const word = type === "disjunction" ? or : style === "short" && english ? "&" : and;
      if (type === "conjunction" && style === "narrow" && english) { pair = ", "; last = ", "; } else {
        pair = ` ${word} `;
        last = english ? `, ${word} ` : ` ${word} `;
      }
    }
    items.forEach((x, i) => {
      if (i > 0) parts.push({ type: "literal", value: items.length === 2 ? pair : i === items.length - 1 ? last : middle });
      parts.push({ type: "element", value: x });
    });
    return parts;
  }
  format(list) { return this.formatToParts(list).map((p) => p.value).join(""); }
  resolvedOptions() {
    const { locale, type, style } = this[kLF];
    return { locale, type, style };
  }
  static supportedLocalesOf(locales) { return requestedLocales(locales); }
}
Object.defineProperty(ListFormat.prototype, Symbol.toStringTag, { value: "Intl.ListFormat", configurable: true });

// ---- Segmenter -------------------------------------------------------------------------

const kSG = Symbol("Segmenter");
class Segmenter {
  constructor(locales = undefined, options = undefined) {
    const o = options === undefined ? {} : Object(options);
    const { locale } = resolveLocale(locales);
    const granularity = option(o, "granularity", ["grapheme", "word", "sentence"], "grapheme", "Segmenter");
    internal.define(this, kSG, { locale, granularity });
  }
  segment(input) {
    const { granularity } = this[kSG];
    const s = String(input);
    const flat = native.segment(granularity, s);
    const list = [];
    for (let i = 0; i < flat.length; i += 3) {
      const seg = { segment: s.slice(flat[i], flat[i + 1]), index: flat[i], input: s };
      if (granularity === "word") seg.isWordLike = flat[i + 2];
      list.push(seg);
    }
    return {
      containing(i = 0) {
        const n = Number(i);
        return list.find((x) => n >= x.index && n < x.index + x.segment.length);
      },
      [Symbol.iterator]() { return list[Symbol.iterator](); },
    };
  }
  resolvedOptions() {
    const { locale, granularity } = this[kSG];
    return { locale, granularity };
  }
  static supportedLocalesOf(locales) { return requestedLocales(locales); }
}
Object.defineProperty(Segmenter.prototype, Symbol.toStringTag, { value: "Intl.Segmenter", configurable: true });

// ---- Locale -------------------------------------------------------------------------

class Locale {
  #tag;
  constructor(tag, options = undefined) {
    let t = internal.intlCanonicalLocale(tag instanceof Locale ? tag.toString() : tag);
    const o = options === undefined ? {} : Object(options);
    const p = t.split("-");
    if (o.language) p[0] = String(o.language);
    this.#tag = p.join("-");
  }
  #parts() {
    const p = this.#tag.split("-u-")[0].split("-");
    const out = { language: p[0] };
    for (const x of p.slice(1)) {
      if (/^[A-Z][a-z]{3}$/.test(x)) out.script = x;
      else if (/^([A-Z]{2}|\d{3})$/.test(x)) out.region = x;
    }
    return out;
  }
  get language() { return this.#parts().language; }
  get script() { return this.#parts().script; }
  get region() { return this.#parts().region; }
  get baseName() { return this.#tag.split("-u-")[0]; }
  toString() { return this.#tag; }
  maximize() { return this; }
  minimize() { return this; }
}
Object.defineProperty(Locale.prototype, Symbol.toStringTag, { value: "Intl.Locale", configurable: true });

internal.IntlCollator = Collator;
internal.IntlPluralRules = PluralRules;
internal.IntlRelativeTimeFormat = RelativeTimeFormat;
internal.IntlListFormat = ListFormat;
internal.IntlSegmenter = Segmenter;
internal.IntlLocale = Locale;
internal.IntlDisplayNames = class DisplayNames {
  constructor() { throw new TypeError("celld: Intl.DisplayNames is not supported yet"); }
};
