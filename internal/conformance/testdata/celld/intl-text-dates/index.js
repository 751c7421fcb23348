const PRESETS = {
  dateFull: { year: "numeric", month: "long", day: "numeric" },
  dateMed: { year: "numeric", month: "short", day: "numeric" },
  dateHuge: { year: "numeric", month: "long", day: "numeric", weekday: "long" },
  dateTimeFull: { year: "numeric", month: "long", day: "numeric", hour: "numeric", minute: "2-digit", timeZoneName: "short" },
  dateTimeMed: { year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit" },
  dateTimeHuge: { year: "numeric", month: "long", day: "numeric", weekday: "long", hour: "numeric", minute: "2-digit", timeZoneName: "long" },
  dateTimeMedSeconds: { year: "numeric", month: "short", day: "numeric", hour: "numeric", minute: "2-digit", second: "2-digit" },
};

export default {
  fetch(request) {
    const l = new URL(request.url).searchParams.get("l");
    const when = Date.UTC(2024, 2, 9, 23, 30, 5);
    const out = {};
    for (const [name, opts] of Object.entries(PRESETS)) {
      for (const timeZone of ["America/New_York", "Europe/Berlin"]) {
        out[`${name} ${timeZone}`] = new Intl.DateTimeFormat(l, { ...opts, timeZone }).format(when);
      }
    }
    out.toLocaleDateString = new Date(when).toLocaleDateString(l, { timeZone: "UTC", ...PRESETS.dateHuge });
    return Response.json(out);
  },
};
