// Intl and Intl.DateTimeFormat. goja has no Intl; this one formats with
// CLDR data for the locales in LOCALES (English in full; the others for
// their default, style and numeric formats) and the IANA time zones Go
// embeds (native_intl.go). Other Intl classes live in 25_intl_*.js and are
// reached through the Intl object.

const rangeError = (v, prop, cls) => new RangeError(`Value ${v} out of range for Intl.${cls} options property ${prop}`);

// ---- locales ------------------------------------------------------------

const EN = {
  months: ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"],
  weekdays: ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"],
  ampm: ["AM", "PM"], eras: [["BC", "AD"], ["Before Christ", "Anno Domini"], ["B", "A"]],
  yMd: "M/d/y", hc: "h12",
  date: { full: "EEEE, MMMM d, y", long: "MMMM d, y", medium: "MMM d, y", short: "M/d/yy" },
  time: { full: "h:mm:ss a zzzz", long: "h:mm:ss a z", medium: "h:mm:ss a", short: "h:mm a" },
  join: { full: "{1} 'at' {0}", long: "{1} 'at' {0}", medium: "{1}, {0}", short: "{1}, {0}" },
  tzNames: true,
};
const shortNames = (list) => list.map((m) => m.slice(0, 3));
const loc = (base, extra) => ({ ...base, ...extra });
const H24 = (sep = ", ", h = "HH") => ({
  hc: "h23",
  time: { full: `${h}:mm:ss zzzz`, long: `${h}:mm:ss z`, medium: `${h}:mm:ss`, short: `${h}:mm` },
  join: { full: `{1}${sep}{0}`, long: `{1}${sep}{0}`, medium: `{1}${sep}{0}`, short: `{1}${sep}{0}` },
  tzNames: false, hh: h,
});
// Time zone names in German, French, Spanish, Japanese, Italian,
// Portuguese and Chinese (CLDR, as
// recorded on workerd in intl-locales) by metazone: l long, s short, each
// [standard, daylight]. Zones outside these metazones show GMT offsets.
const ZONES_DE = {
  UTC: "Koordinierte Weltzeit",
  USE: { l: ["Nordamerikanische Ostküsten-Normalzeit", "Nordamerikanische Ostküsten-Sommerzeit"] },
  USP: { l: ["Nordamerikanische Westküsten-Normalzeit", "Nordamerikanische Westküsten-Sommerzeit"] },
  CET: { l: ["Mitteleuropäische Normalzeit", "Mitteleuropäische Sommerzeit"], s: ["MEZ", "MESZ"] },
  London: { l: ["Mittlere Greenwich-Zeit", "Britische Sommerzeit"] },
  Japan: { l: ["Japanische Normalzeit"] }, India: { l: ["Indische Normalzeit"] },
  AusE: { l: ["Ostaustralische Normalzeit", "Ostaustralische Sommerzeit"] }, Brasilia: { l: ["Brasília-Normalzeit"] },
};
const ZONES_FR = {
  UTC: "temps universel coordonné",
  USE: { l: ["heure normale de l’Est nord-américain", "heure d’été de l’Est nord-américain"] },
  USP: { l: ["heure normale du Pacifique nord-américain", "heure d’été du Pacifique nord-américain"] },
  CET: { l: ["heure normale d’Europe centrale", "heure d’été d’Europe centrale"] },
  London: { l: ["heure moyenne de Greenwich", "heure d’été britannique"] },
  Japan: { l: ["heure normale du Japon"] }, India: { l: ["heure de l’Inde"] },
  AusE: { l: ["heure normale de l’Est de l’Australie", "heure d’été de l’Est de l’Australie"] }, Brasilia: { l: ["heure normale de Brasilia"] },
};
const ZONES_ES = {
  UTC: "tiempo universal coordinado",
  USE: { l: ["hora estándar oriental", "hora de verano oriental"] },
  USP: { l: ["hora estándar del Pacífico", "hora de verano del Pacífico"] },
  CET: { l: ["hora estándar de Europa central", "hora de verano de Europa central"], s: ["CET", "CEST"] },
  London: { l: ["hora del meridiano de Greenwich", "hora de verano británica"] },
  Japan: { l: ["hora estándar de Japón"] }, India: { l: ["hora estándar de la India"] },
  AusE: { l: ["hora estándar de Australia oriental", "hora de verano de Australia oriental"] }, Brasilia: { l: ["hora estándar de Brasilia"] },
};
const ZONES_JA = {
  UTC: "協定世界時",
  USE: { l: ["アメリカ東部標準時", "アメリカ東部夏時間"] }, USP: { l: ["アメリカ太平洋標準時", "アメリカ太平洋夏時間"] },
  CET: { l: ["中央ヨーロッパ標準時", "中央ヨーロッパ夏時間"] }, London: { l: ["グリニッジ標準時", "英国夏時間"] },
  Japan: { l: ["日本標準時"], s: ["JST"] }, India: { l: ["インド標準時"] },
  AusE: { l: ["オーストラリア東部標準時", "オーストラリア東部夏時間"] }, Brasilia: { l: ["ブラジリア標準時"] },
};
const ZONES_IT = {
  UTC: "Tempo coordinato universale",
  USE: { l: ["Ora standard orientale USA", "Ora legale orientale USA"] }, USP: { l: ["Ora standard del Pacifico USA", "Ora legale del Pacifico USA"] },
  CET: { l: ["Ora standard dell’Europa centrale", "Ora legale dell’Europa centrale"], s: ["CET", "CEST"] },
  London: { l: ["Ora del meridiano di Greenwich", "Ora legale del Regno Unito"] },
  Japan: { l: ["Ora standard del Giappone"] }, India: { l: ["Ora standard dell’India"] },
  AusE: { l: ["Ora standard dell’Australia orientale", "Ora legale dell’Australia orientale"] }, Brasilia: { l: ["Ora standard di Brasilia"] },
};
const ZONES_PT = {
  UTC: "Horário Universal Coordenado",
  USE: { l: ["Horário Padrão do Leste", "Horário de Verão do Leste"] }, USP: { l: ["Horário Padrão do Pacífico", "Horário de Verão do Pacífico"] },
  CET: { l: ["Horário Padrão da Europa Central", "Horário de Verão da Europa Central"] },
  London: { l: ["Horário do Meridiano de Greenwich", "Horário de Verão Britânico"] },
  Japan: { l: ["Horário Padrão do Japão"] }, India: { l: ["Horário Padrão da Índia"] },
  AusE: { l: ["Horário Padrão da Austrália Oriental", "Horário de Verão da Austrália Oriental"] }, Brasilia: { l: ["Horário Padrão de Brasília"], s: ["BRT"] },
};
const ZONES_ZH = {
  UTC: "协调世界时",
  USE: { l: ["北美东部标准时间", "北美东部夏令时间"] }, USP: { l: ["北美太平洋标准时间", "北美太平洋夏令时间"] },
  CET: { l: ["中欧标准时间", "中欧夏令时间"] }, London: { l: ["格林尼治标准时间", "英国夏令时间"] },
  Japan: { l: ["日本标准时间"] }, India: { l: ["印度时间"] },
  AusE: { l: ["澳大利亚东部标准时间", "澳大利亚东部夏令时间"] }, Brasilia: { l: ["巴西利亚标准时间"] },
};
const ZONES_NL = {
  USE: { l: ["Eastern-standaardtijd", "Eastern-zomertijd"], s: ["EST", "EDT"] },
  USP: { l: ["Pacific-standaardtijd", "Pacific-zomertijd"], s: ["PST", "PDT"] },
  CET: { l: ["Midden-Europese standaardtijd", "Midden-Europese zomertijd"], s: ["CET", "CEST"] },
};
const LOCALES = {
  en: EN,
  "en-GB": loc(EN, { ...H24(), tzLong: "europe", yMMMMEEEEd: "EEEE, d MMMM y", cjoin: EN.join, yMd: "dd/MM/y", date: { full: "EEEE d MMMM y", long: "d MMMM y", medium: "d MMM y", short: "dd/MM/y" }, join: { full: "{1} 'at' {0}", long: "{1} 'at' {0}", medium: "{1}, {0}", short: "{1}, {0}" } }),
  "en-IN": loc(EN, { ampm: ["am", "pm"], tzLong: true, yMMMMEEEEd: "EEEE, d MMMM y", yMd: "d/M/y", date: { full: "EEEE, d MMMM, y", long: "d MMMM y", medium: "d MMM y", short: "dd/MM/yy" }, tzNames: false }),
  de: loc(EN, { ...H24(), zones: ZONES_DE, months: ["Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"], shortMonths: ["Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez."], weekdays: ["Sonntag", "Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"], yMd: "d.M.y", yMMMd: "d. MMM y", date: { full: "EEEE, d. MMMM y", long: "d. MMMM y", medium: "dd.MM.y", short: "dd.MM.yy" }, join: { full: "{1} 'um' {0}", long: "{1} 'um' {0}", medium: "{1}, {0}", short: "{1}, {0}" } }),
  fr: loc(EN, { ...H24(" "), cjoin: { full: "{1} 'à' {0}", long: "{1} 'à' {0}", medium: "{1}, {0}" }, zones: ZONES_FR, gmt: "UTC", minus: "\u2212", months: ["janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"], shortMonths: ["janv.", "févr.", "mars", "avr.", "mai", "juin", "juil.", "août", "sept.", "oct.", "nov.", "déc."], weekdays: ["dimanche", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi"], yMd: "dd/MM/y", date: { full: "EEEE d MMMM y", long: "d MMMM y", medium: "d MMM y", short: "dd/MM/y" }, join: { full: "{1} 'à' {0}", long: "{1} 'à' {0}", medium: "{1} {0}", short: "{1} {0}" } }),
  es: loc(EN, { ...H24(", ", "H"), zones: ZONES_ES, months: ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"], shortMonths: ["ene", "feb", "mar", "abr", "may", "jun", "jul", "ago", "sept", "oct", "nov", "dic"], weekdays: ["domingo", "lunes", "martes", "miércoles", "jueves", "viernes", "sábado"], yMd: "d/M/y", date: { full: "EEEE, d 'de' MMMM 'de' y", long: "d 'de' MMMM 'de' y", medium: "d MMM y", short: "d/M/yy" } }),
  pt: loc(EN, { ...H24(), cjoin: { full: "{1} 'às' {0}", long: "{1} 'às' {0}", medium: "{1}, {0}" }, zones: ZONES_PT, months: ["janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro", "novembro", "dezembro"], shortMonths: ["jan.", "fev.", "mar.", "abr.", "mai.", "jun.", "jul.", "ago.", "set.", "out.", "nov.", "dez."], weekdays: ["domingo", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado"], yMd: "dd/MM/y", date: { full: "EEEE, d 'de' MMMM 'de' y", long: "d 'de' MMMM 'de' y", medium: "d 'de' MMM 'de' y", short: "dd/MM/y" } }),
  it: loc(EN, { ...H24(), cjoin: { full: "{1} 'alle ore' {0}", long: "{1} 'alle ore' {0}", medium: "{1}, {0}" }, zones: ZONES_IT, months: ["gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"], weekdays: ["domenica", "lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato"], yMd: "dd/MM/y", date: { full: "EEEE d MMMM y", long: "d MMMM y", medium: "d MMM y", short: "dd/MM/yy" } }),
  nl: loc(EN, { ...H24(), zones: ZONES_NL, months: ["januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober", "november", "december"], shortMonths: ["jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep", "okt", "nov", "dec"], weekdays: ["zondag", "maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag"], yMd: "d-M-y", date: { full: "EEEE d MMMM y", long: "d MMMM y", medium: "d MMM y", short: "dd-MM-y" }, join: { full: "{1} 'om' {0}", long: "{1} 'om' {0}", medium: "{1}, {0}", short: "{1}, {0}" } }),
  ja: loc(EN, { ...H24(" ", "H"), zones: ZONES_JA, months: EN.months.map((_, i) => `${i + 1}月`), shortMonths: EN.months.map((_, i) => `${i + 1}月`), weekdays: ["日曜日", "月曜日", "火曜日", "水曜日", "木曜日", "金曜日", "土曜日"], shortWeekdays: ["日", "月", "火", "水", "木", "金", "土"], ampm: ["午前", "午後"], yMd: "y/M/d", yMMMd: "y年M月d日", date: { full: "y年M月d日EEEE", long: "y年M月d日", medium: "y/MM/dd", short: "y/MM/dd" } }),
  zh: loc(EN, { ...H24(" "), zoneFirst: true, zones: ZONES_ZH, months: EN.months.map((_, i) => `${i + 1}月`), shortMonths: EN.months.map((_, i) => `${i + 1}月`), weekdays: ["星期日", "星期一", "星期二", "星期三", "星期四", "星期五", "星期六"], shortWeekdays: ["周日", "周一", "周二", "周三", "周四", "周五", "周六"], ampm: ["上午", "下午"], yMd: "y/M/d", date: { full: "y年M月d日EEEE", long: "y年M月d日", medium: "y年M月d日", short: "y/M/d" } }),
};

// canonicalLocale validates a BCP 47 tag and returns it in canonical case.
const canonicalLocale = (tag) => {
  if (typeof tag !== "string" && (typeof tag !== "object" || tag === null)) throw new TypeError("Language ID should be string or object.");
  const s = String(tag);
  const c = /^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-[A-WY-Za-wy-z0-9](-[A-Za-z0-9]{2,8})+)*(-x(-[A-Za-z0-9]{1,8})+)?$/.test(s) ? native.locale(s) : null;
  if (c === null) throw new RangeError(`Invalid language tag: ${s}`);
  return c;
};
const requestedLocales = (locales) => {
  if (locales === undefined) return [];
  const list = typeof locales === "string" ? [locales] : Array.from(locales);
  return [...new Set(list.map(canonicalLocale))];
};
// resolveLocale picks the first requested locale (with its -u- extension
// removed) or en-US, and the data to format it with.
const resolveLocale = (locales) => {
  const req = requestedLocales(locales);
  const tag = req.length ? req[0].replace(/-u(-[A-Za-z0-9]{2,8})+/, "") : "en-US";
  const lang = tag.split("-")[0];
  const data = LOCALES[tag] || LOCALES[tag.split("-").slice(0, 2).join("-")] || LOCALES[lang] || EN;
  return { locale: tag, lang, data };
};
internal.intlLocale = resolveLocale;
internal.intlCanonicalLocale = canonicalLocale;
internal.intlRequested = requestedLocales;
internal.intlOption = (options, prop, allowed, fallback, cls) => {
  let v = options[prop];
  if (v === undefined) return fallback;
  if (typeof allowed === "boolean") return Boolean(v);
  v = String(v);
  if (allowed && !allowed.includes(v)) throw rangeError(v, prop, cls);
  return v;
};
const option = internal.intlOption;

// ---- time zones -----------------------------------------------------------

const US_ZONES = { EST: "Eastern Standard Time", EDT: "Eastern Daylight Time", CST: "Central Standard Time", CDT: "Central Daylight Time", MST: "Mountain Standard Time", MDT: "Mountain Daylight Time", PST: "Pacific Standard Time", PDT: "Pacific Daylight Time", AKST: "Alaska Standard Time", AKDT: "Alaska Daylight Time", HST: "Hawaii-Aleutian Standard Time", HDT: "Hawaii-Aleutian Daylight Time" };
const LONG_NAMES = {
  "Europe/London": ["Greenwich Mean Time", "British Summer Time"], "Europe/Dublin": ["Greenwich Mean Time", "Irish Standard Time"],
  CET: ["Central European Standard Time", "Central European Summer Time"], EET: ["Eastern European Standard Time", "Eastern European Summer Time"], WET: ["Western European Standard Time", "Western European Summer Time"],
  "Asia/Tokyo": ["Japan Standard Time"], "Asia/Kolkata": ["India Standard Time"], "Asia/Calcutta": ["India Standard Time"], "Asia/Shanghai": ["China Standard Time"],
  "Asia/Hong_Kong": ["Hong Kong Standard Time"], "Asia/Singapore": ["Singapore Standard Time"], "Asia/Seoul": ["Korean Standard Time"], "Asia/Dubai": ["Gulf Standard Time"],
  "Asia/Kathmandu": ["Nepal Time"], "America/Sao_Paulo": ["Brasilia Standard Time", "Brasilia Summer Time"],
  "Australia/Sydney": ["Australian Eastern Standard Time", "Australian Eastern Daylight Time"], "Australia/Melbourne": ["Australian Eastern Standard Time", "Australian Eastern Daylight Time"], "Australia/Brisbane": ["Australian Eastern Standard Time"],
  "Pacific/Auckland": ["New Zealand Standard Time", "New Zealand Daylight Time"], "Europe/Moscow": ["Moscow Standard Time"],
};
const CET_ABBR = { CET: "CET", CEST: "CET", EET: "EET", EEST: "EET", WET: "WET", WEST: "WET" };
// offsetName is the localized GMT format: "GMT+1", "GMT-5:30" (long:
// "GMT+01:00"); French writes UTC and a true minus sign.
const offsetName = (off, long, data) => {
  const gmt = data.gmt ?? "GMT";
  if (off === 0) return gmt;
  const sign = off < 0 ? (data.minus ?? "-") : "+";
  const a = Math.abs(off) / 60;
  const h = Math.floor(a / 60), m = a % 60;
  if (long) return `${gmt}${sign}${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
  return `${gmt}${sign}${h}${m ? ":" + String(m).padStart(2, "0") : ""}`;
};
const isUSZone = (z) => /^(America|US|Pacific\/Honolulu)/.test(z);
// metaZone names the CLDR metazone a zone is in, for the zones the
// non-English name tables (ZONES_*) cover.
const META = { "Europe/London": "London", "Asia/Tokyo": "Japan", "Asia/Kolkata": "India", "Asia/Calcutta": "India", "Australia/Sydney": "AusE", "Australia/Melbourne": "AusE", "Australia/Brisbane": "AusE", "America/Sao_Paulo": "Brasilia" };
const metaZone = (zone, abbr) => {
  if (isUSZone(zone) && (abbr === "EST" || abbr === "EDT")) return "USE";
  if (isUSZone(zone) && (abbr === "PST" || abbr === "PDT")) return "USP";
  if (CET_ABBR[abbr] === "CET") return "CET";
  return META[zone];
};
const zoneName = (style, zone, p, data) => {
  const [, , , , , , , off, dst, abbr] = p;
  if (style === "shortOffset") return offsetName(off, false, data);
  if (style === "longOffset") return offsetName(off, true, data);
  const long = style === "long" || style === "longGeneric";
  if (zone === "UTC") return long ? (data.zones?.UTC ?? "Coordinated Universal Time") : "UTC";
  if (zone.startsWith("+") || zone.startsWith("-")) return offsetName(off, long, data);
  if (data.zones) {
    const names = data.zones[metaZone(zone, abbr)]?.[long ? "l" : "s"];
    if (names) return names[dst && names[1] ? 1 : 0];
  }
  // English outside the US: long names as in English, short ones only for
  // European zones in British English
  if (data.tzLong) {
    if (long) {
      const names = (isUSZone(zone) && US_ZONES[abbr] && [US_ZONES[abbr]]) || LONG_NAMES[zone] || LONG_NAMES[CET_ABBR[abbr]];
      if (names) return names[dst && names[1] ? 1 : 0];
    } else if (data.tzLong === "europe" && CET_ABBR[abbr]) {
      return abbr;
    }
  }
  if (data.tzNames) {
    if (isUSZone(zone) && US_ZONES[abbr]) return long ? US_ZONES[abbr] : abbr;
    if (long) {
      const names = LONG_NAMES[zone] || LONG_NAMES[CET_ABBR[abbr]];
      if (names) return names[dst && names[1] ? 1 : 0];
    }
  }
  return offsetName(off, long, data);
};
const offsetZone = (tz) => {
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(tz);
  return m ? `${m[1]}${m[2]}:${m[3]}` : null;
};
const resolveZone = (tz) => {
  if (tz === undefined) return "UTC";
  const s = String(tz);
  const z = offsetZone(s) || native.zone(s);
  if (z === null) throw new RangeError(`Invalid time zone specified: ${s}`);
  return z;
};
// zoneParts is native.zoneParts for IANA zones and fixed offsets alike.
const zoneParts = (ms, zone) => {
  if (zone[0] !== "+" && zone[0] !== "-") return native.zoneParts(ms, zone);
  const off = (zone[0] === "-" ? -1 : 1) * (Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
  const p = native.zoneParts(ms + off * 1000, "UTC");
  p[7] = off;
  p[8] = false;
  return p;
};

// ---- patterns -------------------------------------------------------------

const TEXT = ["long", "short", "narrow"];
const NUM = ["numeric", "2-digit"];
const COMPONENTS = {
  weekday: TEXT, era: TEXT, year: NUM, month: [...NUM, ...TEXT], day: NUM, dayPeriod: TEXT,
  hour: NUM, minute: NUM, second: NUM, fractionalSecondDigits: null, timeZoneName: ["short", "long", "shortOffset", "longOffset", "shortGeneric", "longGeneric"],
};
const STYLES = ["full", "long", "medium", "short"];

// skeleton builds an English-style pattern for explicit components.
const skeleton = (o, hc, data) => {
  let date = "";
  if (o.month && TEXT.includes(o.month)) {
    const M = { long: "MMMM", short: "MMM", narrow: "MMMMM" }[o.month];
    const d = o.day ? (o.day === "2-digit" ? "dd" : "d") : "";
    const y = o.year ? (o.year === "2-digit" ? "yy" : "y") : "";
    date = d && y ? `${M} ${d}, ${y}` : d ? `${M} ${d}` : y ? `${M} ${y}` : M;
  } else if (o.month || o.day || o.year) {
    if (!o.month && !o.day) date = o.year === "2-digit" ? "yy" : "y";
    else {
      const fields = { M: o.month && (o.month === "2-digit" ? "MM" : "M"), d: o.day && (o.day === "2-digit" ? "dd" : "d"), y: o.year && (o.year === "2-digit" ? "yy" : "y") };
      const order = (data.yMd.match(/[Mdy]+/g) || ["M", "d", "y"]).map((f) => f[0]);
      const sep = data.yMd.match(/[^Mdy]/)?.[0] || "/";
      date = order.map((f) => fields[f]).filter(Boolean).join(sep);
    }
  }
  if (o.era) date = `${date || "y"} ${{ short: "G", long: "GGGG", narrow: "GGGGG" }[o.era]}`;
  if (o.weekday) {
    const E = { long: "EEEE", short: "EEE", narrow: "EEEEE" }[o.weekday];
    date = date ? `${E}, ${date}` : E;
  }
  let time = "";
  const twelve = hc === "h12" || hc === "h11";
  if (o.hour || o.minute || o.second) {
    const fields = [];
    if (o.hour) {
      const letter = { h12: "h", h11: "K", h23: "H", h24: "k" }[hc];
      fields.push(twelve ? (o.hour === "2-digit" ? letter + letter : letter) : o.hour === "2-digit" || data.hh !== "H" ? letter + letter : letter);
    }
    if (o.minute) fields.push("mm");
    if (o.second) fields.push("ss" + (o.fractionalSecondDigits ? "." + "S".repeat(o.fractionalSecondDigits) : ""));
    time = fields.length === 1 && o.minute && !o.hour ? "m" : fields.join(":");
    if (o.hour && twelve) time += o.dayPeriod ? " B" : " a";
  } else if (o.fractionalSecondDigits) {
    time = "S".repeat(o.fractionalSecondDigits);
  }
  const tz = o.timeZoneName ? { short: "z", long: "zzzz", shortOffset: "O", longOffset: "OOOO", shortGeneric: "z", longGeneric: "zzzz" }[o.timeZoneName] : "";
  if (tz) time = time ? `${time} ${tz}` : "";
  if (date && time) return `${date}, ${time}`;
  if (tz && !time) return `${date}, ${tz}`;
  return date || time;
};

// textDate is a locale's pattern for a numeric day and year with the month
// spelled out (CLDR's yMMMMd, yMMMd and yMMMMEEEEd skeletons, which are the
// locale's long, medium and full date styles but where yMMMd says
// otherwise), and the date style whose date-time join it takes; undefined
// for other combinations.
const textDate = (o, data) => {
  if (o.year !== "numeric" || o.day !== "numeric" || o.era || o.timeZoneName && !(o.hour || o.minute || o.second)) return undefined;
  if (o.month === "long" && !o.weekday) return { date: data.date.long, join: "long" };
  if (o.month === "long" && o.weekday === "long") return { date: data.yMMMMEEEEd || data.date.full, join: "full" };
  if (o.month === "short" && !o.weekday) return { date: data.yMMMd || data.date.medium, join: "medium" };
  return undefined;
};

const withHourCycle = (pattern, hc) => {
  if (hc === "h23" || hc === "h24") return pattern.replace(/h+/g, hc === "h23" ? "HH" : "kk").replace(/ ?a/g, "");
  return pattern.replace(/H+/g, "h").replace(/(ss|mm)(?!.*a)/, "$1 a");
};

const pad = (n, w) => String(n).padStart(w, "0");
const dayPeriodOf = (h) => (h >= 6 && h < 12 ? "in the morning" : h === 12 ? "noon" : h > 12 && h < 18 ? "in the afternoon" : h >= 18 && h < 21 ? "in the evening" : "at night");

// formatPattern turns a pattern into parts for the instant ms.
const formatPattern = (pattern, ms, zone, data) => {
  const p = zoneParts(ms, zone);
  const [y, mo, d, h, mi, s, wd] = p;
  const parts = [];
  const lit = (v) => {
    if (!v) return;
    const last = parts[parts.length - 1];
    if (last && last.type === "literal") last.value += v;
    else parts.push({ type: "literal", value: v });
  };
  const re = /'([^']*)'|([A-Za-z])\2*|[^A-Za-z']+/g;
  for (let m; (m = re.exec(pattern));) {
    if (m[1] !== undefined) { lit(m[1] || "'"); continue; }
    if (!m[2]) { lit(m[0]); continue; }
    const t = m[0], n = t.length;
    const push = (type, value) => parts.push({ type, value: String(value) });
    switch (m[2]) {
      case "G": push("era", data.eras[n === 4 ? 1 : n === 5 ? 2 : 0][y > 0 ? 1 : 0]); break;
      case "y": push("year", n === 2 ? pad(y % 100, 2) : y > 0 ? y : 1 - y); break;
      case "M":
        if (n <= 2) push("month", n === 2 ? pad(mo, 2) : mo);
        else if (n === 3) push("month", (data.shortMonths || shortNames(data.months))[mo - 1]);
        else if (n === 4) push("month", data.months[mo - 1]);
        else push("month", data.months[mo - 1][0].toUpperCase());
        break;
      case "d": push("day", n === 2 ? pad(d, 2) : d); break;
      case "E":
        if (n === 4) push("weekday", data.weekdays[wd]);
        else if (n === 5) push("weekday", data.weekdays[wd][0].toUpperCase());
        else push("weekday", (data.shortWeekdays || shortNames(data.weekdays))[wd]);
        break;
      case "h": push("hour", n === 2 ? pad(h % 12 || 12, 2) : h % 12 || 12); break;
      case "K": push("hour", n === 2 ? pad(h % 12, 2) : h % 12); break;
      case "H": push("hour", n === 2 ? pad(h, 2) : h); break;
      case "k": push("hour", n === 2 ? pad(h || 24, 2) : h || 24); break;
      case "m": push("minute", n === 2 ? pad(mi, 2) : mi); break;
      case "s": push("second", n === 2 ? pad(s, 2) : s); break;
      case "S": push("fractionalSecond", pad(((ms % 1000) + 1000) % 1000, 3).slice(0, n)); break;
      case "a": push("dayPeriod", data.ampm[h < 12 ? 0 : 1]); break;
      case "B": push("dayPeriod", dayPeriodOf(h)); break;
      case "z": push("timeZoneName", zoneName(n === 4 ? "long" : "short", zone, p, data)); break;
      case "O": push("timeZoneName", zoneName(n === 4 ? "longOffset" : "shortOffset", zone, p, data)); break;
      default: lit(t);
    }
  }
  return parts;
};

// ---- DateTimeFormat -------------------------------------------------------------

const kDTF = Symbol("DateTimeFormat");
const toTime = (date) => {
  const t = date === undefined ? Date.now() : Number(date instanceof Date ? date.getTime() : date);
  if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) throw new RangeError("Invalid time value");
  return Math.trunc(t);
};

function resolveDTF(locales, options, required = "any", defaults = "date") {
  const { locale, data } = resolveLocale(locales);
  options = options === undefined ? {} : Object(options);
  const cls = "DateTimeFormat";
  const hour12 = options.hour12 === undefined ? undefined : Boolean(options.hour12);
  let hourCycle = option(options, "hourCycle", ["h11", "h12", "h23", "h24"], undefined, cls);
  const timeZone = resolveZone(options.timeZone);
  const o = {};
  for (const [k, allowed] of Object.entries(COMPONENTS)) {
    if (k === "fractionalSecondDigits") {
      if (options[k] !== undefined) {
        const n = Number(options[k]);
        if (!(n >= 1 && n <= 3)) throw new RangeError(`fractionalSecondDigits value is out of range.`);
        o[k] = Math.floor(n);
      }
      continue;
    }
    const v = option(options, k, allowed, undefined, cls);
    if (v !== undefined) o[k] = v;
  }
  const dateStyle = option(options, "dateStyle", STYLES, undefined, cls);
  const timeStyle = option(options, "timeStyle", STYLES, undefined, cls);
  if ((dateStyle || timeStyle) && Object.keys(o).length) throw new TypeError("Invalid option : option");
  if (!dateStyle && !timeStyle) {
    const hasDate = o.weekday || o.year || o.month || o.day;
    const hasTime = o.dayPeriod || o.hour || o.minute || o.second || o.fractionalSecondDigits;
    let needDefaults = true;
    if (required === "date" && hasDate) needDefaults = false;
    if (required === "time" && hasTime) needDefaults = false;
    if (required === "any" && (hasDate || hasTime)) needDefaults = false;
    if (needDefaults && (defaults === "date" || defaults === "all")) o.year = o.month = o.day = "numeric";
    if (needDefaults && (defaults === "time" || defaults === "all")) o.hour = o.minute = o.second = "numeric";
  }
  if (hour12 !== undefined) hourCycle = hour12 ? (data.hc === "h11" ? "h11" : "h12") : "h23";
  const hc = hourCycle || data.hc;
  const hasHour = o.hour !== undefined || timeStyle !== undefined;
  let pattern;
  if (dateStyle || timeStyle) {
    const t = timeStyle && (hourCycle ? withHourCycle(data.time[timeStyle], hc) : data.time[timeStyle]);
    const d = dateStyle && data.date[dateStyle];
    pattern = d && t ? data.join[dateStyle].replace("{1}", d).replace("{0}", t) : d || t;
  } else if (textDate(o, data)) {
    // the locale's own pattern for a spelled-out month, joined to the time
    // with its component join ("at" in English for the long forms)
    const { date, join } = textDate(o, data);
    const hour = o.hour === "numeric" && !o.timeZoneName && (hc === "h23" || hc === "h24") ? "H" : undefined;
    let time = o.hour || o.minute || o.second ? skeleton({ hour: o.hour, minute: o.minute, second: o.second, fractionalSecondDigits: o.fractionalSecondDigits, timeZoneName: o.timeZoneName }, hc, hour ? { ...data, hh: hour } : data) : "";
    if (data.zoneFirst && o.timeZoneName) time = time.replace(/^(.*) (z+|O+)$/, "$2 $1");
    pattern = time ? (data.cjoin?.[join] ?? data.join[join]).replace("{1}", date).replace("{0}", time) : date;
  } else if (data === EN || !(o.year && o.month && o.day) || o.weekday || o.era || TEXT.includes(o.month) || o.year !== "numeric") {
    pattern = skeleton(o, hc, data);
  } else {
    // the locale's numeric date, with its time joined the locale's way
    const time = o.hour || o.minute || o.second ? skeleton({ hour: o.hour, minute: o.minute, second: o.second, fractionalSecondDigits: o.fractionalSecondDigits, timeZoneName: o.timeZoneName }, hc, data) : "";
    const date = o.month === "2-digit" || o.day === "2-digit" ? data.yMd.replace(/\bM\b/, "MM").replace(/\bd\b/, "dd") : data.yMd;
    pattern = time ? data.join.medium.replace("{1}", date).replace("{0}", time) : date;
    if (!time && o.timeZoneName) pattern = skeleton(o, hc, data);
  }
  // What the pattern shows is what resolvedOptions() reports.
  const shown = {};
  if (!dateStyle && !timeStyle) {
    for (const k of Object.keys(COMPONENTS)) if (o[k] !== undefined) shown[k] = o[k];
    if (shown.hour && (hc === "h23" || hc === "h24") && /HH|kk/.test(pattern)) shown.hour = "2-digit";
    if (shown.minute) shown.minute = "2-digit";
    if (shown.second) shown.second = "2-digit";
  }
  return { locale, data, timeZone, hourCycle: hasHour ? hc : undefined, shown, dateStyle, timeStyle, pattern };
}

class DateTimeFormat {
  constructor(locales = undefined, options = undefined) {
    internal.define(this, kDTF, resolveDTF(locales, options));
  }
  get format() {
    const r = this[kDTF];
    if (!r.bound) r.bound = (date) => formatPattern(r.pattern, toTime(date), r.timeZone, r.data).map((p) => p.value).join("");
    return r.bound;
  }
  formatToParts(date = undefined) {
    const r = this[kDTF];
    return formatPattern(r.pattern, toTime(date), r.timeZone, r.data);
  }
  formatRange(start, end) {
    const a = this.format(start), b = this.format(end);
    return a === b ? a : `${a}\u2009–\u2009${b}`;
  }
  formatRangeToParts(start, end) {
    const a = this.formatToParts(start).map((p) => ({ ...p, source: "startRange" }));
    const b = this.formatToParts(end).map((p) => ({ ...p, source: "endRange" }));
    return [...a, { type: "literal", value: "\u2009–\u2009", source: "shared" }, ...b];
  }
  resolvedOptions() {
    const r = this[kDTF];
    const out = { locale: r.locale, calendar: "gregory", numberingSystem: "latn", timeZone: r.timeZone };
    if (r.hourCycle) {
      out.hourCycle = r.hourCycle;
      out.hour12 = r.hourCycle === "h12" || r.hourCycle === "h11";
    }
    Object.assign(out, r.shown);
    if (r.dateStyle) out.dateStyle = r.dateStyle;
    if (r.timeStyle) out.timeStyle = r.timeStyle;
    return out;
  }
  static supportedLocalesOf(locales) { return requestedLocales(locales); }
}
Object.defineProperty(DateTimeFormat.prototype, Symbol.toStringTag, { value: "Intl.DateTimeFormat", configurable: true });

// Date.prototype.toLocale*String (00_builtins.js calls this).
internal.dateToLocale = (date, locales, options, required, defaults) => {
  const t = date.getTime();
  if (Number.isNaN(t)) return "Invalid Date";
  const r = resolveDTF(locales, options, required, defaults);
  return formatPattern(r.pattern, t, r.timeZone, r.data).map((p) => p.value).join("");
};

// ---- the Intl object ----------------------------------------------------------------

const Intl = {};
Object.defineProperty(Intl, Symbol.toStringTag, { value: "Intl", configurable: true });
internal.define(Intl, "DateTimeFormat", DateTimeFormat);
internal.define(Intl, "getCanonicalLocales", (locales) => requestedLocales(locales));
internal.define(Intl, "supportedValuesOf", (key) => {
  const values = { calendar: ["gregory"], numberingSystem: ["latn"], hourCycle: ["h11", "h12", "h23", "h24"] }[key];
  if (!values) throw new RangeError(`Invalid key : ${key}`);
  return values.slice();
});
// The other classes load on first use (prelude/25_intl_*.js).
for (const name of ["NumberFormat", "Collator", "PluralRules", "RelativeTimeFormat", "ListFormat", "Segmenter", "DisplayNames", "Locale"]) {
  Object.defineProperty(Intl, name, {
    configurable: true,
    get() {
      const v = internal["Intl" + name];
      Object.defineProperty(Intl, name, { value: v, writable: true, configurable: true });
      return v;
    },
    set(v) { Object.defineProperty(Intl, name, { value: v, writable: true, configurable: true }); },
  });
}
internal.expose("Intl", Intl);
