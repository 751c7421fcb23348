// Fixed keys made by Node.
const KEYS = {
 "rsa": {
  "pkcs8": "MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQCecud1qXKsYMA+0CwQ0q51I2GuQc54a2r3/9+R5jXM9ou4VIHXd8rzKPJHj/b0og9wASC9GwP2KpIL95X0EHKlEbyE9Af0bxO6p/sR2rNPeJGjoYazJAG0KRXP3gjb62q+nd9vS6XZC/9b4KfapBeDu+c4BoGULmwM9AlGCHlEmCKd07FK/6sFW8xasZj5TbrX1a6FHZOWm0W5a98CeG7BYC6UAZ8iWccFLWtD4khgqZJYlbp/Y130Vh9LUGA0bEGFhbg+2L30KCCqiIRBb3BdyfvvbmSyg/c+kbawy32BEqojITp/EB3tLTBynwi4XwVliA1WAmI13NLx0qehnbZXAgMBAAECggEAFXpG1KSs5h/RP1JxfrBINJmgroG+DoWlAMvezsSRS2CqDMjrtrzGtlI5ESk7FOr4w7praSbF0TLxDA059tTZ7XUrhCwd/eymlHkbp85o2t9hgngtLZA2aOjey4fx1HmjRQZaWJg8+WBOc3JO3my6wUERtP7wxpjKTbEwpp0Ubw8nm2CBJRS5IQ5WMY1bmdv3n0DiGxfcL7kJxA+/xY9x+qlARpSTFaSxxSe8zbHEPuMDgylfqR3W3GAmkWhBdNwkFyPute7gFzx3l/Ws3Nth7xORXdKQoz+p8lLkjwwGC0//fOVZLq7JWOWvwSMrWrQJy6LI4528mlPrR8CIgOH1XQKBgQDLtcEfdISmA00ulZ1qBIwjLWLc+wTuv2xcii+FK3tzfJRrvX4FWXjo1Shn/OMpBWj96WkZhJNRwJD9SYjvhKNM/f/MxF/r0oi+XznKuIGFCnw37BZlx9Bv/pRwHCZl638ux3Glo5PUk9lWoiQ+ZhpW84JQ38HgELEQYfjWW6zeuwKBgQDHHvATFOrapxiCBZXULL8hC/d4KajaVnpa96krpqBRW5zcyv3L5FkKDVZosB7lPdnZM73YXgCewv4XmigRr8Db4eEwZjX2rt6oWf8mgdj9R6WlbS2IzKLO/czdoRAWuXeQQP2/Ibbt4IJi/Zh4+SryjOvUHAkHR7GSIRT1PWXDFQKBgQDI4m+UCV9WJyNRsREOn3Viqzs3GAOBPRwrFcpO1NZkyJHEvZUsyVLGqI20HloU9dTXr/mIxIhSskdIv99d87rmDgTXdT/yWienNFjVZKW1AOYGb7aWoDkYeEEBXYEwOM+u3ddgtLLviu1k1XhQYHfRD0mPX1jdERjLQxIUsUsESQKBgGC+DkQnGIfNQWIClq30Y5QJvV07WFdkRqQlyaJ0nVWJ3ieD1FUYh44TttS8JPaZ21rlAaq62TBJaqxK8IbPTjNGhmM+dZ95jKJcv1OVKLi986Pw7HuXeM56jutrEmcICygh+2a+WaMvPgocTdUQsiYQA5AVYumPkp19xzHzd5qVAoGBAKeldl0v7fHRn2NwkgKi0dfXFBLRYbfr4+238m3yaOUyXaPj99G/PP1hOvJMH+Juqm5Cedk7FDH5G/nunpyEIL4O1DM3qURELQslKlKMpFW41fEP64zl6pDII4hExjSRs0R0V+nzeOnXFDqBxLJCe2WleM02HM3CJs1qILOUkFG8",
  "spki": "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnnLndalyrGDAPtAsENKudSNhrkHOeGtq9//fkeY1zPaLuFSB13fK8yjyR4/29KIPcAEgvRsD9iqSC/eV9BBypRG8hPQH9G8Tuqf7EdqzT3iRo6GGsyQBtCkVz94I2+tqvp3fb0ul2Qv/W+Cn2qQXg7vnOAaBlC5sDPQJRgh5RJgindOxSv+rBVvMWrGY+U2619WuhR2TlptFuWvfAnhuwWAulAGfIlnHBS1rQ+JIYKmSWJW6f2Nd9FYfS1BgNGxBhYW4Pti99CggqoiEQW9wXcn7725ksoP3PpG2sMt9gRKqIyE6fxAd7S0wcp8IuF8FZYgNVgJiNdzS8dKnoZ22VwIDAQAB",
  "jwk": {
   "key_ops": [
    "sign"
   ],
   "ext": true,
   "kty": "RSA",
   "n": "nnLndalyrGDAPtAsENKudSNhrkHOeGtq9__fkeY1zPaLuFSB13fK8yjyR4_29KIPcAEgvRsD9iqSC_eV9BBypRG8hPQH9G8Tuqf7EdqzT3iRo6GGsyQBtCkVz94I2-tqvp3fb0ul2Qv_W-Cn2qQXg7vnOAaBlC5sDPQJRgh5RJgindOxSv-rBVvMWrGY-U2619WuhR2TlptFuWvfAnhuwWAulAGfIlnHBS1rQ-JIYKmSWJW6f2Nd9FYfS1BgNGxBhYW4Pti99CggqoiEQW9wXcn7725ksoP3PpG2sMt9gRKqIyE6fxAd7S0wcp8IuF8FZYgNVgJiNdzS8dKnoZ22Vw",
   "e": "AQAB",
   "d": "FXpG1KSs5h_RP1JxfrBINJmgroG-DoWlAMvezsSRS2CqDMjrtrzGtlI5ESk7FOr4w7praSbF0TLxDA059tTZ7XUrhCwd_eymlHkbp85o2t9hgngtLZA2aOjey4fx1HmjRQZaWJg8-WBOc3JO3my6wUERtP7wxpjKTbEwpp0Ubw8nm2CBJRS5IQ5WMY1bmdv3n0DiGxfcL7kJxA-_xY9x-qlARpSTFaSxxSe8zbHEPuMDgylfqR3W3GAmkWhBdNwkFyPute7gFzx3l_Ws3Nth7xORXdKQoz-p8lLkjwwGC0__fOVZLq7JWOWvwSMrWrQJy6LI4528mlPrR8CIgOH1XQ",
   "p": "y7XBH3SEpgNNLpWdagSMIy1i3PsE7r9sXIovhSt7c3yUa71-BVl46NUoZ_zjKQVo_elpGYSTUcCQ_UmI74SjTP3_zMRf69KIvl85yriBhQp8N-wWZcfQb_6UcBwmZet_LsdxpaOT1JPZVqIkPmYaVvOCUN_B4BCxEGH41lus3rs",
   "q": "xx7wExTq2qcYggWV1Cy_IQv3eCmo2lZ6WvepK6agUVuc3Mr9y-RZCg1WaLAe5T3Z2TO92F4AnsL-F5ooEa_A2-HhMGY19q7eqFn_JoHY_UelpW0tiMyizv3M3aEQFrl3kED9vyG27eCCYv2YePkq8ozr1BwJB0exkiEU9T1lwxU",
   "dp": "yOJvlAlfVicjUbERDp91Yqs7NxgDgT0cKxXKTtTWZMiRxL2VLMlSxqiNtB5aFPXU16_5iMSIUrJHSL_fXfO65g4E13U_8lonpzRY1WSltQDmBm-2lqA5GHhBAV2BMDjPrt3XYLSy74rtZNV4UGB30Q9Jj19Y3REYy0MSFLFLBEk",
   "dq": "YL4ORCcYh81BYgKWrfRjlAm9XTtYV2RGpCXJonSdVYneJ4PUVRiHjhO21Lwk9pnbWuUBqrrZMElqrErwhs9OM0aGYz51n3mMoly_U5UouL3zo_Dse5d4znqO62sSZwgLKCH7Zr5Zoy8-ChxN1RCyJhADkBVi6Y-SnX3HMfN3mpU",
   "qi": "p6V2XS_t8dGfY3CSAqLR19cUEtFht-vj7bfybfJo5TJdo-P30b88_WE68kwf4m6qbkJ52TsUMfkb-e6enIQgvg7UMzepREQtCyUqUoykVbjV8Q_rjOXqkMgjiETGNJGzRHRX6fN46dcUOoHEskJ7ZaV4zTYczcImzWogs5SQUbw",
   "alg": "RS256"
  }
 },
 "p256": {
  "pkcs8": "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgIbzRuV294CITVu6XoXKzKbwnacOqSnI9TCzPzj4l/UmhRANCAARqR32myt2OnFgPrfcA2Sin9jG/9+0rZB9tDFCVEtVFifIk0bH3yfezgHGhmSnrUMvsoWPBTJ9URQqJ2H1oGxu0",
  "spki": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEakd9psrdjpxYD633ANkop/Yxv/ftK2QfbQxQlRLVRYnyJNGx98n3s4BxoZkp61DL7KFjwUyfVEUKidh9aBsbtA==",
  "jwk": {
   "key_ops": [
    "sign"
   ],
   "ext": true,
   "kty": "EC",
   "x": "akd9psrdjpxYD633ANkop_Yxv_ftK2QfbQxQlRLVRYk",
   "y": "8iTRsffJ97OAcaGZKetQy-yhY8FMn1RFConYfWgbG7Q",
   "crv": "P-256",
   "d": "IbzRuV294CITVu6XoXKzKbwnacOqSnI9TCzPzj4l_Uk"
  }
 },
 "p384": {
  "pkcs8": "MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDC15zxVx6PCCl8lyr5VBxCydvh86YFP1MEN5jX+/qWGQzIcczpXOqzXeSsLZpNihQShZANiAATg3LxiAWMu3Dora/Hb42KJHvv4Sbz3l36EgiQHFgLG05RvBqnZoxAu23vdPwWMLdIS1T7XqawN2/Ms8XOHVyg+IxRUhX6E+RapNalmcvI5xUXXENjBu724I8LlPUI3rIc=",
  "spki": "MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE4Ny8YgFjLtw6K2vx2+NiiR77+Em895d+hIIkBxYCxtOUbwap2aMQLtt73T8FjC3SEtU+16msDdvzLPFzh1coPiMUVIV+hPkWqTWpZnLyOcVF1xDYwbu9uCPC5T1CN6yH",
  "jwk": {
   "key_ops": [
    "sign"
   ],
   "ext": true,
   "kty": "EC",
   "x": "4Ny8YgFjLtw6K2vx2-NiiR77-Em895d-hIIkBxYCxtOUbwap2aMQLtt73T8FjC3S",
   "y": "EtU-16msDdvzLPFzh1coPiMUVIV-hPkWqTWpZnLyOcVF1xDYwbu9uCPC5T1CN6yH",
   "crv": "P-384",
   "d": "tec8VcejwgpfJcq-VQcQsnb4fOmBT9TBDeY1_v6lhkMyHHM6Vzqs13krC2aTYoUE"
  }
 },
 "p521": {
  "pkcs8": "MIHuAgEAMBAGByqGSM49AgEGBSuBBAAjBIHWMIHTAgEBBEIBnqKSYyiwY3PMslH7Xvu7WF4to3pnhTo9nx3ukq6rmVs0rjx57YyRBWuHVzpjh53ZE4v/WhDZ9I2E7r+FWRqfC1ihgYkDgYYABAEJG9I9k8lI6bVZZAG1vDNnpUaxXEMEWDuki6MGyVp8FxEDy8xRcpDyinrf5mqbmojm8APXtPtniAJSUWnVBRu4bQEnh2qBrBvZ4yyq1D5xQCLEyxXu4bkDBxbQcz5OGEIOZ2fLBjpcMPthNkH5u5Fpud3XkwfPgiLA9UEj2S0ZqWXP+A==",
  "spki": "MIGbMBAGByqGSM49AgEGBSuBBAAjA4GGAAQBCRvSPZPJSOm1WWQBtbwzZ6VGsVxDBFg7pIujBslafBcRA8vMUXKQ8op63+Zqm5qI5vAD17T7Z4gCUlFp1QUbuG0BJ4dqgawb2eMsqtQ+cUAixMsV7uG5AwcW0HM+ThhCDmdnywY6XDD7YTZB+buRabnd15MHz4IiwPVBI9ktGallz/g=",
  "jwk": {
   "key_ops": [
    "sign"
   ],
   "ext": true,
   "kty": "EC",
   "x": "AQkb0j2TyUjptVlkAbW8M2elRrFcQwRYO6SLowbJWnwXEQPLzFFykPKKet_mapuaiObwA9e0-2eIAlJRadUFG7ht",
   "y": "ASeHaoGsG9njLKrUPnFAIsTLFe7huQMHFtBzPk4YQg5nZ8sGOlww-2E2Qfm7kWm53deTB8-CIsD1QSPZLRmpZc_4",
   "crv": "P-521",
   "d": "AZ6ikmMosGNzzLJR-177u1heLaN6Z4U6PZ8d7pKuq5lbNK48ee2MkQVrh1c6Y4ed2ROL_1oQ2fSNhO6_hVkanwtY"
  }
 },
 "p256b": {
  "pkcs8": "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwLDM/l7CiI1SPXmAL0VKwH5ObCPyHPSjTqwfqbz3XumhRANCAAQgm1nJOobUI+lRDR9+91cxXnwn+kCkVm39Wx+lUeejezcqKD/C9qqdnRjjonnhbmIjb79fbHVFXcfGeHnbE00F",
  "spki": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEIJtZyTqG1CPpUQ0ffvdXMV58J/pApFZt/VsfpVHno3s3Kig/wvaqnZ0Y46J54W5iI2+/X2x1RV3Hxnh52xNNBQ==",
  "jwk": {
   "key_ops": [
    "deriveBits"
   ],
   "ext": true,
   "kty": "EC",
   "x": "IJtZyTqG1CPpUQ0ffvdXMV58J_pApFZt_VsfpVHno3s",
   "y": "NyooP8L2qp2dGOOieeFuYiNvv19sdUVdx8Z4edsTTQU",
   "crv": "P-256",
   "d": "wLDM_l7CiI1SPXmAL0VKwH5ObCPyHPSjTqwfqbz3Xuk"
  }
 },
 "ed": {
  "pkcs8": "MC4CAQAwBQYDK2VwBCIEIB89GkaEeqRp078szsRvfKxhFsHyuhUgPNLIpzZZgQxA",
  "spki": "MCowBQYDK2VwAyEAcIZvC9izIDm9R7WI+wjLsDdQMfHEqhOsaxl1gOdUHl8=",
  "jwk": {
   "key_ops": [
    "sign"
   ],
   "ext": true,
   "crv": "Ed25519",
   "d": "Hz0aRoR6pGnTvyzOxG98rGEWwfK6FSA80sinNlmBDEA",
   "x": "cIZvC9izIDm9R7WI-wjLsDdQMfHEqhOsaxl1gOdUHl8",
   "kty": "OKP",
   "alg": "Ed25519"
  }
 },
 "x1": {
  "pkcs8": "MC4CAQAwBQYDK2VuBCIEIOgDoivbwagPtMn1U51PRibRxnUOIGZi2b/3jOIzTpRC",
  "spki": "MCowBQYDK2VuAyEAojna5XRx2sh7wVwcPzkuTmkYX4A3kSp2sq1+6gGCRnA=",
  "jwk": {
   "key_ops": [
    "deriveBits"
   ],
   "ext": true,
   "crv": "X25519",
   "d": "6AOiK9vBqA-0yfVTnU9GJtHGdQ4gZmLZv_eM4jNOlEI",
   "x": "ojna5XRx2sh7wVwcPzkuTmkYX4A3kSp2sq1-6gGCRnA",
   "kty": "OKP"
  }
 },
 "x2": {
  "pkcs8": "MC4CAQAwBQYDK2VuBCIEIMC1KC6g/mDH0NrD2ddxrGBUEaWkt9/VZIVqDuIRWBdD",
  "spki": "MCowBQYDK2VuAyEAHV26HDQLsNe8N+HA3gjc729vxEK2vhRbJyQ2QQX03mE=",
  "jwk": {
   "key_ops": [
    "deriveBits"
   ],
   "ext": true,
   "crv": "X25519",
   "d": "wLUoLqD-YMfQ2sPZ13GsYFQRpaS339VkhWoO4hFYF0M",
   "x": "HV26HDQLsNe8N-HA3gjc729vxEK2vhRbJyQ2QQX03mE",
   "kty": "OKP"
  }
 }
};
const errInfo = (e) => ({ name: e?.name, message: e?.message, isDOMException: e instanceof DOMException });
const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
const b64d = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const enc = new TextEncoder();
const msg = enc.encode("hello webcrypto");
const S = crypto.subtle;
const bytes = (n, start = 0) => Uint8Array.from({ length: n }, (_, i) => (i + start) & 255);
const strip = (j, ...drop) => { const o = { ...j }; for (const k of ["key_ops", "alg", "ext", ...drop]) delete o[k]; return o; };
const pub = (j) => strip(j, "d", "p", "q", "dp", "dq", "qi");

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
const imp = (fmt, data, alg, use, ext = true) => S.importKey(fmt, typeof data === "string" ? b64d(data) : data, alg, ext, use);
const hmacKey = () => imp("raw", bytes(32), { name: "HMAC", hash: "SHA-256" }, ["sign", "verify"]);
const aesKey = (n = "AES-GCM", use = ["encrypt", "decrypt"]) => imp("raw", bytes(16), n, use);

const groups = {
  "jwk-import": () => run({
    rsa_jwk: async () => { const k = await imp("jwk", strip(KEYS.rsa.jwk), { name: "RSA-OAEP", hash: "SHA-256" }, ["decrypt"]); return [k.type, k.algorithm.modulusLength]; },
    rsa_pub_sign: async () => { const p = await imp("jwk", pub(KEYS.rsa.jwk), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-384" }, ["verify"]); const k = await imp("jwk", strip(KEYS.rsa.jwk), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-384" }, ["sign"]); const s = await S.sign("RSASSA-PKCS1-v1_5", k, msg); return [await S.verify("RSASSA-PKCS1-v1_5", p, s, msg), hex(await S.digest("SHA-256", s))]; },
    ec_jwk: async () => { const p = await imp("jwk", pub(KEYS.p256.jwk), { name: "ECDSA", namedCurve: "P-256" }, ["verify"]); return [p.type, hex(await S.exportKey("raw", p))]; },
    ed_jwk: async () => { const k = await imp("jwk", strip(KEYS.ed.jwk), "Ed25519", ["sign"]); const p = await imp("jwk", pub(KEYS.ed.jwk), "Ed25519", ["verify"]); const s = await S.sign("Ed25519", k, msg); return [hex(s), await S.verify("Ed25519", p, s, msg)]; },
    ed_jwk_alg: async () => (await imp("jwk", { ...pub(KEYS.ed.jwk), alg: "EdDSA" }, "Ed25519", ["verify"])).type,
    key_ops_ok: async () => (await imp("jwk", { ...pub(KEYS.ed.jwk), key_ops: ["verify"] }, "Ed25519", ["verify"])).usages,
    ext_false: async () => imp("jwk", { ...pub(KEYS.ed.jwk), ext: false }, "Ed25519", ["verify"], true),
    use_sig_enc: async () => imp("jwk", { ...pub(KEYS.p256.jwk), use: "enc" }, { name: "ECDSA", namedCurve: "P-256" }, ["verify"]),
    oct_alg_mismatch: async () => imp("jwk", { kty: "oct", k: "AAECAwQFBgcICQoLDA0ODw", alg: "A256GCM" }, "AES-GCM", ["encrypt"]),
    oct_hs: async () => (await imp("jwk", { kty: "oct", k: "AAECAwQFBgcICQoLDA0ODw", alg: "HS256" }, { name: "HMAC", hash: "SHA-256" }, ["sign"])).algorithm.length,
    oct_hs_mismatch: async () => imp("jwk", { kty: "oct", k: "AAECAwQFBgcICQoLDA0ODw", alg: "HS512" }, { name: "HMAC", hash: "SHA-256" }, ["sign"]),
    wrong_kty: async () => imp("jwk", { kty: "RSA", k: "AAAA" }, "AES-GCM", ["encrypt"]),
    ec_wrong_kty: async () => imp("jwk", { kty: "oct", k: "AAAA" }, { name: "ECDSA", namedCurve: "P-256" }, ["verify"]),
    ec_crv_mismatch: async () => imp("jwk", pub(KEYS.p384.jwk), { name: "ECDSA", namedCurve: "P-256" }, ["verify"]),
    rsa_missing_e: async () => imp("jwk", { kty: "RSA", n: KEYS.rsa.jwk.n }, { name: "RSA-PSS", hash: "SHA-256" }, ["verify"]),
    oct_missing_k: async () => imp("jwk", { kty: "oct" }, "AES-GCM", ["encrypt"]),
    rsa_alg_mismatch: async () => imp("jwk", { ...pub(KEYS.rsa.jwk), alg: "RS256" }, { name: "RSA-PSS", hash: "SHA-256" }, ["verify"]),
    rsa_alg_ok: async () => (await imp("jwk", { ...pub(KEYS.rsa.jwk), alg: "PS256" }, { name: "RSA-PSS", hash: "SHA-256" }, ["verify"])).type,
  }),
  "import-errors": () => run({
    bad_format: async () => imp("pem", bytes(4), "AES-GCM", ["encrypt"]),
    bad_alg: async () => imp("raw", bytes(16), "AES-XYZ", ["encrypt"]),
    no_name: async () => imp("raw", bytes(16), {}, ["encrypt"]),
    aes_bad_len: async () => imp("raw", bytes(15), "AES-GCM", ["encrypt"]),
    aes_bad_usage: async () => imp("raw", bytes(16), "AES-GCM", ["sign"]),
    aes_kw_bad_usage: async () => imp("raw", bytes(16), "AES-KW", ["encrypt"]),
    aes_bad_format: async () => imp("spki", bytes(16), "AES-GCM", ["encrypt"]),
    hmac_no_hash: async () => imp("raw", bytes(16), "HMAC", ["sign"]),
    hmac_bad_hash: async () => imp("raw", bytes(16), { name: "HMAC", hash: "SHA-3" }, ["sign"]),
    hmac_md5: async () => imp("raw", bytes(16), { name: "HMAC", hash: "MD5" }, ["sign"]),
    hmac_empty: async () => imp("raw", new Uint8Array(0), { name: "HMAC", hash: "SHA-256" }, ["sign"]),
    hmac_no_usage: async () => imp("raw", bytes(16), { name: "HMAC", hash: "SHA-256" }, []),
    hmac_bad_usage: async () => imp("raw", bytes(16), { name: "HMAC", hash: "SHA-256" }, ["encrypt"]),
    unknown_usage: async () => imp("raw", bytes(16), { name: "HMAC", hash: "SHA-256" }, ["frobnicate"]),
    pbkdf2_extractable: async () => imp("raw", bytes(16), "PBKDF2", ["deriveBits"], true),
    pbkdf2_jwk: async () => imp("jwk", { kty: "oct", k: "AAAA" }, "PBKDF2", ["deriveBits"], false),
    hkdf_bad_usage: async () => imp("raw", bytes(16), "HKDF", ["sign"], false),
    rsa_garbage: async () => imp("spki", bytes(30), { name: "RSA-PSS", hash: "SHA-256" }, ["verify"]),
    rsa_pkcs8_garbage: async () => imp("pkcs8", bytes(30), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, ["sign"]),
    rsa_raw: async () => imp("raw", bytes(30), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, ["verify"]),
    rsa_no_hash: async () => imp("spki", KEYS.rsa.spki, { name: "RSASSA-PKCS1-v1_5" }, ["verify"]),
    rsa_pub_sign_usage: async () => imp("spki", KEYS.rsa.spki, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, ["sign"]),
    rsa_priv_verify_usage: async () => imp("pkcs8", KEYS.rsa.pkcs8, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, ["verify"]),
    rsa_spki_with_ec: async () => imp("spki", KEYS.p256.spki, { name: "RSA-PSS", hash: "SHA-256" }, ["verify"]),
    ec_spki_with_rsa: async () => imp("spki", KEYS.rsa.spki, { name: "ECDSA", namedCurve: "P-256" }, ["verify"]),
    ec_curve_mismatch: async () => imp("spki", KEYS.p384.spki, { name: "ECDSA", namedCurve: "P-256" }, ["verify"]),
    ec_no_curve: async () => imp("spki", KEYS.p256.spki, { name: "ECDSA" }, ["verify"]),
    ec_raw_bad: async () => imp("raw", bytes(65), { name: "ECDSA", namedCurve: "P-256" }, ["verify"]),
    ec_raw_compressed: async () => imp("raw", bytes(33), { name: "ECDSA", namedCurve: "P-256" }, ["verify"]),
    ecdh_pub_usage: async () => imp("spki", KEYS.p256b.spki, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"]),
    ed_raw_bad_len: async () => imp("raw", bytes(31), "Ed25519", ["verify"]),
    ed_raw_priv: async () => imp("raw", bytes(32), "Ed25519", ["sign"]),
    ed_spki_with_x: async () => imp("spki", KEYS.x1.spki, "Ed25519", ["verify"]),
    x_raw: async () => (await imp("raw", bytes(32), "X25519", [])).type,
    ed_raw: async () => (await imp("raw", bytes(32), "Ed25519", ["verify"])).type,
    keydata_string: async () => S.importKey("raw", "abc", "AES-GCM", true, ["encrypt"]).catch((e) => ({ error: { name: e.name } })),
  }),
  "use-errors": () => run({
    unknown_sign: async () => S.sign("FOO", await hmacKey(), msg),
    alg_mismatch: async () => S.sign("RSASSA-PKCS1-v1_5", await hmacKey(), msg),
    usage_missing: async () => S.sign("HMAC", await imp("raw", bytes(16), { name: "HMAC", hash: "SHA-256" }, ["verify"]), msg),
    not_a_key: async () => S.sign("HMAC", {}, msg).catch((e) => ({ error: { name: e.name } })),
    encrypt_hmac: async () => S.encrypt("HMAC", await hmacKey(), msg),
    encrypt_wrong_key: async () => S.encrypt({ name: "AES-CBC", iv: bytes(16) }, await aesKey(), msg),
    encrypt_no_usage: async () => S.encrypt({ name: "AES-GCM", iv: bytes(12) }, await aesKey("AES-GCM", ["decrypt"]), msg),
    gcm_bad_tag: async () => S.encrypt({ name: "AES-GCM", iv: bytes(12), tagLength: 48 }, await aesKey(), msg),
    gcm_short: async () => S.decrypt({ name: "AES-GCM", iv: bytes(12) }, await aesKey(), bytes(8)),
    gcm_tamper: async () => S.decrypt({ name: "AES-GCM", iv: bytes(12) }, await aesKey(), bytes(40)),
    gcm_no_iv: async () => S.encrypt({ name: "AES-GCM" }, await aesKey(), msg).catch((e) => ({ error: { name: e.name } })),
    gcm_empty_iv: async () => S.encrypt({ name: "AES-GCM", iv: new Uint8Array(0) }, await aesKey(), msg),
    ctr_bad_counter: async () => S.encrypt({ name: "AES-CTR", counter: bytes(8), length: 64 }, await aesKey("AES-CTR", ["encrypt"]), msg),
    ctr_len_big: async () => S.encrypt({ name: "AES-CTR", counter: bytes(16), length: 129 }, await aesKey("AES-CTR", ["encrypt"]), msg),
    rsa_pub_sign: async () => S.sign("RSASSA-PKCS1-v1_5", await imp("spki", KEYS.rsa.spki, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, ["verify"]), msg),
    pss_no_salt: async () => S.sign({ name: "RSA-PSS" }, await imp("pkcs8", KEYS.rsa.pkcs8, { name: "RSA-PSS", hash: "SHA-256" }, ["sign"]), msg).catch((e) => ({ error: { name: e.name } })),
    pss_salt_big: async () => S.sign({ name: "RSA-PSS", saltLength: 300 }, await imp("pkcs8", KEYS.rsa.pkcs8, { name: "RSA-PSS", hash: "SHA-256" }, ["sign"]), msg),
    ecdsa_no_hash: async () => S.sign({ name: "ECDSA" }, await imp("pkcs8", KEYS.p256.pkcs8, { name: "ECDSA", namedCurve: "P-256" }, ["sign"]), msg),
    oaep_too_long: async () => S.encrypt("RSA-OAEP", await imp("spki", KEYS.rsa.spki, { name: "RSA-OAEP", hash: "SHA-256" }, ["encrypt"]), new Uint8Array(300)),
    derive_unknown: async () => S.deriveBits("FOO", await imp("raw", bytes(16), "HKDF", ["deriveBits"], false), 128),
    derive_wrong_alg: async () => S.deriveBits({ name: "PBKDF2", salt: bytes(4), iterations: 1, hash: "SHA-256" }, await imp("raw", bytes(16), "HKDF", ["deriveBits"], false), 128),
    derive_usage: async () => S.deriveBits({ name: "HKDF", salt: bytes(4), info: bytes(1), hash: "SHA-256" }, await imp("raw", bytes(16), "HKDF", ["deriveKey"], false), 128),
    hkdf_null_len: async () => S.deriveBits({ name: "HKDF", salt: bytes(4), info: bytes(1), hash: "SHA-256" }, await imp("raw", bytes(16), "HKDF", ["deriveBits"], false), null),
    hkdf_odd_len: async () => S.deriveBits({ name: "HKDF", salt: bytes(4), info: bytes(1), hash: "SHA-256" }, await imp("raw", bytes(16), "HKDF", ["deriveBits"], false), 12),
    hkdf_too_long: async () => S.deriveBits({ name: "HKDF", salt: bytes(4), info: bytes(1), hash: "SHA-256" }, await imp("raw", bytes(16), "HKDF", ["deriveBits"], false), 255 * 256 + 8),
    pbkdf2_no_hash: async () => S.deriveBits({ name: "PBKDF2", salt: bytes(4), iterations: 1 }, await imp("raw", bytes(16), "PBKDF2", ["deriveBits"], false), 128),
    pbkdf2_odd: async () => S.deriveBits({ name: "PBKDF2", salt: bytes(4), iterations: 1, hash: "SHA-256" }, await imp("raw", bytes(16), "PBKDF2", ["deriveBits"], false), 12),
    ecdh_curve_mismatch: async () => S.deriveBits({ name: "ECDH", public: await imp("spki", KEYS.p384.spki, { name: "ECDH", namedCurve: "P-384" }, []) }, await imp("pkcs8", KEYS.p256b.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"]), 256),
    ecdh_too_long: async () => S.deriveBits({ name: "ECDH", public: await imp("spki", KEYS.p256b.spki, { name: "ECDH", namedCurve: "P-256" }, []) }, await imp("pkcs8", KEYS.p256b.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"]), 512),
    ecdh_private_as_public: async () => S.deriveBits({ name: "ECDH", public: await imp("pkcs8", KEYS.p256b.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"]) }, await imp("pkcs8", KEYS.p256b.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"]), 256),
    ecdh_public_wrong_alg: async () => S.deriveBits({ name: "ECDH", public: await imp("spki", KEYS.p256.spki, { name: "ECDSA", namedCurve: "P-256" }, ["verify"]) }, await imp("pkcs8", KEYS.p256b.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"]), 256),
    wrap_unextractable: async () => S.wrapKey("raw", await imp("raw", bytes(16), "AES-GCM", ["encrypt"], false), await imp("raw", bytes(16), "AES-KW", ["wrapKey"]), "AES-KW"),
    unwrap_bad_usage: async () => S.unwrapKey("raw", bytes(24), await imp("raw", bytes(16), "AES-KW", ["unwrapKey"]), "AES-KW", "AES-GCM", true, ["sign"]),
    digest_unknown: async () => S.digest("SHA-3", msg),
    export_bad_format: async () => S.exportKey("pem", await hmacKey()),
    export_spki_hmac: async () => S.exportKey("spki", await hmacKey()),
    export_raw_rsa: async () => S.exportKey("raw", await imp("spki", KEYS.rsa.spki, { name: "RSA-PSS", hash: "SHA-256" }, ["verify"])),
    export_spki_priv: async () => S.exportKey("spki", await imp("pkcs8", KEYS.rsa.pkcs8, { name: "RSA-PSS", hash: "SHA-256" }, ["sign"])),
    export_ed_raw_priv: async () => S.exportKey("raw", await imp("pkcs8", KEYS.ed.pkcs8, "Ed25519", ["sign"])),
    export_not_extractable_rsa: async () => S.exportKey("jwk", await imp("pkcs8", KEYS.rsa.pkcs8, { name: "RSA-PSS", hash: "SHA-256" }, ["sign"], false)),
    gen_rsa_small: async () => S.generateKey({ name: "RSA-PSS", modulusLength: 100, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign"]),
    gen_rsa_exp: async () => S.generateKey({ name: "RSA-PSS", modulusLength: 1024, publicExponent: new Uint8Array([5]), hash: "SHA-256" }, true, ["sign"]),
    gen_unknown: async () => S.generateKey({ name: "FOO" }, true, ["sign"]),
    gen_pbkdf2: async () => S.generateKey({ name: "PBKDF2" }, false, ["deriveBits"]),
    gen_bad_usage: async () => S.generateKey({ name: "AES-GCM", length: 128 }, true, ["sign"]),
    gen_ed_bad_usage: async () => S.generateKey("Ed25519", true, ["encrypt"]),
  }),
  "key-object": () => run({
    own: async () => { const k = await hmacKey(); return [Object.keys(k), Object.getOwnPropertyNames(Object.getPrototypeOf(k)).sort(), k.usages === k.usages, k.algorithm === k.algorithm, JSON.parse(JSON.stringify(k))]; },
    construct: async () => { try { new CryptoKey(); return "constructed"; } catch (e) { return { name: e.name }; } },
    subtle_type: async () => [typeof SubtleCrypto, crypto.subtle instanceof SubtleCrypto, Object.prototype.toString.call(crypto.subtle), typeof Crypto, crypto instanceof Crypto],
    alg_mutation: async () => { const k = await hmacKey(); k.algorithm.name = "X"; return k.algorithm.name; },
    generated_props: async () => { const k = await S.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]); return [Object.prototype.toString.call(k), Object.keys(k)]; },
    ec_raw_import: async () => { const k = await imp("raw", await S.exportKey("raw", await imp("spki", KEYS.p256.spki, { name: "ECDSA", namedCurve: "P-256" }, ["verify"])), { name: "ECDSA", namedCurve: "P-256" }, ["verify"]); return [k.type, k.usages]; },
  }),
};

export default {
  async fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    const fn = groups[name];
    if (!fn) return new Response("no such group", { status: 404 });
    return Response.json(await fn());
  },
};
