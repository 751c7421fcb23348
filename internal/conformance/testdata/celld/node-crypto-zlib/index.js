// node:crypto (hashes, HMAC, KDFs, AES, random) and node:zlib (sync,
// callback and stream forms; data compressed by Node's zlib).
import crypto from "node:crypto";
import zlib from "node:zlib";
import { promisify } from "node:util";

const err = (f) => {
  try { f(); return "no error"; } catch (e) { return { name: e.name, code: e.code ?? null, message: e.message }; }
};
const FOX = "The quick brown fox jumps over the lazy dog. ".repeat(20);
// Produced by Node 20's zlib.
const NODE = {
  gzip: "H4sIAAAAAAAAAwvJSFUoLM1MzlZIKsovz1NIy69QyCrNLShWyC9LLVIoyUhVyEmsqlRIyU/XUwgZVTyqeFQxtRUDAOZKZrCEAwAA",
  deflate: "eNoLyUhVKCzNTM5WSCrKL89TSMuvUMgqzS0oVsgvSy1SKMlIVchJrKpUSMlP11MIGVU8qnhUMbUVAwBHpUMc",
  raw: "C8lIVSgszUzOVkgqyi/PU0jLr1DIKs0tKFbIL0stUijJSFXISayqVEjJT9dTCBlVPKp4VDG1FQMA",
  multi: "H4sIAAAAAAAAAytILCpRyM9L1VEAAOs9/SMKAAAAH4sIAAAAAAAAAytILCpRKCnPBwAnH7LgCAAAAA==",
};

const routes = {
  "/hash": () => {
    const out = {};
    for (const alg of ["md5", "sha1", "sha224", "sha256", "sha384", "sha512"]) {
      out[alg] = crypto.createHash(alg).update("hello ").update(Buffer.from("world")).digest("hex");
    }
    const h = crypto.createHash("sha256").update("part");
    const copy = h.copy();
    h.update("-more");
    return {
      out,
      base64: crypto.createHash("sha256").update("x").digest("base64"),
      buffer: Buffer.isBuffer(crypto.createHash("sha1").update("x").digest()),
      copy: [copy.digest("hex"), h.digest("hex")],
      latin1Input: crypto.createHash("md5").update("\u00e9", "latin1").digest("hex"),
      hmac: [crypto.createHmac("sha256", "key").update("data").digest("hex"), crypto.createHmac("sha512", Buffer.from("k")).update("d").digest("base64url")],
      oneShot: typeof crypto.hash === "function" ? crypto.hash("sha1", "abc") : "absent",
      hashes: ["sha256", "md5", "sha512"].map((h) => crypto.getHashes().includes(h)),
      errors: {
        unknown: err(() => crypto.createHash("nope")).name,
        twice: err(() => { const x = crypto.createHash("sha1"); x.digest(); x.digest(); }),
        badData: err(() => crypto.createHash("sha1").update(5)),
        hmacUnknown: err(() => crypto.createHmac("nope", "k")),
      },
    };
  },
  "/kdf": async () => ({
    pbkdf2: crypto.pbkdf2Sync("password", "salt", 1000, 32, "sha256").toString("hex"),
    pbkdf2Sha1: crypto.pbkdf2Sync(Buffer.from("pw"), "s", 2, 20, "sha1").toString("hex"),
    pbkdf2Async: await promisify(crypto.pbkdf2)("pw", "salt", 10, 16, "sha512").then((b) => b.toString("hex")),
    scrypt: crypto.scryptSync("password", "salt", 32, { N: 1024 }).toString("hex"),
    scryptAsync: await promisify(crypto.scrypt)("pw", "salt", 16, { N: 256, r: 4, p: 2 }).then((b) => b.toString("hex")),
    hkdf: Buffer.from(crypto.hkdfSync("sha256", "ikm", "salt", "info", 32)).toString("hex"),
    errors: {
      pbkdf2Digest: err(() => crypto.pbkdf2Sync("p", "s", 1, 8, "nope")),
      pbkdf2Iter: err(() => crypto.pbkdf2Sync("p", "s", 0, 8, "sha1")).code,
    },
  }),
  "/cipher": () => {
    const key = Buffer.alloc(32, 7), iv = Buffer.alloc(16, 9);
    const run = (alg, k, v, data, opts = {}) => {
      const c = crypto.createCipheriv(alg, k, v);
      if (opts.aad) c.setAAD(opts.aad);
      if (opts.noPad) c.setAutoPadding(false);
      const enc = Buffer.concat([c.update(data, typeof data === "string" ? "utf8" : undefined), c.final()]);
      const tag = alg.endsWith("gcm") ? c.getAuthTag() : null;
      const d = crypto.createDecipheriv(alg, k, v);
      if (opts.aad) d.setAAD(opts.aad);
      if (tag) d.setAuthTag(tag);
      if (opts.noPad) d.setAutoPadding(false);
      const dec = d.update(enc, undefined, "utf8") + d.final("utf8");
      return [enc.toString("hex"), tag && tag.toString("hex"), dec];
    };
    const tamper = () => {
      const c = crypto.createCipheriv("aes-256-gcm", key, iv.subarray(0, 12));
      const enc = Buffer.concat([c.update("secret"), c.final()]);
      const tag = c.getAuthTag();
      tag[0] ^= 1;
      const d = crypto.createDecipheriv("aes-256-gcm", key, iv.subarray(0, 12));
      d.setAuthTag(tag);
      d.update(enc);
      d.final();
    };
    const badPad = () => {
      const d = crypto.createDecipheriv("aes-256-cbc", key, iv);
      d.update(Buffer.alloc(16, 1));
      d.final();
    };
    return {
      cbc: run("aes-256-cbc", key, iv, "hello cipher world, longer than one block"),
      cbc128: run("aes-128-cbc", key.subarray(0, 16), iv, "x"),
      ctr: run("aes-256-ctr", key, iv, "stream mode text"),
      gcm: run("aes-256-gcm", key, iv.subarray(0, 12), "authenticated", { aad: Buffer.from("header") }),
      ecb: run("aes-128-ecb", key.subarray(0, 16), Buffer.alloc(0), "sixteen byte blk", { noPad: true }),
      hexOut: (() => { const c = crypto.createCipheriv("aes-128-cbc", key.subarray(0, 16), iv); return c.update("abc", "utf8", "hex") + c.final("hex"); })(),
      ciphers: ["aes-256-cbc", "aes-256-gcm", "aes-128-ctr"].map((c) => crypto.getCiphers().includes(c)),
      errors: {
        keyLength: err(() => crypto.createCipheriv("aes-256-cbc", Buffer.alloc(5), iv)),
        ivLength: err(() => crypto.createCipheriv("aes-256-cbc", key, Buffer.alloc(3))),
        unknown: err(() => crypto.createCipheriv("nope-1", key, iv)),
        tamper: err(tamper).name,
        stringWithoutEncoding: err(() => crypto.createCipheriv("aes-256-cbc", key, iv).update("text")),
        badPad: err(badPad).name,
      },
    };
  },
  "/random": () => {
    const a = crypto.randomBytes(16);
    const filled = crypto.randomFillSync(new Uint8Array(8));
    const ints = Array.from({ length: 50 }, () => crypto.randomInt(3, 7));
    return {
      bytes: [Buffer.isBuffer(a), a.length], filled: filled.length,
      uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()),
      intsInRange: ints.every((n) => n >= 3 && n < 7 && Number.isInteger(n)),
      safeEqual: [crypto.timingSafeEqual(Buffer.from("abc"), Buffer.from("abc")), crypto.timingSafeEqual(Buffer.from("abc"), Buffer.from("abd"))],
      safeEqualLen: err(() => crypto.timingSafeEqual(Buffer.from("a"), Buffer.from("ab"))),
      webcrypto: [crypto.webcrypto === globalThis.crypto, crypto.subtle === globalThis.crypto.subtle, typeof crypto.getRandomValues],
      secretKey: (() => { const k = crypto.createSecretKey(Buffer.from("abcd")); return [k.type, k.symmetricKeySize, k.export().toString()]; })(),
      sizeErr: err(() => crypto.randomBytes(-1)).code,
    };
  },
  "/zlib": async () => {
    const fromNode = {
      gunzip: zlib.gunzipSync(Buffer.from(NODE.gzip, "base64")).toString() === FOX,
      inflate: zlib.inflateSync(Buffer.from(NODE.deflate, "base64")).toString() === FOX,
      inflateRaw: zlib.inflateRawSync(Buffer.from(NODE.raw, "base64")).toString() === FOX,
      unzipGzip: zlib.unzipSync(Buffer.from(NODE.gzip, "base64")).toString() === FOX,
      unzipDeflate: zlib.unzipSync(Buffer.from(NODE.deflate, "base64")).toString() === FOX,
      multiMember: zlib.gunzipSync(Buffer.from(NODE.multi, "base64")).toString(),
    };
    const round = {};
    for (const [c, d] of [["deflateSync", "inflateSync"], ["gzipSync", "gunzipSync"], ["deflateRawSync", "inflateRawSync"]]) {
      const packed = zlib[c](FOX, { level: 6 });
      round[c] = [zlib[d](packed).toString() === FOX, packed.length < FOX.length];
    }
    const gz = zlib.gzipSync("x");
    const header = [gz[0], gz[1], gz[2]];
    const cb = await new Promise((res) => zlib.deflate("callback form", (e, b) => zlib.inflate(b, (e2, r) => res(String(r)))));
    const streamed = await new Promise((res, rej) => {
      const parts = [];
      const gzip = zlib.createGzip();
      const gunzip = zlib.createGunzip();
      gzip.pipe(gunzip);
      gunzip.on("data", (d) => parts.push(d));
      gunzip.on("end", () => res(Buffer.concat(parts).toString()));
      gunzip.on("error", rej);
      gzip.write("streamed ");
      gzip.end("through zlib");
    });
    return {
      fromNode, round, header, cb, streamed,
      crc32: typeof zlib.crc32 === "function" ? [zlib.crc32("hello"), zlib.crc32("world", zlib.crc32("hello "))] : "absent",
      constants: [zlib.constants.Z_BEST_COMPRESSION, zlib.constants.Z_SYNC_FLUSH, zlib.Z_DEFAULT_COMPRESSION],
      errors: {
        badHeader: err(() => zlib.inflateSync(Buffer.from("not compressed"))),
        truncated: err(() => zlib.gunzipSync(Buffer.from(NODE.gzip, "base64").subarray(0, 20))),
        badLevel: err(() => zlib.deflateSync("x", { level: 42 })),
      },
    };
  },
};

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    const route = routes[pathname];
    if (!route) return new Response("not found", { status: 404 });
    try {
      return Response.json(await route(request));
    } catch (e) {
      return Response.json({ error: e.name, message: e.message, stack: e.stack });
    }
  },
};
