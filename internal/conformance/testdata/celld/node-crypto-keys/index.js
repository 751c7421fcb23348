// node:crypto KeyObjects, Sign and Verify with keys and signatures made by
// Node 20 (throwaway test keys).
import crypto from "node:crypto";

const K = {
 "rsaPriv": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDhvswE5qnoMk2n\nHb/S/gfNAaXlVEI0kqiMN1Faw9eg5Gs96arx9qvK7Yl5TV9ba+8qCnA3+1JFX6mm\nfm4bVPYL5vZAb0q5mX/mMqwKZDHxj1RxS/R1R7Yqq3AgNvOXM4XULLrmXrWfqJU9\nAMorSl8mP3gMGVb6qkFMnLD0KedF+U/V1vbaFS9PITSncrNwxd4y+wJYzgYfu70C\nbr4wD97zKFr8OARdrufJGImBNu39PxA5drdqxr4STuOHktqZ2hJeDp4S8G0deKvF\nFlsi+pUviGMJ+T4j+GF73ihFEQbT3NexK5HkwKTbXm5A5T0xgy50+g5BOQHQ7wnW\nZB2EIThDAgMBAAECggEAb4HDXRhjDOLsIIQ9YIdCay1JOMIqAbX/s2MPuHnMZRjv\nMCHf4q0ppo82vMhPNeVWubl2PPDTbpkWP7trv+xzrOVk9ecDTjJYTujwuiFL2jom\nR+Bw3A2UGfec5wy9vg4hKPD/UROvOzIWpY9iTYfrAAWR0sghgqfeoW00qyaXqqPR\n/6M9jCD+/bC/nQfu9gqLUAQZhukDLIkrObdyzudm4QqsEJZglEMY3k8WsSjNpSOr\nFbRA2bMMgMEhdalp9wj6fT+rnDTqWAe4HeTGgXPZ+1w8W7m8IhQlRBCrkukRosQ+\n9WAc+kdij0MkpzKtyy5zmqXC870GZSuGb5S4IVJkgQKBgQD4kzMb7235f3ne4R+/\nq+4w21+3KfKy1hzVtOJRceG/im26LHkfSVrvGiPKw/RP4mrIvZXd/SpxayZ6vE0W\nVArfLlcMyiOVaaHcWPzS1ID5zyFXUU9iKPaEBMZDFz8iIZsVq0EebE7AuCpRQmZu\nKNI08SkHGbr9xjXBYeCQd5H/UwKBgQDofQYALzY6B1QZqMh3V/PJmemaXc+CkMpm\nWNHyyCiSrHEC2IUoHnPxVWfIo2OWf2jSl3+fhpG3giKaZypQFXO1FSD9uIVtqePn\no8wP1U4FqtDTivA16Zt6AvzSI8F4zMgODeT939kRqsQaooOTzboQD14IL69olWJs\nheL84nf1UQKBgGUO0zSEPt20acOnGtU9/PR3+43ny/fQ/KAVjf02o2TPzpRmCEgj\n9ohGxE5nJChmEKvUB93cUykROu+jJmPxfwoFOPbGJ3lTHK8Mrpy4MEdfYlqxf+iU\nZsR9fG1CQjSKHRbOLQdFWS8YsHug1yvqBKvpb5inaVJLBwe71yRkuEJpAoGBANYF\nOf/zdl0HIBGbAihzTBab3KPhlkTg26JKQ8PXJRqZKlPvVO1w01UoRSk72FLUKYAs\nPS1y6TPg1dAEBrzAcssRj1RiiFpC2m4EqLcuquumqyUCs00+J4WzuGAO0G1PPx9J\nBTP83MxZwruuPahT6+Qa8Xphw31of7ndqu8X4ExxAoGAGggp9bVzUjZnFS6kIGEL\nKD1QivxtENuAzscFp/QoRA3X/Xl1zgn+EWVZjXXaoSajVQMR4m6XaLtGWfTi+G9Q\n3ooPKGAaEctbdKndHZ5UejUJyHEsIvwe5dgVF1uyRyuqz4O9RsW5+GtQo8wnvkf+\ndPfFZl/RkgPmaTdgKInn9tY=\n-----END PRIVATE KEY-----\n",
 "rsaPub": "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA4b7MBOap6DJNpx2/0v4H\nzQGl5VRCNJKojDdRWsPXoORrPemq8faryu2JeU1fW2vvKgpwN/tSRV+ppn5uG1T2\nC+b2QG9KuZl/5jKsCmQx8Y9UcUv0dUe2KqtwIDbzlzOF1Cy65l61n6iVPQDKK0pf\nJj94DBlW+qpBTJyw9CnnRflP1db22hUvTyE0p3KzcMXeMvsCWM4GH7u9Am6+MA/e\n8yha/DgEXa7nyRiJgTbt/T8QOXa3asa+Ek7jh5LamdoSXg6eEvBtHXirxRZbIvqV\nL4hjCfk+I/hhe94oRREG09zXsSuR5MCk215uQOU9MYMudPoOQTkB0O8J1mQdhCE4\nQwIDAQAB\n-----END PUBLIC KEY-----\n",
 "rsaPkcs1": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA4b7MBOap6DJNpx2/0v4HzQGl5VRCNJKojDdRWsPXoORrPemq\n8faryu2JeU1fW2vvKgpwN/tSRV+ppn5uG1T2C+b2QG9KuZl/5jKsCmQx8Y9UcUv0\ndUe2KqtwIDbzlzOF1Cy65l61n6iVPQDKK0pfJj94DBlW+qpBTJyw9CnnRflP1db2\n2hUvTyE0p3KzcMXeMvsCWM4GH7u9Am6+MA/e8yha/DgEXa7nyRiJgTbt/T8QOXa3\nasa+Ek7jh5LamdoSXg6eEvBtHXirxRZbIvqVL4hjCfk+I/hhe94oRREG09zXsSuR\n5MCk215uQOU9MYMudPoOQTkB0O8J1mQdhCE4QwIDAQABAoIBAG+Bw10YYwzi7CCE\nPWCHQmstSTjCKgG1/7NjD7h5zGUY7zAh3+KtKaaPNrzITzXlVrm5djzw026ZFj+7\na7/sc6zlZPXnA04yWE7o8LohS9o6JkfgcNwNlBn3nOcMvb4OISjw/1ETrzsyFqWP\nYk2H6wAFkdLIIYKn3qFtNKsml6qj0f+jPYwg/v2wv50H7vYKi1AEGYbpAyyJKzm3\ncs7nZuEKrBCWYJRDGN5PFrEozaUjqxW0QNmzDIDBIXWpafcI+n0/q5w06lgHuB3k\nxoFz2ftcPFu5vCIUJUQQq5LpEaLEPvVgHPpHYo9DJKcyrcsuc5qlwvO9BmUrhm+U\nuCFSZIECgYEA+JMzG+9t+X953uEfv6vuMNtftynystYc1bTiUXHhv4ptuix5H0la\n7xojysP0T+JqyL2V3f0qcWsmerxNFlQK3y5XDMojlWmh3Fj80tSA+c8hV1FPYij2\nhATGQxc/IiGbFatBHmxOwLgqUUJmbijSNPEpBxm6/cY1wWHgkHeR/1MCgYEA6H0G\nAC82OgdUGajId1fzyZnpml3PgpDKZljR8sgokqxxAtiFKB5z8VVnyKNjln9o0pd/\nn4aRt4IimmcqUBVztRUg/biFbanj56PMD9VOBarQ04rwNembegL80iPBeMzIDg3k\n/d/ZEarEGqKDk826EA9eCC+vaJVibIXi/OJ39VECgYBlDtM0hD7dtGnDpxrVPfz0\nd/uN58v30PygFY39NqNkz86UZghII/aIRsROZyQoZhCr1Afd3FMpETrvoyZj8X8K\nBTj2xid5UxyvDK6cuDBHX2JasX/olGbEfXxtQkI0ih0Wzi0HRVkvGLB7oNcr6gSr\n6W+Yp2lSSwcHu9ckZLhCaQKBgQDWBTn/83ZdByARmwIoc0wWm9yj4ZZE4NuiSkPD\n1yUamSpT71TtcNNVKEUpO9hS1CmALD0tcukz4NXQBAa8wHLLEY9UYohaQtpuBKi3\nLqrrpqslArNNPieFs7hgDtBtTz8fSQUz/NzMWcK7rj2oU+vkGvF6YcN9aH+53arv\nF+BMcQKBgBoIKfW1c1I2ZxUupCBhCyg9UIr8bRDbgM7HBaf0KEQN1/15dc4J/hFl\nWY112qEmo1UDEeJul2i7Rln04vhvUN6KDyhgGhHLW3Sp3R2eVHo1CchxLCL8HuXY\nFRdbskcrqs+DvUbFufhrUKPMJ75H/nT3xWZf0ZID5mk3YCiJ5/bW\n-----END RSA PRIVATE KEY-----\n",
 "ecPriv": "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIFdbQ3v1DPbEE5ZjTjl0eRS0PF9DgGwEHkeG8OIbKG56oAoGCCqGSM49\nAwEHoUQDQgAEa6T0XrQmSBQLsHv/NN1xKWQLLsjxNHPJW54JKwGeI4xfNwLaTHYl\n0WxIp97cZKQFi5p1ttI3xnof2F9ZCAh1iw==\n-----END EC PRIVATE KEY-----\n",
 "ecPub": "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEa6T0XrQmSBQLsHv/NN1xKWQLLsjx\nNHPJW54JKwGeI4xfNwLaTHYl0WxIp97cZKQFi5p1ttI3xnof2F9ZCAh1iw==\n-----END PUBLIC KEY-----\n",
 "edPriv": "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIGGuPMySbTLajrVzWJ8lbWSukLWm83YaCeRE24PEsY2j\n-----END PRIVATE KEY-----\n",
 "edPub": "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAfH9l5YQTuSZHishaazY7qsonwQYVl2B2+X/Y/W9S3DE=\n-----END PUBLIC KEY-----\n",
 "rsaSig": "EUi4rlg1LMWylNNgfFS2MNAld2dImxPmtDirqXIPqN446mJNfK4P2ZWCHolVWo9wWVUyTG7U9HewdsLgB3hovUh6PEPvAyOyY97WCYiZK1U8NMcSTDmhUCu+lRlsiTfPB62LiTYohM48Z+xoQMnNbyNwTaPTbBbZRq3EpJ1KvQhqj3Mp6p4IOQ0QGUipL6vyH2acMr1NTWnwifgqh3l+/J8JrGkrlCprtrWeutXhwZiup8HoYhcLc2frnGyH75a+dWvPudL5f9bU6ER9NTFLmFJx/f147p/MVxBaqcCnKQMBtTW8LucX8QFgnY+pScDNc+a7r0zQg7lszSCiXEH6GA==",
 "ecSig": "MEUCIH1xFGzl4hz16RpgBVV7CS4Lb9UEahoQkFtvHEzU13yuAiEAg8fC1Mr9hu28dP4BanQmdbQPnSFJfIqnYvYhsjc8E30=",
 "ecSigP1363": "g/VFmqp6biY+stL3OggiAGfG23yUWjmnmjybEKhMQJW0cOcjDdOyF88mAvCtllyNG9Q6IVlP3pEpLbRRYV0HVA==",
 "edSig": "R6FT2DPRT35xMATCcuMnod17JLzMc3XOYh1U7MTFeGFelWxOcnq0j1oLiwGmXqeExA2KQlpC6xQJXKdPH8DJAg==",
 "pssSig": "ILJTHGbTHsMy0QyeKftXYGgo9Iqzoon5WQFEfs1Rmz4IU5hmUL81FJVwSrGvRozhb0IzuYZSu4vqdz2zaalVgsgBTjkkKryJ4MYTaD9LPEzLm7qpwJm1XRkxHfibbWFRhec/gcEk8EhZbSsqKozOERmDtlxveVXwJX+VQaLsf2KLdBMGEgAbZ6kXvlvM2agIfB0mmd62z494PL2hj+etymEVfO9F88pfaNeHF//FBpap5dQceZelzF4GE+HQrO6BzuButUDBSWLtCx0vx8H5y/mHHKmeEMTu9EDBVO4/kdC0+5+0N/ulXSJ0PTg1zIryJoCSH811+LG40UGm/md/jQ==",
 "jwtRS": "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ4In0.Zohq__GpikKs3Def5HTIePPS6iBeza7urydwNVEMnK0-y2mcLQxsLzBC5h2qF3A_p1m9TgMQAMoNhc00IgaqzuuH58yrgaQyvZzMABNQXfX-i_dMl8TNdu4uz5y5dOcLyyUZQaFTLYtwBgtL3B_Wjt9hrqUSkc5SnHrXY3JEWa8dzkq9PdI4PaGYoEwbRVG7wPtubKe2avkxnmK9Rmr57BUO2j9awoti2HOdgBs8e4r694_22XnO2Hg6vpUN2p2oTGaShFeEAmenGsXfrbOhQfZcTgi1L6NGsY-C2lwMt5N2Dn57R-4gas8h2XtbX3cyhhVmFaqL46TcBtDJ15bFYg",
 "jwtES": "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ4In0.nYyX-l-C38acZ_1N5SosC2CLS5_y9GfD9_BXau-_2v9csj4Zur7nRHJvZcstVSLi8GkBe7mF-FJbLnTBVzZSkQ"
};

const err = (f) => {
  try { const r = f(); return r === undefined ? "no error" : r; } catch (e) { return { name: e.name, code: e.code ?? null }; }
};
const msg = Buffer.from("message");

const routes = {
  "/keys": () => {
    const rsaPriv = crypto.createPrivateKey(K.rsaPriv);
    const rsaPub = crypto.createPublicKey(K.rsaPriv);
    const ecPub = crypto.createPublicKey(K.ecPub);
    const edPriv = crypto.createPrivateKey(K.edPriv);
    const secret = crypto.createSecretKey(Buffer.from("0123456789abcdef"));
    return {
      rsa: [rsaPriv.type, rsaPriv.asymmetricKeyType, rsaPriv.asymmetricKeyDetails.modulusLength, String(rsaPriv.asymmetricKeyDetails.publicExponent), rsaPub.type, rsaPriv.symmetricKeySize ?? null],
      ec: [ecPub.type, ecPub.asymmetricKeyType, ecPub.asymmetricKeyDetails.namedCurve],
      ed: [edPriv.type, edPriv.asymmetricKeyType],
      secret: [secret.type, secret.symmetricKeySize, secret.asymmetricKeyType ?? null, secret.export().toString()],
      exportSpki: rsaPub.export({ type: "spki", format: "pem" }) === K.rsaPub,
      exportPkcs1: crypto.createPrivateKey(K.rsaPkcs1).export({ type: "pkcs1", format: "pem" }) === K.rsaPkcs1,
      derRoundTrip: crypto.createPublicKey({ key: rsaPub.export({ type: "spki", format: "der" }), format: "der", type: "spki" }).equals(rsaPub),
      equals: rsaPub.equals(crypto.createPublicKey(K.rsaPub)),
      isKeyObject: rsaPriv instanceof crypto.KeyObject,
      errors: {
        privateFromPublic: err(() => crypto.createPrivateKey(K.rsaPub)).name,
        garbage: err(() => crypto.createPublicKey("not a key")).name,
      },
    };
  },
  "/sign": () => ({
    rsaSameAsNode: crypto.createSign("RSA-SHA256").update("message").sign(K.rsaPriv, "base64") === K.rsaSig,
    rsaChunked: crypto.createSign("sha256").update("mess").update("age").sign(crypto.createPrivateKey(K.rsaPkcs1), "base64") === K.rsaSig,
    rsaVerify: [crypto.createVerify("RSA-SHA256").update("message").verify(K.rsaPub, K.rsaSig, "base64"),
      crypto.createVerify("RSA-SHA256").update("other").verify(K.rsaPub, K.rsaSig, "base64")],
    ecVerify: [crypto.verify("sha256", msg, K.ecPub, Buffer.from(K.ecSig, "base64")),
      crypto.verify("sha256", msg, { key: K.ecPub, dsaEncoding: "ieee-p1363" }, Buffer.from(K.ecSigP1363, "base64")),
      crypto.verify("sha256", msg, K.ecPub, crypto.sign("sha256", msg, K.ecPriv))],
    edSameAsNode: crypto.sign(null, msg, K.edPriv).toString("base64") === K.edSig,
    edVerify: crypto.verify(null, msg, K.edPub, Buffer.from(K.edSig, "base64")),
    pssVerify: crypto.verify("sha256", msg, { key: K.rsaPub, padding: crypto.constants.RSA_PKCS1_PSS_PADDING }, Buffer.from(K.pssSig, "base64")),
    pssOwn: crypto.verify("sha256", msg, { key: K.rsaPub, padding: crypto.constants.RSA_PKCS1_PSS_PADDING },
      crypto.sign("sha256", msg, { key: K.rsaPriv, padding: crypto.constants.RSA_PKCS1_PSS_PADDING })),
    generated: (() => {
      const p = crypto.generateKeyPairSync("ec", { namedCurve: "prime256v1" });
      const e = crypto.generateKeyPairSync("ed25519");
      return [p.publicKey.type, p.privateKey.asymmetricKeyDetails.namedCurve,
        crypto.verify("sha256", msg, p.publicKey, crypto.sign("sha256", msg, p.privateKey)),
        crypto.verify(null, msg, e.publicKey, crypto.sign(null, msg, e.privateKey))];
    })(),
    constants: [crypto.constants.RSA_PKCS1_PSS_PADDING, crypto.constants.RSA_PSS_SALTLEN_DIGEST],
  }),
};

export default {
  async fetch(request) {
    const route = routes[new URL(request.url).pathname];
    if (!route) return new Response("not found", { status: 404 });
    try {
      return Response.json(await route());
    } catch (e) {
      return Response.json({ error: e.name, message: e.message, stack: e.stack });
    }
  },
};
