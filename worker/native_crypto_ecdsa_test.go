package worker

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"math/big"
	"testing"
	"testing/cryptotest"
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

// TestP256SignEdgeDigests: digests whose integer is 0, 1, n-1, n, n+1 and
// 2²⁵⁶-1 (bits2int reduces the last three mod n), and digests shorter
// than 32 bytes, sign to signatures crypto/ecdsa verifies.
func TestP256SignEdgeDigests(t *testing.T) {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer := (&asymKey{kind: "EC", pub: &priv.PublicKey, priv: priv}).p256SignerOf(priv)
	n := elliptic.P256().Params().N
	num := func(v *big.Int) []byte { return v.FillBytes(make([]byte, 32)) }
	ones := make([]byte, 32)
	for i := range ones {
		ones[i] = 0xff
	}
	digests := map[string][]byte{
		"zero":    make([]byte, 32),
		"one":     num(big.NewInt(1)),
		"n-1":     num(new(big.Int).Sub(n, big.NewInt(1))),
		"n":       num(n),
		"n+1":     num(new(big.Int).Add(n, big.NewInt(1))),
		"2^256-1": ones,
		"empty":   {},
		"1 byte":  {0x80},
		"20 ff":   ones[:20],
		"64 ff":   append(append([]byte(nil), ones...), ones...),
	}
	for name, d := range digests {
		for range 20 {
			sig, err := signer.sign(d)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
			if r.Sign() == 0 || s.Sign() == 0 || r.Cmp(n) >= 0 || s.Cmp(n) >= 0 {
				t.Fatalf("%s: r or s out of [1, n-1]", name)
			}
			if !ecdsa.Verify(&priv.PublicKey, d, r, s) {
				t.Fatalf("%s: signature does not verify", name)
			}
		}
	}
}

// TestP256SignHedged replays one random stream (as a broken random source
// would) before every signature: the nonce then still differs between
// messages and between keys, since the key and the digest are hashed into
// it, and for one key and message it is the same, as a deterministic
// (RFC 6979) nonce would be. Either way no nonce serves two messages.
func TestP256SignHedged(t *testing.T) {
	key := func() *p256Signer {
		priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		return (&asymKey{kind: "EC", pub: &priv.PublicKey, priv: priv}).p256SignerOf(priv)
	}
	a, b := key(), key()
	sign := func(s *p256Signer, msg string) []byte {
		cryptotest.SetGlobalRandom(t, 42)
		sig, err := s.sign(digestOf(crypto.SHA256, []byte(msg)))
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
	seen := map[string]string{}
	for i := range 200 {
		msg := fmt.Sprintf("message %d", i)
		for name, s := range map[string]*p256Signer{"a": a, "b": b} {
			r := string(sign(s, msg)[:32])
			if prev, dup := seen[r]; dup {
				t.Fatalf("key %s, %q: the nonce of %s again", name, msg, prev)
			}
			seen[r] = name + " " + msg
		}
	}
	if !bytes.Equal(sign(a, "message 7"), sign(a, "message 7")) {
		t.Fatal("with the same random stream, one key and message gave two nonces")
	}
}
