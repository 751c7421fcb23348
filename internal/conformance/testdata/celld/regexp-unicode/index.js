const t = (re, s) => re.test(s);
const all = (re, s) => s.match(re);

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    if (pathname === "/categories") {
      return Response.json({
        letters: all(/\p{L}+/gu, "héllo wörld, 日本語 and Ελληνικά 42"),
        notLetters: all(/\P{L}+/gu, "ab1-2c"),
        upperLower: [t(/\p{Lu}/u, "Ä"), t(/\p{Ll}/u, "Ä"), t(/\p{Lowercase_Letter}/u, "ß"), t(/\p{Lt}/u, "ǅ"), t(/\p{LC}/u, "x")],
        numbers: all(/\p{Nd}+/gu, "12 ٣٤ ໕ 六"), numberAny: all(/\p{N}/gu, "½ Ⅻ 3"),
        punct: all(/\p{P}/gu, "a,b.c!d—e«f»"), symbols: all(/\p{S}/gu, "1+2=3 $ € ©"), currency: all(/\p{Sc}/gu, "$ € ¥ £ a"),
        marks: all(/\p{M}/gu, "e\u0301 a\u0308"), spaces: "a\u00a0b\u3000c d".split(/\p{Zs}/u),
        control: [t(/\p{Cc}/u, "\u0007"), t(/\p{Cf}/u, "\u200d"), t(/\p{gc=Cn}/u, "\u0378"), t(/\p{C}/u, "\u0378"), t(/\p{General_Category=Letter}/u, "a")],
        classes: all(/[\p{L}\p{N}_-]+/gu, "naïve_café-42 ++ x"), negClass: all(/[^\p{L}\s]+/gu, "héllo, wörld! 42"),
        inverted: all(/[\P{L}]+/gu, "ab12cd"), astral: [t(/^\p{L}$/u, "𝒜"), t(/^\p{So}$/u, "😀"), t(/^\p{Any}$/u, "😀")],
        ignoreCase: [t(/\p{Lu}/iu, "a"), t(/\p{Ll}/iu, "A")],
      });
    }
    if (pathname === "/scripts") {
      return Response.json({
        greek: all(/\p{Script=Greek}+/gu, "abc αβγ def"), han: all(/\p{sc=Han}+/gu, "日本語 かな"),
        hiragana: all(/\p{Script=Hiragana}+/gu, "日本語 かな"), cyrillic: t(/^\p{Script=Cyrillic}+$/u, "привет"),
        latin: all(/\p{Script=Latin}+/gu, "Zoë 1 ß"), arabic: t(/\p{sc=Arabic}/u, "مرحبا"),
      });
    }
    if (pathname === "/binary") {
      return Response.json({
        alpha: [t(/\p{Alphabetic}/u, "ª"), t(/\p{Alpha}/u, "1")], white: all(/\p{White_Space}/gu, "a b\tc\u3000d\u2028e").length,
        ignorable: [t(/\p{Default_Ignorable_Code_Point}/u, "\u200b"), t(/\p{DI}/u, "a"), t(/\p{DI}/u, "\u00ad")],
        ident: [t(/^\p{ID_Start}\p{ID_Continue}*$/u, "café_1"), t(/^\p{ID_Start}/u, "1a"), t(/\p{XID_Continue}/u, "\u0301")],
        ascii: [t(/^\p{ASCII}+$/u, "abc~"), t(/^\p{ASCII}+$/u, "é")], hex: all(/\p{Hex_Digit}+/gu, "cafe babe xyz"),
        upperLower: [t(/\p{Uppercase}/u, "Ⓐ"), t(/\p{Lowercase}/u, "ª"), t(/\p{Math}/u, "∑")],
        misc: [t(/\p{Dash}/u, "—"), t(/\p{Quotation_Mark}/u, "«"), t(/\p{Regional_Indicator}/u, "🇯"), t(/\p{Ideographic}/u, "日"), t(/\p{Extender}/u, "ー")],
      });
    }
    if (pathname === "/libraries") {
      // the word splitting change-case and similar libraries do
      const split = (s) => s.replace(/([\p{Ll}\d])(\p{Lu})/gu, "$1\0$2").replace(/(\p{Lu})([\p{Lu}][\p{Ll}])/gu, "$1\0$2").replace(/[^\p{L}\d]+/giu, "\0").split("\0").filter(Boolean);
      const slug = (s) => s.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-|-$/g, "");
      return Response.json({
        words: ["XMLHttpRequest v2", "ünïcödé Wörds", "fooBarBAZQux", "Émile-Zola_1902"].map(split),
        slugs: ["Crème Brûlée — à la carte!", "Ωmega 3", "日本語 text"].map(slug),
        capitalized: "élan vital über alles".replace(/(^|\s)(\p{Ll})/gu, (_, a, b) => a + b.toUpperCase()),
        constructed: [new RegExp("^\\p{L}+$", "u").test("Straße"), RegExp("\\P{L}", "u").exec("ab1c")[0], new RegExp("\\p{Lu}", "gu")[Symbol.replace]("aBcD", "_")],
        flags: [/\p{L}/u.flags, /\p{L}/gu.unicode, /\p{L}/u.source.length > 0],
      });
    }
    if (pathname === "/v-flag") {
      return Response.json({
        subtract: [t(/[\p{L}--[a-z]]/v, "a"), t(/[\p{L}--[a-z]]/v, "B")], intersect: all(/[\p{L}&&\p{ASCII}]+/gv, "éabcé"),
        nested: all(/[[a-z][0-9]]+/gv, "-a1-b2-"), negated: all(/[^\p{L}]/gv, "ab.c,"), greekNoVowels: all(/[\p{Script=Greek}--[αεηιουω]]+/gv, "αβγδε"),
        escapes: [t(/[\(\)]/v, ")"), t(/[\-]/v, "-"), t(/^[\p{Nd}--[0-4]]+$/v, "5678"), t(/^[\p{Nd}--[0-4]]+$/v, "45")],
        constructed: [new RegExp("[\\p{Lu}&&\\p{Script=Latin}]", "v").test("Ω"), new RegExp("[\\p{Lu}&&\\p{Script=Latin}]", "v").test("Q")],
        replaced: "a1b2c3".replace(/[\p{N}--[2]]/gv, "#"),
      });
    }
    return new Response("not found", { status: 404 });
  },
};
