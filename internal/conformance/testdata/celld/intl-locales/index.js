const NUMBERS = [0, 7, 999, 1000, 1234, 1500, 9999, 12345, 99999, 123456, 999999, 1e6, 1234567, 15e6, 123456789, 1e9, 1234567890, 12e9, 1e12, 15e11, 12e12, 1e15, -1234, -25e5];
const UNITS = ["second", "minute", "hour", "day", "week", "month", "quarter", "year"];
const VALUES = [-2, -1, 0, 1, 2, 5, -7];
const ZONES = ["America/New_York", "America/Los_Angeles", "Europe/Berlin", "Europe/Paris", "Europe/London", "Europe/Madrid", "Asia/Tokyo", "Asia/Kolkata", "Australia/Sydney", "America/Sao_Paulo", "UTC"];
const DATES = [Date.UTC(2024, 0, 15, 12), Date.UTC(2024, 6, 15, 12)];

const compact = (l) => {
  const out = {};
  for (const display of ["short", "long"]) {
    const nf = new Intl.NumberFormat(l, { notation: "compact", compactDisplay: display });
    out[display] = NUMBERS.map((n) => nf.format(n));
  }
  out.parts = new Intl.NumberFormat(l, { notation: "compact" }).formatToParts(1234567);
  out.twoDigits = new Intl.NumberFormat(l, { notation: "compact", maximumFractionDigits: 2 }).format(1234567);
  out.plain = [1234, 12345].map((n) => new Intl.NumberFormat(l).format(n));
  return out;
};
const relative = (l) => {
  const out = {};
  for (const style of ["long", "short", "narrow"]) {
    for (const numeric of ["always", "auto"]) {
      const rtf = new Intl.RelativeTimeFormat(l, { style, numeric });
      const o = (out[`${style}-${numeric}`] = {});
      for (const u of UNITS) o[u] = VALUES.map((v) => rtf.format(v, u));
    }
  }
  const rtf = new Intl.RelativeTimeFormat(l);
  out.fraction = [rtf.format(1.5, "day"), rtf.format(-0, "day"), rtf.format(1234, "year")];
  out.parts = [rtf.formatToParts(3, "hours"), rtf.formatToParts(-1, "day"), new Intl.RelativeTimeFormat(l, { numeric: "auto" }).formatToParts(-1, "day")];
  out.resolved = rtf.resolvedOptions();
  return out;
};
const zones = (l) => {
  const out = {};
  for (const style of ["short", "long"]) {
    const o = (out[style] = {});
    for (const timeZone of ZONES) {
      const dtf = new Intl.DateTimeFormat(l, { timeZone, timeZoneName: style });
      o[timeZone] = DATES.map((d) => dtf.formatToParts(d).find((p) => p.type === "timeZoneName")?.value);
    }
  }
  return out;
};

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const l = url.searchParams.get("l");
    const f = { "/compact": compact, "/relative": relative, "/zones": zones }[url.pathname];
    if (!f) return new Response("not found", { status: 404 });
    return Response.json(f(l));
  },
};
