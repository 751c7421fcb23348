const errInfo = (e) => ({ name: e?.name, message: e?.message });
async function run(cases) {
  const out = {};
  for (const [name, fn] of Object.entries(cases)) {
    try {
      out[name] = await fn();
    } catch (e) {
      out[name] = { error: errInfo(e) };
    }
  }
  return out;
}
const N = [0, -0, 1, -1, 0.5, 1.005, 1234.5678, -9876543.21, 1e21, 123456789012, 0.000123, NaN, Infinity, -Infinity];
const nf = (l, o) => { const f = new Intl.NumberFormat(l, o); return N.map((n) => f.format(n)); };

const groups = {
  decimal: () => run({
    default: () => nf("en-US"),
    to_locale: () => N.map((n) => n.toLocaleString()),
    max0: () => nf("en-US", { maximumFractionDigits: 0 }),
    min2: () => nf("en-US", { minimumFractionDigits: 2 }),
    min_int: () => nf("en-US", { minimumIntegerDigits: 3 }),
    no_group: () => nf("en-US", { useGrouping: false }),
    sig: () => nf("en-US", { maximumSignificantDigits: 3 }),
    min_sig: () => nf("en-US", { minimumSignificantDigits: 5 }),
    sign_always: () => nf("en-US", { signDisplay: "always" }),
    sign_except: () => nf("en-US", { signDisplay: "exceptZero" }),
    sign_never: () => nf("en-US", { signDisplay: "never" }),
    bigint: () => [123456789012345678901234567890n.toLocaleString("en-US"), (-5n).toLocaleString(), new Intl.NumberFormat("en-US").format(10n ** 20n)],
    string_input: () => new Intl.NumberFormat("en-US").format("1234.5"),
    rounding: () => [1.5, 2.5, -1.5, 0.125, 1.0049999].map((n) => new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 }).format(n)),
    de: () => nf("de-DE"),
    fr: () => nf("fr-FR"),
    en_in: () => nf("en-IN"),
    ja: () => nf("ja-JP"),
    es: () => nf("es-ES"),
    pt_br: () => nf("pt-BR"),
    ch: () => nf("de-CH"),
  }),
  styles: () => run({
    percent: () => nf("en-US", { style: "percent" }),
    percent_digits: () => nf("en-US", { style: "percent", minimumFractionDigits: 1 }),
    usd: () => nf("en-US", { style: "currency", currency: "USD" }),
    eur_de: () => nf("de-DE", { style: "currency", currency: "EUR" }),
    jpy: () => nf("ja-JP", { style: "currency", currency: "JPY" }),
    gbp_code: () => nf("en-GB", { style: "currency", currency: "gbp", currencyDisplay: "code" }),
    eur_name: () => nf("en-US", { style: "currency", currency: "EUR", currencyDisplay: "name" }),
    usd_accounting: () => nf("en-US", { style: "currency", currency: "USD", currencySign: "accounting" }),
    narrow: () => nf("en-US", { style: "currency", currency: "CAD", currencyDisplay: "narrowSymbol" }),
    cad_symbol: () => nf("en-US", { style: "currency", currency: "CAD" }),
    eur_fr: () => nf("fr-FR", { style: "currency", currency: "EUR" }),
    inr: () => nf("en-IN", { style: "currency", currency: "INR" }),
    compact: () => nf("en-US", { notation: "compact" }),
    compact_long: () => nf("en-US", { notation: "compact", compactDisplay: "long" }),
    compact_more: () => [999, 1000, 1500, 999999, 1e6, 1.25e9, 7.5e12, 1e15].map((n) => new Intl.NumberFormat("en-US", { notation: "compact" }).format(n)),
    scientific: () => nf("en-US", { notation: "scientific" }),
    engineering: () => nf("en-US", { notation: "engineering" }),
    unit: () => [["kilometer-per-hour", "short"], ["byte", "long"], ["megabyte", "narrow"], ["celsius", "short"], ["percent", "long"], ["second", "long"]].map(([unit, unitDisplay]) => new Intl.NumberFormat("en-US", { style: "unit", unit, unitDisplay }).format(12.5)),
    unit_one: () => new Intl.NumberFormat("en-US", { style: "unit", unit: "day", unitDisplay: "long" }).format(1),
  }),
  parts: () => run({
    parts: () => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).formatToParts(-1234.5),
    parts_percent: () => new Intl.NumberFormat("en-US", { style: "percent", signDisplay: "always" }).formatToParts(0.256),
    parts_compact: () => new Intl.NumberFormat("en-US", { notation: "compact" }).formatToParts(12345),
    resolved: () => new Intl.NumberFormat("en-US").resolvedOptions(),
    resolved_currency: () => new Intl.NumberFormat("de-DE", { style: "currency", currency: "eur" }).resolvedOptions(),
    resolved_percent: () => new Intl.NumberFormat("en-US", { style: "percent" }).resolvedOptions(),
    no_currency: () => new Intl.NumberFormat("en-US", { style: "currency" }),
    bad_currency: () => new Intl.NumberFormat("en-US", { style: "currency", currency: "US" }),
    bad_style: () => new Intl.NumberFormat("en-US", { style: "money" }),
    bad_digits: () => new Intl.NumberFormat("en-US", { maximumFractionDigits: 101 }),
    min_gt_max: () => new Intl.NumberFormat("en-US", { minimumFractionDigits: 3, maximumFractionDigits: 1 }),
    no_unit: () => new Intl.NumberFormat("en-US", { style: "unit" }),
    range: () => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumFractionDigits: 0 }).formatRange(3, 5),
    tag: () => Object.prototype.toString.call(new Intl.NumberFormat()),
  }),
  other: () => run({
    collator: () => ["b", "a", "B", "ä", "z", "10", "9", "A"].sort(new Intl.Collator("en").compare),
    collator_numeric: () => ["item10", "item9", "item1"].sort(new Intl.Collator("en", { numeric: true }).compare),
    collator_base: () => [new Intl.Collator("en", { sensitivity: "base" }).compare("a", "A"), new Intl.Collator("en", { sensitivity: "base" }).compare("a", "á"), new Intl.Collator("en", { sensitivity: "accent" }).compare("a", "á"), new Intl.Collator("en").compare("a", "b")],
    locale_compare: () => ["résumé".localeCompare("resume"), "a".localeCompare("B"), "a".localeCompare("a"), "ä".localeCompare("z", "de"), "ä".localeCompare("z", "sv")],
    collator_resolved: () => new Intl.Collator("en-US").resolvedOptions(),
    plural: () => [0, 1, 2, 5, 1.5].map((n) => new Intl.PluralRules("en-US").select(n)),
    plural_ordinal: () => [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101].map((n) => new Intl.PluralRules("en-US", { type: "ordinal" }).select(n)),
    plural_resolved: () => new Intl.PluralRules("en").resolvedOptions().pluralCategories,
    rtf: () => [[-1, "day"], [1, "day"], [0, "day"], [-3, "hour"], [2, "weeks"], [-1, "month"], [5, "years"], [-30, "seconds"], [1, "quarter"]].map(([v, u]) => new Intl.RelativeTimeFormat("en").format(v, u)),
    rtf_auto: () => [[-1, "day"], [1, "day"], [0, "day"], [-1, "year"], [0, "second"], [1, "week"], [-2, "day"]].map(([v, u]) => new Intl.RelativeTimeFormat("en", { numeric: "auto" }).format(v, u)),
    rtf_short: () => [[-3, "month"], [2, "hour"], [-1, "minute"]].map(([v, u]) => new Intl.RelativeTimeFormat("en", { style: "short" }).format(v, u)),
    rtf_bad: () => new Intl.RelativeTimeFormat("en").format(1, "fortnight"),
    list: () => [[], ["a"], ["a", "b"], ["a", "b", "c"]].map((l) => new Intl.ListFormat("en").format(l)),
    list_or: () => new Intl.ListFormat("en", { type: "disjunction" }).format(["a", "b", "c"]),
    list_unit: () => [new Intl.ListFormat("en", { type: "unit" }).format(["a", "b", "c"]), new Intl.ListFormat("en", { style: "narrow", type: "unit" }).format(["a", "b"]), new Intl.ListFormat("en", { style: "short" }).format(["a", "b", "c"])],
    segment_grapheme: () => [...new Intl.Segmenter("en", { granularity: "grapheme" }).segment("ae\u0301👍🏽🇫🇷x")].map((s) => [s.segment, s.index]),
    segment_word: () => [...new Intl.Segmenter("en", { granularity: "word" }).segment("Hello, world! It's 3.14 now.")].map((s) => [s.segment, s.index, s.isWordLike]),
    segment_sentence: () => [...new Intl.Segmenter("en", { granularity: "sentence" }).segment("Hi there. How are you? Fine!")].map((s) => s.segment),
    locale_ctor: () => { const l = new Intl.Locale("en-Latn-US"); return [l.language, l.script, l.region, l.baseName, l.toString()]; },
    canonical: () => Intl.getCanonicalLocales(["EN-us", "de-de"]),
  }),
};

export default {
  async fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    const fn = groups[name];
    if (!fn) return new Response("no such group", { status: 404 });
    return Response.json(await fn());
  },
};
