package worker

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/subtle"
	"sync/atomic"

	"filippo.io/bigmod"
)

// RSA signature verification with per-key state. crypto/rsa rebuilds the
// key's Montgomery modulus (R² mod N, the costliest part of a 2048-bit
// verify after the exponentiation itself) on every call; a CryptoKey
// verifies many times, so it keeps that modulus (filippo.io/bigmod, the
// standard library's constant-time arithmetic made public) and each verify
// pays for s^e mod N alone. The encodings are then checked exactly as
// RFC 8017 (and crypto/rsa) checks them. Keys outside what crypto/rsa
// accepts without question (a modulus under 1024 bits or even, an exponent
// that is even, below 3 or above 2³¹-1) take crypto/rsa's own path, so
// nothing that it refuses is accepted here.

// rsaPublic is a public key's cached verification state.
type rsaPublic struct {
	n    *bigmod.Modulus
	e    uint
	size int // bytes of the modulus
	bits int
}

// rsaPublicOf returns the key's cached state, made on first use; nil if
// the key should be verified by crypto/rsa instead.
func (k *asymKey) rsaPublicOf(pub *rsa.PublicKey) *rsaPublic {
	if p := k.rsaPub.Load(); p != nil {
		return p
	}
	p := newRSAPublic(pub)
	if p == nil {
		return nil
	}
	k.rsaPub.CompareAndSwap(nil, p)
	return k.rsaPub.Load()
}

func newRSAPublic(pub *rsa.PublicKey) *rsaPublic {
	if pub == nil || pub.N == nil || pub.N.Sign() <= 0 || pub.N.Bit(0) == 0 || pub.N.BitLen() < 1024 {
		return nil
	}
	if pub.E < 3 || pub.E&1 == 0 || pub.E > 1<<31-1 {
		return nil
	}
	n, err := bigmod.NewModulus(pub.N.Bytes())
	if err != nil {
		return nil
	}
	return &rsaPublic{n: n, e: uint(pub.E), size: n.Size(), bits: n.BitLen()}
}

// encrypt is RSAEP: sig^e mod N as size bytes; ok is false for a
// signature that is not exactly size bytes or is not below N (RFC 8017
// section 8.2.2 step 1 and 5.2.2 step 1).
func (p *rsaPublic) encrypt(sig []byte) (em []byte, ok bool) {
	if len(sig) != p.size {
		return nil, false
	}
	s, err := bigmod.NewNat().SetBytes(sig, p.n)
	if err != nil {
		return nil, false
	}
	return bigmod.NewNat().ExpShortVarTime(s, p.e, p.n).Bytes(p.n), true
}

// The DER DigestInfo prefixes of RFC 8017 section 9.2, note 1.
var digestInfoPrefix = map[crypto.Hash][]byte{
	crypto.SHA1:   {0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14},
	crypto.SHA256: {0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20},
	crypto.SHA384: {0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02, 0x05, 0x00, 0x04, 0x30},
	crypto.SHA512: {0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03, 0x05, 0x00, 0x04, 0x40},
}

// verifyPKCS1v15 is RSASSA-PKCS1-v1_5-VERIFY (RFC 8017 section 8.2.2)
// of hashed, the digest of the message under h.
func (k *asymKey) verifyPKCS1v15(pub *rsa.PublicKey, h crypto.Hash, hashed, sig []byte) bool {
	prefix, known := digestInfoPrefix[h]
	p := k.rsaPublicOf(pub)
	if !known || p == nil {
		return rsa.VerifyPKCS1v15(pub, h, hashed, sig) == nil
	}
	if len(hashed) != h.Size() {
		return false
	}
	tLen := len(prefix) + len(hashed)
	if p.size < tLen+11 {
		return false
	}
	em, ok := p.encrypt(sig)
	if !ok {
		return false
	}
	// EM = 0x00 || 0x01 || PS (0xff, at least 8) || 0x00 || T
	ps := em[2 : p.size-tLen-1]
	good := em[0] == 0 && em[1] == 1 && em[p.size-tLen-1] == 0 &&
		bytes.Equal(em[p.size-tLen:p.size-len(hashed)], prefix) &&
		subtle.ConstantTimeCompare(em[p.size-len(hashed):], hashed) == 1
	for _, b := range ps {
		good = good && b == 0xff
	}
	return good
}

// verifyPSS is RSASSA-PSS-VERIFY (RFC 8017 section 8.1.2) with MGF1 of h
// and a salt of exactly saltLen bytes (0 allowed, as WebCrypto allows it).
func (k *asymKey) verifyPSS(pub *rsa.PublicKey, h crypto.Hash, digest, sig []byte, saltLen int) bool {
	p := k.rsaPublicOf(pub)
	if p == nil || !h.Available() {
		return verifyPSS(pub, h, digest, sig, saltLen)
	}
	hLen := h.Size()
	if len(digest) != hLen || saltLen < 0 {
		return false
	}
	em, ok := p.encrypt(sig)
	if !ok {
		return false
	}
	// EMSA-PSS-VERIFY (section 9.1.2) with emBits = modBits - 1: when
	// modBits is 8k+1, EM is one byte shorter than the modulus and the
	// leading byte of the RSAEP output must be zero.
	emBits := p.bits - 1
	emLen := (emBits + 7) / 8
	if emLen < p.size {
		if em[0] != 0 {
			return false
		}
		em = em[1:]
	}
	if emLen < hLen+saltLen+2 || em[emLen-1] != 0xbc {
		return false
	}
	dbLen := emLen - hLen - 1
	hh := em[dbLen : emLen-1]
	topMask := byte(0xff >> (8*emLen - emBits))
	if em[0]&^topMask != 0 {
		return false
	}
	db := make([]byte, dbLen)
	copy(db, em[:dbLen])
	mgf1XOR(db, h, hh)
	db[0] &= topMask
	psLen := emLen - hLen - saltLen - 2
	for _, b := range db[:psLen] {
		if b != 0 {
			return false
		}
	}
	if db[psLen] != 1 {
		return false
	}
	m := h.New()
	var zeros [8]byte
	m.Write(zeros[:])
	m.Write(digest)
	m.Write(db[len(db)-saltLen:])
	return subtle.ConstantTimeCompare(m.Sum(nil), hh) == 1
}

// rsaPubCache is the field of asymKey that holds its rsaPublic.
type rsaPubCache = atomic.Pointer[rsaPublic]
