package worker

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"math/big"
	"testing"
)

// TestP256SignVerifies: signatures from the P-256 signer verify with
// crypto/ecdsa for many keys, messages and every hash WebCrypto allows
// (longer digests truncated, shorter ones padded, as bits2int does), and
// fail for another message or key.
func TestP256SignVerifies(t *testing.T) {
	for i := range 40 {
		priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		key := &asymKey{kind: "EC", pub: &priv.PublicKey, priv: priv}
		signer := key.p256SignerOf(priv)
		if signer == nil {
			t.Fatal("no signer for a P-256 key")
		}
		other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		for _, h := range []crypto.Hash{crypto.SHA1, crypto.SHA256, crypto.SHA384, crypto.SHA512} {
			msg := make([]byte, i*7)
			_, _ = rand.Read(msg)
			digest := digestOf(h, msg)
			sig, err := signer.sign(digest)
			if err != nil {
				t.Fatal(err)
			}
			if len(sig) != 64 {
				t.Fatalf("signature of %d bytes", len(sig))
			}
			r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
			if !ecdsa.Verify(&priv.PublicKey, digest, r, s) {
				t.Fatalf("key %d, %v: signature does not verify", i, h)
			}
			wrong := append([]byte(nil), digest...)
			wrong[0] ^= 1
			if ecdsa.Verify(&priv.PublicKey, wrong, r, s) || ecdsa.Verify(&other.PublicKey, digest, r, s) {
				t.Fatalf("key %d, %v: verified for another message or key", i, h)
			}
		}
	}
}

// TestP256SignNoncesDiffer: signing one message many times gives a new r
// (a new nonce) every time.
func TestP256SignNoncesDiffer(t *testing.T) {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer := (&asymKey{kind: "EC", pub: &priv.PublicKey, priv: priv}).p256SignerOf(priv)
	digest := digestOf(crypto.SHA256, []byte("same message"))
	seen := map[string]bool{}
	for range 500 {
		sig, err := signer.sign(digest)
		if err != nil {
			t.Fatal(err)
		}
		if seen[string(sig[:32])] {
			t.Fatal("an r value (a nonce) repeated")
		}
		seen[string(sig[:32])] = true
	}
}

// TestP256SignerOnlyForP256: other curves are left to crypto/ecdsa.
func TestP256SignerOnlyForP256(t *testing.T) {
	for _, c := range []elliptic.Curve{elliptic.P384(), elliptic.P521()} {
		priv, _ := ecdsa.GenerateKey(c, rand.Reader)
		if (&asymKey{kind: "EC", pub: &priv.PublicKey, priv: priv}).p256SignerOf(priv) != nil {
			t.Fatalf("%s: a P-256 signer", c.Params().Name)
		}
	}
}
