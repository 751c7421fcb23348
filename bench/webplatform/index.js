// GET /?op=NAME&n=N runs op N times after its setup and answers a digest of
// the results, so that both runtimes must do the same work. n=0 measures
// the setup alone (the harness subtracts it).
import { Buffer } from "node:buffer";

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

// A fixed RSA-2048 key (generating one per request would make the setup,
// which the harness subtracts, vary by more than the operations take).
const RSA_PKCS8 = "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQCecud1qXKsYMA+0CwQ0q51I2GuQc54a2r3/9+R5jXM9ou4VIHXd8rzKPJHj/b0og9wASC9GwP2KpIL95X0EHKlEbyE9Af0bxO6p/sR2rNPeJGjoYazJAG0KRXP3gjb62q+nd9vS6XZC/9b4KfapBeDu+c4BoGULmwM9AlGCHlEmCKd07FK/6sFW8xasZj5TbrX1a6FHZOWm0W5a98CeG7BYC6UAZ8iWccFLWtD4khgqZJYlbp/Y130Vh9LUGA0bEGFhbg+2L30KCCqiIRBb3BdyfvvbmSyg/c+kbawy32BEqojITp/EB3tLTBynwi4XwVliA1WAmI13NLx0qehnbZXAgMBAAECggEAFXpG1KSs5h/RP1JxfrBINJmgroG+DoWlAMvezsSRS2CqDMjrtrzGtlI5ESk7FOr4w7praSbF0TLxDA059tTZ7XUrhCwd/eymlHkbp85o2t9hgngtLZA2aOjey4fx1HmjRQZaWJg8+WBOc3JO3my6wUERtP7wxpjKTbEwpp0Ubw8nm2CBJRS5IQ5WMY1bmdv3n0DiGxfcL7kJxA+/xY9x+qlARpSTFaSxxSe8zbHEPuMDgylfqR3W3GAmkWhBdNwkFyPute7gFzx3l/Ws3Nth7xORXdKQoz+p8lLkjwwGC0//fOVZLq7JWOWvwSMrWrQJy6LI4528mlPrR8CIgOH1XQKBgQDLtcEfdISmA00ulZ1qBIwjLWLc+wTuv2xcii+FK3tzfJRrvX4FWXjo1Shn/OMpBWj96WkZhJNRwJD9SYjvhKNM/f/MxF/r0oi+XznKuIGFCnw37BZlx9Bv/pRwHCZl638ux3Glo5PUk9lWoiQ+ZhpW84JQ38HgELEQYfjWW6zeuwKBgQDHHvATFOrapxiCBZXULL8hC/d4KajaVnpa96krpqBRW5zcyv3L5FkKDVZosB7lPdnZM73YXgCewv4XmigRr8Db4eEwZjX2rt6oWf8mgdj9R6WlbS2IzKLO/czdoRAWuXeQQP2/Ibbt4IJi/Zh4+SryjOvUHAkHR7GSIRT1PWXDFQKBgQDI4m+UCV9WJyNRsREOn3Viqzs3GAOBPRwrFcpO1NZkyJHEvZUsyVLGqI20HloU9dTXr/mIxIhSskdIv99d87rmDgTXdT/yWienNFjVZKW1AOYGb7aWoDkYeEEBXYEwOM+u3ddgtLLviu1k1XhQYHfRD0mPX1jdERjLQxIUsUsESQKBgGC+DkQnGIfNQWIClq30Y5QJvV07WFdkRqQlyaJ0nVWJ3ieD1FUYh44TttS8JPaZ21rlAaq62TBJaqxK8IbPTjNGhmM+dZ95jKJcv1OVKLi986Pw7HuXeM56jutrEmcICygh+2a+WaMvPgocTdUQsiYQA5AVYumPkp19xzHzd5qVAoGBAKeldl0v7fHRn2NwkgKi0dfXFBLRYbfr4+238m3yaOUyXaPj99G/PP1hOvJMH+Juqm5Cedk7FDH5G/nunpyEIL4O1DM3qURELQslKlKMpFW41fEP64zl6pDII4hExjSRs0R0V+nzeOnXFDqBxLJCe2WleM02HM3CJs1qILOUkFG8";
const RSA_SPKI = "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnnLndalyrGDAPtAsENKudSNhrkHOeGtq9//fkeY1zPaLuFSB13fK8yjyR4/29KIPcAEgvRsD9iqSC/eV9BBypRG8hPQH9G8Tuqf7EdqzT3iRo6GGsyQBtCkVz94I2+tqvp3fb0ul2Qv/W+Cn2qQXg7vnOAaBlC5sDPQJRgh5RJgindOxSv+rBVvMWrGY+U2619WuhR2TlptFuWvfAnhuwWAulAGfIlnHBS1rQ+JIYKmSWJW6f2Nd9FYfS1BgNGxBhYW4Pti99CggqoiEQW9wXcn7725ksoP3PpG2sMt9gRKqIyE6fxAd7S0wcp8IuF8FZYgNVgJiNdzS8dKnoZ22VwIDAQAB";
const b64d = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

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
    const alg = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    const privateKey = await S.importKey("pkcs8", b64d(RSA_PKCS8), alg, false, ["sign"]);
    const publicKey = await S.importKey("spki", b64d(RSA_SPKI), alg, false, ["verify"]);
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
  async base64(n) {
    const str = Buffer.from(bytes(MiB)).toString("base64");
    let total = 0;
    for (let i = 0; i < n; i++) total += Buffer.from(str, "base64").length;
    return total;
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
