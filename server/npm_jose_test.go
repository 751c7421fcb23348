package server

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// npmCI installs a test project's locked dependencies (npm ci) unless
// node_modules already matches its package-lock.json.
func npmCI(t *testing.T, dir string) {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if installed, err := os.ReadFile(filepath.Join(dir, "node_modules", ".celld-lock")); err == nil && bytes.Equal(installed, lock) {
		return
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is needed to install %s's dependencies: %v", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--prefer-offline")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s (scripts/npm-testdata installs every test project; offline it needs a warm npm cache): %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", ".celld-lock"), lock, 0o644); err != nil {
		t.Fatal(err)
	}
}

func b64u(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func unb64u(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("base64url %q: %v", s, err)
	}
	return b
}

// goVerify checks a compact JWS with Go's crypto and the public JWK.
func goVerify(t *testing.T, alg, token string, jwk map[string]string) bool {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", token)
	}
	signed := []byte(parts[0] + "." + parts[1])
	sig := unb64u(t, parts[2])
	digest := sha256.Sum256(signed)
	switch alg {
	case "RS256":
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(unb64u(t, jwk["n"])), E: int(new(big.Int).SetBytes(unb64u(t, jwk["e"])).Int64())}
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, digest[:], sig) == nil
	case "ES256":
		x, y := unb64u(t, jwk["x"]), unb64u(t, jwk["y"])
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil || len(sig) != 64 {
			return false
		}
		return ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
	case "EdDSA":
		return ed25519.Verify(ed25519.PublicKey(unb64u(t, jwk["x"])), signed, sig)
	}
	t.Fatalf("unknown alg %s", alg)
	return false
}

type goKey struct {
	signer crypto.Signer
	jwk    map[string]string
}

func newGoKey(t *testing.T, alg string) goKey {
	t.Helper()
	switch alg {
	case "RS256":
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		return goKey{k, map[string]string{"kty": "RSA", "n": b64u(k.N.Bytes()), "e": b64u(big.NewInt(int64(k.E)).Bytes())}}
	case "ES256":
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := k.PublicKey.Bytes()
		return goKey{k, map[string]string{"kty": "EC", "crv": "P-256", "x": b64u(raw[1:33]), "y": b64u(raw[33:])}}
	default:
		pub, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return goKey{k, map[string]string{"kty": "OKP", "crv": "Ed25519", "x": b64u(pub)}}
	}
}

func (k goKey) sign(t *testing.T, alg string, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	p, _ := json.Marshal(claims)
	signed := b64u(h) + "." + b64u(p)
	var sig []byte
	var err error
	switch alg {
	case "RS256":
		d := sha256.Sum256([]byte(signed))
		sig, err = k.signer.Sign(rand.Reader, d[:], crypto.SHA256)
	case "ES256":
		d := sha256.Sum256([]byte(signed))
		r, s, e := ecdsa.Sign(rand.Reader, k.signer.(*ecdsa.PrivateKey), d[:])
		err = e
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	case "EdDSA":
		sig, err = k.signer.Sign(rand.Reader, []byte(signed), crypto.Hash(0))
	}
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + b64u(sig)
}

func postJSON(t *testing.T, url string, body any, out any) int {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: %v: %s", url, err, data)
	}
	return resp.StatusCode
}

// TestJose runs the jose library, unchanged from npm, on a node: RS256,
// ES256 and EdDSA keys generated in the Worker sign JWTs that Go's crypto
// verifies, and tokens Go signs verify in the Worker (and fail with a
// wrong key).
func TestJose(t *testing.T) {
	dir, err := filepath.Abs("testdata/npm/jose")
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, dir)
	base := startFixtureNode(t, dir)
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		t.Run(alg, func(t *testing.T) {
			resp, err := http.Get(base + "/roundtrip?alg=" + alg)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var rt struct {
				Token           string            `json:"token"`
				Payload         map[string]any    `json:"payload"`
				ProtectedHeader map[string]any    `json:"protectedHeader"`
				JWK             map[string]string `json:"jwk"`
				SPKI            string            `json:"spki"`
				Tampered        map[string]string `json:"tampered"`
				Expired         map[string]string `json:"expired"`
			}
			if resp.StatusCode != 200 {
				t.Fatalf("roundtrip: %d %s", resp.StatusCode, data)
			}
			if err := json.Unmarshal(data, &rt); err != nil {
				t.Fatalf("roundtrip: %v: %s", err, data)
			}
			if rt.Payload["sub"] != "user-1" || rt.Payload["iss"] != "celld" || rt.Payload["exp"] != float64(1700000000+7200) {
				t.Errorf("payload = %v", rt.Payload)
			}
			if rt.ProtectedHeader["alg"] != alg || rt.ProtectedHeader["kid"] != "k1" {
				t.Errorf("header = %v", rt.ProtectedHeader)
			}
			if !goVerify(t, alg, rt.Token, rt.JWK) {
				t.Errorf("Go does not accept the Worker's %s token %s", alg, rt.Token)
			}
			if block, _ := pem.Decode([]byte(rt.SPKI)); block == nil || block.Type != "PUBLIC KEY" {
				t.Errorf("exportSPKI = %q", rt.SPKI)
			} else if _, err := x509.ParsePKIXPublicKey(block.Bytes); err != nil {
				t.Errorf("exportSPKI: %v", err)
			}
			if rt.Tampered["code"] != "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" {
				t.Errorf("tampered token: %v", rt.Tampered)
			}
			if rt.Expired["code"] != "ERR_JWT_EXPIRED" {
				t.Errorf("expired token: %v", rt.Expired)
			}

			k, other := newGoKey(t, alg), newGoKey(t, alg)
			token := k.sign(t, alg, map[string]any{"sub": "from-go", "n": 7})
			var v struct {
				OK      bool              `json:"ok"`
				Payload map[string]any    `json:"payload"`
				Error   map[string]string `json:"error"`
			}
			postJSON(t, base+"/verify", map[string]any{"alg": alg, "jwk": k.jwk, "token": token}, &v)
			if !v.OK || v.Payload["sub"] != "from-go" {
				t.Errorf("Worker rejects Go's %s token: %+v", alg, v)
			}
			v.OK, v.Error = false, nil
			postJSON(t, base+"/verify", map[string]any{"alg": alg, "jwk": other.jwk, "token": token}, &v)
			if v.OK || v.Error["code"] != "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" {
				t.Errorf("Worker accepts Go's %s token under another key: %+v", alg, v)
			}

			der, err := x509.MarshalPKCS8PrivateKey(k.signer)
			if err != nil {
				t.Fatal(err)
			}
			spki, _ := x509.MarshalPKIXPublicKey(k.signer.Public())
			var p struct {
				JWS     string         `json:"jws"`
				Payload string         `json:"payload"`
				Error   map[string]any `json:"error"`
			}
			postJSON(t, base+"/pem?alg="+alg, map[string]string{
				"pkcs8": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
				"spki":  string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: spki})),
			}, &p)
			if p.Payload != "pem payload" || !goVerify(t, alg, p.JWS, k.jwk) {
				t.Errorf("PEM keys: %+v", p)
			}
		})
	}
}
