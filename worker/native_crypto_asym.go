package worker

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"math/big"

	"github.com/dop251/goja"
)

// The asymmetric half of crypto.subtle: RSA, EC (ECDSA and ECDH), Ed25519
// and X25519 keys. A key lives in Go as an *asymKey that JavaScript holds
// as an opaque value; the prelude (80_crypto.js) keeps its algorithm,
// usages and type next to it.

type asymKey struct {
	kind string // "RSA", "EC", "Ed25519", "X25519"
	pub  crypto.PublicKey
	priv crypto.PrivateKey // nil for a public key

	rsaPub   rsaPubCache     // an RSA key's verification state, made on first verify
	ecSigner p256SignerCache // a P-256 private key's signing state, made on first sign
}

func curveOf(name string) elliptic.Curve {
	switch name {
	case "P-256":
		return elliptic.P256()
	case "P-384":
		return elliptic.P384()
	case "P-521":
		return elliptic.P521()
	}
	return nil
}

func cryptoHash(name string) crypto.Hash {
	switch name {
	case "SHA-1":
		return crypto.SHA1
	case "SHA-256":
		return crypto.SHA256
	case "SHA-384":
		return crypto.SHA384
	case "SHA-512":
		return crypto.SHA512
	case "MD5":
		return crypto.MD5
	}
	return 0
}

// cryptoFail is what a native returns for an operation that failed: the
// prelude throws it as a DOMException of that name.
func cryptoFail(vm *goja.Runtime, name, msg string) goja.Value {
	o := vm.NewObject()
	_ = o.Set("cryptoError", name)
	_ = o.Set("message", msg)
	return o
}

func (iso *isolate) keyArg(v goja.Value) *asymKey {
	k, _ := v.Export().(*asymKey)
	return k
}

// describe returns what the prelude needs about a key: its kind, type and
// algorithm parameters.
func (iso *isolate) describe(k *asymKey) goja.Value {
	vm := iso.vm
	o := vm.NewObject()
	_ = o.Set("handle", vm.ToValue(k))
	_ = o.Set("kind", k.kind)
	if k.priv != nil {
		_ = o.Set("type", "private")
	} else {
		_ = o.Set("type", "public")
	}
	switch p := k.pub.(type) {
	case *rsa.PublicKey:
		_ = o.Set("modulusLength", p.N.BitLen())
		_ = o.Set("publicExponent", vm.NewArrayBuffer(big.NewInt(int64(p.E)).Bytes()))
	case *ecdsa.PublicKey:
		_ = o.Set("namedCurve", p.Curve.Params().Name)
	}
	return o
}

func newAsymKey(pub crypto.PublicKey, priv crypto.PrivateKey) (*asymKey, error) {
	k := &asymKey{pub: pub, priv: priv}
	switch p := pub.(type) {
	case *rsa.PublicKey:
		k.kind = "RSA"
	case *ecdsa.PublicKey:
		if curveOf(p.Curve.Params().Name) == nil {
			return nil, errors.New("unsupported curve")
		}
		k.kind = "EC"
	case ed25519.PublicKey:
		k.kind = "Ed25519"
	case *ecdh.PublicKey:
		if p.Curve() != ecdh.X25519() {
			return nil, errors.New("unsupported curve")
		}
		k.kind = "X25519"
	default:
		return nil, errors.New("unsupported key type")
	}
	return k, nil
}

func publicOf(priv crypto.PrivateKey) crypto.PublicKey {
	if s, ok := priv.(crypto.Signer); ok {
		return s.Public()
	}
	if d, ok := priv.(*ecdh.PrivateKey); ok {
		return d.PublicKey()
	}
	return nil
}

var b64url = base64.RawURLEncoding

// padTo returns b left-padded with zeros to n bytes.
func padTo(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	out := make([]byte, n)
	copy(out[n-len(b):], b)
	return out
}

func registerAsymNatives(set func(string, nativeFunc)) {
	// asymImport(format, bytes) -> key description, or a cryptoFail.
	set("asymImport", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		format, data := call.Argument(0).String(), iso.bytesArg(call.Argument(1))
		var k *asymKey
		var err error
		switch format {
		case "spki":
			pub, perr := x509.ParsePKIXPublicKey(data)
			if perr != nil {
				return cryptoFail(vm, "DataError", "Invalid SPKI input.")
			}
			k, err = newAsymKey(pub, nil)
		case "pkcs8":
			priv, perr := x509.ParsePKCS8PrivateKey(data)
			if perr != nil {
				return cryptoFail(vm, "DataError", "Invalid PKCS8 input.")
			}
			k, err = newAsymKey(publicOf(priv), priv)
		}
		if err != nil || k == nil {
			return cryptoFail(vm, "DataError", "Invalid "+map[string]string{"spki": "SPKI", "pkcs8": "PKCS8"}[format]+" input.")
		}
		return iso.describe(k)
	})
	// asymRaw(kind, curve, bytes) -> a public key from raw bytes.
	set("asymRaw", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		kind, curve, data := call.Argument(0).String(), call.Argument(1).String(), iso.bytesArg(call.Argument(2))
		switch kind {
		case "EC":
			pub, err := ecdsa.ParseUncompressedPublicKey(curveOf(curve), data)
			if err != nil {
				return cryptoFail(vm, "DataError", "Failed to import raw EC key data: Invalid point encoding..")
			}
			return iso.describe(&asymKey{kind: "EC", pub: pub})
		case "Ed25519":
			return iso.describe(&asymKey{kind: kind, pub: ed25519.PublicKey(append([]byte(nil), data...))})
		case "X25519":
			pub, err := ecdh.X25519().NewPublicKey(data)
			if err != nil {
				return cryptoFail(vm, "DataError", "Invalid X25519 key.")
			}
			return iso.describe(&asymKey{kind: kind, pub: pub})
		}
		return goja.Null()
	})
	// asymJwkImport(kind, curve, jwk) -> key description; the fields are
	// base64url strings already checked for presence by the prelude.
	set("asymJwkImport", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.jwkImport(call.Argument(0).String(), call.Argument(1).String(), call.Argument(2).ToObject(iso.vm))
	})
	set("asymExport", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		k := iso.keyArg(call.Argument(0))
		var out []byte
		var err error
		switch call.Argument(1).String() {
		case "spki":
			out, err = x509.MarshalPKIXPublicKey(k.pub)
		case "pkcs8":
			out, err = x509.MarshalPKCS8PrivateKey(k.priv)
		case "raw":
			switch p := k.pub.(type) {
			case *ecdsa.PublicKey:
				out, err = p.Bytes()
			case ed25519.PublicKey:
				out = append([]byte(nil), p...)
			case *ecdh.PublicKey:
				out = p.Bytes()
			}
		case "jwk":
			return iso.jwkExport(k)
		}
		if err != nil {
			return cryptoFail(vm, "OperationError", "Failed to export key.")
		}
		return vm.ToValue(vm.NewArrayBuffer(out))
	})
	set("asymGenerate", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		kind := call.Argument(0).String()
		var priv crypto.PrivateKey
		var err error
		switch kind {
		case "RSA":
			priv, err = generateRSA(int(call.Argument(1).ToInteger()), int(call.Argument(2).ToInteger()))
		case "EC":
			priv, err = ecdsa.GenerateKey(curveOf(call.Argument(1).String()), rand.Reader)
		case "Ed25519":
			_, priv, err = ed25519.GenerateKey(rand.Reader)
		case "X25519":
			priv, err = ecdh.X25519().GenerateKey(rand.Reader)
		}
		if err != nil {
			return cryptoFail(vm, "OperationError", "Key generation failed: "+err.Error())
		}
		pk, _ := newAsymKey(publicOf(priv), priv)
		return vm.NewArray(iso.describe(&asymKey{kind: pk.kind, pub: pk.pub}), iso.describe(pk))
	})
	// asymSign(alg, key, hash, data, saltLength) -> signature
	set("asymSign", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return asymSignValue(iso.vm, iso.keyArg(call.Argument(1)), call.Argument(0).String(), call.Argument(2).String(), iso.bytesArg(call.Argument(3)), call.Argument(4))
	})
	// asymVerify(alg, key, hash, signature, data, saltLength) -> boolean
	set("asymVerify", func(iso *isolate, call goja.FunctionCall) goja.Value {
		k := iso.keyArg(call.Argument(1))
		sig, data := iso.bytesArg(call.Argument(3)), iso.bytesArg(call.Argument(4))
		return iso.vm.ToValue(asymVerify(k, call.Argument(0).String(), call.Argument(2).String(), sig, data, call.Argument(5)))
	})
	// The fast paths' forms (80_crypto.js asymSlot): the same, but data and
	// signature must be a Uint8Array or an ArrayBuffer, and null answers
	// anything else (the prelude then takes the checked path).
	// asymSignFast(key, alg, hash, data, saltLength)
	set("asymSignFast", func(iso *isolate, call goja.FunctionCall) goja.Value {
		k, _ := call.Argument(0).Export().(*asymKey)
		data, ok := plainBytes(call.Argument(3))
		if k == nil || k.priv == nil || !ok {
			return goja.Null()
		}
		return asymSignValue(iso.vm, k, call.Argument(1).String(), call.Argument(2).String(), data, call.Argument(4))
	})
	// asymVerifyFast(key, alg, hash, signature, data, saltLength)
	set("asymVerifyFast", func(iso *isolate, call goja.FunctionCall) goja.Value {
		k, _ := call.Argument(0).Export().(*asymKey)
		sig, ok := plainBytes(call.Argument(3))
		data, ok2 := plainBytes(call.Argument(4))
		if k == nil || !ok || !ok2 {
			return goja.Null()
		}
		return iso.vm.ToValue(asymVerify(k, call.Argument(1).String(), call.Argument(2).String(), sig, data, call.Argument(5)))
	})
	// rsaOaep(encrypt, key, hash, label, data)
	set("rsaOaep", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		k := iso.keyArg(call.Argument(1))
		h := cryptoHash(call.Argument(2).String())
		label, data := iso.bytesArg(call.Argument(3)), iso.bytesArg(call.Argument(4))
		var out []byte
		var err error
		if call.Argument(0).ToBoolean() {
			out, err = rsa.EncryptOAEP(h.New(), rand.Reader, k.pub.(*rsa.PublicKey), data, label)
		} else {
			out, err = rsa.DecryptOAEP(h.New(), nil, k.priv.(*rsa.PrivateKey), data, label)
		}
		if err != nil {
			return cryptoFail(vm, "OperationError", "RSA-OAEP failed encrypt/decrypt.")
		}
		return vm.ToValue(vm.NewArrayBuffer(out))
	})
	// ecdhSecret(private, public) -> the shared secret
	set("ecdhSecret", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		a, b := iso.keyArg(call.Argument(0)), iso.keyArg(call.Argument(1))
		var priv *ecdh.PrivateKey
		var pub *ecdh.PublicKey
		var err error
		switch p := a.priv.(type) {
		case *ecdsa.PrivateKey:
			if priv, err = p.ECDH(); err == nil {
				pub, err = b.pub.(*ecdsa.PublicKey).ECDH()
			}
		case *ecdh.PrivateKey:
			priv, pub = p, b.pub.(*ecdh.PublicKey)
		}
		if err != nil || priv == nil {
			return cryptoFail(vm, "OperationError", "Failed to derive shared secret.")
		}
		secret, err := priv.ECDH(pub)
		if err != nil {
			return cryptoFail(vm, "OperationError", "Failed to derive shared secret.")
		}
		return vm.ToValue(vm.NewArrayBuffer(secret))
	})
}

func digestOf(h crypto.Hash, data []byte) []byte {
	d := h.New()
	d.Write(data)
	return d.Sum(nil)
}

func (iso *isolate) jwkImport(kind, curve string, j *goja.Object) goja.Value {
	vm := iso.vm
	field := func(name string) ([]byte, bool) {
		v := j.Get(name)
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			return nil, false
		}
		b, err := b64url.DecodeString(v.String())
		if err != nil || len(b) == 0 {
			return nil, false
		}
		return b, true
	}
	num := func(name string) *big.Int { b, _ := field(name); return new(big.Int).SetBytes(b) }
	_, hasD := field("d")
	switch kind {
	case "RSA":
		n, ok := field("n")
		if !ok {
			return cryptoFail(vm, "DataError", "Invalid RSA key in JSON Web Key; missing or invalid Modulus parameter (\"n\").")
		}
		e, ok := field("e")
		if !ok || len(e) > 4 {
			return cryptoFail(vm, "DataError", "Invalid RSA key in JSON Web Key; missing or invalid Exponent parameter (\"e\").")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if !hasD {
			return iso.describe(&asymKey{kind: kind, pub: pub})
		}
		priv := &rsa.PrivateKey{PublicKey: *pub, D: num("d"), Primes: []*big.Int{num("p"), num("q")}}
		if err := priv.Validate(); err != nil {
			return cryptoFail(vm, "DataError", "Invalid RSA private key in JSON Web Key.")
		}
		priv.Precompute()
		return iso.describe(&asymKey{kind: kind, pub: pub, priv: priv})
	case "EC":
		c := curveOf(curve)
		size := (c.Params().BitSize + 7) / 8
		x, okx := field("x")
		y, oky := field("y")
		if !okx || !oky || len(x) != size || len(y) != size {
			return cryptoFail(vm, "OperationError", "Invalid EC key; public key coordinates \"x\" and \"y\" are invalid.")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(c, append(append([]byte{4}, x...), y...))
		if err != nil {
			return cryptoFail(vm, "OperationError", "Invalid EC key; public key coordinates \"x\" and \"y\" are invalid.")
		}
		if !hasD {
			return iso.describe(&asymKey{kind: kind, pub: pub})
		}
		d, _ := field("d")
		priv, err := ecdsa.ParseRawPrivateKey(c, padTo(d, size))
		if err != nil || !priv.PublicKey.Equal(pub) {
			return cryptoFail(vm, "DataError", "Invalid EC key in JSON Web Key; private key does not match the public key.")
		}
		return iso.describe(&asymKey{kind: kind, pub: pub, priv: priv})
	case "Ed25519", "X25519":
		x, ok := field("x")
		if !ok || len(x) != 32 {
			return cryptoFail(vm, "DataError", "Invalid "+kind+" key in JSON Web Key; missing or invalid public key component (\"x\").")
		}
		d, _ := field("d")
		if hasD && len(d) != 32 {
			return cryptoFail(vm, "DataError", "Invalid "+kind+" key in JSON Web Key; invalid private key component (\"d\").")
		}
		if kind == "Ed25519" {
			if !hasD {
				return iso.describe(&asymKey{kind: kind, pub: ed25519.PublicKey(x)})
			}
			priv := ed25519.NewKeyFromSeed(d)
			return iso.describe(&asymKey{kind: kind, pub: priv.Public(), priv: priv})
		}
		if !hasD {
			pub, err := ecdh.X25519().NewPublicKey(x)
			if err != nil {
				return cryptoFail(vm, "DataError", "Invalid X25519 key.")
			}
			return iso.describe(&asymKey{kind: kind, pub: pub})
		}
		priv, err := ecdh.X25519().NewPrivateKey(d)
		if err != nil {
			return cryptoFail(vm, "DataError", "Invalid X25519 key.")
		}
		return iso.describe(&asymKey{kind: kind, pub: priv.PublicKey(), priv: priv})
	}
	return goja.Null()
}

func (iso *isolate) jwkExport(k *asymKey) goja.Value {
	vm := iso.vm
	o := vm.NewObject()
	set := func(name string, b []byte) { _ = o.Set(name, b64url.EncodeToString(b)) }
	switch p := k.pub.(type) {
	case *rsa.PublicKey:
		_ = o.Set("kty", "RSA")
		set("n", p.N.Bytes())
		set("e", big.NewInt(int64(p.E)).Bytes())
		if priv, ok := k.priv.(*rsa.PrivateKey); ok {
			set("d", priv.D.Bytes())
			set("p", priv.Primes[0].Bytes())
			set("q", priv.Primes[1].Bytes())
			set("dp", priv.Precomputed.Dp.Bytes())
			set("dq", priv.Precomputed.Dq.Bytes())
			set("qi", priv.Precomputed.Qinv.Bytes())
		}
	case *ecdsa.PublicKey:
		_ = o.Set("kty", "EC")
		_ = o.Set("crv", p.Curve.Params().Name)
		raw, _ := p.Bytes()
		n := (len(raw) - 1) / 2
		set("x", raw[1:1+n])
		set("y", raw[1+n:])
		if priv, ok := k.priv.(*ecdsa.PrivateKey); ok {
			d, _ := priv.Bytes()
			set("d", d)
		}
	case ed25519.PublicKey:
		_ = o.Set("kty", "OKP")
		_ = o.Set("crv", "Ed25519")
		set("x", p)
		if priv, ok := k.priv.(ed25519.PrivateKey); ok {
			set("d", priv.Seed())
		}
	case *ecdh.PublicKey:
		_ = o.Set("kty", "OKP")
		_ = o.Set("crv", "X25519")
		set("x", p.Bytes())
		if priv, ok := k.priv.(*ecdh.PrivateKey); ok {
			set("d", priv.Bytes())
		}
	}
	return o
}

// asymSignValue signs data with k under alg (the prelude has checked that
// k is a private key of that algorithm): the signature as an ArrayBuffer,
// or a cryptoFail.
func asymSignValue(vm *goja.Runtime, k *asymKey, alg, hash string, data []byte, saltLength goja.Value) goja.Value {
	h := cryptoHash(hash)
	var sig []byte
	var err error
	switch alg {
	case "RSASSA-PKCS1-v1_5":
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.priv.(*rsa.PrivateKey), h, digestOf(h, data))
	case "RSA-PSS":
		sig, err = signPSS(k.priv.(*rsa.PrivateKey), h, digestOf(h, data), int(saltLength.ToInteger()))
	case "ECDSA":
		p := k.priv.(*ecdsa.PrivateKey)
		if signer := k.p256SignerOf(p); signer != nil {
			sig, err = signer.sign(digestOf(h, data))
			break
		}
		r, s, serr := ecdsa.Sign(rand.Reader, p, digestOf(h, data))
		err = serr
		if err == nil {
			n := (p.Curve.Params().BitSize + 7) / 8
			sig = append(padTo(r.Bytes(), n), padTo(s.Bytes(), n)...)
		}
	case "Ed25519":
		sig = ed25519.Sign(k.priv.(ed25519.PrivateKey), data)
	}
	if err != nil {
		return cryptoFail(vm, "OperationError", err.Error())
	}
	return vm.ToValue(vm.NewArrayBuffer(sig))
}

// asymVerify checks sig over data with k's public key under alg.
func asymVerify(k *asymKey, alg, hash string, sig, data []byte, saltLength goja.Value) bool {
	h := cryptoHash(hash)
	switch alg {
	case "RSASSA-PKCS1-v1_5":
		return k.verifyPKCS1v15(k.pub.(*rsa.PublicKey), h, digestOf(h, data), sig)
	case "RSA-PSS":
		return k.verifyPSS(k.pub.(*rsa.PublicKey), h, digestOf(h, data), sig, int(saltLength.ToInteger()))
	case "ECDSA":
		p := k.pub.(*ecdsa.PublicKey)
		n := (p.Curve.Params().BitSize + 7) / 8
		if len(sig) != 2*n {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
		return ecdsa.Verify(p, digestOf(h, data), r, s)
	case "Ed25519":
		return len(sig) == ed25519.SignatureSize && ed25519.Verify(k.pub.(ed25519.PublicKey), data, sig)
	}
	return false
}
