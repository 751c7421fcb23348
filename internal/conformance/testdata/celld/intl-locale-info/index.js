export default {
  fetch() {
    const out = {};
    for (const l of ["en", "en-US", "en-GB", "en-IN", "en-AU", "en-CA", "de", "de-AT", "fr", "fr-CA", "es", "es-MX", "pt", "pt-BR", "pt-PT", "it", "nl", "ja", "zh", "zh-CN", "zh-TW", "ko", "ru", "pl", "sv", "ar", "ar-EG", "ar-SA", "he", "fa", "hi", "tr", "und", "en-u-ca-gregory"]) {
      const loc = new Intl.Locale(l);
      out[l] = { week: loc.getWeekInfo(), max: loc.maximize().toString(), min: loc.minimize().toString(), hourCycles: loc.getHourCycles() };
    }
    return Response.json(out);
  },
};
