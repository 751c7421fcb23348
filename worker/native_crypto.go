package worker

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"hash"

	"github.com/dop251/goja"
)

// The cryptographic primitives behind crypto and crypto.subtle. Algorithm
// normalization, key objects and DOMException messages live in
// prelude/80_crypto.js.

func hashFor(name string) func() hash.Hash {
	switch name {
	case "SHA-1":
		return sha1.New
	case "SHA-256":
		return sha256.New
	case "SHA-384":
		return sha512.New384
	case "SHA-512":
		return sha512.New
	case "MD5":
		return md5.New
	}
	return nil
}

func registerCryptoNatives(set func(string, nativeFunc)) {
	buffer := func(vm *goja.Runtime, b []byte) goja.Value { return vm.ToValue(vm.NewArrayBuffer(b)) }
	// digest(name, bytes) -> ArrayBuffer, or null for an unknown algorithm.
	set("digest", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h := hashFor(call.Argument(0).String())
		if h == nil {
			return goja.Null()
		}
		d := h()
		d.Write(iso.bytesArg(call.Argument(1)))
		return buffer(iso.vm, d.Sum(nil))
	})
	// digestNew(name) -> an incremental hash (crypto.DigestStream), or null.
	set("digestNew", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h := hashFor(call.Argument(0).String())
		if h == nil {
			return goja.Null()
		}
		return iso.vm.ToValue(h())
	})
	set("digestWrite", func(iso *isolate, call goja.FunctionCall) goja.Value {
		if h, ok := call.Argument(0).Export().(hash.Hash); ok {
			h.Write(iso.bytesArg(call.Argument(1)))
		}
		return goja.Undefined()
	})
	set("digestSum", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h, _ := call.Argument(0).Export().(hash.Hash)
		return buffer(iso.vm, h.Sum(nil))
	})
	set("randomFill", func(iso *isolate, call goja.FunctionCall) goja.Value {
		_, _ = rand.Read(iso.bytesArg(call.Argument(0)))
		return call.Argument(0)
	})
	set("randomBytes", func(iso *isolate, call goja.FunctionCall) goja.Value {
		b := make([]byte, call.Argument(0).ToInteger())
		_, _ = rand.Read(b)
		return buffer(iso.vm, b)
	})
	set("randomUUID", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		return vm.ToValue(newUUID())
	})
	// hmac(hashName, key, data) -> ArrayBuffer
	set("hmac", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h := hashFor(call.Argument(0).String())
		if h == nil {
			return goja.Null()
		}
		m := hmac.New(h, iso.bytesArg(call.Argument(1)))
		m.Write(iso.bytesArg(call.Argument(2)))
		return buffer(iso.vm, m.Sum(nil))
	})
	// keyedHmac(hashName, key) -> an HMAC keyed once, for a CryptoKey to
	// reuse (macSum), so that a sign does not redo the key's padding.
	set("keyedHmac", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h := hashFor(call.Argument(0).String())
		if h == nil {
			return goja.Null()
		}
		return iso.vm.ToValue(hmac.New(h, bytes.Clone(iso.bytesArg(call.Argument(1)))))
	})
	// macSum(keyedHmac, data) -> ArrayBuffer
	set("macSum", func(iso *isolate, call goja.FunctionCall) goja.Value {
		m, _ := call.Argument(0).Export().(hash.Hash)
		m.Reset()
		m.Write(iso.bytesArg(call.Argument(1)))
		return buffer(iso.vm, m.Sum(nil))
	})
	// macSign(keyedHmac, data) and macVerify(keyedHmac, signature, data)
	// are crypto.subtle's fast path for HMAC: data (and signature) must be
	// a Uint8Array or ArrayBuffer, read in place; anything else answers
	// null, and the caller takes the checked path.
	set("macSign", func(iso *isolate, call goja.FunctionCall) goja.Value {
		m, ok := call.Argument(0).Export().(hash.Hash)
		data, ok2 := plainBytes(call.Argument(1))
		if !ok || !ok2 {
			return goja.Null()
		}
		m.Reset()
		m.Write(data)
		return buffer(iso.vm, m.Sum(nil))
	})
	set("macVerify", func(iso *isolate, call goja.FunctionCall) goja.Value {
		m, ok := call.Argument(0).Export().(hash.Hash)
		sig, ok2 := plainBytes(call.Argument(1))
		data, ok3 := plainBytes(call.Argument(2))
		if !ok || !ok2 || !ok3 {
			return goja.Null()
		}
		m.Reset()
		m.Write(data)
		var sum [sha512.Size]byte
		return iso.vm.ToValue(hmac.Equal(m.Sum(sum[:0]), sig))
	})
	set("timingSafeEqual", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		return vm.ToValue(subtle.ConstantTimeCompare(iso.bytesArg(call.Argument(0)), iso.bytesArg(call.Argument(1))) == 1)
	})
	// aesGcm(encrypt, key, iv, data, additionalData, tagBytes) -> ArrayBuffer,
	// or a string describing why the operation failed.
	set("aesGcm", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		encrypt := call.Argument(0).ToBoolean()
		key := iso.bytesArg(call.Argument(1))
		iv := iso.bytesArg(call.Argument(2))
		data := iso.bytesArg(call.Argument(3))
		aad := iso.bytesArg(call.Argument(4))
		tagSize := int(call.Argument(5).ToInteger())
		block, err := aes.NewCipher(key)
		if err != nil {
			return vm.ToValue("invalid AES key length")
		}
		if len(iv) == 0 {
			return vm.ToValue("AES-GCM iv must not be empty")
		}
		aead, err := cipher.NewGCMWithNonceSize(block, len(iv))
		if err == nil && tagSize != 16 {
			aead, err = cipher.NewGCMWithTagSize(block, tagSize)
			if err == nil && len(iv) != 12 {
				return vm.ToValue("AES-GCM with a short tag needs a 96-bit iv")
			}
		}
		if err != nil {
			return vm.ToValue(err.Error())
		}
		if encrypt {
			return buffer(iso.vm, aead.Seal(nil, iv, data, aad))
		}
		out, err := aead.Open(nil, iv, data, aad)
		if err != nil {
			return vm.ToValue("Decryption failed. This could be due to a ciphertext authentication failure, bad padding, incorrect CryptoKey, or another algorithm-specific reason.")
		}
		return buffer(iso.vm, out)
	})
}

// plainBytes reads a Uint8Array (or Buffer, or Uint8ClampedArray) or a
// live ArrayBuffer in place; ok is false for any other value.
func plainBytes(v goja.Value) (b []byte, ok bool) {
	obj, isObj := v.(*goja.Object)
	if !isObj {
		return nil, false
	}
	switch obj.ExportType() {
	case typeBytes:
		b, ok = obj.Export().([]byte)
		return b, ok
	case typeArrayBuffer:
		if ab, isAB := obj.Export().(goja.ArrayBuffer); isAB && !ab.Detached() {
			return ab.Bytes(), true
		}
	}
	return nil, false
}

// newUUID returns a random (version 4) UUID in its canonical lowercase form.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hexDigits = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hexDigits[c>>4], hexDigits[c&15])
	}
	return string(out)
}
