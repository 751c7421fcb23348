// Intl.NumberFormat (decimal, percent, currency, unit; standard, compact,
// scientific and engineering notation) and Number/BigInt toLocaleString.
// Numbers round from their shortest decimal form, half away from zero, as
// ICU does; symbols and patterns come from SYMBOLS/CURRENCY below.

const { intlLocale: resolveLocale, intlOption: option, intlRequested: requestedLocales } = internal;

const SYMBOLS = {
  en: { decimal: ".", group: ",", cur: "¤#", curSep: "", pct: "#%" },
  "en-IN": { indian: true },
  de: { decimal: ",", group: ".", cur: "#¤", curSep: "\u00a0", pct: "#\u00a0%" },
  "de-CH": { decimal: ".", group: "’", cur: "¤#", curSep: "\u00a0", pct: "#%" },
  "de-AT": { decimal: ",", group: "\u00a0", cur: "¤#", curSep: "\u00a0" },
  fr: { decimal: ",", group: "\u202f", cur: "#¤", curSep: "\u00a0", pct: "#\u202f%" },
  "fr-CH": { decimal: ",", group: "\u202f", cur: "#¤", curSep: "\u00a0" },
  es: { decimal: ",", group: ".", minGroup: 2, cur: "#¤", curSep: "\u00a0", pct: "#\u00a0%" },
  it: { decimal: ",", group: ".", minGroup: 2, cur: "#¤", curSep: "\u00a0" },
  pt: { decimal: ",", group: ".", cur: "¤#", curSep: "\u00a0" },
  "pt-PT": { group: "\u00a0", cur: "#¤" },
  nl: { decimal: ",", group: ".", cur: "¤#", curSep: "\u00a0" },
  ru: { decimal: ",", group: "\u00a0", cur: "#¤", curSep: "\u00a0", pct: "#\u00a0%" },
  pl: { decimal: ",", group: "\u00a0", minGroup: 2, cur: "#¤", curSep: "\u00a0" },
  sv: { decimal: ",", group: "\u00a0", cur: "#¤", curSep: "\u00a0", pct: "#\u00a0%" },
  ja: {}, zh: {}, ko: {},
};
const symbolsFor = (locale) => {
  const parts = locale.split("-");
  const lang = parts[0];
  const base = SYMBOLS[lang] || SYMBOLS.en;
  const region = SYMBOLS[`${lang}-${parts.find((p) => /^[A-Z]{2}$/.test(p)) || ""}`] || {};
  return { ...SYMBOLS.en, ...base, ...region };
};
const CURRENCY = {
  USD: ["$", "$", "US dollar", "US dollars"], EUR: ["€", "€", "euro", "euros"], GBP: ["£", "£", "British pound", "British pounds"],
  JPY: ["¥", "¥", "Japanese yen", "Japanese yen", 0], CAD: ["CA$", "$", "Canadian dollar", "Canadian dollars"], AUD: ["A$", "$", "Australian dollar", "Australian dollars"],
  INR: ["₹", "₹", "Indian rupee", "Indian rupees"], CNY: ["CN¥", "¥", "Chinese yuan", "Chinese yuan"], CHF: ["CHF", "CHF", "Swiss franc", "Swiss francs"],
  KRW: ["₩", "₩", "South Korean won", "South Korean won", 0], MXN: ["MX$", "$", "Mexican peso", "Mexican pesos"], BRL: ["R$", "R$", "Brazilian real", "Brazilian reals"],
  HKD: ["HK$", "$", "Hong Kong dollar", "Hong Kong dollars"], NZD: ["NZ$", "$", "New Zealand dollar", "New Zealand dollars"], SEK: ["SEK", "kr", "Swedish krona", "Swedish kronor"],
  NOK: ["NOK", "kr", "Norwegian krone", "Norwegian kroner"], DKK: ["DKK", "kr", "Danish krone", "Danish kroner"], PLN: ["PLN", "zł", "Polish zloty", "Polish zlotys"],
  RUB: ["RUB", "₽", "Russian ruble", "Russian rubles"], SGD: ["SGD", "$", "Singapore dollar", "Singapore dollars"], ZAR: ["ZAR", "R", "South African rand", "South African rand"],
  ILS: ["₪", "₪", "Israeli new shekel", "Israeli new shekels"], TWD: ["NT$", "$", "New Taiwan dollar", "New Taiwan dollars"], VND: ["₫", "₫", "Vietnamese dong", "Vietnamese dong", 0],
  BHD: ["BHD", "BHD", "Bahraini dinar", "Bahraini dinars", 3], KWD: ["KWD", "KWD", "Kuwaiti dinar", "Kuwaiti dinars", 3],
};
// Symbols a locale writes differently from English.
const LOCAL_CURRENCY = { ja: { JPY: "￥" }, zh: { CNY: "¥" }, "en-CA": { CAD: "$", USD: "US$" }, "en-AU": { AUD: "$", USD: "US$" }, "en-IN": { INR: "₹" }, "pt-BR": { BRL: "R$" }, "de-CH": { CHF: "CHF" } };
const UNITS = {
  byte: ["byte", "B", "B"], kilobyte: ["kilobyte", "kB", "kB"], megabyte: ["megabyte", "MB", "MB"], gigabyte: ["gigabyte", "GB", "GB"], terabyte: ["terabyte", "TB", "TB"],
  bit: ["bit", "bit", "bit"], kilobit: ["kilobit", "kb", "kb"], megabit: ["megabit", "Mb", "Mb"], gigabit: ["gigabit", "Gb", "Gb"],
  millisecond: ["millisecond", "ms", "ms"], second: ["second", "sec", "s"], minute: ["minute", "min", "m"], hour: ["hour", "hr", "h"], day: ["day", "day", "d"],
  week: ["week", "wk", "w"], month: ["month", "mth", "m"], year: ["year", "yr", "y"],
  meter: ["meter", "m", "m"], kilometer: ["kilometer", "km", "km"], centimeter: ["centimeter", "cm", "cm"], millimeter: ["millimeter", "mm", "mm"],
  mile: ["mile", "mi", "mi"], foot: ["foot", "ft", "′"], inch: ["inch", "in", "″"], kilogram: ["kilogram", "kg", "kg"], gram: ["gram", "g", "g"], pound: ["pound", "lb", "lb"],
  liter: ["liter", "L", "L"], milliliter: ["milliliter", "mL", "mL"], celsius: ["degree Celsius", "°C", "°C"], fahrenheit: ["degree Fahrenheit", "°F", "°"],
  percent: ["percent", "%", "%"], "kilometer-per-hour": ["kilometer per hour", "km/h", "km/h"], "mile-per-hour": ["mile per hour", "mph", "mph"], "meter-per-second": ["meter per second", "m/s", "m/s"],
};
const LONG_PLURALS = { foot: "feet", inch: "inches", "degree Celsius": "degrees Celsius", "degree Fahrenheit": "degrees Fahrenheit", percent: "percent", "kilometer per hour": "kilometers per hour", "mile per hour": "miles per hour", "meter per second": "meters per second" };
const SHORT_PLURALS = { byte: "byte", day: "days", wk: "wks", mth: "mths", yr: "yrs", hr: "hr" };
const NO_SPACE_SHORT = new Set(["°C", "°F", "%", "°", "′", "″"]);

// ---- decimal arithmetic on the shortest representation ---------------------------

// decimalOf returns {digits, point}: |x| = 0.digits × 10^point, digits
// without leading or trailing zeros ("" for zero).
const decimalOf = (x) => {
  if (typeof x === "bigint") {
    const s = (x < 0n ? -x : x).toString().replace(/0+$/, "");
    return { digits: s === "" ? "" : s, point: (x < 0n ? -x : x).toString().length };
  }
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(x)));
  const int = m[1], frac = m[2] || "", e = Number(m[3] || 0);
  let digits = (int + frac).replace(/^0+/, "");
  const lead = (int + frac).length - digits.length;
  const point = int.length + e - lead;
  digits = digits.replace(/0+$/, "");
  return digits === "" ? { digits: "", point: 0 } : { digits, point };
};
// roundAt keeps n digits of d (n may be ≤ 0), rounding half away from zero.
const roundAt = (d, n) => {
  if (d.digits.length <= n) return d;
  if (n < 0) return { digits: "", point: 0 };
  const up = d.digits.charCodeAt(n) >= 53;
  let kept = d.digits.slice(0, n);
  let point = d.point;
  if (up) {
    let i = kept.length - 1;
    while (i >= 0 && kept[i] === "9") i--;
    if (i < 0) { kept = "1"; point++; } else kept = kept.slice(0, i) + String.fromCharCode(kept.charCodeAt(i) + 1);
  }
  kept = kept.replace(/0+$/, "");
  return kept === "" ? { digits: "", point: 0 } : { digits: kept, point };
};
// round applies fraction or significant digit limits.
const round = (d, r) => (r.sig ? roundAt(d, r.maxSig) : roundAt(d, d.point + r.maxFrac));
// render returns the integer and fraction digit strings of d with the
// minimums applied.
const render = (d, r) => {
  let int = d.point > 0 ? (d.digits.slice(0, d.point) + "0".repeat(Math.max(0, d.point - d.digits.length))) : "";
  let frac = d.point >= 0 ? d.digits.slice(d.point) : "0".repeat(-d.point) + d.digits;
  if (r.sig) {
    const shown = d.digits === "" ? 1 : d.digits.length + Math.max(0, d.point - d.digits.length);
    if (shown < r.minSig) frac += "0".repeat(r.minSig - shown);
  } else if (frac.length < r.minFrac) frac = frac.padEnd(r.minFrac, "0");
  int = int.replace(/^0+/, "").padStart(r.minInt, "0");
  return { int, frac };
};
const groupInt = (int, s, useGrouping) => {
  if (useGrouping === false || int.length <= 3) return [int];
  if (useGrouping !== "always" && s.minGroup === 2 && int.length <= 4) return [int];
  const groups = [];
  let rest = int;
  groups.unshift(rest.slice(-3));
  rest = rest.slice(0, -3);
  const size = s.indian ? 2 : 3;
  while (rest.length) {
    groups.unshift(rest.slice(-size));
    rest = rest.slice(0, -size);
  }
  return groups;
};

// ---- NumberFormat -------------------------------------------------------------------

const kNF = Symbol("NumberFormat");
const cls = "NumberFormat";
const digitOpt = (o, name, min, max, fallback) => {
  const v = o[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n >= min && n <= max)) throw new RangeError(`${name} value is out of range.`);
  return Math.floor(n);
};

function resolveNF(locales, options) {
  const { locale } = resolveLocale(locales);
  const o = options === undefined ? {} : Object(options);
  const style = option(o, "style", ["decimal", "percent", "currency", "unit"], "decimal", cls);
  let currency = o.currency === undefined ? undefined : String(o.currency);
  if (currency !== undefined && !/^[A-Za-z]{3}$/.test(currency)) throw new RangeError(`Invalid currency code : ${currency}`);
  currency = currency && currency.toUpperCase();
  const currencyDisplay = option(o, "currencyDisplay", ["code", "symbol", "narrowSymbol", "name"], "symbol", cls);
  const currencySign = option(o, "currencySign", ["standard", "accounting"], "standard", cls);
  const unit = o.unit === undefined ? undefined : String(o.unit);
  const unitDisplay = option(o, "unitDisplay", ["short", "narrow", "long"], "short", cls);
  if (style === "currency" && currency === undefined) throw new TypeError("Currency code is required with currency style.");
  if (style === "unit" && (unit === undefined || !UNITS[unit])) throw new TypeError(`Invalid unit argument for Intl.NumberFormat() '${unit ?? ""}'`);
  const notation = option(o, "notation", ["standard", "scientific", "engineering", "compact"], "standard", cls);
  const compactDisplay = option(o, "compactDisplay", ["short", "long"], "short", cls);
  const curDigits = currency ? (CURRENCY[currency]?.[4] ?? 2) : 2;
  const defMin = style === "currency" && notation !== "compact" ? curDigits : 0;
  const defMax = style === "currency" && notation !== "compact" ? curDigits : style === "percent" ? 0 : notation === "compact" ? 0 : 3;
  const r = { minInt: digitOpt(o, "minimumIntegerDigits", 1, 21, 1) };
  const hasSig = o.minimumSignificantDigits !== undefined || o.maximumSignificantDigits !== undefined;
  const hasFrac = o.minimumFractionDigits !== undefined || o.maximumFractionDigits !== undefined;
  if (hasSig) {
    r.sig = true;
    r.minSig = digitOpt(o, "minimumSignificantDigits", 1, 21, 1);
    r.maxSig = digitOpt(o, "maximumSignificantDigits", r.minSig, 21, 21);
  } else {
    let min = digitOpt(o, "minimumFractionDigits", 0, 100, undefined);
    let max = digitOpt(o, "maximumFractionDigits", 0, 100, undefined);
    if (min === undefined) min = Math.min(defMin, max ?? defMin);
    else if (max === undefined) max = Math.max(defMax, min);
    else if (min > max) throw new RangeError("maximumFractionDigits value is out of range.");
    r.minFrac = min;
    r.maxFrac = max ?? defMax;
    r.compactRounding = notation === "compact" && !hasFrac;
  }
  let useGrouping = o.useGrouping === undefined ? (notation === "compact" ? "min2" : "auto") : o.useGrouping === false || o.useGrouping === "false" ? false : o.useGrouping === true ? "always" : String(o.useGrouping);
  const signDisplay = option(o, "signDisplay", ["auto", "never", "always", "exceptZero", "negative"], "auto", cls);
  return { locale, s: symbolsFor(locale), style, currency, currencyDisplay, currencySign, unit, unitDisplay, notation, compactDisplay, r, useGrouping, signDisplay };
}

// CLDR's compact decimal patterns from 10^3 to 10^14 (recorded against
// workerd in intl-locales), per language and display: each entry is null
// (the number is not shortened) or patterns by plural category ("1": the
// exact value one). A pattern's run of zeros stands for the number and its
// length sets the divisor ("00 mil M" at 10^10 divides by 10^9).
const tri = (p) => [1, 2, 3].map((n) => (typeof p === "string" ? { other: p.replace("0", "0".repeat(n)) } : Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v.replace("0", "0".repeat(n))]))));
const NB = "\u00a0";
const myriads = (units) => [null, ...units.flatMap((u) => ["0", "00", "000", "0000"].map((z) => ({ other: z + u })))].slice(0, 12);
const JA_COMPACT = myriads(["万", "億", "兆"]);
const ZH_COMPACT = myriads(["万", "亿", "万亿"]);
const COMPACT = {
  en: {
    short: [...tri("0K"), ...tri("0M"), ...tri("0B"), ...tri("0T")],
    long: [...tri("0 thousand"), ...tri("0 million"), ...tri("0 billion"), ...tri("0 trillion")],
  },
  de: {
    short: [null, null, null, ...tri(`0${NB}Mio.`), ...tri(`0${NB}Mrd.`), ...tri(`0${NB}Bio.`)],
    long: [...tri("0 Tausend"), ...tri({ one: "0 Million", other: "0 Millionen" }), ...tri({ one: "0 Milliarde", other: "0 Milliarden" }), ...tri({ one: "0 Billion", other: "0 Billionen" })],
  },
  fr: {
    short: [...tri(`0${NB}k`), ...tri(`0${NB}M`), ...tri(`0${NB}Md`), ...tri(`0${NB}Bn`)],
    long: [
      ...tri({ 1: "mille", one: "0 millier", other: "0 mille" }), ...tri({ one: "0 million", other: "0 millions" }),
      ...tri({ one: "0 milliard", other: "0 milliards" }), ...tri({ one: "0 billion", other: "0 billions" }),
    ],
  },
  es: {
    short: [...tri(`0${NB}mil`), ...tri(`0${NB}M`), { other: `0000${NB}M` }, { other: `00${NB}mil${NB}M` }, { other: `000${NB}mil${NB}M` }, ...tri(`0${NB}B`)],
    long: [...tri("0 mil"), ...tri({ one: "0 millón", other: "0 millones" }), ...tri("0 mil millones"), ...tri({ one: "0 billón", other: "0 billones" })],
  },
  ja: { short: JA_COMPACT, long: JA_COMPACT },
  zh: { short: ZH_COMPACT, long: ZH_COMPACT },
  it: {
    short: [null, null, null, ...tri(`0${NB}Mln`), ...tri(`0${NB}Mld`), ...tri(`0${NB}Bln`)],
    long: [...tri({ 1: "mille", other: "0 mila" }), ...tri({ one: "0 milione", other: "0 milioni" }), ...tri({ one: "0 miliardo", other: "0 miliardi" }), ...tri({ one: "0 mille miliardi", other: "0 mila miliardi" })],
  },
  pt: {
    short: [...tri(`0${NB}mil`), ...tri(`0${NB}mi`), ...tri(`0${NB}bi`), ...tri(`0${NB}tri`)],
    long: [...tri("0 mil"), ...tri({ one: "0 milhão", other: "0 milhões" }), ...tri({ one: "0 bilhão", other: "0 bilhões" }), ...tri({ one: "0 trilhão", other: "0 trilhões" })],
  },
};
// compactOf picks the pattern for the (positive) decimal d and rounds d
// to it: {d, pattern} with d scaled, or pattern null when d stays whole.
// A value that rounds up into the next magnitude (999,999 → 1M) takes that
// magnitude's pattern.
const compactOf = (f, d, roundIt) => {
  const table = (COMPACT[f.locale.split("-")[0]] ?? COMPACT.en)[f.compactDisplay];
  let mag = d.digits === "" ? 0 : d.point - 1;
  for (let pass = 0; ; pass++) {
    const entry = mag >= 3 ? table[Math.min(mag, 14) - 3] : null;
    const zeros = entry ? /0+/.exec(entry.other)?.[0].length ?? 1 : 0;
    const shift = entry ? Math.min(mag, 14) - zeros + 1 : 0;
    const sd = roundIt({ digits: d.digits, point: d.point - shift });
    if (pass === 0 && sd.digits !== "" && sd.point + shift - 1 > mag) {
      mag = sd.point + shift - 1;
      continue;
    }
    return { d: sd, entry };
  }
};
// affixParts splits a compact pattern's text beside the number into
// literal spaces and the compact word.
const affixParts = (text) => {
  const m = /^(\s*)(.*?)(\s*)$/su.exec(text);
  const out = [];
  if (m[1]) out.push({ type: "literal", value: m[1] });
  if (m[2]) out.push({ type: "compact", value: m[2] });
  if (m[3]) out.push({ type: "literal", value: m[3] });
  return out;
};

// number formats x into parts (without sign and affixes), returning
// [parts, isZero, pluralOperands].
function numberParts(f, x) {
  const parts = [];
  if (typeof x === "number" && Number.isNaN(x)) return [[{ type: "nan", value: "NaN" }], false, "NaN"];
  if (x === Infinity || x === -Infinity) return [[{ type: "infinity", value: "∞" }], false, "∞"];
  let d = decimalOf(x);
  if (f.style === "percent") d = d.digits === "" ? d : { digits: d.digits, point: d.point + 2 };
  let exponent = 0, compact = null;
  if (f.notation === "scientific" || f.notation === "engineering") {
    if (d.digits !== "") {
      exponent = d.point - 1;
      if (f.notation === "engineering") exponent = Math.floor(exponent / 3) * 3;
      d = { digits: d.digits, point: d.point - exponent };
      const rr = f.r.sig ? f.r : { ...f.r, maxFrac: f.r.maxFrac === 0 && !f.r.explicit ? 3 : f.r.maxFrac };
      d = round(d, rr);
      if (d.point - 1 > (f.notation === "engineering" ? 2 : 0)) { exponent += f.notation === "engineering" ? 3 : 1; d = { digits: d.digits, point: d.point - (f.notation === "engineering" ? 3 : 1) }; }
    }
  } else if (f.notation === "compact") {
    const compactRound = (dd) => (f.r.compactRounding ? (dd.point >= 2 ? roundAt(dd, dd.point) : roundAt(dd, 2)) : round(dd, f.r));
    const c = compactOf(f, d, compactRound);
    d = c.d;
    compact = c.entry;
  }
  if (f.notation !== "scientific" && f.notation !== "engineering" && f.notation !== "compact") d = round(d, f.r);
  const { int, frac } = render(d, f.r.compactRounding ? { ...f.r, minFrac: 0 } : f.r);
  const groups = groupInt(int, f.s, f.useGrouping === "min2" ? (f.s.minGroup === 2 || int.length <= 4 ? "min2" : "auto") : f.useGrouping);
  if (f.useGrouping === "min2" && int.length === 4) groups.splice(0, groups.length, int);
  groups.forEach((g, i) => {
    if (i) parts.push({ type: "group", value: f.s.group });
    parts.push({ type: "integer", value: g });
  });
  if (frac) parts.push({ type: "decimal", value: f.s.decimal }, { type: "fraction", value: frac });
  if (f.notation === "scientific" || f.notation === "engineering") {
    parts.push({ type: "exponentSeparator", value: "E" });
    if (exponent < 0) parts.push({ type: "exponentMinusSign", value: "-" });
    parts.push({ type: "exponentInteger", value: String(Math.abs(exponent)) });
  }
  if (compact) {
    const one = int.replace(/^0+/, "") === "1" && !frac;
    const [i, v, w, fv, t] = [Number(int || 0), frac.length, frac.replace(/0+$/, "").length, Number(frac || 0), Number(frac.replace(/0+$/, "") || 0)];
    const pattern = (one && compact[1]) || compact[native.plural(f.locale, false, i, v, w, fv, t)] || compact.other;
    const z = /0+/.exec(pattern);
    if (!z) return [affixParts(pattern), false, { int, frac }];
    parts.unshift(...affixParts(pattern.slice(0, z.index)));
    parts.push(...affixParts(pattern.slice(z.index + z[0].length)));
  }
  return [parts, d.digits === "", { int, frac }];
}

function formatToParts(f, x) {
  if (typeof x !== "bigint") x = Number(x);
  const negative = typeof x === "bigint" ? x < 0n : x < 0 || Object.is(x, -0);
  const [num, isZero, ops] = numberParts(f, x);
  const isNaN = typeof x === "number" && Number.isNaN(x);
  let sign = "";
  switch (f.signDisplay) {
    case "auto": sign = negative ? "-" : ""; break;
    case "always": sign = negative ? "-" : "+"; break;
    case "exceptZero": sign = isZero || isNaN ? "" : negative ? "-" : "+"; break;
    case "negative": sign = negative && !isZero ? "-" : ""; break;
  }
  const accounting = f.style === "currency" && f.currencySign === "accounting" && sign === "-";
  const signPart = sign === "-" ? { type: "minusSign", value: "-" } : sign === "+" ? { type: "plusSign", value: "+" } : null;
  const out = [];
  if (f.style === "currency") {
    const info = CURRENCY[f.currency] || [f.currency, f.currency, f.currency, f.currency];
    const local = LOCAL_CURRENCY[f.locale]?.[f.currency] ?? LOCAL_CURRENCY[f.locale.split("-")[0]]?.[f.currency];
    if (f.currencyDisplay === "name") {
      const one = ops.int === "1" && !ops.frac;
      if (signPart) out.push(signPart);
      out.push(...num, { type: "literal", value: " " }, { type: "currency", value: one ? info[2] : info[3] });
      return out;
    }
    const symbol = f.currencyDisplay === "code" ? f.currency : f.currencyDisplay === "narrowSymbol" ? info[1] : local ?? info[0];
    const alpha = /[A-Za-z]$/.test(symbol);
    const finite = num[0].type === "integer";
    if (f.s.cur === "¤#") {
      const sep = f.s.curSep || (alpha && finite ? "\u00a0" : "");
      if (accounting) out.push({ type: "literal", value: "(" });
      else if (signPart) out.push(signPart);
      out.push({ type: "currency", value: symbol });
      if (sep) out.push({ type: "literal", value: sep });
      out.push(...num);
      if (accounting) out.push({ type: "literal", value: ")" });
    } else {
      if (signPart) out.push(signPart);
      out.push(...num, { type: "literal", value: f.s.curSep }, { type: "currency", value: symbol });
    }
    return out;
  }
  if (signPart) out.push(signPart);
  out.push(...num);
  if (f.style === "percent") {
    const sep = (f.s.pct || "#%").slice(1, -1);
    if (sep) out.push({ type: "literal", value: sep });
    out.push({ type: "percentSign", value: "%" });
  } else if (f.style === "unit") {
    const [long, short, narrow] = UNITS[f.unit];
    const one = ops.int === "1" && !ops.frac;
    if (f.unitDisplay === "long") out.push({ type: "literal", value: " " }, { type: "unit", value: one ? long : LONG_PLURALS[long] || long.replace(/(s|x|ch|sh)$/, "$1e") + "s" });
    else if (f.unitDisplay === "narrow") out.push({ type: "unit", value: narrow });
    else {
      const label = one ? short : SHORT_PLURALS[short] ?? short;
      if (!NO_SPACE_SHORT.has(short)) out.push({ type: "literal", value: " " });
      out.push({ type: "unit", value: label });
    }
  }
  return out;
}

class NumberFormat {
  constructor(locales = undefined, options = undefined) {
    internal.define(this, kNF, resolveNF(locales, options));
  }
  get format() {
    const f = this[kNF];
    if (!f.bound) f.bound = (x) => formatToParts(f, toNumeric(x)).map((p) => p.value).join("");
    return f.bound;
  }
  formatToParts(x) { return formatToParts(this[kNF], toNumeric(x)); }
  formatRange(a, b) {
    const x = this.format(a), y = this.format(b);
    return x === y ? `~${x}` : `${x} – ${y}`;
  }
  resolvedOptions() {
    const f = this[kNF];
    const out = { locale: f.locale, numberingSystem: "latn", style: f.style };
    if (f.style === "currency") Object.assign(out, { currency: f.currency, currencyDisplay: f.currencyDisplay, currencySign: f.currencySign });
    if (f.style === "unit") Object.assign(out, { unit: f.unit, unitDisplay: f.unitDisplay });
    out.minimumIntegerDigits = f.r.minInt;
    if (f.r.sig) Object.assign(out, { minimumSignificantDigits: f.r.minSig, maximumSignificantDigits: f.r.maxSig });
    else Object.assign(out, { minimumFractionDigits: f.r.minFrac, maximumFractionDigits: f.r.maxFrac });
    out.useGrouping = f.useGrouping;
    out.notation = f.notation;
    if (f.notation === "compact") out.compactDisplay = f.compactDisplay;
    Object.assign(out, { signDisplay: f.signDisplay, roundingIncrement: 1, roundingMode: "halfExpand", roundingPriority: "auto", trailingZeroDisplay: "auto" });
    return out;
  }
  static supportedLocalesOf(locales) { return requestedLocales(locales); }
}
Object.defineProperty(NumberFormat.prototype, Symbol.toStringTag, { value: "Intl.NumberFormat", configurable: true });

const toNumeric = (x) => (typeof x === "bigint" ? x : typeof x === "string" && /^\s*-?\d+\s*$/.test(x) && x.trim().replace("-", "").length > 15 ? BigInt(x.trim()) : Number(x));

internal.IntlNumberFormat = NumberFormat;
internal.numberToLocale = (x, locales, options) => formatToParts(resolveNF(locales, options), x).map((p) => p.value).join("");
// pluralOperands gives CLDR's i, v, w, f, t of a number as NumberFormat
// shows it by default.
internal.pluralOperands = (x, minFrac = 0, maxFrac = 3) => {
  const d = round(decimalOf(Math.abs(x)), { maxFrac });
  const { int, frac: f0 } = render(d, { minInt: 1, minFrac, maxFrac });
  const frac = f0;
  const t = frac.replace(/0+$/, "");
  return [Number(int), frac.length, t.length, Number(frac || 0), Number(t || 0)];
};
