const S = crypto.subtle;
const enc = new TextEncoder();
const hex = (b) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");
const err = (e) => ({ name: e?.name, message: e?.message, ctor: e?.constructor?.name });
const attempt = async (f) => {
  try {
    const v = await f();
    return typeof v === "boolean" ? v : hex(v);
  } catch (e) {
    return { error: err(e) };
  }
};

export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    const key = await S.importKey("raw", enc.encode("secret key"), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    const signOnly = await S.importKey("raw", enc.encode("k"), { name: "HMAC", hash: "SHA-384" }, true, ["sign"]);
    const verifyOnly = await S.importKey("raw", enc.encode("k"), { name: "HMAC", hash: "SHA-384" }, true, ["verify"]);
    const aes = await S.importKey("raw", new Uint8Array(16), "AES-GCM", false, ["encrypt"]);
    const msg = enc.encode("xxThe quick brown fox jumps over the lazy dogxx");
    const view = msg.subarray(2, msg.length - 2);
    const copy = view.slice();
    if (path === "/sign") {
      let reads = 0;
      const getter = { get name() { reads++; return "HMAC"; } };
      const out = {
        u8: await attempt(() => S.sign("HMAC", key, copy)),
        subarray: await attempt(() => S.sign("HMAC", key, view)),
        arraybuffer: await attempt(() => S.sign("HMAC", key, copy.buffer)),
        dataview: await attempt(() => S.sign("HMAC", key, new DataView(msg.buffer, 2, copy.length))),
        int16: await attempt(() => S.sign("HMAC", key, new Int16Array(copy.buffer.slice(0, 42)))),
        clamped: await attempt(() => S.sign("HMAC", key, new Uint8ClampedArray(copy))),
        lower: await attempt(() => S.sign("hmac", key, copy)),
        object: await attempt(() => S.sign({ name: "HMAC" }, key, copy)),
        objectHash: await attempt(() => S.sign({ name: "HMAC", hash: "SHA-1" }, key, copy)),
        getter: await attempt(() => S.sign(getter, key, copy)),
        sha384: await attempt(() => S.sign("HMAC", signOnly, copy)),
        empty: await attempt(() => S.sign("HMAC", key, new Uint8Array(0))),
        string: await attempt(() => S.sign("HMAC", key, "text")),
        array: await attempt(() => S.sign("HMAC", key, [1, 2, 3])),
        noData: await attempt(() => S.sign("HMAC", key)),
        noUsage: await attempt(() => S.sign("HMAC", verifyOnly, copy)),
        wrongAlg: await attempt(() => S.sign("ECDSA", key, copy)),
        aesKey: await attempt(() => S.sign("HMAC", aes, copy)),
        notKey: await attempt(() => S.sign("HMAC", { type: "secret" }, copy)),
        nullKey: await attempt(() => S.sign("HMAC", null, copy)),
        nullAlg: await attempt(() => S.sign(null, key, copy)),
      };
      out.getterReads = reads > 0;
      return Response.json(out);
    }
    const sig = await S.sign("HMAC", key, copy);
    const sig384 = await S.sign("HMAC", signOnly, copy);
    return Response.json({
      ok: await attempt(() => S.verify("HMAC", key, sig, copy)),
      okView: await attempt(() => S.verify("HMAC", key, new Uint8Array(sig), view)),
      okDataView: await attempt(() => S.verify("HMAC", key, new DataView(sig), copy)),
      okObject: await attempt(() => S.verify({ name: "HMAC" }, key, sig, copy.buffer)),
      tampered: await attempt(() => S.verify("HMAC", key, sig, enc.encode("other"))),
      short: await attempt(() => S.verify("HMAC", key, sig.slice(0, 16), copy)),
      long: await attempt(() => S.verify("HMAC", key, new Uint8Array(40), copy)),
      emptySig: await attempt(() => S.verify("HMAC", key, new Uint8Array(0), copy)),
      sha384: await attempt(() => S.verify("HMAC", verifyOnly, sig384, copy)),
      stringSig: await attempt(() => S.verify("HMAC", key, "sig", copy)),
      stringData: await attempt(() => S.verify("HMAC", key, sig, "text")),
      noUsage: await attempt(() => S.verify("HMAC", signOnly, sig384, copy)),
      lower: await attempt(() => S.verify("Hmac", key, sig, copy)),
    });
  },
};
