package worker

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"

	"github.com/dop251/goja"
)

// Asymmetric KeyObjects and Sign/Verify for node:crypto
// (prelude/89_node_crypto_keys.js): RSA (PKCS#1 v1.5 and PSS), ECDSA on
// P-256/384/521 and Ed25519, keys in PEM or DER (PKCS#8, SPKI, PKCS#1,
// SEC1, certificates).

type nodeKey struct {
	priv crypto.Signer // nil for a public key
	pub  crypto.PublicKey
}

func (k *nodeKey) kind() string {
	switch k.pub.(type) {
	case *rsa.PublicKey:
		return "rsa"
	case *ecdsa.PublicKey:
		return "ec"
	case ed25519.PublicKey:
		return "ed25519"
	}
	return ""
}

var errNodeKeyFormat = errors.New("Unsupported key format")

// parseNodeKey reads a key from PEM text or DER bytes. want is "private",
// "public" (a private key yields its public half) or "" (either).
func parseNodeKey(data []byte, der bool, typ, want string) (*nodeKey, error) {
	var blocks [][2]string // (PEM type, DER)
	if der {
		blocks = append(blocks, [2]string{strings.ToUpper(typ), string(data)})
	} else {
		rest := data
		for {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			blocks = append(blocks, [2]string{b.Type, string(b.Bytes)})
		}
		if len(blocks) == 0 {
			return nil, errNodeKeyFormat
		}
	}
	for _, b := range blocks {
		raw := []byte(b[1])
		var k any
		var err error
		switch b[0] {
		case "PRIVATE KEY", "PKCS8":
			k, err = x509.ParsePKCS8PrivateKey(raw)
		case "RSA PRIVATE KEY":
			k, err = x509.ParsePKCS1PrivateKey(raw)
		case "EC PRIVATE KEY", "SEC1":
			k, err = x509.ParseECPrivateKey(raw)
		case "PUBLIC KEY", "SPKI":
			k, err = x509.ParsePKIXPublicKey(raw)
		case "RSA PUBLIC KEY":
			k, err = x509.ParsePKCS1PublicKey(raw)
		case "PKCS1":
			if k, err = x509.ParsePKCS1PrivateKey(raw); err != nil {
				k, err = x509.ParsePKCS1PublicKey(raw)
			}
		case "CERTIFICATE":
			var c *x509.Certificate
			if c, err = x509.ParseCertificate(raw); err == nil {
				k = c.PublicKey
			}
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		ak := &nodeKey{}
		switch key := k.(type) {
		case *rsa.PrivateKey:
			ak.priv, ak.pub = key, &key.PublicKey
		case *ecdsa.PrivateKey:
			ak.priv, ak.pub = key, &key.PublicKey
		case ed25519.PrivateKey:
			ak.priv, ak.pub = key, key.Public()
		case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			ak.pub = key
		default:
			return nil, errNodeKeyFormat
		}
		if want == "private" && ak.priv == nil {
			return nil, errors.New("error:1E08010C:DECODER routines::unsupported")
		}
		if want == "public" {
			ak.priv = nil
		}
		return ak, nil
	}
	return nil, errNodeKeyFormat
}

func nodeCurveName(c elliptic.Curve) string {
	switch c {
	case elliptic.P256():
		return "prime256v1"
	case elliptic.P384():
		return "secp384r1"
	case elliptic.P521():
		return "secp521r1"
	}
	return ""
}

// nodeECDSASig is an ECDSA signature in DER.
type nodeECDSASig struct{ R, S *big.Int }

func registerNodeKeyNatives(set func(string, nativeFunc)) {
	ab := func(vm *goja.Runtime, b []byte) goja.Value { return vm.ToValue(vm.NewArrayBuffer(b)) }
	// keyParse(bytes, der, type, want) -> handle or an error string
	set("keyParse", func(iso *isolate, call goja.FunctionCall) goja.Value {
		k, err := parseNodeKey(iso.bytesArg(call.Argument(0)), call.Argument(1).ToBoolean(), call.Argument(2).String(), call.Argument(3).String())
		if err != nil {
			return iso.vm.ToValue(err.Error())
		}
		return iso.vm.ToValue(k)
	})
	// keyGenerate(kind, modulusLength, publicExponent, namedCurve) -> handle or an error string
	set("keyGenerate", func(iso *isolate, call goja.FunctionCall) goja.Value {
		var k *nodeKey
		switch call.Argument(0).String() {
		case "rsa":
			bits := int(call.Argument(1).ToInteger())
			if bits < 512 || bits > 16384 {
				return iso.vm.ToValue("modulusLength out of range")
			}
			if e := call.Argument(2).ToInteger(); e != 0 && e != 65537 {
				return iso.vm.ToValue("only publicExponent 65537 is supported")
			}
			rk, err := rsa.GenerateKey(rand.Reader, bits)
			if err != nil {
				return iso.vm.ToValue(err.Error())
			}
			k = &nodeKey{priv: rk, pub: &rk.PublicKey}
		case "ec":
			var c elliptic.Curve
			switch call.Argument(3).String() {
			case "prime256v1", "P-256", "secp256r1":
				c = elliptic.P256()
			case "secp384r1", "P-384":
				c = elliptic.P384()
			case "secp521r1", "P-521":
				c = elliptic.P521()
			default:
				return iso.vm.ToValue("Invalid EC curve name")
			}
			ek, err := ecdsa.GenerateKey(c, rand.Reader)
			if err != nil {
				return iso.vm.ToValue(err.Error())
			}
			k = &nodeKey{priv: ek, pub: &ek.PublicKey}
		case "ed25519":
			pub, priv, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return iso.vm.ToValue(err.Error())
			}
			k = &nodeKey{priv: priv, pub: pub}
		default:
			return iso.vm.ToValue("unsupported key type")
		}
		return iso.vm.ToValue(k)
	})
	// keyInfo(handle) -> [type, asymmetricKeyType, details]
	set("keyInfo", func(iso *isolate, call goja.FunctionCall) goja.Value {
		k, _ := call.Argument(0).Export().(*nodeKey)
		if k == nil {
			return goja.Null()
		}
		vm := iso.vm
		typ := "public"
		if k.priv != nil {
			typ = "private"
		}
		details := vm.NewObject()
		switch p := k.pub.(type) {
		case *rsa.PublicKey:
			details.Set("modulusLength", p.N.BitLen())
			details.Set("publicExponent", vm.ToValue(big.NewInt(int64(p.E))))
		case *ecdsa.PublicKey:
			details.Set("namedCurve", nodeCurveName(p.Curve))
		}
		return vm.NewArray(typ, k.kind(), details)
	})
	// keyPublic(handle) -> the public half
	set("keyPublic", func(iso *isolate, call goja.FunctionCall) goja.Value {
		k, _ := call.Argument(0).Export().(*nodeKey)
		if k == nil {
			return goja.Null()
		}
		return iso.vm.ToValue(&nodeKey{pub: k.pub})
	})
	// keyExport(handle, format "pem"|"der", type) -> string (pem) or ArrayBuffer, or null
	set("keyExport", func(iso *isolate, call goja.FunctionCall) goja.Value {
		k, _ := call.Argument(0).Export().(*nodeKey)
		if k == nil {
			return goja.Null()
		}
		typ := call.Argument(2).String()
		var der []byte
		var block string
		var err error
		switch {
		case k.priv != nil && typ == "pkcs1":
			rk, ok := k.priv.(*rsa.PrivateKey)
			if !ok {
				return goja.Null()
			}
			der, block = x509.MarshalPKCS1PrivateKey(rk), "RSA PRIVATE KEY"
		case k.priv != nil && typ == "sec1":
			ek, ok := k.priv.(*ecdsa.PrivateKey)
			if !ok {
				return goja.Null()
			}
			der, err = x509.MarshalECPrivateKey(ek)
			block = "EC PRIVATE KEY"
		case k.priv != nil:
			der, err = x509.MarshalPKCS8PrivateKey(k.priv)
			block = "PRIVATE KEY"
		case typ == "pkcs1":
			rk, ok := k.pub.(*rsa.PublicKey)
			if !ok {
				return goja.Null()
			}
			der, block = x509.MarshalPKCS1PublicKey(rk), "RSA PUBLIC KEY"
		default:
			der, err = x509.MarshalPKIXPublicKey(k.pub)
			block = "PUBLIC KEY"
		}
		if err != nil {
			return goja.Null()
		}
		if call.Argument(1).String() == "der" {
			return ab(iso.vm, der)
		}
		return iso.vm.ToValue(string(pem.EncodeToMemory(&pem.Block{Type: block, Bytes: der})))
	})
	// keySign(hash or "", data, handle, pss, saltLength, p1363) -> ArrayBuffer or an error string
	set("keySign", func(iso *isolate, call goja.FunctionCall) goja.Value {
		k, _ := call.Argument(2).Export().(*nodeKey)
		if k == nil || k.priv == nil {
			return iso.vm.ToValue("a private key is required")
		}
		data := iso.bytesArg(call.Argument(1))
		sig, err := nodeSign(k, call.Argument(0).String(), data, call.Argument(3).ToBoolean(), int(call.Argument(4).ToInteger()), call.Argument(5).ToBoolean())
		if err != nil {
			return iso.vm.ToValue(err.Error())
		}
		return ab(iso.vm, sig)
	})
	// keyVerify(hash or "", data, handle, signature, pss, saltLength, p1363) -> bool
	set("keyVerify", func(iso *isolate, call goja.FunctionCall) goja.Value {
		k, _ := call.Argument(2).Export().(*nodeKey)
		if k == nil {
			return iso.vm.ToValue(false)
		}
		ok := nodeVerify(k, call.Argument(0).String(), iso.bytesArg(call.Argument(1)), iso.bytesArg(call.Argument(3)),
			call.Argument(4).ToBoolean(), int(call.Argument(5).ToInteger()), call.Argument(6).ToBoolean())
		return iso.vm.ToValue(ok)
	})
}

func nodeDigest(alg string, data []byte) (crypto.Hash, []byte, error) {
	var h crypto.Hash
	switch nodeHashName(alg) {
	case "sha1":
		h = crypto.SHA1
	case "sha224":
		h = crypto.SHA224
	case "sha256":
		h = crypto.SHA256
	case "sha384":
		h = crypto.SHA384
	case "sha512":
		h = crypto.SHA512
	case "md5":
		h = crypto.MD5
	default:
		return 0, nil, errors.New("Invalid digest: " + alg)
	}
	d := h.New()
	d.Write(data)
	return h, d.Sum(nil), nil
}

func nodeHashName(alg string) string {
	a := strings.ToLower(alg)
	a = strings.TrimPrefix(a, "rsa-")
	a = strings.TrimPrefix(a, "ecdsa-with-")
	return strings.ReplaceAll(a, "-", "")
}

func nodeSign(k *nodeKey, alg string, data []byte, pss bool, salt int, p1363 bool) ([]byte, error) {
	if ek, ok := k.priv.(ed25519.PrivateKey); ok {
		return ed25519.Sign(ek, data), nil
	}
	h, digest, err := nodeDigest(alg, data)
	if err != nil {
		return nil, err
	}
	switch pk := k.priv.(type) {
	case *rsa.PrivateKey:
		if pss {
			return rsa.SignPSS(rand.Reader, pk, h, digest, &rsa.PSSOptions{SaltLength: nodePSSSalt(salt), Hash: h})
		}
		return rsa.SignPKCS1v15(nil, pk, h, digest)
	case *ecdsa.PrivateKey:
		der, err := ecdsa.SignASN1(rand.Reader, pk, digest)
		if err != nil || !p1363 {
			return der, err
		}
		var s nodeECDSASig
		if _, err := asn1.Unmarshal(der, &s); err != nil {
			return nil, err
		}
		n := (pk.Curve.Params().BitSize + 7) / 8
		out := make([]byte, 2*n)
		s.R.FillBytes(out[:n])
		s.S.FillBytes(out[n:])
		return out, nil
	}
	return nil, errNodeKeyFormat
}

// nodePSSSalt maps Node's saltLength (RSA_PSS_SALTLEN_DIGEST -1,
// RSA_PSS_SALTLEN_MAX_SIGN / AUTO -2) to Go's.
func nodePSSSalt(salt int) int {
	switch {
	case salt == -1:
		return rsa.PSSSaltLengthEqualsHash
	case salt < 0:
		return rsa.PSSSaltLengthAuto
	}
	return salt
}

func nodeVerify(k *nodeKey, alg string, data, sig []byte, pss bool, salt int, p1363 bool) bool {
	if ek, ok := k.pub.(ed25519.PublicKey); ok {
		return ed25519.Verify(ek, data, sig)
	}
	h, digest, err := nodeDigest(alg, data)
	if err != nil {
		return false
	}
	switch pk := k.pub.(type) {
	case *rsa.PublicKey:
		if pss {
			return rsa.VerifyPSS(pk, h, digest, sig, &rsa.PSSOptions{SaltLength: nodePSSSalt(salt), Hash: h}) == nil
		}
		return rsa.VerifyPKCS1v15(pk, h, digest, sig) == nil
	case *ecdsa.PublicKey:
		if p1363 {
			n := (pk.Curve.Params().BitSize + 7) / 8
			if len(sig) != 2*n {
				return false
			}
			r, s := new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])
			return ecdsa.Verify(pk, digest, r, s)
		}
		return ecdsa.VerifyASN1(pk, digest, sig)
	}
	return false
}
