// GET /?op=NAME&n=N runs op N times after its setup and answers a digest of
// the results, so that both runtimes must do the same work. n=0 measures
// the setup alone (the harness subtracts it).
const S = crypto.subtle;
const MiB = 1 << 20;
// text-like, compressible data (made without a per-byte loop, which
// would dominate the setup on an interpreter)
const bytes = (n) => {
  const words = ["alpha ", "beta ", "gamma ", "delta ", "worker ", "cell ", "stream ", "42 "];
  let line = "";
  for (let i = 0; i < 4096; i++) line += words[(i * 7 + (i >> 3)) % words.length];
  return new TextEncoder().encode(line.repeat(Math.ceil(n / line.length))).subarray(0, n);
};

const ops = {
  async sha256(n) {
    const data = bytes(MiB);
    let last;
    for (let i = 0; i < n; i++) last = await S.digest("SHA-256", data);
    return last ? new Uint8Array(last)[0] : 0;
  },
  async hmac(n) {
    const key = await S.importKey("raw", bytes(32), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const data = bytes(1024);
    let last;
    for (let i = 0; i < n; i++) last = await S.sign("HMAC", key, data);
    return last ? new Uint8Array(last)[0] : 0;
  },
  async rsaverify(n) {
    const { publicKey, privateKey } = await S.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, false, ["sign", "verify"]);
    const data = bytes(256);
    const sig = await S.sign("RSASSA-PKCS1-v1_5", privateKey, data);
    let ok = 0;
    for (let i = 0; i < n; i++) ok += (await S.verify("RSASSA-PKCS1-v1_5", publicKey, sig, data)) ? 1 : 0;
    return ok;
  },
  async ecdsasign(n) {
    const { privateKey } = await S.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
    const data = bytes(256);
    let len = 0;
    for (let i = 0; i < n; i++) len += (await S.sign({ name: "ECDSA", hash: "SHA-256" }, privateKey, data)).byteLength;
    return len;
  },
  async gzip(n) {
    const data = bytes(MiB);
    let total = 0;
    for (let i = 0; i < n; i++) {
      const cs = new CompressionStream("gzip");
      const w = cs.writable.getWriter();
      w.write(data);
      w.close();
      const r = cs.readable.getReader();
      for (;;) {
        const { done, value } = await r.read();
        if (done) break;
        total += value.byteLength;
      }
    }
    return total;
  },
};

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const op = ops[url.searchParams.get("op")];
    if (!op) return new Response("unknown op", { status: 404 });
    const result = await op(Number(url.searchParams.get("n") || 0));
    return new Response(String(result));
  },
};
