// HTMLRewriter: a streaming rewrite of an HTML response on the tokens
// htmlrewriter.go makes. Elements are tracked on a stack of open tags
// (no tree is built): selectors match against it, and removing or
// replacing an element suppresses what comes until its end tag. Texts of
// errors and the serialization of changed tags are workerd's (recorded in
// celld/htmlrewriter).

const kCreate = internal.kCreate;
const T_TEXT = 0, T_START = 1, T_END = 2, T_COMMENT = 3, T_DOCTYPE = 4;
const voidElements = new Set(["area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param", "source", "track", "wbr"]);
const staleText = "This content token is no longer valid. Content tokens are only valid during the execution of the relevant content handler.";

const escapeText = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const content = (c, options) => {
  const s = String(c);
  return options && options.html ? s : escapeText(s);
};

// ---- selectors ---------------------------------------------------------------

const perr = (m) => new TypeError("Parser error: " + m);

function parseSelector(src) {
  const s = String(src);
  if (s.trim() === "") throw perr("The selector is empty.");
  const list = [];
  let i = 0;
  const ws = () => { while (i < s.length && /\s/.test(s[i])) i++; };
  const ident = () => {
    const m = /^(?:\\.|[A-Za-z0-9_\-\u00a0-\uffff])+/.exec(s.slice(i));
    if (!m) {
      if (i >= s.length) throw perr("Unexpected end of selector.");
      throw perr("Invalid selector.");
    }
    i += m[0].length;
    return m[0].replace(/\\(.)/g, "$1");
  };
  const value = () => {
    if (s[i] === '"' || s[i] === "'") {
      const q = s[i];
      const end = s.indexOf(q, i + 1);
      if (end < 0) throw perr("Unexpected end of selector.");
      const v = s.slice(i + 1, end);
      i = end + 1;
      return v;
    }
    return ident();
  };
  const nth = () => {
    const close = s.indexOf(")", i);
    if (close < 0) throw perr("Unexpected end of selector.");
    const arg = s.slice(i, close).trim().toLowerCase().replace(/\s+/g, "");
    i = close + 1;
    if (arg === "odd") return [2, 1];
    if (arg === "even") return [2, 0];
    const m = /^([+-]?\d*)n([+-]\d+)?$/.exec(arg);
    if (m) {
      const a = m[1] === "" || m[1] === "+" ? 1 : m[1] === "-" ? -1 : Number(m[1]);
      return [a, m[2] ? Number(m[2]) : 0];
    }
    if (/^[+-]?\d+$/.test(arg)) return [0, Number(arg)];
    throw perr("Invalid selector.");
  };
  const compound = (inNot) => {
    const c = { tag: null, ids: [], classes: [], attrs: [], pseudos: [] };
    let any = false;
    if (s[i] === "*") { i++; any = true; } else if (i < s.length && /[A-Za-z_\\\u00a0-\uffff-]/.test(s[i])) { c.tag = ident().toLowerCase(); any = true; }
    for (;;) {
      const ch = s[i];
      if (ch === "#") { i++; c.ids.push(ident()); } else if (ch === ".") { i++; c.classes.push(ident()); } else if (ch === "[") {
        i++; ws();
        const name = ident().toLowerCase(); ws();
        if (i >= s.length) throw perr("Unexpected end of selector.");
        let op = null, v = null, ci = false;
        if (s[i] !== "]") {
          const m = /^([~^$*|]?=)/.exec(s.slice(i));
          if (!m) throw perr("Invalid selector.");
          op = m[1]; i += op.length; ws();
          if (i >= s.length) throw perr("Unexpected end of selector.");
          v = value(); ws();
          if (s[i] === "i" || s[i] === "I") { ci = true; i++; ws(); } else if (s[i] === "s" || s[i] === "S") { i++; ws(); }
        }
        if (i >= s.length) throw perr("Unexpected end of selector.");
        if (s[i] !== "]") throw perr("Invalid selector.");
        i++;
        c.attrs.push({ name, op, v, ci });
      } else if (ch === ":") {
        i++;
        if (s[i] === ":") throw perr("Unsupported pseudo-class or pseudo-element in selector.");
        const m = /^[A-Za-z-]+/.exec(s.slice(i));
        const name = m ? m[0].toLowerCase() : "";
        i += name.length;
        if (name === "first-child") c.pseudos.push({ kind: "nth", type: false, a: 0, b: 1 });
        else if (name === "first-of-type") c.pseudos.push({ kind: "nth", type: true, a: 0, b: 1 });
        else if ((name === "nth-child" || name === "nth-of-type") && s[i] === "(") {
          i++;
          const [a, b] = nth();
          c.pseudos.push({ kind: "nth", type: name === "nth-of-type", a, b });
        } else if (name === "not" && s[i] === "(" && !inNot) {
          i++; ws();
          const inner = compound(true); ws();
          if (i >= s.length) throw perr("Unexpected end of selector.");
          if (s[i] !== ")") throw perr("Invalid selector.");
          i++;
          c.pseudos.push({ kind: "not", inner });
        } else throw perr("Unsupported pseudo-class or pseudo-element in selector.");
      } else break;
      any = true;
    }
    if (!any) {
      if (i >= s.length) throw perr("Unexpected end of selector.");
      throw perr("Invalid selector.");
    }
    return c;
  };
  for (;;) {
    ws();
    const parts = [compound(false)]; // rightmost last
    const combs = [];
    for (;;) {
      const before = i;
      ws();
      if (i >= s.length || s[i] === ",") break;
      if (s[i] === ">") { i++; ws(); combs.push(">"); } else if (s[i] === "~" || s[i] === "+") {
        throw perr(`Unsupported combinator \`${s[i]}\` in selector.`);
      } else if (i > before) combs.push(" ");
      else throw perr("Invalid selector.");
      parts.push(compound(false));
    }
    list.push({ parts, combs });
    if (i >= s.length) break;
    i++; // ","
  }
  return list;
}

function attrMatch(el, a) {
  const v = el.attrs.get(a.name);
  if (v === undefined) return false;
  if (a.op === null) return true;
  const norm = (x) => (a.ci ? x.toLowerCase() : x);
  const have = norm(v), want = norm(a.v);
  switch (a.op) {
    case "=": return have === want;
    case "~=": return want !== "" && have.split(/\s+/).includes(want);
    case "^=": return want !== "" && have.startsWith(want);
    case "$=": return want !== "" && have.endsWith(want);
    case "*=": return want !== "" && have.includes(want);
    case "|=": return have === want || have.startsWith(want + "-");
  }
  return false;
}
const nthMatch = (a, b, n) => (a === 0 ? n === b : (n - b) / a >= 0 && (n - b) % a === 0);

function compoundMatch(c, el) {
  if (c.tag !== null && c.tag !== el.name) return false;
  for (const id of c.ids) if (el.attrs.get("id") !== id) return false;
  if (c.classes.length) {
    const cls = (el.attrs.get("class") || "").split(/\s+/);
    for (const k of c.classes) if (!cls.includes(k)) return false;
  }
  for (const a of c.attrs) if (!attrMatch(el, a)) return false;
  for (const p of c.pseudos) {
    if (p.kind === "nth") {
      if (!nthMatch(p.a, p.b, p.type ? el.typeIndex : el.index)) return false;
    } else if (compoundMatch(p.inner, el)) return false;
  }
  return true;
}

// matches tests the selector against the element at stack[k] (stack[0]
// is the document).
function matchFrom(sel, j, stack, k) {
  if (!compoundMatch(sel.parts[j], stack[k])) return false;
  if (j === 0) return true;
  const comb = sel.combs[j - 1];
  if (comb === ">") return k > 1 && matchFrom(sel, j - 1, stack, k - 1);
  for (let m = k - 1; m >= 1; m--) if (matchFrom(sel, j - 1, stack, m)) return true;
  return false;
}
const selectorMatches = (list, stack) => list.some((sel) => matchFrom(sel, sel.parts.length - 1, stack, stack.length - 1));

// ---- content tokens ------------------------------------------------------------

class Token {
  constructor() { this.valid = true; this.beforeC = []; this.afterC = []; this.removedFlag = false; this.replacement = null; }
  check() { if (!this.valid) throw new TypeError(staleText); }
}
const tok = new WeakMap(); // public object -> its Token state
const st = (o) => {
  const t = tok.get(o);
  if (t === undefined) throw new TypeError("Illegal invocation");
  t.check();
  return t;
};

class Element {
  constructor(key) { if (key !== kCreate) throw new TypeError("Illegal constructor"); }
  get tagName() { return st(this).name; }
  set tagName(v) { const t = st(this); t.name = String(v).toLowerCase(); t.modified = true; }
  get attributes() { return st(this).attrs.map((a) => [a[0], a[1]])[Symbol.iterator](); }
  get namespaceURI() { st(this); return "http://www.w3.org/1999/xhtml"; }
  get removed() { return st(this).removedFlag; }
  getAttribute(name) { const a = st(this).attrs.find((x) => x[0] === String(name).toLowerCase()); return a ? a[1] : null; }
  hasAttribute(name) { return st(this).attrs.some((x) => x[0] === String(name).toLowerCase()); }
  setAttribute(name, value) {
    const t = st(this);
    const n = String(name).toLowerCase(), v = String(value);
    const a = t.attrs.find((x) => x[0] === n);
    if (a) a[1] = v; else t.attrs.push([n, v]);
    t.modified = true;
    return this;
  }
  removeAttribute(name) {
    const t = st(this);
    const n = String(name).toLowerCase();
    const i = t.attrs.findIndex((x) => x[0] === n);
    if (i >= 0) { t.attrs.splice(i, 1); t.modified = true; }
    return this;
  }
  before(c, o = undefined) { st(this).beforeC.push(content(c, o)); return this; }
  after(c, o = undefined) { st(this).afterC.unshift(content(c, o)); return this; }
  prepend(c, o = undefined) { const t = st(this); if (!t.isVoid) t.prependC.unshift(content(c, o)); return this; }
  append(c, o = undefined) { const t = st(this); if (!t.isVoid) t.appendC.push(content(c, o)); return this; }
  setInnerContent(c, o = undefined) { const t = st(this); if (!t.isVoid) { t.inner = content(c, o); t.prependC = []; t.appendC = []; } return this; }
  replace(c, o = undefined) { const t = st(this); t.replacement = content(c, o); t.removedFlag = true; return this; }
  remove() { const t = st(this); t.removedFlag = true; t.replacement = null; return this; }
  removeAndKeepContent() { st(this).keepContent = true; return this; }
  onEndTag(handler) {
    const t = st(this);
    if (typeof handler !== "function") throw new TypeError("Failed to execute 'onEndTag' on 'Element': parameter 1 is not a function.");
    t.endHandlers.push(handler);
  }
}

class EndTag {
  constructor(key) { if (key !== kCreate) throw new TypeError("Illegal constructor"); }
  get name() { return st(this).name; }
  set name(v) { const t = st(this); t.name = String(v); t.modified = true; }
  before(c, o = undefined) { st(this).beforeC.push(content(c, o)); return this; }
  after(c, o = undefined) { st(this).afterC.unshift(content(c, o)); return this; }
  remove() { st(this).removedFlag = true; return this; }
}

class Text {
  constructor(key) { if (key !== kCreate) throw new TypeError("Illegal constructor"); }
  get text() { return st(this).text; }
  get lastInTextNode() { return st(this).last; }
  get removed() { return st(this).removedFlag; }
  before(c, o = undefined) { st(this).beforeC.push(content(c, o)); return this; }
  after(c, o = undefined) { st(this).afterC.unshift(content(c, o)); return this; }
  replace(c, o = undefined) { const t = st(this); t.replacement = content(c, o); t.removedFlag = true; return this; }
  remove() { const t = st(this); t.removedFlag = true; t.replacement = null; return this; }
}

class Comment {
  constructor(key) { if (key !== kCreate) throw new TypeError("Illegal constructor"); }
  get text() { return st(this).text; }
  set text(v) { const t = st(this); t.text = String(v); t.modified = true; }
  get removed() { return st(this).removedFlag; }
  before(c, o = undefined) { st(this).beforeC.push(content(c, o)); return this; }
  after(c, o = undefined) { st(this).afterC.unshift(content(c, o)); return this; }
  replace(c, o = undefined) { const t = st(this); t.replacement = content(c, o); t.removedFlag = true; return this; }
  remove() { const t = st(this); t.removedFlag = true; t.replacement = null; return this; }
}

class Doctype {
  constructor(key) { if (key !== kCreate) throw new TypeError("Illegal constructor"); }
  get name() { return st(this).name; }
  get publicId() { return st(this).publicId; }
  get systemId() { return st(this).systemId; }
}

class DocumentEnd {
  constructor(key) { if (key !== kCreate) throw new TypeError("Illegal constructor"); }
  append(c, o = undefined) { st(this).afterC.push(content(c, o)); return this; }
}

function wrap(Cls, state) {
  const o = new Cls(kCreate);
  tok.set(o, state);
  return o;
}

// run calls each handler in order with obj, awaiting the promises they
// return, then ends obj's validity.
async function run(calls, obj, state) {
  try {
    for (const f of calls) {
      const r = f(obj);
      if (r !== null && typeof r === "object" && typeof r.then === "function") await r;
    }
  } finally {
    state.valid = false;
  }
}

// ---- the rewriter --------------------------------------------------------------

class Rewriting {
  constructor(elementHandlers, documentHandlers) {
    this.eh = elementHandlers;
    this.dh = documentHandlers;
    this.stack = [{ name: "#document", attrs: new Map(), childCount: 0, typeCounts: new Map(), matched: [], suppress: false }];
    this.out = [];
  }
  get suppressed() { return this.stack[this.stack.length - 1].suppress; }
  emit(s) { if (!this.suppressed && s !== "") this.out.push(s); }
  // handlersFor lists the handlers of kind (text, comments) that apply at
  // the current position: those whose selector matches an open element
  // (each once, however many elements it matches, in the order they were
  // registered), then the document's.
  handlersFor(kind) {
    const idx = new Set();
    for (let k = 1; k < this.stack.length; k++) for (const i of this.stack[k].matched) idx.add(i);
    const out = [];
    for (const i of [...idx].sort((a, b) => a - b)) {
      const h = this.eh[i].handlers;
      if (typeof h[kind] === "function") out.push(h[kind].bind(h));
    }
    for (const h of this.dh) if (typeof h[kind] === "function") out.push(h[kind].bind(h));
    return out;
  }
  async token(t) {
    const [kind, raw, name, attrs, selfClosing] = t;
    if (kind === T_START) return this.start(raw, name, attrs, selfClosing);
    if (kind === T_END) return this.end(raw, name);
    // Inside removed or replaced content handlers still run (as in
    // workerd); only the output is dropped (emit).
    if (kind === T_TEXT) return this.text(raw);
    if (kind === T_COMMENT) return this.comment(raw, name);
    if (kind === T_DOCTYPE) {
      const calls = this.dh.filter((h) => typeof h.doctype === "function").map((h) => h.doctype.bind(h));
      if (calls.length) {
        const s = new Token();
        s.name = name; s.publicId = attrs[0]; s.systemId = attrs[1];
        await run(calls, wrap(Doctype, s), s);
      }
      this.emit(raw);
    }
  }
  async text(raw) {
    const calls = this.handlersFor("text");
    if (calls.length === 0) return this.emit(raw);
    for (const [text, last] of [[raw, false], ["", true]]) {
      const s = new Token();
      s.text = text; s.last = last;
      await run(calls, wrap(Text, s), s);
      this.emit(s.beforeC.join(""));
      this.emit(s.removedFlag ? (s.replacement ?? "") : text);
      this.emit(s.afterC.join(""));
    }
  }
  async comment(raw, text) {
    const calls = this.handlersFor("comments");
    if (calls.length === 0) return this.emit(raw);
    const s = new Token();
    s.text = text;
    await run(calls, wrap(Comment, s), s);
    this.emit(s.beforeC.join(""));
    this.emit(s.removedFlag ? (s.replacement ?? "") : s.modified ? `<!--${s.text}-->` : raw);
    this.emit(s.afterC.join(""));
  }
  async start(raw, name, flatAttrs, selfClosing) {
    const parent = this.stack[this.stack.length - 1];
    parent.childCount++;
    const typeIndex = (parent.typeCounts.get(name) || 0) + 1;
    parent.typeCounts.set(name, typeIndex);
    const attrs = new Map();
    for (let i = 0; i + 1 < flatAttrs.length; i += 2) attrs.set(flatAttrs[i], flatAttrs[i + 1]);
    const isVoid = voidElements.has(name) || selfClosing;
    const frame = { name, attrs, index: parent.childCount, typeIndex, childCount: 0, typeCounts: new Map(), matched: [], suppress: parent.suppress, state: null };
    this.stack.push(frame);
    const calls = [];
    for (let i = 0; i < this.eh.length; i++) {
      const h = this.eh[i];
      if (selectorMatches(h.selector, this.stack)) {
        frame.matched.push(i);
        if (typeof h.handlers.element === "function") calls.push(h.handlers.element.bind(h.handlers));
      }
    }
    let s = null;
    if (calls.length) {
      s = new Token();
      s.name = name; s.attrs = [...attrs.entries()].map(([k, v]) => [k, v]); s.isVoid = isVoid; s.selfClosing = selfClosing;
      s.prependC = []; s.appendC = []; s.inner = null; s.keepContent = false; s.modified = false; s.endHandlers = [];
      await run(calls, wrap(Element, s), s);
      frame.state = s;
    }
    if (s === null) {
      this.emit(raw);
    } else {
      this.emit(s.beforeC.join(""));
      if (s.removedFlag) {
        this.emit(s.replacement ?? "");
      } else {
        if (!s.keepContent) this.emit(s.modified ? serializeStart(s) : raw);
        this.emit(s.prependC.join(""));
        if (s.inner !== null) this.emit(s.inner);
      }
    }
    if (isVoid) {
      this.stack.pop();
      if (s !== null) this.emit(s.afterC.join(""));
      return;
    }
    if (s !== null && (s.removedFlag || s.inner !== null)) frame.suppress = true;
  }
  async end(raw, name) {
    let k = this.stack.length - 1;
    while (k > 0 && this.stack[k].name !== name) k--;
    if (k === 0) return this.emit(raw); // a stray end tag
    // Elements left open inside are closed by this end tag: their end tag
    // handlers see it (workerd passes them the same end tag).
    while (this.stack.length - 1 > k) await this.close(null, name);
    await this.close(raw);
  }
  // close ends the innermost open element, at its end tag raw (null: the
  // element ends without one of its own, closed by the end tag named
  // closing, or by the document's end).
  async close(raw, closing = null) {
    const frame = this.stack.pop();
    const s = frame.state;
    if (s === null) {
      if (raw !== null) this.emit(raw);
      return;
    }
    if (s.removedFlag) {
      this.emit(s.afterC.join(""));
      return;
    }
    if (s.inner === null) this.emit(s.appendC.join(""));
    let endRaw = raw;
    if (raw !== null && s.modified && s.name !== frame.name) endRaw = `</${s.name}>`;
    if (raw === null && closing !== null && s.endHandlers.length) {
      const e = new Token();
      e.name = closing;
      await run(s.endHandlers, wrap(EndTag, e), e);
      this.emit(e.beforeC.join(""));
      this.emit(e.afterC.join(""));
    } else if (raw !== null && s.endHandlers.length) {
      const e = new Token();
      e.name = s.name;
      await run(s.endHandlers, wrap(EndTag, e), e);
      this.emit(e.beforeC.join(""));
      if (!e.removedFlag && !s.keepContent) this.emit(e.modified ? `</${e.name}>` : endRaw);
      this.emit(e.afterC.join(""));
    } else if (raw !== null && !s.keepContent) {
      this.emit(endRaw);
    }
    this.emit(s.afterC.join(""));
  }
  async finish() {
    while (this.stack.length > 1) await this.close(null);
    const calls = this.dh.filter((h) => typeof h.end === "function").map((h) => h.end.bind(h));
    if (calls.length) {
      const s = new Token();
      await run(calls, wrap(DocumentEnd, s), s);
      this.emit(s.afterC.join(""));
    }
  }
}

function serializeStart(s) {
  let out = "<" + s.name;
  for (const [k, v] of s.attrs) out += ` ${k}="${v.replace(/"/g, "&quot;")}"`;
  return out + (s.selfClosing ? " />" : ">");
}

class HTMLRewriter {
  #eh = [];
  #dh = [];
  constructor() {}
  on(selector, handlers) {
    const sel = parseSelector(selector);
    this.#eh.push({ selector: sel, handlers: handlers ?? {} });
    return this;
  }
  onDocument(handlers) {
    this.#dh.push(handlers ?? {});
    return this;
  }
  transform(response) {
    if (!(response instanceof Response)) {
      throw new TypeError("Failed to execute 'transform' on 'HTMLRewriter': parameter 1 is not of type 'Response'.");
    }
    const init = { status: response.status, statusText: response.statusText, headers: response.headers };
    if (response.body === null) return new Response(null, init);
    const rw = new Rewriting(this.#eh.slice(), this.#dh.slice());
    const reader = response.body.getReader();
    const h = native.htmlNew();
    const enc = new TextEncoder();
    let done = false;
    const body = new ReadableStream({
      async pull(c) {
        try {
          await step(c);
        } catch (e) {
          native.htmlClose(h);
          reader.cancel(e).catch(() => {});
          throw e;
        }
      },
      cancel(reason) {
        native.htmlClose(h);
        return reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
    async function step(c) {
        while (!done) {
          const { value, done: end } = await reader.read();
          let toks;
          if (end) {
            done = true;
            toks = await native.htmlWrite(h, null);
          } else {
            const u = internal.toU8(value);
            if (u === null) throw new TypeError("This TransformStream is being used as a byte stream, but received an object of non-ArrayBuffer/ArrayBufferView type on its writable side.");
            toks = await native.htmlWrite(h, u);
          }
          for (const t of toks) await rw.token(t);
          if (done) await rw.finish();
          if (rw.out.length) {
            c.enqueue(enc.encode(rw.out.join("")));
            rw.out = [];
            break;
          }
        }
        if (done) c.close();
    }
    return new Response(body, init);
  }
}

internal.expose("HTMLRewriter", HTMLRewriter);
