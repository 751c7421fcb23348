// HTMLRewriter: selectors, handlers and element mutations on small
// documents; each case answers the rewritten HTML and a log of what the
// handlers saw.

const json = (v) => new Response(JSON.stringify(v), { headers: { "content-type": "application/json" } });
const err = (e) => ({ name: e?.name, message: e?.message });

const page = `<!DOCTYPE html><html><head><title>T &amp; t</title></head><body class="main">` +
  `<div id="a" class="x y" data-k="v&amp;w"><p>one <b>bold</b> two</p><!-- note --><p class="y">three</p><img src="i.png"><br/></div>` +
  `<ul><li>1</li><li>2</li><li class="z">3</li></ul><span lang="en-US">s</span><a href="https://e.com/x.pdf">pdf</a></body></html>`;

const cases = {
  passthrough: () => new HTMLRewriter(),
  attrs: (log) => new HTMLRewriter().on("div", {
    element(e) {
      log.push([e.tagName, e.getAttribute("id"), e.getAttribute("data-k"), e.hasAttribute("class"), e.getAttribute("nope"),
        [...e.attributes], e.namespaceURI, e.selfClosing, e.canHaveContent, e.removed]);
      e.setAttribute("id", 'q"<&>');
      e.removeAttribute("class");
      e.setAttribute("new", "1");
    },
  }),
  selectors: (log) => {
    const rw = new HTMLRewriter();
    for (const s of ["p", "div > p", "body p", "p.y", "#a", "[data-k]", '[data-k="v&amp;w"]', '[data-k="v&w"]', '[class~="y"]',
      '[href^="https"]', '[href$=".pdf"]', '[href*="e.com"]', '[lang|="en"]', "li:nth-child(2)", "li:first-child", "li:nth-of-type(3)",
      "li:first-of-type", "li:not(.z)", "*", "ul > li.z", '[class="X Y" i]', "div p b"]) {
      rw.on(s, { element(e) { log.push([s, e.tagName]); } });
    }
    return rw;
  },
  badSelector: (log) => {
    for (const s of ["p:hover", "div ~ p", "div + p", "", "p::before", "[a=", ":nth-child(2n+1)"]) {
      try { new HTMLRewriter().on(s, {}); log.push([s, "ok"]); } catch (e) { log.push([s, err(e)]); }
    }
    return new HTMLRewriter();
  },
  insert: () => new HTMLRewriter().on("p.y", {
    element(e) {
      e.before("<i>before</i>");
      e.after("<i>after</i>", { html: true });
      e.prepend("pre&");
      e.append("<u>app</u>", { html: true });
    },
  }),
  setInner: () => new HTMLRewriter().on("div", { element(e) { e.setInnerContent("<em>new</em>", { html: true }); } }),
  setInnerText: () => new HTMLRewriter().on("li", { element(e) { e.setInnerContent("a<b>\"c\"&'d'"); } }),
  replace: () => new HTMLRewriter().on("ul", { element(e) { e.replace("<ol></ol>", { html: true }); } }),
  remove: () => new HTMLRewriter().on("p", { element(e) { e.remove(); } }).on("b", { element(e) { e.setAttribute("seen", ""); } }),
  keepContent: () => new HTMLRewriter().on("div", { element(e) { e.removeAndKeepContent(); } }),
  rename: () => new HTMLRewriter().on("b", { element(e) { e.tagName = "strong"; } }).on("img", { element(e) { e.tagName = "picture"; } }),
  endTag: (log) => new HTMLRewriter().on("li", {
    element(e) {
      const z = e.getAttribute("class") === "z";
      e.onEndTag((end) => {
        log.push(end.name);
        end.before("[b]");
        end.after("<a>", { html: true });
        if (z) end.name = "LI2";
      });
    },
  }).on("p", { element(e) { e.onEndTag((end) => { end.remove(); }); } }),
  text: (log) => new HTMLRewriter().on("p", {
    text(t) { log.push([t.text, t.lastInTextNode, t.removed]); if (t.text === "three") t.replace("THREE"); },
  }).on("title", { text(t) { log.push(["title", t.text, t.lastInTextNode]); } }),
  comments: (log) => new HTMLRewriter().on("div", {
    comments(c) { log.push([c.text, c.removed]); c.text = " changed "; c.after("<hr>", { html: true }); },
  }),
  removeComment: () => new HTMLRewriter().on("*", { comments(c) { c.remove(); } }),
  document: (log) => new HTMLRewriter().onDocument({
    doctype(d) { log.push(["doctype", d.name, d.publicId, d.systemId]); },
    comments(c) { log.push(["comment", c.text]); },
    text(t) { if (t.text.trim() !== "") log.push(["text", t.text, t.lastInTextNode]); },
    end(end) { log.push(["end"]); end.append("<!-- end -->", { html: true }); end.append("&tail"); },
  }),
  async: (log) => new HTMLRewriter().on("li", {
    async element(e) {
      await new Promise((r) => setTimeout(r, 1));
      e.setAttribute("data-n", e.getAttribute("class") || "none");
      log.push("li");
    },
  }),
  selfClosing: (log) => new HTMLRewriter().on("br", {
    element(e) { log.push([e.tagName, e.selfClosing, e.canHaveContent]); e.after("!"); e.setAttribute("x", "1"); },
  }).on("img", { element(e) { log.push([e.tagName, e.selfClosing, e.canHaveContent]); e.append("nope"); } }),
  removeText: () => new HTMLRewriter().on("li", { text(t) { t.remove(); } }),
  textBeforeAfter: () => new HTMLRewriter().on("b", { text(t) { if (t.text) { t.before("<", { html: false }); t.after(">"); } } }),
  staleToken: (log) => new HTMLRewriter().on("li", { element(e) { e.onEndTag(() => { log.push("end"); e.getAttribute("class"); }); } }),
  nthChild: (log) => new HTMLRewriter().on("li:nth-child(2n+1)", { element(e) { log.push("odd"); } })
    .on("li:nth-child(even)", { element(e) { log.push("even"); } }).on("li:nth-child(-n+2)", { element(e) { log.push("first2"); } }),
  insideRemoved: (log) => new HTMLRewriter().on("p", { element(e) { e.remove(); } })
    .on("b", { element(e) { log.push("b element"); } }).on("div", { text(t) { if (t.text) log.push(t.text); } }),
  insideInner: (log) => new HTMLRewriter().on("div", { element(e) { e.setInnerContent("x"); } })
    .on("p", { element(e) { log.push("p element"); } }),
  handlerThrows: () => new HTMLRewriter().on("p", { element() { throw new TypeError("handler failed"); } }),
};

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const name = url.pathname.slice(1);
    if (name === "shape") {
      const rw = new HTMLRewriter();
      let notResponse;
      try { rw.transform("x"); notResponse = "ok"; } catch (e) { notResponse = err(e); }
      const t = new HTMLRewriter().transform(new Response("<p>x</p>", { status: 201, headers: { "content-type": "text/html", "content-length": "8", "x-h": "1" } }));
      return json({
        onReturns: rw.on("p", {}) === rw, onDocReturns: rw.onDocument({}) === rw, notResponse,
        status: t.status, ct: t.headers.get("content-type"), cl: t.headers.get("content-length"), xh: t.headers.get("x-h"),
        body: await t.text(),
        nullBody: (await new HTMLRewriter().on("p", {}).transform(new Response(null)).text()),
      });
    }
    if (name === "implied") {
      const log = [];
      const out = await new HTMLRewriter().on("p", { text(t) { if (t.text) log.push(["p", t.text]); } })
        .on("li", { element(e) { log.push(["li", e.getAttribute("n")]); e.onEndTag((end) => log.push(["li end", end.name])); } })
        .on("div p", { element() { log.push(["div p"]); } })
        .transform(new Response("<p>a<div>b</div>c<ul><li n=1>x<li n=2>y</ul><div><p>q</div>z")).text();
      return json({ out, log });
    }
    if (name === "chunks") {
      // Input split mid-tag and mid-text.
      const parts = ["<div><p cla", "ss=\"y\">hel", "lo wor", "ld</p><!-- c", "om --></di", "v>"];
      const log = [];
      const body = new ReadableStream({ start(c) { for (const p of parts) c.enqueue(new TextEncoder().encode(p)); c.close(); } });
      const out = await new HTMLRewriter().on("p", {
        element(e) { log.push(["el", e.getAttribute("class")]); },
        text(t) { log.push(["text", t.text, t.lastInTextNode]); },
      }).on("div", { comments(c) { log.push(["comment", c.text]); } }).transform(new Response(body)).text();
      const joined = [];
      for (let i = 0; i < log.length; i++) {
        if (log[i][0] === "text" && joined.length && joined[joined.length - 1][0] === "text" && !joined[joined.length - 1][2]) {
          joined[joined.length - 1] = ["text", joined[joined.length - 1][1] + log[i][1], log[i][2]];
        } else joined.push(log[i]);
      }
      return json({ out, log: joined });
    }
    const make = cases[name];
    if (!make) return new Response("not found", { status: 404 });
    const log = [];
    try {
      const out = await make(log).transform(new Response(page, { headers: { "content-type": "text/html" } })).text();
      return json({ out, log });
    } catch (e) {
      return json({ error: err(e), log });
    }
  },
};
