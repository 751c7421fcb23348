package worker_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"testing"

	"github.com/celldgo/celld/worker"
)

// ecdsaRoundTrip signs every message under every hash with WebCrypto and
// verifies, in WebCrypto, its own signatures, each of them with one bit
// flipped, and the signatures crypto/ecdsa made (goSigs).
const ecdsaRoundTrip = `
const S = crypto.subtle;
const hex = (b) => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, "0")).join("");
const unhex = (s) => new Uint8Array((s.match(/../g) ?? []).map((h) => parseInt(h, 16)));
const alg = { name: "ECDSA", namedCurve: "P-256" };
module.exports.default = {
  async fetch(request) {
    const { jwk, messages, hashes, goSigs } = await request.json();
    const priv = await S.importKey("jwk", jwk, alg, false, ["sign"]);
    const pub = await S.importKey("jwk", { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y }, alg, false, ["verify"]);
    const out = { sigs: [], self: [], flipped: [], go: [] };
    for (const m of messages) {
      for (const hash of hashes) {
        const data = unhex(m);
        const sig = await S.sign({ name: "ECDSA", hash }, priv, data);
        out.sigs.push(hex(sig));
        out.self.push(await S.verify({ name: "ECDSA", hash }, pub, sig, data));
        const bad = new Uint8Array(sig.slice(0));
        bad[(m.length * 7) % 64] ^= 1 << (m.length % 8);
        out.flipped.push(await S.verify({ name: "ECDSA", hash }, pub, bad, data));
      }
    }
    for (const g of goSigs) out.go.push(await S.verify({ name: "ECDSA", hash: g.hash }, pub, unhex(g.sig), unhex(g.msg)));
    return Response.json(out);
  },
};
`

// TestWebCryptoECDSAP256AgainstCryptoECDSA: P-256 signatures made by
// crypto.subtle.sign verify with crypto/ecdsa (and, in the worker, with
// crypto.subtle.verify, which rejects them with a bit flipped), their
// nonces never repeat, and crypto/ecdsa's signatures verify in the worker.
func TestWebCryptoECDSAP256AgainstCryptoECDSA(t *testing.T) {
	rt := newRuntime(t, ecdsaRoundTrip, worker.Config{Isolates: 1})
	hashes := map[string]crypto.Hash{"SHA-1": crypto.SHA1, "SHA-256": crypto.SHA256, "SHA-384": crypto.SHA384, "SHA-512": crypto.SHA512}
	hashNames := []string{"SHA-1", "SHA-256", "SHA-384", "SHA-512"}
	nonces := map[string]bool{}
	for round := range 4 {
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		b64 := base64.RawURLEncoding.EncodeToString
		d, _ := priv.Bytes()
		pubBytes, _ := priv.PublicKey.Bytes()
		jwk := map[string]any{"kty": "EC", "crv": "P-256", "d": b64(d), "x": b64(pubBytes[1:33]), "y": b64(pubBytes[33:])}
		var messages []string
		for _, n := range []int{0, 1, 31, 32, 33, 64, 1000 + round} {
			m := make([]byte, n)
			_, _ = rand.Read(m)
			messages = append(messages, hex.EncodeToString(m))
		}
		messages = append(messages, messages[2]) // one message twice: a new nonce each time
		type goSig struct {
			Hash string `json:"hash"`
			Msg  string `json:"msg"`
			Sig  string `json:"sig"`
		}
		var goSigs []goSig
		for i, m := range messages {
			name := hashNames[i%len(hashNames)]
			msg, _ := hex.DecodeString(m)
			r, s, err := ecdsa.Sign(rand.Reader, priv, digest(hashes[name], msg))
			if err != nil {
				t.Fatal(err)
			}
			goSigs = append(goSigs, goSig{name, m, hex.EncodeToString(append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...))})
		}
		body, _ := json.Marshal(map[string]any{"jwk": jwk, "messages": messages, "hashes": hashNames, "goSigs": goSigs})
		resp := fetch(t, rt, "POST", "/", body)
		if resp.Status != 200 {
			t.Fatalf("status %d: %s", resp.Status, resp.Body)
		}
		var out struct {
			Sigs              []string
			Self, Flipped, Go []bool
		}
		if err := json.Unmarshal(resp.Body, &out); err != nil {
			t.Fatalf("%v: %s", err, resp.Body)
		}
		if len(out.Sigs) != len(messages)*len(hashNames) || len(out.Go) != len(goSigs) {
			t.Fatalf("%d signatures and %d verifications back", len(out.Sigs), len(out.Go))
		}
		for i, sigHex := range out.Sigs {
			name := hashNames[i%len(hashNames)]
			msg, _ := hex.DecodeString(messages[i/len(hashNames)])
			sig, _ := hex.DecodeString(sigHex)
			if len(sig) != 64 {
				t.Fatalf("signature of %d bytes", len(sig))
			}
			r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
			if !ecdsa.Verify(&priv.PublicKey, digest(hashes[name], msg), r, s) {
				t.Fatalf("round %d, message %d, %s: crypto/ecdsa rejects WebCrypto's signature", round, i/len(hashNames), name)
			}
			if !out.Self[i] || out.Flipped[i] {
				t.Fatalf("round %d, signature %d: verify of itself %v, with a bit flipped %v", round, i, out.Self[i], out.Flipped[i])
			}
			if nonces[sigHex[:64]] {
				t.Fatalf("round %d, signature %d: an r (a nonce) repeated", round, i)
			}
			nonces[sigHex[:64]] = true
		}
		for i, ok := range out.Go {
			if !ok {
				t.Fatalf("round %d: WebCrypto rejects crypto/ecdsa's signature %d (%s)", round, i, goSigs[i].Hash)
			}
		}
	}
}

func digest(h crypto.Hash, msg []byte) []byte {
	d := h.New()
	d.Write(msg)
	return d.Sum(nil)
}
