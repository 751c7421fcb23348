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
// 2024-03-10 09:05:07.089 UTC (a Sunday; US DST starts that day at 2am local)
const T = Date.UTC(2024, 2, 10, 9, 5, 7, 89);
const SUMMER = Date.UTC(2023, 6, 4, 23, 30, 0, 5);
const WINTER = Date.UTC(2025, 0, 1, 0, 0, 0, 0);
const ZONES = ["UTC", "America/New_York", "America/Los_Angeles", "America/Chicago", "America/Denver", "America/Phoenix", "Europe/London", "Europe/Berlin", "Europe/Paris", "Asia/Tokyo", "Asia/Kolkata", "Asia/Shanghai", "Australia/Sydney", "America/Sao_Paulo", "Pacific/Auckland", "Asia/Kathmandu", "Etc/GMT+5"];
const f = (locale, opts, t = T) => new Intl.DateTimeFormat(locale, opts).format(new Date(t));

const groups = {
  styles: () => run(Object.fromEntries(["full", "long", "medium", "short"].flatMap((s) => [
    [`date_${s}`, () => [T, SUMMER, WINTER].map((t) => f("en-US", { dateStyle: s, timeZone: "UTC" }, t))],
    [`time_${s}`, () => [T, SUMMER, WINTER].map((t) => f("en-US", { timeStyle: s, timeZone: "UTC" }, t))],
    [`both_${s}`, () => f("en-US", { dateStyle: s, timeStyle: s, timeZone: "America/New_York" })],
  ]))),
  zones: () => run(Object.fromEntries(ZONES.map((z) => [z, () => [T, SUMMER, WINTER].map((t) => [
    f("en-US", { timeZone: z }, t),
    f("en-US", { timeZone: z, hour: "numeric", minute: "2-digit", timeZoneName: "short" }, t),
    f("en-US", { timeZone: z, timeZoneName: "long" }, t),
    f("en-US", { timeZone: z, timeZoneName: "shortOffset" }, t),
    f("en-US", { timeZone: z, timeZoneName: "longOffset" }, t),
  ])]))),
  components: () => run({
    default: () => f("en-US", { timeZone: "UTC" }),
    year_month: () => f("en-US", { year: "numeric", month: "long", timeZone: "UTC" }),
    month_day: () => f("en-US", { month: "short", day: "numeric", timeZone: "UTC" }),
    weekday: () => ["long", "short", "narrow"].map((w) => f("en-US", { weekday: w, timeZone: "UTC" })),
    weekday_date: () => f("en-US", { weekday: "long", year: "numeric", month: "long", day: "numeric", timeZone: "UTC" }),
    two_digit: () => f("en-US", { year: "2-digit", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZone: "UTC" }),
    hour12_false: () => f("en-US", { hour: "numeric", minute: "numeric", hour12: false, timeZone: "UTC" }),
    h23: () => f("en-US", { hour: "2-digit", minute: "2-digit", hourCycle: "h23", timeZone: "UTC" }, WINTER),
    h12_midnight: () => f("en-US", { hour: "numeric", minute: "numeric", timeZone: "UTC" }, WINTER),
    fractional: () => [1, 2, 3].map((n) => f("en-US", { minute: "2-digit", second: "2-digit", fractionalSecondDigits: n, timeZone: "UTC" })),
    era: () => f("en-US", { year: "numeric", era: "short", timeZone: "UTC" }),
    month_narrow: () => f("en-US", { month: "narrow", timeZone: "UTC" }),
    month_numeric: () => f("en-US", { month: "numeric", day: "numeric", timeZone: "UTC" }),
    hour_only: () => f("en-US", { hour: "numeric", timeZone: "UTC" }),
    time_with_zone: () => f("en-US", { hour: "numeric", minute: "numeric", second: "numeric", timeZoneName: "short", timeZone: "America/Los_Angeles" }),
    day_period: () => f("en-US", { hour: "numeric", dayPeriod: "short", timeZone: "UTC" }),
  }),
  locales: () => run(Object.fromEntries(["en-GB", "de-DE", "fr-FR", "ja-JP", "es-ES", "pt-BR", "zh-CN", "en-IN", "it-IT", "nl-NL", "en"].map((l) => [l, () => [
    f(l, { timeZone: "UTC" }),
    f(l, { dateStyle: "long", timeZone: "UTC" }),
    f(l, { dateStyle: "short", timeStyle: "short", timeZone: "UTC" }),
    new Date(T).toLocaleString(l, { timeZone: "UTC" }),
  ]]))),
  "to-locale": () => run({
    string_utc: () => new Date(T).toLocaleString("en-US", { timeZone: "UTC" }),
    string_default: () => new Date(T).toLocaleString(),
    date_default: () => new Date(T).toLocaleDateString(),
    time_default: () => new Date(T).toLocaleTimeString(),
    date_opts: () => new Date(T).toLocaleDateString("en-US", { month: "long", day: "numeric", year: "numeric" }),
    time_zone: () => new Date(T).toLocaleTimeString("en-US", { timeZone: "Asia/Tokyo" }),
    time_opts: () => new Date(T).toLocaleTimeString("en-US", { hour: "2-digit", minute: "2-digit" }),
    invalid_date: () => [new Date(NaN).toLocaleString(), new Date(NaN).toLocaleDateString()],
    invalid_format: () => new Intl.DateTimeFormat("en-US").format(new Date(NaN)),
    number_arg: () => new Intl.DateTimeFormat("en-US", { timeZone: "UTC" }).format(T),
    no_arg_type: () => typeof new Intl.DateTimeFormat("en-US").format(),
    bound: () => { const fmt = new Intl.DateTimeFormat("en-US", { timeZone: "UTC" }).format; return [T, WINTER].map(fmt); },
  }),
  parts: () => run({
    parts: () => new Intl.DateTimeFormat("en-US", { dateStyle: "full", timeStyle: "long", timeZone: "America/New_York" }).formatToParts(new Date(T)),
    parts_components: () => new Intl.DateTimeFormat("en-US", { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false, timeZone: "UTC" }).formatToParts(new Date(T)),
    resolved: () => new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York" }).resolvedOptions(),
    resolved_opts: () => new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone: "asia/tokyo" }).resolvedOptions(),
    resolved_components: () => new Intl.DateTimeFormat("en-US", { weekday: "short", hour: "numeric", hour12: false }).resolvedOptions(),
    resolved_default_tz: () => new Intl.DateTimeFormat().resolvedOptions().timeZone,
    bad_zone: () => new Intl.DateTimeFormat("en-US", { timeZone: "Mars/Olympus" }),
    bad_style_mix: () => new Intl.DateTimeFormat("en-US", { dateStyle: "short", year: "numeric" }),
    bad_option: () => new Intl.DateTimeFormat("en-US", { month: "longest" }),
    supported: () => Intl.DateTimeFormat.supportedLocalesOf(["en-US", "de", "xx-invalid-zz"]),
    range: () => new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeZone: "UTC" }).formatRange(new Date(T), new Date(SUMMER)),
    offset_zone: () => f("en-US", { timeZone: "+05:30", timeStyle: "long" }),
    tostring_tag: () => [Object.prototype.toString.call(Intl), Object.prototype.toString.call(new Intl.DateTimeFormat())],
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
