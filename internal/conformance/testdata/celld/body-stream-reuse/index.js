// Each probe gets a fresh response and reports what it observed.
const probes = {
  // read through a re-wrapped response, the first one is used up
  async text(a) { const b = new Response(a.body, a); const t = await b.text(); return [t, a.bodyUsed, a.body.locked, b.bodyUsed]; },
  async bytes(a) { const b = new Response(a.body); return [[...new Uint8Array(await b.arrayBuffer())].join(), a.bodyUsed]; },
  async json(a) { const b = new Response(a.body); try { await b.json(); return "parsed"; } catch (e) { return [e.name, a.bodyUsed]; } },
  // a stream somebody used cannot become a body
  async readerFirst(a) { const s = a.body; s.getReader(); try { new Response(s); return "made"; } catch (e) { return [e.name, e.message]; } },
  async readFirst(a) { const s = a.body; await s.getReader().read(); try { new Response(s); return "made"; } catch (e) { return [e.name, e.message, a.bodyUsed]; } },
  async cancelled(a) { const s = a.body; await s.cancel(); try { new Response(s); return "made"; } catch (e) { return [e.name, a.bodyUsed]; } },
  async lockedRead(a) { const s = a.body; const b = new Response(s); s.getReader(); try { await b.text(); return "read"; } catch (e) { return [e.name, e.message, b.bodyUsed]; } },
  // the stream itself, read through a reader after the re-wrap
  async readerAfter(a) { const s = a.body; const b = new Response(s); const r = s.getReader(); const { value } = await r.read(); return [typeof value, value.byteLength, b.bodyUsed, a.bodyUsed]; },
  async twice(a) { const b = new Response(a.body); await b.text(); try { new Response(a.body); return "made"; } catch (e) { return [e.name, a.body.locked]; } },
};
const make = (name) => (name === "bytes" ? new Response(new Uint8Array([1, 2, 3])) : name === "json" ? new Response("{oops") : new Response("hello"));

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/wire") {
      // re-wrapped twice, then sent
      const a = new Response("on the wire", { headers: { "x-a": "1" } });
      const b = new Response(a.body, a);
      return new Response(b.body, { status: 203, headers: b.headers });
    }
    const out = {};
    for (const name of Object.keys(probes)) out[name] = await probes[name](make(name));
    return Response.json(out);
  },
};
