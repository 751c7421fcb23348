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

// ---- RelativeTimeFormat ------------------------------------------------------------

const RT_UNITS = ["second", "minute", "hour", "day", "week", "month", "quarter", "year"];
// CLDR's relative-time patterns (as workerd's ICU has them, recorded in
// intl-locales) per language, style and unit: [future one, future other,
// past one, past other] or [future, past] when the plural makes no
// difference, then the words numeric: "auto" uses by offset. A style
// without a unit falls back to the next longer style; other languages use
// English.
const RT = {
  en: {
    long: {"second": ["in {0} second", "in {0} seconds", "{0} second ago", "{0} seconds ago", {"0": "now"}], "minute": ["in {0} minute", "in {0} minutes", "{0} minute ago", "{0} minutes ago", {"0": "this minute"}], "hour": ["in {0} hour", "in {0} hours", "{0} hour ago", "{0} hours ago", {"0": "this hour"}], "day": ["in {0} day", "in {0} days", "{0} day ago", "{0} days ago", {"-1": "yesterday", "0": "today", "1": "tomorrow"}], "week": ["in {0} week", "in {0} weeks", "{0} week ago", "{0} weeks ago", {"-1": "last week", "0": "this week", "1": "next week"}], "month": ["in {0} month", "in {0} months", "{0} month ago", "{0} months ago", {"-1": "last month", "0": "this month", "1": "next month"}], "quarter": ["in {0} quarter", "in {0} quarters", "{0} quarter ago", "{0} quarters ago", {"-1": "last quarter", "0": "this quarter", "1": "next quarter"}], "year": ["in {0} year", "in {0} years", "{0} year ago", "{0} years ago", {"-1": "last year", "0": "this year", "1": "next year"}]},
    short: {"second": ["in {0} sec.", "{0} sec. ago", {"0": "now"}], "minute": ["in {0} min.", "{0} min. ago", {"0": "this minute"}], "hour": ["in {0} hr.", "{0} hr. ago", {"0": "this hour"}], "week": ["in {0} wk.", "{0} wk. ago", {"-1": "last wk.", "0": "this wk.", "1": "next wk."}], "month": ["in {0} mo.", "{0} mo. ago", {"-1": "last mo.", "0": "this mo.", "1": "next mo."}], "quarter": ["in {0} qtr.", "in {0} qtrs.", "{0} qtr. ago", "{0} qtrs. ago", {"-1": "last qtr.", "0": "this qtr.", "1": "next qtr."}], "year": ["in {0} yr.", "{0} yr. ago", {"-1": "last yr.", "0": "this yr.", "1": "next yr."}]},
    narrow: {"second": ["in {0}s", "{0}s ago", {"0": "now"}], "minute": ["in {0}m", "{0}m ago", {"0": "this minute"}], "hour": ["in {0}h", "{0}h ago", {"0": "this hour"}], "day": ["in {0}d", "{0}d ago", {"-1": "yesterday", "0": "today", "1": "tomorrow"}], "week": ["in {0}w", "{0}w ago", {"-1": "last wk.", "0": "this wk.", "1": "next wk."}], "month": ["in {0}mo", "{0}mo ago", {"-1": "last mo.", "0": "this mo.", "1": "next mo."}], "quarter": ["in {0}q", "{0}q ago", {"-1": "last qtr.", "0": "this qtr.", "1": "next qtr."}], "year": ["in {0}y", "{0}y ago", {"-1": "last yr.", "0": "this yr.", "1": "next yr."}]}
  },
  de: {
    long: {"second": ["in {0} Sekunde", "in {0} Sekunden", "vor {0} Sekunde", "vor {0} Sekunden", {"0": "jetzt"}], "minute": ["in {0} Minute", "in {0} Minuten", "vor {0} Minute", "vor {0} Minuten", {"0": "in dieser Minute"}], "hour": ["in {0} Stunde", "in {0} Stunden", "vor {0} Stunde", "vor {0} Stunden", {"0": "in dieser Stunde"}], "day": ["in {0} Tag", "in {0} Tagen", "vor {0} Tag", "vor {0} Tagen", {"-2": "vorgestern", "-1": "gestern", "0": "heute", "1": "morgen", "2": "übermorgen"}], "week": ["in {0} Woche", "in {0} Wochen", "vor {0} Woche", "vor {0} Wochen", {"-1": "letzte Woche", "0": "diese Woche", "1": "nächste Woche"}], "month": ["in {0} Monat", "in {0} Monaten", "vor {0} Monat", "vor {0} Monaten", {"-1": "letzten Monat", "0": "diesen Monat", "1": "nächsten Monat"}], "quarter": ["in {0} Quartal", "in {0} Quartalen", "vor {0} Quartal", "vor {0} Quartalen", {"-1": "letztes Quartal", "0": "dieses Quartal", "1": "nächstes Quartal"}], "year": ["in {0} Jahr", "in {0} Jahren", "vor {0} Jahr", "vor {0} Jahren", {"-1": "letztes Jahr", "0": "dieses Jahr", "1": "nächstes Jahr"}]},
    short: {"second": ["in {0} Sek.", "vor {0} Sek.", {"0": "jetzt"}], "minute": ["in {0} Min.", "vor {0} Min.", {"0": "in dieser Minute"}], "hour": ["in {0} Std.", "vor {0} Std.", {"0": "in dieser Stunde"}], "month": ["in {0} Monat", "in {0} Monaten", "vor {0} Monat", "vor {0} Monaten", {"-1": "letzten Monat", "0": "diesen Monat", "1": "nächsten Monat"}], "quarter": ["in {0} Quart.", "vor {0} Quart.", {"-1": "letztes Quartal", "0": "dieses Quartal", "1": "nächstes Quartal"}]},
    narrow: {"second": ["in {0} s", "vor {0} s", {"0": "jetzt"}], "minute": ["in {0} m", "vor {0} m", {"0": "in dieser Minute"}], "week": ["in {0} Wo.", "vor {0} Wo.", {"-1": "letzte Woche", "0": "diese Woche", "1": "nächste Woche"}], "month": ["in {0} Monat", "in {0} Monaten", "vor {0} Monat", "vor {0} Monaten", {"-1": "letzten Monat", "0": "diesen Monat", "1": "nächsten Monat"}], "quarter": ["in {0} Q", "vor {0} Q", {"-1": "letztes Quartal", "0": "dieses Quartal", "1": "nächstes Quartal"}]}
  },
  fr: {
    long: {"second": ["dans {0} seconde", "dans {0} secondes", "il y a {0} seconde", "il y a {0} secondes", {"0": "maintenant"}], "minute": ["dans {0} minute", "dans {0} minutes", "il y a {0} minute", "il y a {0} minutes", {"0": "cette minute-ci"}], "hour": ["dans {0} heure", "dans {0} heures", "il y a {0} heure", "il y a {0} heures", {"0": "cette heure-ci"}], "day": ["dans {0} jour", "dans {0} jours", "il y a {0} jour", "il y a {0} jours", {"-2": "avant-hier", "-1": "hier", "0": "aujourd’hui", "1": "demain", "2": "après-demain"}], "week": ["dans {0} semaine", "dans {0} semaines", "il y a {0} semaine", "il y a {0} semaines", {"-1": "la semaine dernière", "0": "cette semaine", "1": "la semaine prochaine"}], "month": ["dans {0} mois", "il y a {0} mois", {"-1": "le mois dernier", "0": "ce mois-ci", "1": "le mois prochain"}], "quarter": ["dans {0} trimestre", "dans {0} trimestres", "il y a {0} trimestre", "il y a {0} trimestres", {"-1": "le trimestre dernier", "0": "ce trimestre", "1": "le trimestre prochain"}], "year": ["dans {0} an", "dans {0} ans", "il y a {0} an", "il y a {0} ans", {"-1": "l’année dernière", "0": "cette année", "1": "l’année prochaine"}]},
    short: {"second": ["dans {0} s", "il y a {0} s", {"0": "maintenant"}], "minute": ["dans {0} min", "il y a {0} min", {"0": "cette minute-ci"}], "hour": ["dans {0} h", "il y a {0} h", {"0": "cette heure-ci"}], "day": ["dans {0} j", "il y a {0} j", {"-2": "avant-hier", "-1": "hier", "0": "aujourd’hui", "1": "demain", "2": "après-demain"}], "week": ["dans {0} sem.", "il y a {0} sem.", {"-1": "la semaine dernière", "0": "cette semaine", "1": "la semaine prochaine"}], "month": ["dans {0} m.", "il y a {0} m.", {"-1": "le mois dernier", "0": "ce mois-ci", "1": "le mois prochain"}], "quarter": ["dans {0} trim.", "il y a {0} trim.", {"-1": "le trimestre dernier", "0": "ce trimestre", "1": "le trimestre prochain"}], "year": ["dans {0} a", "il y a {0} a", {"-1": "l’année dernière", "0": "cette année", "1": "l’année prochaine"}]},
    narrow: {"second": ["+{0} s", "-{0} s", {"0": "maintenant"}], "minute": ["+{0} min", "-{0} min", {"0": "cette minute-ci"}], "hour": ["+{0} h", "-{0} h", {"0": "cette heure-ci"}], "day": ["+{0} j", "-{0} j", {"-2": "avant-hier", "-1": "hier", "0": "aujourd’hui", "1": "demain", "2": "après-demain"}], "week": ["+{0} sem.", "-{0} sem.", {"-1": "la semaine dernière", "0": "cette semaine", "1": "la semaine prochaine"}], "month": ["+{0} m.", "-{0} m.", {"-1": "le mois dernier", "0": "ce mois-ci", "1": "le mois prochain"}], "quarter": ["+{0} trim.", "-{0} trim.", {"-1": "le trimestre dernier", "0": "ce trimestre", "1": "le trimestre prochain"}], "year": ["+{0} a", "-{0} a", {"-1": "l’année dernière", "0": "cette année", "1": "l’année prochaine"}]}
  },
  es: {
    long: {"second": ["dentro de {0} segundo", "dentro de {0} segundos", "hace {0} segundo", "hace {0} segundos", {"0": "ahora"}], "minute": ["dentro de {0} minuto", "dentro de {0} minutos", "hace {0} minuto", "hace {0} minutos", {"0": "este minuto"}], "hour": ["dentro de {0} hora", "dentro de {0} horas", "hace {0} hora", "hace {0} horas", {"0": "esta hora"}], "day": ["dentro de {0} día", "dentro de {0} días", "hace {0} día", "hace {0} días", {"-2": "anteayer", "-1": "ayer", "0": "hoy", "1": "mañana", "2": "pasado mañana"}], "week": ["dentro de {0} semana", "dentro de {0} semanas", "hace {0} semana", "hace {0} semanas", {"-1": "la semana pasada", "0": "esta semana", "1": "la próxima semana"}], "month": ["dentro de {0} mes", "dentro de {0} meses", "hace {0} mes", "hace {0} meses", {"-1": "el mes pasado", "0": "este mes", "1": "el próximo mes"}], "quarter": ["dentro de {0} trimestre", "dentro de {0} trimestres", "hace {0} trimestre", "hace {0} trimestres", {"-1": "el trimestre pasado", "0": "este trimestre", "1": "el próximo trimestre"}], "year": ["dentro de {0} año", "dentro de {0} años", "hace {0} año", "hace {0} años", {"-1": "el año pasado", "0": "este año", "1": "el próximo año"}]},
    short: {"second": ["dentro de {0} s", "hace {0} s", {"0": "ahora"}], "minute": ["dentro de {0} min", "hace {0} min", {"0": "este minuto"}], "hour": ["dentro de {0} h", "hace {0} h", {"0": "esta hora"}], "day": ["dentro de {0} d", "hace {0} d", {"-2": "anteayer", "-1": "ayer", "0": "hoy", "1": "mañana", "2": "pasado mañana"}], "week": ["dentro de {0} sem.", "hace {0} sem.", {"-1": "sem. ant.", "0": "esta sem.", "1": "próx. sem."}], "month": ["dentro de {0} m", "hace {0} m", {"-1": "el mes pasado", "0": "este mes", "1": "el próximo mes"}], "quarter": ["dentro de {0} trim.", "hace {0} trim.", {"-1": "el trimestre pasado", "0": "este trimestre", "1": "el próximo trimestre"}], "year": ["dentro de {0} a", "hace {0} a", {"-1": "el año pasado", "0": "este año", "1": "el próximo año"}]},
    narrow: {}
  },
  ja: {
    long: {"second": ["{0} 秒後", "{0} 秒前", {"0": "今"}], "minute": ["{0} 分後", "{0} 分前", {"0": "1 分以内"}], "hour": ["{0} 時間後", "{0} 時間前", {"0": "1 時間以内"}], "day": ["{0} 日後", "{0} 日前", {"-2": "一昨日", "-1": "昨日", "0": "今日", "1": "明日", "2": "明後日"}], "week": ["{0} 週間後", "{0} 週間前", {"-1": "先週", "0": "今週", "1": "来週"}], "month": ["{0} か月後", "{0} か月前", {"-1": "先月", "0": "今月", "1": "来月"}], "quarter": ["{0} 四半期後", "{0} 四半期前", {"-1": "前四半期", "0": "今四半期", "1": "翌四半期"}], "year": ["{0} 年後", "{0} 年前", {"-1": "昨年", "0": "今年", "1": "来年"}]},
    short: {},
    narrow: {"second": ["{0}秒後", "{0}秒前", {"0": "今"}], "minute": ["{0}分後", "{0}分前", {"0": "1 分以内"}], "hour": ["{0}時間後", "{0}時間前", {"0": "1 時間以内"}], "day": ["{0}日後", "{0}日前", {"-2": "一昨日", "-1": "昨日", "0": "今日", "1": "明日", "2": "明後日"}], "week": ["{0}週間後", "{0}週間前", {"-1": "先週", "0": "今週", "1": "来週"}], "month": ["{0}か月後", "{0}か月前", {"-1": "先月", "0": "今月", "1": "来月"}], "quarter": ["{0}四半期後", "{0}四半期前", {"-1": "前四半期", "0": "今四半期", "1": "翌四半期"}], "year": ["{0}年後", "{0}年前", {"-1": "昨年", "0": "今年", "1": "来年"}]}
  },
  it: {
    long: {"second": ["tra {0} secondo", "tra {0} secondi", "{0} secondo fa", "{0} secondi fa", {"0": "ora"}], "minute": ["tra {0} minuto", "tra {0} minuti", "{0} minuto fa", "{0} minuti fa", {"0": "questo minuto"}], "hour": ["tra {0} ora", "tra {0} ore", "{0} ora fa", "{0} ore fa", {"0": "quest’ora"}], "day": ["tra {0} giorno", "tra {0} giorni", "{0} giorno fa", "{0} giorni fa", {"-2": "l’altro ieri", "-1": "ieri", "0": "oggi", "1": "domani", "2": "dopodomani"}], "week": ["tra {0} settimana", "tra {0} settimane", "{0} settimana fa", "{0} settimane fa", {"-1": "settimana scorsa", "0": "questa settimana", "1": "settimana prossima"}], "month": ["tra {0} mese", "tra {0} mesi", "{0} mese fa", "{0} mesi fa", {"-1": "mese scorso", "0": "questo mese", "1": "mese prossimo"}], "quarter": ["tra {0} trimestre", "tra {0} trimestri", "{0} trimestre fa", "{0} trimestri fa", {"-1": "trimestre scorso", "0": "questo trimestre", "1": "trimestre prossimo"}], "year": ["tra {0} anno", "tra {0} anni", "{0} anno fa", "{0} anni fa", {"-1": "anno scorso", "0": "quest’anno", "1": "anno prossimo"}]},
    short: {"second": ["tra {0} sec.", "{0} sec. fa", {"0": "ora"}], "minute": ["tra {0} min", "{0} min fa", {"0": "questo minuto"}], "hour": ["tra {0} h", "{0} h fa", {"0": "quest’ora"}], "day": ["tra {0} g", "tra {0} gg", "{0} g fa", "{0} gg fa", {"-2": "l’altro ieri", "-1": "ieri", "0": "oggi", "1": "domani", "2": "dopodomani"}], "week": ["tra {0} sett.", "{0} sett. fa", {"-1": "sett. scorsa", "0": "questa sett.", "1": "sett. prossima"}], "quarter": ["tra {0} trim.", "{0} trim. fa", {"-1": "trim. scorso", "0": "questo trim.", "1": "trim. prossimo"}]},
    narrow: {"second": ["tra {0} s", "{0} s fa", {"0": "ora"}]}
  },
  pt: {
    long: {"second": ["em {0} segundo", "em {0} segundos", "há {0} segundo", "há {0} segundos", {"0": "agora"}], "minute": ["em {0} minuto", "em {0} minutos", "há {0} minuto", "há {0} minutos", {"0": "este minuto"}], "hour": ["em {0} hora", "em {0} horas", "há {0} hora", "há {0} horas", {"0": "esta hora"}], "day": ["em {0} dia", "em {0} dias", "há {0} dia", "há {0} dias", {"-2": "anteontem", "-1": "ontem", "0": "hoje", "1": "amanhã", "2": "depois de amanhã"}], "week": ["em {0} semana", "em {0} semanas", "há {0} semana", "há {0} semanas", {"-1": "semana passada", "0": "esta semana", "1": "próxima semana"}], "month": ["em {0} mês", "em {0} meses", "há {0} mês", "há {0} meses", {"-1": "mês passado", "0": "este mês", "1": "próximo mês"}], "quarter": ["em {0} trimestre", "em {0} trimestres", "há {0} trimestre", "há {0} trimestres", {"-1": "último trimestre", "0": "este trimestre", "1": "próximo trimestre"}], "year": ["em {0} ano", "em {0} anos", "há {0} ano", "há {0} anos", {"-1": "ano passado", "0": "este ano", "1": "próximo ano"}]},
    short: {"second": ["em {0} seg.", "há {0} seg.", {"0": "agora"}], "minute": ["em {0} min.", "há {0} min.", {"0": "este minuto"}], "hour": ["em {0} h", "há {0} h", {"0": "esta hora"}], "week": ["em {0} sem.", "há {0} sem.", {"-1": "semana passada", "0": "esta semana", "1": "próxima semana"}], "quarter": ["em {0} trim.", "há {0} trim.", {"-1": "último trimestre", "0": "este trimestre", "1": "próximo trimestre"}]},
    narrow: {}
  },
  zh: {
    long: {"second": ["{0}秒钟后", "{0}秒钟前", {"0": "现在"}], "minute": ["{0}分钟后", "{0}分钟前", {"0": "此刻"}], "hour": ["{0}小时后", "{0}小时前", {"0": "这一时间 / 此时"}], "day": ["{0}天后", "{0}天前", {"-2": "前天", "-1": "昨天", "0": "今天", "1": "明天", "2": "后天"}], "week": ["{0}周后", "{0}周前", {"-1": "上周", "0": "本周", "1": "下周"}], "month": ["{0}个月后", "{0}个月前", {"-1": "上个月", "0": "本月", "1": "下个月"}], "quarter": ["{0}个季度后", "{0}个季度前", {"-1": "上季度", "0": "本季度", "1": "下季度"}], "year": ["{0}年后", "{0}年前", {"-1": "去年", "0": "今年", "1": "明年"}]},
    short: {"second": ["{0}秒后", "{0}秒前", {"0": "现在"}]},
    narrow: {}
  },
};
const rtPatterns = (locale, style, unit) => {
  const data = RT[locale.split("-")[0]] ?? RT.en;
  const entry = (style === "narrow" && data.narrow[unit]) || (style !== "long" && data.short[unit]) || data.long[unit];
  const pats = entry.filter((x) => typeof x === "string");
  const words = entry.find((x) => typeof x === "object");
  return pats.length === 4 ? { pats, words } : { pats: [pats[0], pats[0], pats[1], pats[1]], words };
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
    const { pats, words } = rtPatterns(k.locale, k.style, u);
    if (k.numeric === "auto") {
      const word = words?.[Object.is(v, -0) ? 0 : v];
      if (word) return [{ type: "literal", value: word }];
    }
    const negative = v < 0 || Object.is(v, -0);
    const num = k.nf.formatToParts(Math.abs(v)).map((p) => ({ ...p, unit: u }));
    const one = native.plural(k.locale, false, ...internal.pluralOperands(Math.abs(v))) === "one";
    const pattern = pats[(negative ? 2 : 0) + (one ? 0 : 1)];
    const at = pattern.indexOf("{0}");
    const out = [];
    if (at > 0) out.push({ type: "literal", value: pattern.slice(0, at) });
    out.push(...num);
    if (at + 3 < pattern.length) out.push({ type: "literal", value: pattern.slice(at + 3) });
    return out;
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
  // maximize and minimize add or drop the likely script and region (CLDR
  // likely subtags) for the languages in LIKELY; others stay as written.
  maximize() {
    const p = this.#parts();
    const likely = LIKELY[p.language === "und" ? "en" : p.language];
    if (!likely) return this;
    const [script, region] = likely.split("-");
    const lang = p.language === "und" ? "en" : p.language;
    return new Locale([lang, p.script || (p.region === "TW" && lang === "zh" ? "Hant" : script), p.region || region].join("-") + this.#ext());
  }
  minimize() {
    const p = this.#parts();
    const lang = p.language === "und" ? "en" : p.language;
    const likely = LIKELY[lang];
    if (!likely) return this;
    const [script, region] = likely.split("-");
    const out = [lang];
    const r = p.region && p.region !== region ? p.region : undefined;
    if (p.script && p.script !== script && !(lang === "zh" && r === "TW" && p.script === "Hant")) out.push(p.script);
    if (r) out.push(r);
    return new Locale(out.join("-") + this.#ext());
  }
  #ext() { const i = this.#tag.indexOf("-u-"); return i < 0 ? "" : this.#tag.slice(i); }
  #region() { const p = this.#parts(); return p.region || (LIKELY[p.language === "und" ? "en" : p.language] || "-US").split("-")[1]; }
  // getWeekInfo is CLDR's week data for the locale's (likely) region.
  getWeekInfo() {
    const r = this.#region();
    const firstDay = SUNDAY_FIRST.has(r) ? 7 : SATURDAY_FIRST.has(r) ? 6 : 1;
    const weekend = WEEKEND[r] || [6, 7];
    return { firstDay, weekend: [...weekend] };
  }
  getHourCycles() { return [H12_REGIONS.has(this.#region()) && !H23_LANGUAGES.has(this.#parts().language) ? "h12" : "h23"]; }
}
const LIKELY = {
  en: "Latn-US", de: "Latn-DE", fr: "Latn-FR", es: "Latn-ES", pt: "Latn-BR", it: "Latn-IT", nl: "Latn-NL", ja: "Jpan-JP",
  zh: "Hans-CN", ko: "Kore-KR", ru: "Cyrl-RU", pl: "Latn-PL", sv: "Latn-SE", ar: "Arab-EG", he: "Hebr-IL", fa: "Arab-IR",
  hi: "Deva-IN", tr: "Latn-TR", da: "Latn-DK", fi: "Latn-FI", nb: "Latn-NO", cs: "Latn-CZ", uk: "Cyrl-UA", el: "Grek-GR",
  id: "Latn-ID", th: "Thai-TH", vi: "Latn-VN",
};
const SUNDAY_FIRST = new Set(["US", "CA", "MX", "BR", "PT", "JP", "TW", "KR", "IL", "IN", "SA", "PH", "HK", "ZA", "AR", "CO", "PE", "VE", "GT", "TH", "ID"]);
const SATURDAY_FIRST = new Set(["EG", "IR", "AF", "DZ", "IQ", "JO", "KW", "LY", "OM", "QA", "SD", "SY", "AE", "BH", "DJ"]);
const WEEKEND = { IN: [7], IR: [5], AF: [4, 5], EG: [5, 6], SA: [5, 6], IL: [5, 6], AE: [6, 7], DZ: [5, 6], IQ: [5, 6], JO: [5, 6], KW: [5, 6], LY: [5, 6], OM: [5, 6], QA: [5, 6], SD: [5, 6], SY: [5, 6], BH: [5, 6], YE: [5, 6] };
const H23_LANGUAGES = new Set(["fr", "de", "pt", "it", "nl", "ja", "ru", "pl", "sv", "he", "fa", "tr"]);
const H12_REGIONS = new Set(["US", "CA", "AU", "NZ", "IN", "PH", "MX", "TW", "KR", "EG", "SA", "PK", "BD", "CO", "SV", "HN", "NI", "PR", "JO", "IQ", "SY", "AE", "KW", "QA", "BH", "OM", "LY", "SD", "DZ", "MY"]);
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
