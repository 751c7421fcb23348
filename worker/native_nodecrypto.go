package worker

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding"
	"errors"
	"hash"
	"strings"

	"github.com/dop251/goja"
	"golang.org/x/crypto/scrypt"
)

// The Go half of node:crypto (prelude/87_node_crypto.js): hashes, HMAC,
// key derivation and AES ciphers. The prelude shapes Node's API and
// errors around these.

// nodeHash returns the hash Node calls name (lowercase), or nil.
func nodeHash(name string) func() hash.Hash {
	switch strings.ToLower(name) {
	case "md5", "rsa-md5":
		return md5.New
	case "sha1", "sha-1", "rsa-sha1":
		return sha1.New
	case "sha224", "sha-224", "rsa-sha224":
		return sha256.New224
	case "sha256", "sha-256", "rsa-sha256":
		return sha256.New
	case "sha384", "sha-384", "rsa-sha384":
		return sha512.New384
	case "sha512", "sha-512", "rsa-sha512":
		return sha512.New
	case "sha512-224", "sha-512/224":
		return sha512.New512_224
	case "sha512-256", "sha-512/256":
		return sha512.New512_256
	}
	return nil
}

// nodeHashes is what crypto.getHashes() lists.
var nodeHashes = []any{"md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha512-224", "sha512-256"}

type hashHandle struct {
	h    hash.Hash
	alg  string
	hmac bool
}

// cipherHandle is one createCipheriv/createDecipheriv in progress.
type cipherHandle struct {
	decrypt bool
	mode    string // cbc, ecb, ctr, gcm
	block   cipher.Block
	cbc     cipher.BlockMode
	stream  cipher.Stream
	aead    cipher.AEAD
	iv      []byte
	pending []byte // cbc/ecb: bytes short of a block; gcm: everything
	aad     []byte
	tag     []byte
	padding bool
	done    bool
}

// ecb is AES in ECB mode (Node offers it; Go does not, for good reason).
type ecb struct {
	b       cipher.Block
	decrypt bool
}

func (e ecb) BlockSize() int { return e.b.BlockSize() }
func (e ecb) CryptBlocks(dst, src []byte) {
	for bs := e.b.BlockSize(); len(src) > 0; src, dst = src[bs:], dst[bs:] {
		if e.decrypt {
			e.b.Decrypt(dst, src[:bs])
		} else {
			e.b.Encrypt(dst, src[:bs])
		}
	}
}

// newCipher parses a Node cipher name such as "aes-256-cbc".
func newCipher(name string, key, iv []byte, decrypt bool) (*cipherHandle, error) {
	parts := strings.Split(strings.ToLower(name), "-")
	if len(parts) != 3 || parts[0] != "aes" {
		return nil, errUnknownCipher
	}
	bits := map[string]int{"128": 16, "192": 24, "256": 32}[parts[1]]
	if bits == 0 {
		return nil, errUnknownCipher
	}
	if len(key) != bits {
		return nil, errors.New("Invalid key length")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	c := &cipherHandle{decrypt: decrypt, mode: parts[2], block: block, padding: true, iv: append([]byte(nil), iv...)}
	switch c.mode {
	case "cbc":
		if len(iv) != aes.BlockSize {
			return nil, errInvalidIV
		}
		if decrypt {
			c.cbc = cipher.NewCBCDecrypter(block, iv)
		} else {
			c.cbc = cipher.NewCBCEncrypter(block, iv)
		}
	case "ecb":
		c.cbc = ecb{block, decrypt}
	case "ctr":
		if len(iv) != aes.BlockSize {
			return nil, errInvalidIV
		}
		c.stream = cipher.NewCTR(block, iv)
	case "gcm":
		if len(iv) == 0 {
			return nil, errInvalidIV
		}
		if c.aead, err = cipher.NewGCMWithNonceSize(block, len(iv)); err != nil {
			return nil, errInvalidIV
		}
	default:
		return nil, errUnknownCipher
	}
	return c, nil
}

var (
	errUnknownCipher = errors.New("Unknown cipher")
	errInvalidIV     = errors.New("Invalid initialization vector")
	errBadDecrypt    = errors.New("bad decrypt")
	errAuth          = errors.New("Unsupported state or unable to authenticate data")
	errFinal         = errors.New("Unsupported state")
)

func (c *cipherHandle) update(in []byte) []byte {
	switch {
	case c.stream != nil:
		out := make([]byte, len(in))
		c.stream.XORKeyStream(out, in)
		return out
	case c.aead != nil:
		c.pending = append(c.pending, in...)
		return nil
	}
	c.pending = append(c.pending, in...)
	n := len(c.pending) / aes.BlockSize * aes.BlockSize
	if c.decrypt && c.padding && n == len(c.pending) && n > 0 {
		n -= aes.BlockSize // the last block may be padding: keep it for final
	}
	out := make([]byte, n)
	c.cbc.CryptBlocks(out, c.pending[:n])
	c.pending = append(c.pending[:0], c.pending[n:]...)
	return out
}

func (c *cipherHandle) final() ([]byte, error) {
	if c.done {
		return nil, errFinal
	}
	c.done = true
	switch {
	case c.stream != nil:
		return nil, nil
	case c.aead != nil:
		if c.decrypt {
			if len(c.tag) == 0 {
				return nil, errAuth
			}
			out, err := c.aead.Open(nil, c.iv, append(c.pending, c.tag...), c.aad)
			if err != nil {
				return nil, errAuth
			}
			return out, nil
		}
		sealed := c.aead.Seal(nil, c.iv, c.pending, c.aad)
		n := len(sealed) - c.aead.Overhead()
		c.tag = sealed[n:]
		return sealed[:n], nil
	}
	bs := aes.BlockSize
	if !c.decrypt {
		if c.padding {
			p := bs - len(c.pending)%bs
			for i := 0; i < p; i++ {
				c.pending = append(c.pending, byte(p))
			}
		} else if len(c.pending)%bs != 0 {
			return nil, errors.New("data not multiple of block length")
		}
		out := make([]byte, len(c.pending))
		c.cbc.CryptBlocks(out, c.pending)
		return out, nil
	}
	if len(c.pending)%bs != 0 {
		return nil, errors.New("wrong final block length")
	}
	out := make([]byte, len(c.pending))
	c.cbc.CryptBlocks(out, c.pending)
	if !c.padding {
		return out, nil
	}
	if len(out) == 0 {
		return nil, errBadDecrypt
	}
	p := int(out[len(out)-1])
	if p == 0 || p > bs || p > len(out) {
		return nil, errBadDecrypt
	}
	for _, b := range out[len(out)-p:] {
		if int(b) != p {
			return nil, errBadDecrypt
		}
	}
	return out[:len(out)-p], nil
}

func registerNodeCryptoNatives(set func(string, nativeFunc)) {
	ab := func(vm *goja.Runtime, b []byte) goja.Value { return vm.ToValue(vm.NewArrayBuffer(b)) }
	handle := func(v goja.Value) any {
		if v == nil {
			return nil
		}
		return v.Export()
	}
	// Random bytes and constant-time comparison of its own, so that this
	// file does not depend on the WebCrypto natives.
	set("nodeRandomBytes", func(iso *isolate, call goja.FunctionCall) goja.Value {
		b := make([]byte, call.Argument(0).ToInteger())
		_, _ = rand.Read(b)
		return ab(iso.vm, b)
	})
	set("nodeRandomFill", func(iso *isolate, call goja.FunctionCall) goja.Value {
		_, _ = rand.Read(iso.bytesArg(call.Argument(0)))
		return goja.Undefined()
	})
	set("nodeTimingSafeEqual", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.vm.ToValue(subtle.ConstantTimeCompare(iso.bytesArg(call.Argument(0)), iso.bytesArg(call.Argument(1))) == 1)
	})
	set("nodeHashes", func(iso *isolate, _ goja.FunctionCall) goja.Value { return iso.vm.NewArray(nodeHashes...) })
	// nodeHashNew(alg) / nodeHmacNew(alg, key) -> handle, or null for an unknown algorithm
	set("nodeHashNew", func(iso *isolate, call goja.FunctionCall) goja.Value {
		alg := call.Argument(0).String()
		h := nodeHash(alg)
		if h == nil {
			return goja.Null()
		}
		return iso.vm.ToValue(&hashHandle{h: h(), alg: alg})
	})
	set("nodeHmacNew", func(iso *isolate, call goja.FunctionCall) goja.Value {
		alg := call.Argument(0).String()
		h := nodeHash(alg)
		if h == nil {
			return goja.Null()
		}
		return iso.vm.ToValue(&hashHandle{h: hmac.New(h, iso.bytesArg(call.Argument(1))), alg: alg, hmac: true})
	})
	set("nodeHashUpdate", func(iso *isolate, call goja.FunctionCall) goja.Value {
		if h, ok := handle(call.Argument(0)).(*hashHandle); ok {
			h.h.Write(iso.bytesArg(call.Argument(1)))
		}
		return goja.Undefined()
	})
	set("nodeHashDigest", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h, _ := handle(call.Argument(0)).(*hashHandle)
		if h == nil {
			return goja.Null()
		}
		return ab(iso.vm, h.h.Sum(nil))
	})
	// nodeHashCopy(handle) -> a new handle in the same state, or null
	set("nodeHashCopy", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h, _ := handle(call.Argument(0)).(*hashHandle)
		if h == nil || h.hmac {
			return goja.Null()
		}
		m, ok := h.h.(encoding.BinaryMarshaler)
		if !ok {
			return goja.Null()
		}
		state, err := m.MarshalBinary()
		if err != nil {
			return goja.Null()
		}
		n := nodeHash(h.alg)()
		if err := n.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
			return goja.Null()
		}
		return iso.vm.ToValue(&hashHandle{h: n, alg: h.alg})
	})
	// pbkdf2(password, salt, iterations, keylen, digest) -> ArrayBuffer or null
	set("nodePbkdf2", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h := nodeHash(call.Argument(4).String())
		if h == nil {
			return goja.Null()
		}
		key, err := pbkdf2.Key(h, string(iso.bytesArg(call.Argument(0))), iso.bytesArg(call.Argument(1)),
			int(call.Argument(2).ToInteger()), int(call.Argument(3).ToInteger()))
		if err != nil {
			return goja.Null()
		}
		return ab(iso.vm, key)
	})
	// scrypt(password, salt, N, r, p, keylen) -> ArrayBuffer or an error string
	set("scrypt", func(iso *isolate, call goja.FunctionCall) goja.Value {
		key, err := scrypt.Key(iso.bytesArg(call.Argument(0)), iso.bytesArg(call.Argument(1)),
			int(call.Argument(2).ToInteger()), int(call.Argument(3).ToInteger()), int(call.Argument(4).ToInteger()), int(call.Argument(5).ToInteger()))
		if err != nil {
			return iso.vm.ToValue(err.Error())
		}
		return ab(iso.vm, key)
	})
	// hkdf(digest, ikm, salt, info, keylen) -> ArrayBuffer or null
	set("nodeHkdf", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h := nodeHash(call.Argument(0).String())
		if h == nil {
			return goja.Null()
		}
		key, err := hkdf.Key(h, iso.bytesArg(call.Argument(1)), iso.bytesArg(call.Argument(2)),
			string(iso.bytesArg(call.Argument(3))), int(call.Argument(4).ToInteger()))
		if err != nil {
			return goja.Null()
		}
		return ab(iso.vm, key)
	})
	// cipherNew(name, key, iv, decrypt) -> handle or an error string
	set("cipherNew", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c, err := newCipher(call.Argument(0).String(), iso.bytesArg(call.Argument(1)), iso.bytesArg(call.Argument(2)), call.Argument(3).ToBoolean())
		if err != nil {
			return iso.vm.ToValue(err.Error())
		}
		return iso.vm.ToValue(c)
	})
	set("cipherUpdate", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c, _ := handle(call.Argument(0)).(*cipherHandle)
		if c == nil || c.done {
			return goja.Null()
		}
		return ab(iso.vm, c.update(iso.bytesArg(call.Argument(1))))
	})
	// cipherFinal(handle) -> ArrayBuffer or an error string
	set("cipherFinal", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c, _ := handle(call.Argument(0)).(*cipherHandle)
		if c == nil {
			return iso.vm.ToValue(errFinal.Error())
		}
		out, err := c.final()
		if err != nil {
			return iso.vm.ToValue(err.Error())
		}
		return ab(iso.vm, out)
	})
	// cipherSet(handle, what, value): what is "aad", "tag" or "padding".
	// Returns false when the cipher does not take it.
	set("cipherSet", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c, _ := handle(call.Argument(0)).(*cipherHandle)
		if c == nil || c.done {
			return iso.vm.ToValue(false)
		}
		switch call.Argument(1).String() {
		case "aad":
			if c.aead == nil {
				return iso.vm.ToValue(false)
			}
			c.aad = append(c.aad, iso.bytesArg(call.Argument(2))...)
		case "tag":
			if c.aead == nil || !c.decrypt {
				return iso.vm.ToValue(false)
			}
			c.tag = append([]byte(nil), iso.bytesArg(call.Argument(2))...)
		case "padding":
			c.padding = call.Argument(2).ToBoolean()
		}
		return iso.vm.ToValue(true)
	})
	// cipherTag(handle) -> the GCM tag after final, or null
	set("cipherTag", func(iso *isolate, call goja.FunctionCall) goja.Value {
		c, _ := handle(call.Argument(0)).(*cipherHandle)
		if c == nil || c.aead == nil || c.decrypt || !c.done {
			return goja.Null()
		}
		return ab(iso.vm, append([]byte(nil), c.tag...))
	})
}
