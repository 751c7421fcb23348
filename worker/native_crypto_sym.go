package worker

import (
	"bytes"
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"math/big"

	"github.com/dop251/goja"
)

// AES-CBC, AES-CTR, AES-KW, PBKDF2, HKDF and the RSA pieces Go's crypto/rsa
// does not offer as WebCrypto needs them (a public exponent of 3, PSS with
// an empty salt).

func registerSymNatives(set func(string, nativeFunc)) {
	// aesCbc(encrypt, key, iv, data)
	set("aesCbc", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		block, err := aes.NewCipher(iso.bytesArg(call.Argument(1)))
		if err != nil {
			return cryptoFail(vm, "OperationError", "invalid AES key length")
		}
		iv, data := iso.bytesArg(call.Argument(2)), iso.bytesArg(call.Argument(3))
		if call.Argument(0).ToBoolean() {
			pad := 16 - len(data)%16
			buf := make([]byte, len(data)+pad)
			copy(buf, data)
			for i := len(data); i < len(buf); i++ {
				buf[i] = byte(pad)
			}
			cipher.NewCBCEncrypter(block, iv).CryptBlocks(buf, buf)
			return vm.ToValue(vm.NewArrayBuffer(buf))
		}
		fail := func() goja.Value {
			expect := len(data) - 16
			if expect < 0 {
				expect = 0
			}
			return cryptoFail(vm, "OperationError", "Decryption failed. This could be due to a ciphertext authentication failure, bad padding, incorrect CryptoKey, or another algorithm-specific reason. Input length was "+itoa(len(data))+", output length expected to be "+itoa(expect&^15)+" for AES-CBC")
		}
		if len(data) == 0 || len(data)%16 != 0 {
			return fail()
		}
		buf := make([]byte, len(data))
		cipher.NewCBCDecrypter(block, iv).CryptBlocks(buf, data)
		pad := int(buf[len(buf)-1])
		if pad == 0 || pad > 16 {
			return fail()
		}
		if subtle.ConstantTimeCompare(buf[len(buf)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) != 1 {
			return fail()
		}
		return vm.ToValue(vm.NewArrayBuffer(buf[:len(buf)-pad]))
	})
	// aesCtr(key, counter, lengthBits, data): only the low lengthBits of
	// the counter block count up (and wrap), as WebCrypto specifies.
	set("aesCtr", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		block, err := aes.NewCipher(iso.bytesArg(call.Argument(0)))
		if err != nil {
			return cryptoFail(vm, "OperationError", "invalid AES key length")
		}
		ctr := new(big.Int).SetBytes(iso.bytesArg(call.Argument(1)))
		bits := uint(call.Argument(2).ToInteger())
		data := iso.bytesArg(call.Argument(3))
		mod := new(big.Int).Lsh(big.NewInt(1), bits)
		low := new(big.Int).Mod(ctr, mod)
		high := new(big.Int).Sub(ctr, low)
		blocks := new(big.Int).SetInt64(int64((len(data) + 15) / 16))
		if blocks.Cmp(mod) > 0 {
			return cryptoFail(vm, "OperationError", "Counter block would repeat.")
		}
		out := make([]byte, len(data))
		if new(big.Int).Add(low, blocks).Cmp(mod) <= 0 {
			cipher.NewCTR(block, padTo(ctr.Bytes(), 16)).XORKeyStream(out, data)
			return vm.ToValue(vm.NewArrayBuffer(out))
		}
		// The counter wraps inside this message: go block by block.
		one := big.NewInt(1)
		var ks [16]byte
		for off := 0; off < len(data); off += 16 {
			cb := padTo(new(big.Int).Add(high, low).Bytes(), 16)
			block.Encrypt(ks[:], cb)
			end := min(off+16, len(data))
			subtle.XORBytes(out[off:end], data[off:end], ks[:end-off])
			low.Add(low, one).Mod(low, mod)
		}
		return vm.ToValue(vm.NewArrayBuffer(out))
	})
	// aesKw(wrap, kek, data) per RFC 3394.
	set("aesKw", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		block, err := aes.NewCipher(iso.bytesArg(call.Argument(1)))
		if err != nil {
			return cryptoFail(vm, "OperationError", "invalid AES key length")
		}
		data := iso.bytesArg(call.Argument(2))
		if call.Argument(0).ToBoolean() {
			return vm.ToValue(vm.NewArrayBuffer(kwWrap(block, data)))
		}
		out, err := kwUnwrap(block, data)
		if err != nil {
			return cryptoFail(vm, "OperationError", "AES-KW key unwrapping failed.")
		}
		return vm.ToValue(vm.NewArrayBuffer(out))
	})
	// subtlePbkdf2(hash, password, salt, iterations, bytes)
	set("subtlePbkdf2", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		h := cryptoHash(call.Argument(0).String())
		out, err := pbkdf2.Key(h.New, string(iso.bytesArg(call.Argument(1))), iso.bytesArg(call.Argument(2)), int(call.Argument(3).ToInteger()), int(call.Argument(4).ToInteger()))
		if err != nil {
			return cryptoFail(vm, "OperationError", "PBKDF2 deriveBits failed.")
		}
		return vm.ToValue(vm.NewArrayBuffer(out))
	})
	// subtleHkdf(hash, key, salt, info, bytes)
	set("subtleHkdf", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		h := cryptoHash(call.Argument(0).String())
		out, err := hkdf.Key(h.New, iso.bytesArg(call.Argument(1)), iso.bytesArg(call.Argument(2)), string(iso.bytesArg(call.Argument(3))), int(call.Argument(4).ToInteger()))
		if err != nil {
			return cryptoFail(vm, "OperationError", "HKDF deriveBits failed.")
		}
		return vm.ToValue(vm.NewArrayBuffer(out))
	})
}

var kwIV = []byte{0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6}

func kwWrap(block cipher.Block, p []byte) []byte {
	n := len(p) / 8
	a := append([]byte(nil), kwIV...)
	r := append([]byte(nil), p...)
	var b [16]byte
	for j := 0; j < 6; j++ {
		for i := 0; i < n; i++ {
			copy(b[:8], a)
			copy(b[8:], r[i*8:i*8+8])
			block.Encrypt(b[:], b[:])
			t := uint64(n*j + i + 1)
			binary.BigEndian.PutUint64(a, binary.BigEndian.Uint64(b[:8])^t)
			copy(r[i*8:], b[8:])
		}
	}
	return append(a, r...)
}

func kwUnwrap(block cipher.Block, c []byte) ([]byte, error) {
	if len(c) < 24 || len(c)%8 != 0 {
		return nil, errors.New("bad length")
	}
	n := len(c)/8 - 1
	a := append([]byte(nil), c[:8]...)
	r := append([]byte(nil), c[8:]...)
	var b [16]byte
	for j := 5; j >= 0; j-- {
		for i := n - 1; i >= 0; i-- {
			t := uint64(n*j + i + 1)
			binary.BigEndian.PutUint64(b[:8], binary.BigEndian.Uint64(a)^t)
			copy(b[8:], r[i*8:i*8+8])
			block.Decrypt(b[:], b[:])
			copy(a, b[:8])
			copy(r[i*8:], b[8:])
		}
	}
	if subtle.ConstantTimeCompare(a, kwIV) != 1 {
		return nil, errors.New("integrity check failed")
	}
	return r, nil
}

// generateRSA makes an RSA key of the given size with public exponent 3 or
// 65537 (crypto/rsa only makes 65537).
func generateRSA(bits, e int) (*rsa.PrivateKey, error) {
	if e == 65537 && bits >= 1024 {
		return rsa.GenerateKey(rand.Reader, bits)
	}
	E := big.NewInt(int64(e))
	one := big.NewInt(1)
	for {
		p, err := rand.Prime(rand.Reader, bits-bits/2)
		if err != nil {
			return nil, err
		}
		q, err := rand.Prime(rand.Reader, bits/2)
		if err != nil {
			return nil, err
		}
		if p.Cmp(q) == 0 {
			continue
		}
		n := new(big.Int).Mul(p, q)
		if n.BitLen() != bits {
			continue
		}
		pm, qm := new(big.Int).Sub(p, one), new(big.Int).Sub(q, one)
		phi := new(big.Int).Mul(pm, qm)
		d := new(big.Int).ModInverse(E, phi)
		if d == nil {
			continue
		}
		k := &rsa.PrivateKey{PublicKey: rsa.PublicKey{N: n, E: e}, D: d, Primes: []*big.Int{p, q}}
		k.Precompute()
		return k, nil
	}
}

func mgf1XOR(out []byte, h crypto.Hash, seed []byte) {
	var counter [4]byte
	for done := 0; done < len(out); {
		d := h.New()
		d.Write(seed)
		d.Write(counter[:])
		for _, b := range d.Sum(nil) {
			if done == len(out) {
				break
			}
			out[done] ^= b
			done++
		}
		binary.BigEndian.PutUint32(counter[:], binary.BigEndian.Uint32(counter[:])+1)
	}
}

var errPSSSalt = errors.New("key too small for signing with given digest and salt length")

// signPSS signs with RSA-PSS and exactly saltLen bytes of salt (crypto/rsa
// reads a salt length of 0 as "as long as fits").
func signPSS(k *rsa.PrivateKey, h crypto.Hash, digest []byte, saltLen int) ([]byte, error) {
	emBits := k.N.BitLen() - 1
	emLen := (emBits + 7) / 8
	if emLen < len(digest)+saltLen+2 {
		return nil, errPSSSalt
	}
	if saltLen > 0 {
		return rsa.SignPSS(rand.Reader, k, h, digest, &rsa.PSSOptions{SaltLength: saltLen, Hash: h})
	}
	m := h.New()
	m.Write(make([]byte, 8))
	m.Write(digest)
	hh := m.Sum(nil)
	em := make([]byte, emLen)
	db := em[:emLen-len(hh)-1]
	db[len(db)-1] = 1
	mgf1XOR(db, h, hh)
	db[0] &= 0xff >> (8*emLen - emBits)
	copy(em[len(db):], hh)
	em[emLen-1] = 0xbc
	c := new(big.Int).Exp(new(big.Int).SetBytes(em), k.D, k.N)
	sig := padTo(c.Bytes(), (k.N.BitLen()+7)/8)
	// Check the result with the public key, as a fault could leak the key.
	if verifyPSS(&k.PublicKey, h, digest, sig, 0) {
		return sig, nil
	}
	return nil, errors.New("RSA-PSS signing failed")
}

func verifyPSS(pub *rsa.PublicKey, h crypto.Hash, digest, sig []byte, saltLen int) bool {
	if saltLen > 0 {
		return rsa.VerifyPSS(pub, h, digest, sig, &rsa.PSSOptions{SaltLength: saltLen, Hash: h}) == nil
	}
	size := (pub.N.BitLen() + 7) / 8
	if len(sig) != size {
		return false
	}
	s := new(big.Int).SetBytes(sig)
	if s.Cmp(pub.N) >= 0 {
		return false
	}
	emBits := pub.N.BitLen() - 1
	emLen := (emBits + 7) / 8
	em := padTo(new(big.Int).Exp(s, big.NewInt(int64(pub.E)), pub.N).Bytes(), emLen)
	hLen := h.Size()
	if len(em) != emLen || emLen < hLen+2 || em[emLen-1] != 0xbc {
		return false
	}
	db := append([]byte(nil), em[:emLen-hLen-1]...)
	hh := em[emLen-hLen-1 : emLen-1]
	if db[0]&^(0xff>>(8*emLen-emBits)) != 0 {
		return false
	}
	mgf1XOR(db, h, hh)
	db[0] &= 0xff >> (8*emLen - emBits)
	for _, b := range db[:len(db)-1] {
		if b != 0 {
			return false
		}
	}
	if db[len(db)-1] != 1 {
		return false
	}
	m := h.New()
	m.Write(make([]byte, 8))
	m.Write(digest)
	return subtle.ConstantTimeCompare(m.Sum(nil), hh) == 1
}
