// Fixed keys (KEYS) and signatures/ciphertexts made by Node (SIGS).
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
const SIGS = {
 "p256": "Njc2pGcpHeOBe/4wvLkftlX+67JucsLoEylGXGibdHVd5+wE2S4vWSaSBEGH4Skot38rRKYMVeqc80CSrCHD7g==",
 "p384": "ReL4QQ9Ctrgm6GXx707sSQlUx+UydZoI1qN1tN6ETy60lzBOkoqsKEYv3lBebSU9ts9k3uTS1xz8obe5vPy9qyJnf8su6GiQK7fnjOLBFxKDlxmRpmxFCFhZbj6PZbZa",
 "p521": "APV59iRkX8Drh9OGM5R/GjfCiknIpZ4iscHTztRcHHvjxiDu5Gxi7nJ2Mgk1xZzH7YxumNz4B6r+wRsLCbIbplVQAEtviP+6UuBqebXHeT2a81kQ6aKq6xU4N1AOVmar4G/dWT/4rNjK+XfeppovBoMoTHkJ24aKpaycT5b5korykIvn",
 "pss": "aemqQNjI7i+l0QFjaJA8ngbMXQ5AfZAU+PIdD+hpLE6VlC6YSQvn8xB9oIej2lkiDRF1no49NwSNvseLL0RquFUcCcbrG6bX8ZacjBHkyGpXwWQY2uH1c31zZcQEQc1vvTzdJWDDXK44RggIn0OUhe7VZSjcHCz3fL0jKNjMc5c7RFemtkBtRi8gJBLvXQDMgXok/zOON8j32as/gn9VqKSMP/X6r26eAyKSxY+8qNWklQ408/Hj3zOQjYBe3WctyLm9R5828/KbwYWZmJS1zuODbJKl9CNTYbwC3RjHPcfPQd9a1HlueWZS3paB0e6axj2FifcddBRAPwN/A8gd8g==",
 "oaep": "eZKcKBtYPzdr9KCPdkUztuL2D82Cy3Y9WPFPUfRzMe7tPAwS0qUkvjjjafEPJKgzMx6mnpYWQ/+e7lVMaKMbUUsfcvaMyJo+0ZTXOLgOBAOD/OOXQqRLfGediNlTkbZN0RCfYRJu7bwiP0YyHPdAWa7a0LEucARkSjXYzAnD75UgoP1arP6kGssXV5lfjB563ixFRypvhpLQ17HFhjOlEzAIWfZHLAWQ7VX3+UMsk7Y4CW9IiZtqZhfzCjYXEoyPqaNtLsbxwDJlMy5oloYhWjNJB85Fe0dmivMuk6vZlu0sHU3/IMDfQIngPnDTJGgFIeJP2jzbH7eedCZl0/4TsA=="
};
const errInfo = (e) => ({ name: e?.name, message: e?.message });
const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
const b64d = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)));
const enc = new TextEncoder();
const msg = enc.encode("hello webcrypto");
const S = crypto.subtle;
const props = (k) => ({ type: k.type, extractable: k.extractable, algorithm: jsonAlg(k.algorithm), usages: k.usages, proto: Object.prototype.toString.call(k) });
const jsonAlg = (a) => {
  const o = {};
  for (const [k, v] of Object.entries(a)) o[k] = v instanceof Uint8Array ? { u8: hex(v) } : v && typeof v === "object" ? jsonAlg(v) : v;
  return o;
};
const bytes = (n, start = 0) => Uint8Array.from({ length: n }, (_, i) => (i + start) & 255);

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
const RSA = (name, hash = "SHA-256") => ({ name, hash });
const imp = (fmt, data, alg, use, ext = true) => S.importKey(fmt, typeof data === "string" ? b64d(data) : data, alg, ext, use);

const groups = {
  "import-props": () => run({
    hmac_raw: async () => props(await imp("raw", bytes(32), { name: "HMAC", hash: "SHA-256" }, ["sign", "verify"])),
    hmac_len: async () => props(await imp("raw", bytes(32), { name: "HMAC", hash: { name: "SHA-1" }, length: 200 }, ["sign"])),
    aes_cbc: async () => props(await imp("raw", bytes(16), "AES-CBC", ["encrypt", "decrypt"], false)),
    aes_ctr: async () => props(await imp("raw", bytes(24), { name: "aes-ctr" }, ["encrypt"])),
    aes_kw: async () => props(await imp("raw", bytes(32), "AES-KW", ["wrapKey", "unwrapKey"])),
    pbkdf2: async () => props(await imp("raw", enc.encode("password"), "PBKDF2", ["deriveBits", "deriveKey"], false)),
    hkdf: async () => props(await imp("raw", bytes(22), "HKDF", ["deriveBits"], false)),
    rsa_pkcs8: async () => props(await imp("pkcs8", KEYS.rsa.pkcs8, RSA("RSASSA-PKCS1-v1_5"), ["sign"])),
    rsa_spki: async () => props(await imp("spki", KEYS.rsa.spki, RSA("RSA-PSS", "SHA-384"), ["verify"])),
    rsa_jwk: async () => props(await imp("jwk", KEYS.rsa.jwk, RSA("RSA-OAEP", "SHA-256"), ["decrypt"])),
    ec_pkcs8: async () => props(await imp("pkcs8", KEYS.p256.pkcs8, { name: "ECDSA", namedCurve: "P-256" }, ["sign"])),
    ec_spki: async () => props(await imp("spki", KEYS.p384.spki, { name: "ECDSA", namedCurve: "P-384" }, ["verify"])),
    ec_jwk: async () => props(await imp("jwk", KEYS.p521.jwk, { name: "ECDSA", namedCurve: "P-521" }, ["sign"])),
    ecdh_pkcs8: async () => props(await imp("pkcs8", KEYS.p256b.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"])),
    ecdh_pub: async () => props(await imp("spki", KEYS.p256b.spki, { name: "ECDH", namedCurve: "P-256" }, [])),
    ed_pkcs8: async () => props(await imp("pkcs8", KEYS.ed.pkcs8, "Ed25519", ["sign"])),
    ed_jwk_pub: async () => { const { d, ...pub } = KEYS.ed.jwk; return props(await imp("jwk", pub, { name: "Ed25519" }, ["verify"])); },
    x25519: async () => props(await imp("pkcs8", KEYS.x1.pkcs8, "X25519", ["deriveBits"])),
    usages_dedupe: async () => props(await imp("raw", bytes(16), "AES-GCM", ["decrypt", "encrypt", "encrypt"])),
  }),
  "export": () => run({
    hmac_jwk: async () => S.exportKey("jwk", await imp("raw", bytes(32), { name: "HMAC", hash: "SHA-384" }, ["sign"])),
    aes_jwk: async () => Promise.all(["AES-CBC", "AES-CTR", "AES-GCM", "AES-KW"].map(async (n) => S.exportKey("jwk", await imp("raw", bytes(24), n, n === "AES-KW" ? ["wrapKey"] : ["encrypt"])))),
    rsa_spki_roundtrip: async () => b64(await S.exportKey("spki", await imp("spki", KEYS.rsa.spki, RSA("RSASSA-PKCS1-v1_5"), ["verify"]))) === KEYS.rsa.spki,
    rsa_pkcs8_roundtrip: async () => b64(await S.exportKey("pkcs8", await imp("pkcs8", KEYS.rsa.pkcs8, RSA("RSASSA-PKCS1-v1_5"), ["sign"]))) === KEYS.rsa.pkcs8,
    rsa_jwk_priv: async () => S.exportKey("jwk", await imp("pkcs8", KEYS.rsa.pkcs8, RSA("RSASSA-PKCS1-v1_5", "SHA-512"), ["sign"])),
    rsa_jwk_pss: async () => { const j = await S.exportKey("jwk", await imp("spki", KEYS.rsa.spki, RSA("RSA-PSS", "SHA-1"), ["verify"])); return { ...j, n: j.n.length }; },
    rsa_jwk_oaep: async () => { const j = await S.exportKey("jwk", await imp("spki", KEYS.rsa.spki, RSA("RSA-OAEP", "SHA-384"), ["encrypt"])); return { ...j, n: j.n.length }; },
    ec_jwk: async () => S.exportKey("jwk", await imp("pkcs8", KEYS.p384.pkcs8, { name: "ECDSA", namedCurve: "P-384" }, ["sign"])),
    ec_raw_pub: async () => hex(await S.exportKey("raw", await imp("spki", KEYS.p256.spki, { name: "ECDSA", namedCurve: "P-256" }, ["verify"]))),
    ec_spki_roundtrip: async () => b64(await S.exportKey("spki", await imp("jwk", (({ d, ...p }) => p)(KEYS.p256.jwk), { name: "ECDSA", namedCurve: "P-256" }, ["verify"]))) === KEYS.p256.spki,
    ec_pkcs8: async () => b64(await S.exportKey("pkcs8", await imp("jwk", KEYS.p256.jwk, { name: "ECDSA", namedCurve: "P-256" }, ["sign"]))),
    ed_raw: async () => hex(await S.exportKey("raw", await imp("spki", KEYS.ed.spki, "Ed25519", ["verify"]))),
    ed_jwk: async () => S.exportKey("jwk", await imp("pkcs8", KEYS.ed.pkcs8, "Ed25519", ["sign"])),
    ed_pkcs8_roundtrip: async () => b64(await S.exportKey("pkcs8", await imp("pkcs8", KEYS.ed.pkcs8, "Ed25519", ["sign"]))) === KEYS.ed.pkcs8,
    x_jwk: async () => S.exportKey("jwk", await imp("pkcs8", KEYS.x1.pkcs8, "X25519", ["deriveBits"])),
    ecdh_jwk: async () => S.exportKey("jwk", await imp("pkcs8", KEYS.p256b.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"])),
    raw_of_private: async () => S.exportKey("raw", await imp("pkcs8", KEYS.p256.pkcs8, { name: "ECDSA", namedCurve: "P-256" }, ["sign"])),
    pkcs8_of_public: async () => S.exportKey("pkcs8", await imp("spki", KEYS.p256.spki, { name: "ECDSA", namedCurve: "P-256" }, ["verify"])),
    spki_of_secret: async () => S.exportKey("spki", await imp("raw", bytes(16), "AES-GCM", ["encrypt"])),
    not_extractable: async () => S.exportKey("raw", await imp("raw", bytes(16), "AES-GCM", ["encrypt"], false)),
  }),
  "sign": () => run({
    hmac: async () => hex(await S.sign("HMAC", await imp("raw", bytes(32), { name: "HMAC", hash: "SHA-512" }, ["sign"]), msg)),
    hmac_verify: async () => { const k = await imp("raw", bytes(32), { name: "HMAC", hash: "SHA-256" }, ["sign", "verify"]); const s = await S.sign("HMAC", k, msg); return [await S.verify("HMAC", k, s, msg), await S.verify("HMAC", k, s.slice(1), msg)]; },
    rsa_pkcs1: async () => b64(await S.sign("RSASSA-PKCS1-v1_5", await imp("pkcs8", KEYS.rsa.pkcs8, RSA("RSASSA-PKCS1-v1_5"), ["sign"]), msg)),
    rsa_pkcs1_verify: async () => { const k = await imp("pkcs8", KEYS.rsa.pkcs8, RSA("RSASSA-PKCS1-v1_5", "SHA-384"), ["sign"]); const p = await imp("jwk", (({ d, p, q, dp, dq, qi, ...x }) => x)(KEYS.rsa.jwk), RSA("RSASSA-PKCS1-v1_5", "SHA-384"), ["verify"]); const s = await S.sign("RSASSA-PKCS1-v1_5", k, msg); return [await S.verify({ name: "RSASSA-PKCS1-v1_5" }, p, s, msg), await S.verify("RSASSA-PKCS1-v1_5", p, s, enc.encode("other"))]; },
    pss_node: async () => S.verify({ name: "RSA-PSS", saltLength: 32 }, await imp("spki", KEYS.rsa.spki, RSA("RSA-PSS"), ["verify"]), b64d(SIGS.pss), msg),
    pss_wrong_salt: async () => S.verify({ name: "RSA-PSS", saltLength: 20 }, await imp("spki", KEYS.rsa.spki, RSA("RSA-PSS"), ["verify"]), b64d(SIGS.pss), msg),
    pss_roundtrip: async () => { const k = await imp("pkcs8", KEYS.rsa.pkcs8, RSA("RSA-PSS", "SHA-512"), ["sign"]); const p = await imp("spki", KEYS.rsa.spki, RSA("RSA-PSS", "SHA-512"), ["verify"]); const s = await S.sign({ name: "RSA-PSS", saltLength: 0 }, k, msg); const s2 = await S.sign({ name: "RSA-PSS", saltLength: 0 }, k, msg); return [s.byteLength, b64(s) === b64(s2), await S.verify({ name: "RSA-PSS", saltLength: 0 }, p, s, msg)]; },
    ecdsa_node: async () => Promise.all([["p256", "P-256", "SHA-256"], ["p384", "P-384", "SHA-384"], ["p521", "P-521", "SHA-512"]].map(async ([k, c, h]) => S.verify({ name: "ECDSA", hash: h }, await imp("spki", KEYS[k].spki, { name: "ECDSA", namedCurve: c }, ["verify"]), b64d(SIGS[k]), msg))),
    ecdsa_roundtrip: async () => Promise.all([["p256", "P-256", "SHA-256"], ["p384", "P-384", "SHA-1"], ["p521", "P-521", "SHA-384"]].map(async ([k, c, h]) => { const s = await S.sign({ name: "ECDSA", hash: h }, await imp("pkcs8", KEYS[k].pkcs8, { name: "ECDSA", namedCurve: c }, ["sign"]), msg); const pub = await imp("spki", KEYS[k].spki, { name: "ECDSA", namedCurve: c }, ["verify"]); return [s.byteLength, await S.verify({ name: "ECDSA", hash: h }, pub, s, msg), await S.verify({ name: "ECDSA", hash: h }, pub, s, msg.slice(1))]; })),
    ecdsa_bad_len: async () => S.verify({ name: "ECDSA", hash: "SHA-256" }, await imp("spki", KEYS.p256.spki, { name: "ECDSA", namedCurve: "P-256" }, ["verify"]), new Uint8Array(10), msg),
    ed: async () => b64(await S.sign("Ed25519", await imp("pkcs8", KEYS.ed.pkcs8, "Ed25519", ["sign"]), msg)),
    ed_verify: async () => { const p = await imp("spki", KEYS.ed.spki, "Ed25519", ["verify"]); const s = await S.sign({ name: "Ed25519" }, await imp("jwk", KEYS.ed.jwk, "Ed25519", ["sign"]), msg); return [await S.verify("Ed25519", p, s, msg), await S.verify("Ed25519", p, s, enc.encode("x")), await S.verify("Ed25519", p, s.slice(2), msg)]; },
  }),
  "cipher": () => run({
    cbc: async () => { const k = await imp("raw", bytes(16), "AES-CBC", ["encrypt", "decrypt"]); const c = await S.encrypt({ name: "AES-CBC", iv: bytes(16, 7) }, k, msg); return [hex(c), new TextDecoder().decode(await S.decrypt({ name: "AES-CBC", iv: bytes(16, 7) }, k, c))]; },
    cbc_bad_padding: async () => S.decrypt({ name: "AES-CBC", iv: bytes(16) }, await imp("raw", bytes(16), "AES-CBC", ["decrypt"]), bytes(16)),
    cbc_bad_iv: async () => S.encrypt({ name: "AES-CBC", iv: bytes(8) }, await imp("raw", bytes(16), "AES-CBC", ["encrypt"]), msg),
    ctr: async () => { const k = await imp("raw", bytes(32), "AES-CTR", ["encrypt", "decrypt"]); const c = await S.encrypt({ name: "AES-CTR", counter: bytes(16, 200), length: 64 }, k, bytes(40)); return [hex(c), hex(await S.decrypt({ name: "AES-CTR", counter: bytes(16, 200), length: 64 }, k, c))]; },
    ctr_wrap: async () => { const k = await imp("raw", bytes(16), "AES-CTR", ["encrypt"]); const ctr = new Uint8Array(16).fill(255); return hex(await S.encrypt({ name: "AES-CTR", counter: ctr, length: 8 }, k, bytes(64))); },
    ctr_bad_len: async () => S.encrypt({ name: "AES-CTR", counter: bytes(16), length: 0 }, await imp("raw", bytes(16), "AES-CTR", ["encrypt"]), msg),
    gcm: async () => hex(await S.encrypt({ name: "AES-GCM", iv: bytes(12), additionalData: bytes(5) }, await imp("raw", bytes(32), "AES-GCM", ["encrypt"]), msg)),
    oaep_node: async () => new TextDecoder().decode(await S.decrypt({ name: "RSA-OAEP", label: enc.encode("lbl") }, await imp("pkcs8", KEYS.rsa.pkcs8, RSA("RSA-OAEP"), ["decrypt"]), b64d(SIGS.oaep))),
    oaep_wrong_label: async () => S.decrypt({ name: "RSA-OAEP" }, await imp("pkcs8", KEYS.rsa.pkcs8, RSA("RSA-OAEP"), ["decrypt"]), b64d(SIGS.oaep)),
    oaep_roundtrip: async () => { const pub = await imp("spki", KEYS.rsa.spki, RSA("RSA-OAEP", "SHA-1"), ["encrypt"]); const c = await S.encrypt("RSA-OAEP", pub, msg); return [c.byteLength, new TextDecoder().decode(await S.decrypt("RSA-OAEP", await imp("pkcs8", KEYS.rsa.pkcs8, RSA("RSA-OAEP", "SHA-1"), ["decrypt"]), c))]; },
  }),
  "wrap": () => run({
    kw_raw: async () => { const kek = await imp("raw", bytes(16), "AES-KW", ["wrapKey", "unwrapKey"]); const k = await imp("raw", bytes(32, 9), "AES-GCM", ["encrypt"]); const w = await S.wrapKey("raw", k, kek, "AES-KW"); const u = await S.unwrapKey("raw", w, kek, { name: "AES-KW" }, { name: "AES-GCM" }, true, ["decrypt"]); return [hex(w), props(u), hex(await S.exportKey("raw", u))]; },
    kw_bad: async () => S.unwrapKey("raw", bytes(40), await imp("raw", bytes(16), "AES-KW", ["unwrapKey"]), "AES-KW", "AES-GCM", true, ["encrypt"]),
    kw_unaligned: async () => S.wrapKey("raw", await imp("raw", bytes(20), { name: "HMAC", hash: "SHA-256" }, ["sign"]), await imp("raw", bytes(16), "AES-KW", ["wrapKey"]), "AES-KW"),
    gcm_jwk: async () => { const kek = await imp("raw", bytes(16), "AES-GCM", ["wrapKey", "unwrapKey"]); const k = await imp("raw", bytes(16, 3), { name: "HMAC", hash: "SHA-256" }, ["sign"]); const w = await S.wrapKey("jwk", k, kek, { name: "AES-GCM", iv: bytes(12) }); const u = await S.unwrapKey("jwk", w, kek, { name: "AES-GCM", iv: bytes(12) }, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]); return [hex(w), props(u)]; },
    wrap_no_usage: async () => S.wrapKey("raw", await imp("raw", bytes(16), "AES-GCM", ["encrypt"]), await imp("raw", bytes(16), "AES-KW", ["unwrapKey"]), "AES-KW"),
  }),
  "derive": () => run({
    pbkdf2: async () => hex(await S.deriveBits({ name: "PBKDF2", salt: enc.encode("salt"), iterations: 1000, hash: "SHA-256" }, await imp("raw", enc.encode("password"), "PBKDF2", ["deriveBits"], false), 256)),
    pbkdf2_sha1: async () => hex(await S.deriveBits({ name: "PBKDF2", salt: enc.encode("salt"), iterations: 2, hash: "SHA-1" }, await imp("raw", enc.encode("password"), "PBKDF2", ["deriveBits"], false), 160)),
    pbkdf2_key: async () => { const k = await S.deriveKey({ name: "PBKDF2", salt: bytes(8), iterations: 10, hash: "SHA-512" }, await imp("raw", enc.encode("pw"), "PBKDF2", ["deriveKey"], false), { name: "AES-GCM", length: 128 }, true, ["encrypt"]); return [props(k), hex(await S.exportKey("raw", k))]; },
    pbkdf2_zero_iter: async () => S.deriveBits({ name: "PBKDF2", salt: bytes(8), iterations: 0, hash: "SHA-256" }, await imp("raw", enc.encode("pw"), "PBKDF2", ["deriveBits"], false), 128),
    hkdf: async () => hex(await S.deriveBits({ name: "HKDF", salt: bytes(13), info: bytes(10, 0xf0), hash: "SHA-256" }, await imp("raw", new Uint8Array(22).fill(0x0b), "HKDF", ["deriveBits"], false), 42 * 8)),
    hkdf_empty: async () => hex(await S.deriveBits({ name: "HKDF", salt: new Uint8Array(0), info: new Uint8Array(0), hash: "SHA-1" }, await imp("raw", bytes(22), "HKDF", ["deriveBits"], false), 128)),
    hkdf_key: async () => { const k = await S.deriveKey({ name: "HKDF", salt: bytes(4), info: bytes(4), hash: "SHA-256" }, await imp("raw", bytes(22), "HKDF", ["deriveKey"], false), { name: "HMAC", hash: "SHA-256", length: 256 }, true, ["sign"]); return [props(k), hex(await S.exportKey("raw", k))]; },
    hkdf_no_len: async () => S.deriveKey({ name: "HKDF", salt: bytes(4), info: bytes(4), hash: "SHA-256" }, await imp("raw", bytes(22), "HKDF", ["deriveKey"], false), { name: "HMAC", hash: "SHA-256" }, true, ["sign"]),
    ecdh: async () => { const a = await imp("pkcs8", KEYS.p256.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"]); const b = await imp("spki", KEYS.p256b.spki, { name: "ECDH", namedCurve: "P-256" }, []); const a2 = await imp("spki", KEYS.p256.spki, { name: "ECDH", namedCurve: "P-256" }, []); const b2 = await imp("pkcs8", KEYS.p256b.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"]); const x = await S.deriveBits({ name: "ECDH", public: b }, a, 256); const y = await S.deriveBits({ name: "ECDH", public: a2 }, b2, 128); return [hex(x), hex(y)]; },
    ecdh_null_len: async () => (await S.deriveBits({ name: "ECDH", public: await imp("spki", KEYS.p256b.spki, { name: "ECDH", namedCurve: "P-256" }, []) }, await imp("pkcs8", KEYS.p256.pkcs8, { name: "ECDH", namedCurve: "P-256" }, ["deriveBits"]), null)).byteLength,
    x25519: async () => { const a = await imp("pkcs8", KEYS.x1.pkcs8, "X25519", ["deriveBits", "deriveKey"]); const b = await imp("spki", KEYS.x2.spki, "X25519", []); const a2 = await imp("spki", KEYS.x1.spki, "X25519", []); const b2 = await imp("pkcs8", KEYS.x2.pkcs8, "X25519", ["deriveBits"]); return [hex(await S.deriveBits({ name: "X25519", public: b }, a, 256)), hex(await S.deriveBits({ name: "X25519", public: a2 }, b2, 256))]; },
    x25519_key: async () => { const k = await S.deriveKey({ name: "X25519", public: await imp("spki", KEYS.x2.spki, "X25519", []) }, await imp("pkcs8", KEYS.x1.pkcs8, "X25519", ["deriveKey"]), { name: "AES-KW", length: 256 }, true, ["wrapKey"]); return [props(k), hex(await S.exportKey("raw", k))]; },
  }),
  "generate": () => run({
    hmac: async () => { const k = await S.generateKey({ name: "HMAC", hash: "SHA-512" }, true, ["sign"]); return [props(k), (await S.exportKey("raw", k)).byteLength]; },
    aes: async () => Promise.all(["AES-CBC", "AES-CTR", "AES-GCM", "AES-KW"].map(async (n) => props(await S.generateKey({ name: n, length: 192 }, false, n === "AES-KW" ? ["wrapKey"] : ["encrypt", "decrypt"])))),
    rsa: async () => { const k = await S.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"]); return [props(k.publicKey), props(k.privateKey), Object.keys(k)]; },
    rsa_pss: async () => { const k = await S.generateKey({ name: "RSA-PSS", modulusLength: 1024, publicExponent: new Uint8Array([3]), hash: "SHA-1" }, false, ["sign", "verify"]); const s = await S.sign({ name: "RSA-PSS", saltLength: 20 }, k.privateKey, msg); return [props(k.publicKey), props(k.privateKey), await S.verify({ name: "RSA-PSS", saltLength: 20 }, k.publicKey, s, msg)]; },
    rsa_oaep: async () => { const k = await S.generateKey({ name: "RSA-OAEP", modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["encrypt", "decrypt", "wrapKey", "unwrapKey"]); return [props(k.publicKey), props(k.privateKey)]; },
    ec: async () => Promise.all(["P-256", "P-384", "P-521"].map(async (c) => { const k = await S.generateKey({ name: "ECDSA", namedCurve: c }, true, ["sign", "verify"]); const s = await S.sign({ name: "ECDSA", hash: "SHA-256" }, k.privateKey, msg); return [props(k.publicKey), props(k.privateKey), await S.verify({ name: "ECDSA", hash: "SHA-256" }, k.publicKey, s, msg), (await S.exportKey("raw", k.publicKey)).byteLength]; })),
    ecdh: async () => { const k = await S.generateKey({ name: "ECDH", namedCurve: "P-384" }, true, ["deriveBits", "deriveKey"]); return [props(k.publicKey), props(k.privateKey)]; },
    ed: async () => { const k = await S.generateKey("Ed25519", true, ["sign", "verify"]); return [props(k.publicKey), props(k.privateKey), Object.keys(await S.exportKey("jwk", k.privateKey)).sort()]; },
    x25519: async () => { const k = await S.generateKey({ name: "X25519" }, true, ["deriveBits"]); return [props(k.publicKey), props(k.privateKey)]; },
    hmac_no_usage: async () => S.generateKey({ name: "HMAC", hash: "SHA-256" }, true, []),
    ec_no_private_usage: async () => S.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["verify"]),
    aes_bad_len: async () => S.generateKey({ name: "AES-GCM", length: 100 }, true, ["encrypt"]),
    bad_curve: async () => S.generateKey({ name: "ECDSA", namedCurve: "P-225" }, true, ["sign"]),
  }),
  "digest": () => run({
    md5: async () => hex(await S.digest("MD5", enc.encode("abc"))),
    md5_lower: async () => hex(await S.digest({ name: "md5" }, enc.encode(""))),
    stream: async () => { const s = new crypto.DigestStream("SHA-256"); const w = s.getWriter(); await w.write(enc.encode("ab")); await w.write(enc.encode("c")); await w.close(); return [hex(await s.digest), Object.prototype.toString.call(s), s instanceof WritableStream]; },
    stream_md5: async () => { const s = new crypto.DigestStream({ name: "MD5" }); await new Response("hello").body.pipeTo(s); return hex(await s.digest); },
    stream_bad: async () => { new crypto.DigestStream("SHA-3"); return "made"; },
    stream_empty: async () => { const s = new crypto.DigestStream("SHA-1"); await s.getWriter().close(); return hex(await s.digest); },
    timing_safe: async () => [S.timingSafeEqual(bytes(4), bytes(4)), S.timingSafeEqual(bytes(4), bytes(4, 1)), S.timingSafeEqual(new ArrayBuffer(2), new ArrayBuffer(2))],
    timing_safe_len: async () => S.timingSafeEqual(bytes(4), bytes(5)),
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
