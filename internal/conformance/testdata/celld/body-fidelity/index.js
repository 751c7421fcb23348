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
const post = (body = "payload") => new Request("https://h.test/x", { method: "POST", body });

const groups = {
  response: () => run({
    used_after_text: async () => { const r = new Response("abc"); await r.text(); return [r.bodyUsed, await r.text().catch(errInfo)]; },
    used_after_json: async () => { const r = new Response("{}"); await r.json(); return await r.arrayBuffer().catch(errInfo); },
    clone_after_read: async () => { const r = new Response("abc"); await r.text(); try { r.clone(); return "cloned"; } catch (e) { return errInfo(e); } },
    clone_then_read_both: async () => { const r = new Response("abc"); const c = r.clone(); return [await r.text(), await c.text(), r.bodyUsed, c.bodyUsed]; },
    locked_read: async () => { const r = new Response("abc"); r.body.getReader(); return [r.bodyUsed, await r.text().catch(errInfo)]; },
    locked_clone: async () => { const r = new Response("abc"); r.body.getReader(); try { r.clone(); return "cloned"; } catch (e) { return errInfo(e); } },
    partial_read: async () => { const r = new Response("abc"); const rd = r.body.getReader(); await rd.read(); rd.releaseLock(); return [r.bodyUsed, await r.text().catch(errInfo)]; },
    from_used_body: async () => { const r = new Response("abc"); await r.text(); try { return await new Response(r.body).text(); } catch (e) { return errInfo(e); } },
    null_body_used: async () => { const r = new Response(null); await r.text(); return [r.bodyUsed, await r.text(), r.body]; },
    status_204_body: () => { try { new Response("x", { status: 204 }); return "made"; } catch (e) { return errInfo(e); } },
    status_bad: () => { try { new Response("x", { status: 99 }); return "made"; } catch (e) { return errInfo(e); } },
    status_text_bad: () => { try { new Response("x", { statusText: "a\nb" }); return "made"; } catch (e) { return errInfo(e); } },
    json_static: async () => { const r = Response.json({ a: 1 }, { status: 201, headers: { "x-a": "1" } }); return [r.status, r.headers.get("content-type"), r.headers.get("x-a"), await r.text()]; },
    json_bad: () => { try { Response.json(undefined); return "made"; } catch (e) { return { name: e.name }; } },
    redirect: () => { const r = Response.redirect("https://h.test/a", 301); return [r.status, r.headers.get("location")]; },
    redirect_bad: () => { try { Response.redirect("https://h.test/a", 200); return "made"; } catch (e) { return errInfo(e); } },
    redirect_relative: () => { try { Response.redirect("/a"); return "made"; } catch (e) { return { name: e.name }; } },
    error_static: () => { const r = Response.error(); return [r.status, r.type, r.ok]; },
    body_types: async () => [await new Response(new Uint8Array([104, 105])).text(), await new Response(new URLSearchParams("a=1&b=2")).text(), new Response(new URLSearchParams("a=1")).headers.get("content-type"), new Response(new Blob(["x"], { type: "text/x" })).headers.get("content-type"), new Response("s").headers.get("content-type")],
    type_and_url: () => { const r = new Response("x"); return [r.type, r.url, r.redirected, r.ok, r.statusText]; },
    stream_after_cancel: async () => { const r = new Response("abc"); await r.body.cancel(); return [r.bodyUsed, await r.text().catch(errInfo)]; },
  }),
  request: () => run({
    get_with_body: () => { try { new Request("https://h.test/", { body: "x" }); return "made"; } catch (e) { return errInfo(e); } },
    head_with_body: () => { try { new Request("https://h.test/", { method: "HEAD", body: "x" }); return "made"; } catch (e) { return errInfo(e); } },
    get_null_body: () => new Request("https://h.test/", { body: null }).method,
    forbidden_connect: () => { try { new Request("https://h.test/", { method: "CONNECT" }); return "made"; } catch (e) { return errInfo(e); } },
    forbidden_trace: () => { try { new Request("https://h.test/", { method: "TRACE" }); return "made"; } catch (e) { return errInfo(e); } },
    bad_method: () => { try { new Request("https://h.test/", { method: "GE T" }); return "made"; } catch (e) { return errInfo(e); } },
    method_case: () => ["get", "post", "patch", "delete", "options", "head", "put", "custom", "Patch"].map((m) => new Request("https://h.test/", { method: m }).method),
    relative_url: () => { try { new Request("/path"); return "made"; } catch (e) { return errInfo(e); } },
    bad_url: () => { try { new Request("http://"); return "made"; } catch (e) { return errInfo(e); } },
    used_text: async () => { const r = post(); await r.text(); return [r.bodyUsed, await r.text().catch(errInfo)]; },
    clone_after_read: async () => { const r = post(); await r.text(); try { r.clone(); return "cloned"; } catch (e) { return errInfo(e); } },
    from_used_request: async () => { const r = post(); await r.text(); try { new Request(r); return "made"; } catch (e) { return errInfo(e); } },
    from_used_with_body: async () => { const r = post(); await r.text(); return await new Request(r, { body: "new" }).text(); },
    from_request_moves_body: async () => { const r = post(); const r2 = new Request(r); return [r.bodyUsed, await r2.text(), r.bodyUsed]; },
    locked_new_request: async () => { const r = post(); r.body.getReader(); try { new Request(r); return "made"; } catch (e) { return errInfo(e); } },
    clone_both: async () => { const r = post(); const c = r.clone(); return [await r.text(), await c.text()]; },
    defaults: () => { const r = new Request("https://h.test/a?b#c"); return [r.url, r.method, r.redirect, r.body, r.bodyUsed, typeof r.signal, r.headers.has("content-type"), r.cf === undefined ? "undefined" : typeof r.cf]; },
    content_type: () => [post("s").headers.get("content-type"), post(new URLSearchParams("a=1")).headers.get("content-type"), post(new Uint8Array(1)).headers.get("content-type")],
    redirect_bad: () => { try { new Request("https://h.test/", { redirect: "nope" }); return "made"; } catch (e) { return { name: e.name }; } },
    init_override: async () => { const r = new Request(post("a"), { method: "PUT" }); return [r.method, await r.text()]; },
    get_from_post_with_body: async () => { try { new Request(post("a"), { method: "GET" }); return "made"; } catch (e) { return errInfo(e); } },
  }),
  incoming: async (request) => {
    const first = await request.text();
    return run({
      first: () => first,
      again: () => request.text().catch(errInfo),
      used: () => request.bodyUsed,
      clone: () => { try { request.clone(); return "cloned"; } catch (e) { return errInfo(e); } },
      cf: () => (request.cf === undefined ? "undefined" : typeof request.cf),
      method: () => request.method,
    });
  },
};

export default {
  async fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    const fn = groups[name];
    if (!fn) return new Response("no such group", { status: 404 });
    return Response.json(await fn(request));
  },
};
