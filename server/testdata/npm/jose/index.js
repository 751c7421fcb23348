import * as jose from "jose";

const errInfo = (e) => ({ name: e?.name, code: e?.code, message: e?.message });

async function roundtrip(alg) {
  const { publicKey, privateKey } = await jose.generateKeyPair(alg, { extractable: true });
  const token = await new jose.SignJWT({ sub: "user-1", scope: "read" })
    .setProtectedHeader({ alg, kid: "k1" })
    .setIssuedAt(1700000000)
    .setIssuer("celld")
    .setAudience("tests")
    .setExpirationTime(1700000000 + 7200)
    .sign(privateKey);
  const { payload, protectedHeader } = await jose.jwtVerify(token, publicKey, { issuer: "celld", audience: "tests", currentDate: new Date(1700000100 * 1000) });
  const [h, p, s] = token.split(".");
  const flipped = s[0] === "A" ? "B" + s.slice(1) : "A" + s.slice(1);
  let tampered;
  try {
    await jose.jwtVerify(`${h}.${p}.${flipped}`, publicKey, { currentDate: new Date(1700000100 * 1000) });
    tampered = "accepted";
  } catch (e) {
    tampered = errInfo(e);
  }
  let expired;
  try {
    await jose.jwtVerify(token, publicKey, { currentDate: new Date(1800000000 * 1000) });
    expired = "accepted";
  } catch (e) {
    expired = errInfo(e);
  }
  return { token, payload, protectedHeader, jwk: await jose.exportJWK(publicKey), spki: await jose.exportSPKI(publicKey), tampered, expired };
}

// verify checks a token the test signed, against the JWK it sends.
async function verify(body) {
  const key = await jose.importJWK(body.jwk, body.alg);
  try {
    const { payload } = await jose.jwtVerify(body.token, key, { currentDate: new Date(1700000100 * 1000) });
    return { ok: true, payload };
  } catch (e) {
    return { ok: false, error: errInfo(e) };
  }
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    try {
      if (url.pathname === "/roundtrip") return Response.json(await roundtrip(url.searchParams.get("alg")));
      if (url.pathname === "/verify") return Response.json(await verify(await request.json()));
      if (url.pathname === "/pem") {
        const alg = url.searchParams.get("alg");
        const body = await request.json();
        const priv = await jose.importPKCS8(body.pkcs8, alg);
        const pub = await jose.importSPKI(body.spki, alg);
        const jws = await new jose.CompactSign(new TextEncoder().encode("pem payload")).setProtectedHeader({ alg }).sign(priv);
        const { payload } = await jose.compactVerify(jws, pub);
        return Response.json({ jws, payload: new TextDecoder().decode(payload) });
      }
    } catch (e) {
      return Response.json({ error: errInfo(e), stack: String(e?.stack) }, { status: 500 });
    }
    return new Response("not found", { status: 404 });
  },
};
