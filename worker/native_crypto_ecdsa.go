package worker

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha512"
	"errors"
	"math/big"
	"sync"
	"sync/atomic"

	"filippo.io/bigmod"
)

// ECDSA P-256 signing, the ES256 of every JWT library. crypto/ecdsa spends
// about half of a signature outside the curve arithmetic: it instantiates
// an HMAC-SHA-512 DRBG per signature to hedge its nonce, and converts the
// key and the result through ASN.1. Here a signature costs one constant-time
// scalar multiplication (crypto/ecdh's, which computes k·G for a secret
// k) and a few constant-time multiplications modulo the group order n
// (filippo.io/bigmod):
//
//   - the nonce k is half of SHA-512(label ‖ 32 fresh random bytes ‖ d ‖
//     digest), taken if below n (rejection sampling, so uniform). Fresh
//     randomness makes it new on every call; the key and the digest hedge
//     it: were the random source ever to repeat, k would still be secret
//     (it depends on d) and differ between messages, as RFC 6979's
//     deterministic nonces do, so no two messages share a nonce;
//   - k⁻¹ is computed blinded: t = k·b for a fresh random b, t⁻¹ with
//     math/big's (variable-time) inversion, then k⁻¹ = t⁻¹·b. t is uniform
//     and independent of k, so the inversion's timing tells nothing about k;
//   - r = x(k·G) mod n, s = k⁻¹·(e + r·d) mod n, retried in the negligible
//     case that r, s (or k) is zero.
//
// Other curves keep crypto/ecdsa.

// p256Order is n, the order of P-256's base point, as a bigmod modulus.
var p256Order = sync.OnceValue(func() *bigmod.Modulus {
	n, err := bigmod.NewModulus(elliptic.P256().Params().N.Bytes())
	if err != nil {
		panic(err)
	}
	return n
})

// p256Signer is a P-256 private key's cached signing state.
type p256Signer struct {
	d      *bigmod.Nat // the private scalar, reduced mod n
	dBytes []byte      // its 32 bytes, for the nonce's hash
}

type p256SignerCache = atomic.Pointer[p256Signer]

// p256SignerOf returns the key's signer, made on first use; nil if the key
// is not a P-256 key (crypto/ecdsa then signs).
func (k *asymKey) p256SignerOf(priv *ecdsa.PrivateKey) *p256Signer {
	if s := k.ecSigner.Load(); s != nil {
		return s
	}
	if priv == nil || priv.Curve != elliptic.P256() {
		return nil
	}
	raw, err := priv.Bytes()
	if err != nil || len(raw) != 32 {
		return nil
	}
	d, err := bigmod.NewNat().SetBytes(raw, p256Order())
	if err != nil || d.IsZero() == 1 {
		return nil
	}
	k.ecSigner.CompareAndSwap(nil, &p256Signer{d: d, dBytes: raw})
	return k.ecSigner.Load()
}

var errP256Sign = errors.New("ecdsa: signing failed")

// nonceDomain starts every hash randomScalar makes, so that its outputs
// are used for nothing else.
var nonceDomain = []byte("celld ECDSA P-256 scalar\x00")

// randomScalar returns a uniformly distributed nonzero scalar mod n:
// SHA-512 of fresh random bytes and parts, whose two halves are candidates
// taken only if below n (each is rejected with probability about 2⁻³²,
// and a rejected one is thrown away, so the sampling reveals nothing).
func randomScalar(n *bigmod.Modulus, parts ...[]byte) (*bigmod.Nat, error) {
	for range 16 {
		var fresh [32]byte
		if _, err := rand.Read(fresh[:]); err != nil {
			return nil, err
		}
		h := sha512.New()
		h.Write(nonceDomain)
		h.Write(fresh[:])
		for _, p := range parts {
			h.Write(p)
		}
		var sum [64]byte
		h.Sum(sum[:0])
		for _, half := range [][]byte{sum[:32], sum[32:]} {
			if k, err := bigmod.NewNat().SetBytes(half, n); err == nil && k.IsZero() == 0 {
				return k, nil
			}
		}
	}
	return nil, errP256Sign
}

// sign returns r ‖ s (32 bytes each) for digest, truncated or padded to
// 32 bytes as ECDSA's bits2int does.
func (p *p256Signer) sign(digest []byte) ([]byte, error) {
	n := p256Order()
	var e32 [32]byte
	if len(digest) >= 32 {
		copy(e32[:], digest[:32])
	} else {
		copy(e32[32-len(digest):], digest)
	}
	e, err := bigmod.NewNat().SetOverflowingBytes(e32[:], n)
	if err != nil {
		return nil, err
	}
	for range 8 { // each try fails with probability about 2⁻²⁵⁶
		k, err := randomScalar(n, p.dBytes, digest)
		if err != nil {
			return nil, err
		}
		kG, err := ecdh.P256().NewPrivateKey(k.Bytes(n))
		if err != nil {
			continue
		}
		x := kG.PublicKey().Bytes()[1:33] // uncompressed point: 04 ‖ x ‖ y
		r, err := bigmod.NewNat().SetOverflowingBytes(x, n)
		if err != nil || r.IsZero() == 1 {
			continue
		}
		// k⁻¹, blinded by b: t = k·b (k is not needed past this point, so
		// it becomes t in place), k⁻¹ = t⁻¹·b.
		b, err := randomScalar(n)
		if err != nil {
			return nil, err
		}
		t := k.Mul(b, n)
		tInv := new(big.Int).ModInverse(new(big.Int).SetBytes(t.Bytes(n)), elliptic.P256().Params().N)
		if tInv == nil {
			continue
		}
		var tb [32]byte
		kInv, err := bigmod.NewNat().SetBytes(tInv.FillBytes(tb[:]), n)
		if err != nil {
			continue
		}
		kInv.Mul(b, n)
		// s = k⁻¹ (e + r d); r's bytes are kept first, as r becomes s.
		sig := make([]byte, 32, 64)
		copy(sig, r.Bytes(n))
		s := r.Mul(p.d, n).Add(e, n).Mul(kInv, n)
		if s.IsZero() == 1 {
			continue
		}
		return append(sig, s.Bytes(n)...), nil
	}
	return nil, errP256Sign
}
