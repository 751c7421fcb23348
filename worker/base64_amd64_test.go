//go:build amd64

package worker

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestDecodeBase64SIMD: on valid text the vector loop reads every whole
// group of 32 characters that leaves it room to write, and its bytes are
// encoding/base64's.
func TestDecodeBase64SIMD(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2 on this machine: the table decoder does the work")
	}
	r := rand.New(rand.NewPCG(11, 12))
	for _, size := range []int{0, 24, 48, 1000, 1 << 16} {
		raw := make([]byte, size)
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			s := enc.EncodeToString(raw)
			dst := make([]byte, len(raw)+8)
			read := decodeBase64SIMD(dst, s)
			steps := 0 // while a step has 32 characters to read and 32 bytes to write
			if len(dst) >= 32 {
				steps = min(len(s)/32, (len(dst)-32)/24+1)
			}
			if read != 32*steps {
				t.Fatalf("size %d: read %d of %d characters", size, read, len(s))
			}
			if got := dst[:read/4*3]; !bytes.Equal(got, raw[:len(got)]) {
				t.Fatalf("size %d: decoded %x, want %x", size, got, raw[:len(got)])
			}
		}
	}
}

// BenchmarkDecodeBase64SIMD: the vector loop alone on 1 MiB of output
// (no allocation), in bytes of output per second.
func BenchmarkDecodeBase64SIMD(b *testing.B) {
	raw := make([]byte, 1<<20)
	for i := range raw {
		raw[i] = byte(i*31 + 7)
	}
	s := base64.RawStdEncoding.EncodeToString(raw)
	dst := make([]byte, len(raw)+32)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		decodeBase64SIMD(dst, s)
	}
}
