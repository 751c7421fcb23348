const err = (f) => {
  try { f(); return "no error"; } catch (e) { return `${e.name}: ${e.message}`; }
};
const aerr = async (f) => {
  try { await f(); return "no error"; } catch (e) { return `${e.name}: ${e.message}`; }
};
const desc = (o, k) => {
  const d = Object.getOwnPropertyDescriptor(o, k);
  if (!d) return null;
  return { get: typeof d.get, set: typeof d.set, value: typeof d.value, writable: d.writable, enumerable: d.enumerable, configurable: d.configurable };
};

class MyResponse extends Response {
  #secret = "s";
  extra = 1;
  secret() { return this.#secret; }
}
class MyRequest extends Request {
  #tag;
  constructor(input, init, tag) { super(input, init); this.#tag = tag; }
  get tag() { return this.#tag; }
}

export default {
  async fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === "/response") {
      const r = new Response("hi", { headers: { "x-a": "1" } });
      const forIn = [];
      for (const k in r) forIn.push(k);
      return Response.json({
        keys: Object.keys(r),
        own: Object.getOwnPropertyNames(r),
        syms: Object.getOwnPropertySymbols(r).length,
        json: JSON.stringify(r),
        tag: Object.prototype.toString.call(r),
        forIn: forIn.sort(),
        protoIsObject: Object.getPrototypeOf(Response.prototype) === Object.prototype,
        ctorLength: Response.length,
        status: desc(Response.prototype, "status"),
        body: desc(Response.prototype, "body"),
        text: desc(Response.prototype, "text"),
        clone: desc(Response.prototype, "clone"),
        jsonStatic: desc(Response, "json"),
        textName: Response.prototype.text.name,
        textLength: Response.prototype.text.length,
        statusGetterName: Object.getOwnPropertyDescriptor(Response.prototype, "status").get.name,
        onProto: err(() => Response.prototype.status),
        callOther: err(() => Object.getOwnPropertyDescriptor(Response.prototype, "status").get.call({})),
        instance: r instanceof Response,
        set: (() => { r.foo = 2; return [r.foo, Object.keys(r)]; })(),
      });
    }
    if (path === "/request") {
      const r = new Request("http://example.com/a?b", { method: "post", headers: { "x-a": "1" }, body: "x" });
      const forIn = [];
      for (const k in r) forIn.push(k);
      return Response.json({
        keys: Object.keys(r),
        json: JSON.stringify(r),
        tag: Object.prototype.toString.call(r),
        forIn: forIn.sort(),
        ctorLength: Request.length,
        url: desc(Request.prototype, "url"),
        method: r.method,
        redirect: r.redirect,
        signal: typeof r.signal,
        cf: r.cf === undefined ? "undefined" : typeof r.cf,
        incomingCf: typeof req.cf,
        incomingKeys: Object.keys(req),
        incomingJson: JSON.stringify(req),
        onProto: err(() => Request.prototype.url),
        instance: r instanceof Request && !(r instanceof Response),
      });
    }
    if (path === "/subclass") {
      const r = new MyResponse("sub", { status: 201 });
      const q = new MyRequest("http://x/", { method: "PUT", body: "b" }, "t");
      const c = r.clone();
      return Response.json({
        isMine: r instanceof MyResponse, isResponse: r instanceof Response,
        secret: r.secret(), extra: r.extra, keys: Object.keys(r), status: r.status,
        text: await r.text(),
        cloneIsMine: c instanceof MyResponse, cloneText: await c.text(),
        reqTag: q.tag, reqIsMine: q instanceof MyRequest, reqText: await q.text(), reqMethod: q.method,
      });
    }
    if (path === "/errors") {
      return Response.json({
        status99: err(() => new Response("", { status: 99 })),
        status600: err(() => new Response("", { status: 600 })),
        statusText: err(() => new Response("", { statusText: "a\nb" })),
        nullBody204: err(() => new Response("x", { status: 204 })),
        ws: err(() => new Response(null, { webSocket: {} })),
        reqNoArgs: err(() => new Request()),
        reqBadUrl: err(() => new Request("not a url")),
        reqGetBody: err(() => new Request("http://x/", { body: "x" })),
        reqMethod: err(() => new Request("http://x/", { method: "bad method" })),
        reqRedirect: err(() => new Request("http://x/", { redirect: "nope" })),
        redirectStatus: err(() => Response.redirect("http://x/", 200)),
        redirectUrl: err(() => Response.redirect("nope")),
        used: await aerr(async () => { const r = new Response("u"); await r.text(); await r.text(); }),
        usedArrayBuffer: await aerr(async () => { const r = new Response("u"); await r.text(); await r.arrayBuffer(); }),
        cloneUsed: await aerr(async () => { const r = new Response("u"); await r.text(); r.clone(); }),
        // the name only: goja's JSON.parse words its errors its own way
        jsonBad: (await aerr(async () => { await new Response("{bad").json(); })).split(":")[0],
        lockedStream: await aerr(async () => { const r = new Response("l"); r.body.getReader(); await r.text(); }),
        headersBad: err(() => new Response("", { headers: 5 })),
      });
    }
    if (path === "/values") {
      const r = new Response(null, { status: 299, statusText: "Fine" });
      const e = Response.error();
      const j = Response.json({ a: 1 }, { status: 202, headers: { "x-j": "1" } });
      const rd = Response.redirect("http://example.com/x y", 301);
      const b = new Response(new Uint8Array([104, 105]));
      const wrapped = new Response(new Response("inner").body);
      return Response.json({
        r: [r.status, r.statusText, r.ok, r.type, r.url, r.redirected, r.body, r.bodyUsed, r.webSocket, typeof r.cf],
        def: [new Response().status, new Response().statusText, new Response(null, { status: 404 }).statusText],
        e: [e.status, e.statusText, e.type, e.ok, err(() => e.headers.set("a", "b"))],
        j: [j.status, j.headers.get("content-type"), j.headers.get("x-j"), await j.text()],
        rd: [rd.status, rd.headers.get("location"), err(() => rd.headers.set("a", "b"))],
        b: [b.headers.get("content-type"), await b.text()],
        wrapped: [wrapped.headers.get("content-type"), await wrapped.text()],
        emptyText: await new Response(null).text(),
        emptyUsed: (() => { const n = new Response(null); n.text(); return n.bodyUsed; })(),
        arrayBuffer: [...new Uint8Array(await new Response("ab").arrayBuffer())],
        bytes: [...(await new Response("cd").bytes())],
        blob: await (async () => { const bl = await new Response("bl", { headers: { "content-type": "text/x" } }).blob(); return [bl.type, bl.size]; })(),
        form: await (async () => { const f = await new Response("a=1&b=2", { headers: { "content-type": "application/x-www-form-urlencoded" } }).formData(); return [...f]; })(),
        bom: await new Response(new Uint8Array([0xef, 0xbb, 0xbf, 0x41, 0xff])).text(),
        numberBody: [await new Response(42).text(), new Response(42).headers.get("content-type")],
        usp: [await new Response(new URLSearchParams("q=1")).text(), new Response(new URLSearchParams("q=1")).headers.get("content-type")],
        status65736: err(() => new Response(null, { status: 65736 }).status),
        status200_5: new Response(null, { status: 200.7 }).status,
        clone: await (async () => { const a = new Response("cl"); const c = a.clone(); return [await a.text(), await c.text(), a.bodyUsed, c.bodyUsed]; })(),
        cloneStream: await (async () => { const a = new Response(new Response("cs").body); const c = a.clone(); return [await a.text(), await c.text()]; })(),
        reqClone: await (async () => { const a = new Request("http://x/", { method: "POST", body: "rq" }); const c = a.clone(); return [await a.text(), await c.text(), c.method, c.url]; })(),
        reqFromReq: await (async () => { const a = new Request("http://x/", { method: "POST", body: "rr", headers: { "x-h": "1" } }); const c = new Request(a, { headers: { "x-h": "2" } }); return [await c.text(), c.headers.get("x-h"), a.bodyUsed, c.method]; })(),
        reqDefaults: (() => { const a = new Request("http://x"); return [a.url, a.method, a.redirect, a.body, a.bodyUsed, a.integrity, a.keepalive, a.headers.get("x")]; })(),
      });
    }
    return new Response("not found", { status: 404 });
  },
};
