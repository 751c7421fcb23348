// cloudflare:sockets without a server to talk to: the shape of a Socket,
// argument errors, and a connection nobody accepts (127.0.0.1 port 9 is
// closed on the recording machine and in the test). The byte-level
// behaviour against a live server is tested in Go (worker/sockets_test.go).
import { connect } from "cloudflare:sockets";

const json = (v) => new Response(JSON.stringify(v), { headers: { "content-type": "application/json" } });
const err = (e) => ({ name: e?.name, message: e?.message });
function sync(f) {
  try { const v = f(); return { ok: typeof v }; } catch (e) { return { err: err(e) }; }
}
async function settle(p) {
  try { return { ok: await p }; } catch (e) { return { err: err(e) }; }
}

export default {
  async fetch(request) {
    const p = new URL(request.url).pathname;
    if (p === "/args") {
      return json({
        empty: sync(() => connect("")),
        noPort: sync(() => connect("127.0.0.1")),
        badPort: sync(() => connect("127.0.0.1:abc")),
        bigPort: sync(() => connect("127.0.0.1:70000")),
        objNoPort: sync(() => connect({ hostname: "127.0.0.1" })),
        badMode: sync(() => connect("127.0.0.1:9", { secureTransport: "maybe" })),
        number: sync(() => connect(42)),
      });
    }
    if (p === "/shape") {
      const s = connect({ hostname: "127.0.0.1", port: 9 });
      const shape = {
        readable: s.readable instanceof ReadableStream, writable: s.writable instanceof WritableStream,
        opened: s.opened instanceof Promise, closed: s.closed instanceof Promise,
        close: typeof s.close, startTls: typeof s.startTls, upgraded: s.upgraded, secureTransport: s.secureTransport,
      };
      const opened = await settle(s.opened);
      const closed = await settle(s.closed);
      return json({ shape, opened, closed });
    }
    if (p === "/close-early") {
      const s = connect("127.0.0.1:9");
      const r = s.close();
      const closed = await settle(s.closed);
      return json({ closeReturns: r instanceof Promise, closed });
    }
    if (p === "/starttls-mode") {
      const s = connect("127.0.0.1:9", { secureTransport: "starttls" });
      const t = connect("127.0.0.1:9");
      const out = { mode: s.secureTransport, on: connect("127.0.0.1:9", { secureTransport: "on" }).secureTransport,
        notStartTls: sync(() => t.startTls()) };
      s.close(); t.close();
      return json(out);
    }
    return new Response("not found", { status: 404 });
  },
};
