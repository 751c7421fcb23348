package worker

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"syscall"
	"testing"
	"time"
)

// The native halves of the WebCrypto operations bench/webplatform
// measures, without the JS glue, each beside the standard library's
// call it replaces. cpu-ns/op is the process's CPU time per operation,
// steadier than ns/op when other work shares the machine.

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cpuPerOp(b *testing.B) func() {
	start := processCPU()
	return func() { b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op") }
}

func BenchmarkP256Sign(b *testing.B) {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer := (&asymKey{kind: "EC", pub: &priv.PublicKey, priv: priv}).p256SignerOf(priv)
	digest := digestOf(crypto.SHA256, []byte("message"))
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := signer.sign(digest); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkP256SignStd(b *testing.B) {
	priv, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	digest := digestOf(crypto.SHA256, []byte("message"))
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := ecdsa.SignASN1(rand.Reader, priv, digest); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRSAVerify(b *testing.B, verify func(pub *rsa.PublicKey, hashed, sig []byte) bool) {
	priv, err := generateRSA(2048, 65537)
	if err != nil {
		b.Fatal(err)
	}
	hashed := digestOf(crypto.SHA256, []byte("message"))
	sig, err := rsa.SignPKCS1v15(nil, priv, crypto.SHA256, hashed)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer cpuPerOp(b)()
	for b.Loop() {
		if !verify(&priv.PublicKey, hashed, sig) {
			b.Fatal("did not verify")
		}
	}
}

func BenchmarkRSAVerify2048(b *testing.B) {
	key := &asymKey{kind: "RSA"}
	benchRSAVerify(b, func(pub *rsa.PublicKey, hashed, sig []byte) bool {
		return key.verifyPKCS1v15(pub, crypto.SHA256, hashed, sig)
	})
}

func BenchmarkRSAVerify2048Std(b *testing.B) {
	benchRSAVerify(b, func(pub *rsa.PublicKey, hashed, sig []byte) bool {
		return rsa.VerifyPKCS1v15(pub, crypto.SHA256, hashed, sig) == nil
	})
}
