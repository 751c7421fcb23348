// npm libraries that need nodejs_compat, used as their READMEs show.
import { EventEmitter, once } from "node:events";
import { Readable, Transform, Writable, pipeline } from "readable-stream";
import { StringDecoder } from "string_decoder/lib/string_decoder.js";
import SafeBuffer from "safe-buffer";
import { nanoid, customAlphabet } from "nanoid";
import jwt from "jsonwebtoken";
import keys from "./keys.json"; // throwaway test keys and tokens made by Node 20
import { format, addDays, differenceInCalendarDays, formatDistanceStrict, parseISO } from "date-fns";

class Job extends EventEmitter {
  run(n) {
    for (let i = 1; i <= n; i++) this.emit("progress", i);
    setTimeout(() => this.emit("done", Buffer.from(`ran ${n}`)), 1);
    return this;
  }
}

const routes = {
  "/events": async () => {
    const seen = [];
    const job = new Job().on("progress", (i) => seen.push(i)).run(3);
    const [result] = await once(job, "done");
    return { seen, result: result.toString(), isBuffer: Buffer.isBuffer(result) };
  },
  "/safe-buffer": () => {
    const { Buffer: SB } = SafeBuffer;
    return { hex: SB.from("hi").toString("hex"), alloc: SB.alloc(3, 1).toString("hex"), same: SB === Buffer, unsafe: SB.allocUnsafe(4).length };
  },
  "/readable-stream": async () => {
    const out = [];
    await new Promise((resolve, reject) => pipeline(
      Readable.from(["alpha", "beta", "gamma"]),
      new Transform({ transform(chunk, enc, cb) { cb(null, String(chunk).toUpperCase() + ";"); } }),
      new Writable({ write(chunk, enc, cb) { out.push(chunk.toString()); cb(); } }),
      (err) => (err ? reject(err) : resolve())));
    const r = new Readable({ read() {} });
    const data = [];
    r.on("data", (c) => data.push(c.toString("hex")));
    const ended = new Promise((res) => r.on("end", res));
    r.push(Buffer.from([1, 2]));
    r.push("ok");
    r.push(null);
    await ended;
    return { out: out.join(""), data };
  },
  "/string-decoder": () => {
    const d = new StringDecoder("utf8");
    const euro = Buffer.from("€uro");
    return { parts: [d.write(euro.subarray(0, 2)), d.write(euro.subarray(2)), d.end()] };
  },
  "/nanoid": () => {
    const id = nanoid();
    const hex = customAlphabet("0123456789abcdef", 10)();
    return { idOk: /^[A-Za-z0-9_-]{21}$/.test(id), hexOk: /^[0-9a-f]{10}$/.test(hex), distinct: nanoid() !== nanoid() };
  },
  "/jsonwebtoken": () => {
    // HS256 over node:crypto's createHmac, jws's streams and safe-buffer.
    const token = jwt.sign({ sub: "user-1", admin: true }, "s3cret", { algorithm: "HS256", noTimestamp: true });
    const claims = jwt.verify(token, "s3cret");
    let bad;
    try { jwt.verify(token, "wrong"); } catch (e) { bad = [e.name, e.message]; }
    return { token, claims, bad };
  },
  "/jsonwebtoken-rs-es": () => {
    // RS256 and ES256 over node:crypto's createSign/createVerify and KeyObjects.
    const rs = jwt.sign({ sub: "x" }, keys.rsaPriv, { algorithm: "RS256", noTimestamp: true });
    const es = jwt.sign({ sub: "x" }, keys.ecPriv, { algorithm: "ES256", noTimestamp: true });
    return {
      rsSameAsNode: rs === keys.jwtRS,
      verifyNodeRS: jwt.verify(keys.jwtRS, keys.rsaPub, { algorithms: ["RS256"] }),
      verifyNodeES: jwt.verify(keys.jwtES, keys.ecPub, { algorithms: ["ES256"] }),
      verifyOwnES: jwt.verify(es, keys.ecPub).sub,
    };
  },
  "/date-fns": () => {
    const d = parseISO("2024-02-27T10:00:00Z");
    return {
      formatted: format(addDays(d, 3), "yyyy-MM-dd EEEE"),
      days: differenceInCalendarDays(parseISO("2024-12-25T00:00:00Z"), d),
      distance: formatDistanceStrict(d, addDays(d, 45)),
    };
  },
};

export default {
  async fetch(request) {
    const route = routes[new URL(request.url).pathname];
    if (!route) return new Response("not found", { status: 404 });
    try {
      return Response.json(await route());
    } catch (e) {
      return Response.json({ error: String(e), stack: e.stack }, { status: 500 });
    }
  },
};
