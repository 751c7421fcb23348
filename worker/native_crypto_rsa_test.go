package worker

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"math/big"
	mrand "math/rand/v2"
	"testing"
)

// rsaTestKeys are keys of the sizes and exponents the cached verifier must
// handle: 1024 and 2048 bits, a modulus of 8k+1 bits (whose PSS encoding
// is a byte shorter than the modulus), and e = 3.
func rsaTestKeys(t *testing.T) []*rsa.PrivateKey {
	t.Helper()
	var keys []*rsa.PrivateKey
	for _, spec := range []struct{ bits, e int }{{1024, 65537}, {2048, 65537}, {1033, 65537}, {1024, 3}} {
		k, err := generateRSA(spec.bits, spec.e)
		if err != nil {
			t.Fatalf("generate %d-bit key: %v", spec.bits, err)
		}
		keys = append(keys, k)
	}
	return keys
}

// rawSign is the RSA private operation on an arbitrary encoded message,
// so that tests can forge signatures over malformed encodings.
func rawSign(k *rsa.PrivateKey, em []byte) []byte {
	c := new(big.Int).Exp(new(big.Int).SetBytes(em), k.D, k.N)
	return padTo(c.Bytes(), (k.N.BitLen()+7)/8)
}

// mutations of a signature: bit flips, wrong lengths, values at or above N.
func sigMutations(r *mrand.Rand, k *rsa.PrivateKey, sig []byte) [][]byte {
	size := len(sig)
	var out [][]byte
	for range 6 {
		m := append([]byte(nil), sig...)
		m[r.IntN(size)] ^= 1 << r.IntN(8)
		out = append(out, m)
	}
	n := padTo(k.N.Bytes(), size)
	n1 := padTo(new(big.Int).Add(k.N, big.NewInt(1)).Bytes(), size)
	zero := make([]byte, size)
	one := padTo([]byte{1}, size)
	return append(out, sig[1:], append([]byte{0}, sig...), append(append([]byte(nil), sig...), 0), nil, n, n1, zero, one)
}

func TestRSAVerifyPKCS1v15MatchesCryptoRSA(t *testing.T) {
	r := mrand.New(mrand.NewPCG(3, 4))
	for _, priv := range rsaTestKeys(t) {
		pub := &priv.PublicKey
		key := &asymKey{kind: "RSA", pub: pub}
		if pub.N.BitLen() >= 1024 && key.rsaPublicOf(pub) == nil {
			t.Fatalf("%d-bit key, e=%d: no cached verifier", pub.N.BitLen(), pub.E)
		}
		size := (pub.N.BitLen() + 7) / 8
		for _, h := range []crypto.Hash{crypto.SHA1, crypto.SHA256, crypto.SHA384, crypto.SHA512} {
			msg := make([]byte, r.IntN(300))
			_, _ = rand.Read(msg)
			hashed := digestOf(h, msg)
			sig, err := rsa.SignPKCS1v15(nil, priv, h, hashed)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, h crypto.Hash, hashed, sig []byte) bool {
				t.Helper()
				want := rsa.VerifyPKCS1v15(pub, h, hashed, sig) == nil
				if got := key.verifyPKCS1v15(pub, h, hashed, sig); got != want {
					t.Fatalf("%d bits, e=%d, %v, %s: got %v, crypto/rsa says %v", pub.N.BitLen(), pub.E, h, what, got, want)
				}
				return want
			}
			if !check("valid", h, hashed, sig) {
				t.Fatalf("%v: a valid signature did not verify", h)
			}
			for i, m := range sigMutations(r, priv, sig) {
				if check("mutation", h, hashed, m) {
					t.Fatalf("%v: mutation %d verified", h, i)
				}
			}
			other := append([]byte(nil), hashed...)
			other[0] ^= 0x80
			check("other digest", h, other, sig)
			check("short digest", h, hashed[1:], sig)
			check("other hash", crypto.SHA256, digestOf(crypto.SHA256, msg), sig)
			// Forged encodings: each breaks one rule of EMSA-PKCS1-v1_5.
			prefix := digestInfoPrefix[h]
			good := make([]byte, size)
			good[1] = 1
			tLen := len(prefix) + len(hashed)
			for i := 2; i < size-tLen-1; i++ {
				good[i] = 0xff
			}
			copy(good[size-tLen:], prefix)
			copy(good[size-len(hashed):], hashed)
			if !check("forged valid", h, hashed, rawSign(priv, good)) {
				t.Fatalf("%v: a correctly encoded message did not verify", h)
			}
			for _, bad := range []func(em []byte){
				func(em []byte) { em[1] = 2 },
				func(em []byte) { em[0] = 1 },
				func(em []byte) { em[2+r.IntN(size-tLen-3)] = 0xfe },
				func(em []byte) { em[size-tLen-1] = 0xff },
				func(em []byte) { em[size-tLen+r.IntN(len(prefix))] ^= 4 },
				func(em []byte) { em[size-1] ^= 1 },
				// a shorter padding with a longer prefix: the digest moved
				func(em []byte) { copy(em[size-tLen-2:], em[size-tLen-1:]); em[size-1] = 0 },
			} {
				em := append([]byte(nil), good...)
				bad(em)
				if check("forged", h, hashed, rawSign(priv, em)) {
					t.Fatalf("%v: a malformed encoding verified", h)
				}
			}
		}
	}
}

func TestRSAVerifyPSSMatchesCryptoRSA(t *testing.T) {
	r := mrand.New(mrand.NewPCG(5, 6))
	for _, priv := range rsaTestKeys(t) {
		pub := &priv.PublicKey
		key := &asymKey{kind: "RSA", pub: pub}
		for _, h := range []crypto.Hash{crypto.SHA1, crypto.SHA256, crypto.SHA384, crypto.SHA512} {
			emLen := (pub.N.BitLen() - 1 + 7) / 8
			maxSalt := emLen - h.Size() - 2
			for _, salt := range []int{0, 1, 20, h.Size(), maxSalt} {
				if salt > maxSalt {
					continue
				}
				msg := make([]byte, r.IntN(300))
				_, _ = rand.Read(msg)
				digest := digestOf(h, msg)
				sig, err := signPSS(priv, h, digest, salt)
				if err != nil {
					t.Fatalf("%d bits %v salt %d: sign: %v", pub.N.BitLen(), h, salt, err)
				}
				// crypto/rsa reads a salt length of 0 as "any"; for 0 the
				// reference is the hand-written check it replaces.
				ref := func(sig, digest []byte, salt int) bool {
					if salt == 0 {
						return verifyPSS(pub, h, digest, sig, 0)
					}
					return rsa.VerifyPSS(pub, h, digest, sig, &rsa.PSSOptions{SaltLength: salt, Hash: h}) == nil
				}
				check := func(what string, sig, digest []byte, salt int) bool {
					t.Helper()
					want := ref(sig, digest, salt)
					if got := key.verifyPSS(pub, h, digest, sig, salt); got != want {
						t.Fatalf("%d bits, e=%d, %v, salt %d, %s: got %v, reference says %v", pub.N.BitLen(), pub.E, h, salt, what, got, want)
					}
					return want
				}
				if !check("valid", sig, digest, salt) {
					t.Fatalf("%v salt %d: a valid signature did not verify", h, salt)
				}
				for i, m := range sigMutations(r, priv, sig) {
					if check("mutation", m, digest, salt) {
						t.Fatalf("%v salt %d: mutation %d verified", h, salt, i)
					}
				}
				other := append([]byte(nil), digest...)
				other[len(other)-1] ^= 1
				check("other digest", sig, other, salt)
				if salt > 1 {
					if check("shorter salt", sig, digest, salt-1) || check("longer salt", sig, digest, salt+1) {
						t.Fatalf("%v salt %d: verified with another salt length", h, salt)
					}
				}
			}
		}
	}
}

// TestRSAVerifyPSSForged signs malformed EMSA-PSS encodings with the raw
// private operation: each breaks one rule that a random corruption would
// almost never reach.
func TestRSAVerifyPSSForged(t *testing.T) {
	keys := rsaTestKeys(t)
	for _, priv := range []*rsa.PrivateKey{keys[0], keys[2]} { // 1024 bits; 1033 bits, whose EM is a byte shorter
		pub := &priv.PublicKey
		key := &asymKey{kind: "RSA", pub: pub}
		h, salt := crypto.SHA256, 16
		digest := digestOf(h, []byte("message"))
		emBits := pub.N.BitLen() - 1
		emLen := (emBits + 7) / 8
		encode := func(breakDB func(db []byte), breakEM func(em []byte)) []byte {
			saltBytes := make([]byte, salt)
			_, _ = rand.Read(saltBytes)
			m := h.New()
			m.Write(make([]byte, 8))
			m.Write(digest)
			m.Write(saltBytes)
			hh := m.Sum(nil)
			em := make([]byte, emLen)
			db := em[:emLen-len(hh)-1]
			db[len(db)-salt-1] = 1
			copy(db[len(db)-salt:], saltBytes)
			breakDB(db)
			mgf1XOR(db, h, hh)
			db[0] &= 0xff >> (8*emLen - emBits)
			copy(em[len(db):], hh)
			em[emLen-1] = 0xbc
			breakEM(em)
			return rawSign(priv, em)
		}
		keep := func([]byte) {}
		if !key.verifyPSS(pub, h, digest, encode(keep, keep), salt) {
			t.Fatal("a correctly encoded message did not verify")
		}
		forged := map[string][]byte{
			"separator 0":  encode(func(db []byte) { db[len(db)-salt-1] = 0 }, keep),
			"separator 2":  encode(func(db []byte) { db[len(db)-salt-1] = 2 }, keep),
			"nonzero pad":  encode(func(db []byte) { db[3] = 1 }, keep),
			"trailer":      encode(keep, func(em []byte) { em[emLen-1] = 0xbd }),
			"salt changed": encode(keep, func(em []byte) { em[emLen-2-h.Size()] ^= 1 }),
			"hash changed": encode(keep, func(em []byte) { em[emLen-2] ^= 1 }),
		}
		if emBits%8 != 0 { // the bits above emBits must be zero
			forged["top bit"] = encode(keep, func(em []byte) { em[0] |= 0x80 })
		}
		for name, sig := range forged {
			if key.verifyPSS(pub, h, digest, sig, salt) {
				t.Errorf("%s: verified", name)
			}
			if rsa.VerifyPSS(pub, h, digest, sig, &rsa.PSSOptions{SaltLength: salt, Hash: h}) == nil {
				t.Errorf("%s: crypto/rsa verified it (the forgery is not one)", name)
			}
		}
	}
}

// TestRSAVerifyMutatedEncodings re-signs valid encoded messages (EM)
// with one to three random bytes changed, and mutates valid signatures at
// random: for PKCS#1 v1.5 and PSS, the cached verifier accepts exactly
// what crypto/rsa accepts. A change to the signature itself scrambles the
// whole EM; a change to the EM, signed with the raw private operation,
// reaches each field's check on its own.
func TestRSAVerifyMutatedEncodings(t *testing.T) {
	r := mrand.New(mrand.NewPCG(21, 22))
	for _, priv := range rsaTestKeys(t) {
		pub := &priv.PublicKey
		key := &asymKey{kind: "RSA", pub: pub}
		open := func(sig []byte) []byte { // the EM under a signature
			em := new(big.Int).Exp(new(big.Int).SetBytes(sig), big.NewInt(int64(pub.E)), pub.N)
			return padTo(em.Bytes(), len(sig))
		}
		for _, h := range []crypto.Hash{crypto.SHA1, crypto.SHA256, crypto.SHA384, crypto.SHA512} {
			hashed := digestOf(h, []byte{byte(h), 1, 2, 3})
			pkcs, err := rsa.SignPKCS1v15(nil, priv, h, hashed)
			if err != nil {
				t.Fatal(err)
			}
			salt := min(h.Size(), (pub.N.BitLen()-1+7)/8-h.Size()-2)
			pss, err := signPSS(priv, h, hashed, salt)
			if err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				name   string
				sig    []byte
				got    func(sig []byte) bool
				crypto func(sig []byte) bool
			}{
				{"PKCS#1 v1.5", pkcs,
					func(sig []byte) bool { return key.verifyPKCS1v15(pub, h, hashed, sig) },
					func(sig []byte) bool { return rsa.VerifyPKCS1v15(pub, h, hashed, sig) == nil }},
				{"PSS", pss,
					func(sig []byte) bool { return key.verifyPSS(pub, h, hashed, sig, salt) },
					func(sig []byte) bool {
						return rsa.VerifyPSS(pub, h, hashed, sig, &rsa.PSSOptions{SaltLength: salt, Hash: h}) == nil
					}},
			}
			for _, c := range cases {
				em := open(c.sig)
				accepted := 0
				for i := range 60 {
					var sig []byte
					if i%2 == 0 {
						m := append([]byte(nil), em...)
						for k := 1 + r.IntN(3); k > 0; k-- {
							m[r.IntN(len(m))] = byte(r.Uint32())
						}
						if new(big.Int).SetBytes(m).Cmp(pub.N) >= 0 {
							continue
						}
						sig = rawSign(priv, m)
					} else {
						sig = append([]byte(nil), c.sig...)
						sig[r.IntN(len(sig))] ^= byte(1 + r.IntN(255))
					}
					want := c.crypto(sig)
					if got := c.got(sig); got != want {
						t.Fatalf("%d bits, e=%d, %v, %s, mutation %d: got %v, crypto/rsa says %v", pub.N.BitLen(), pub.E, h, c.name, i, got, want)
					}
					if want {
						accepted++
					}
				}
				// A random byte may equal the one it replaces, so a
				// mutation can leave the signature valid, but rarely.
				if accepted > 10 {
					t.Fatalf("%d bits, %v, %s: %d of 60 mutations verified", pub.N.BitLen(), h, c.name, accepted)
				}
				if !c.got(c.sig) {
					t.Fatalf("%d bits, %v, %s: the valid signature did not verify", pub.N.BitLen(), h, c.name)
				}
			}
		}
	}
}
