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

// TestDecodeBase64SIMDMatchesTable: with the vector loop and without it
// (as on other architectures or CPUs without AVX2), nodeBase64 gives the
// same bytes as the plain decoder on random text of every length up to
// 2000 with junk sprinkled in, and on long valid text.
func TestDecodeBase64SIMDMatchesTable(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2 on this machine: only the table decoder runs")
	}
	r := rand.New(rand.NewPCG(13, 14))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
	junk := []byte(" \n\r\t=.!*\x00\x7f\x80\xff")
	var inputs []string
	for n := 0; n < 2000; n++ {
		in := make([]byte, n)
		for i := range in {
			in[i] = alphabet[r.IntN(len(alphabet))]
		}
		for k := r.IntN(3); k > 0 && n > 0; k-- {
			in[r.IntN(n)] = junk[r.IntN(len(junk))]
		}
		inputs = append(inputs, string(in))
	}
	raw := make([]byte, 1<<16+5)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	inputs = append(inputs, base64.StdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw))
	for _, in := range inputs {
		vector := nodeBase64(in)
		base64AVX2 = false
		table := nodeBase64(in)
		base64AVX2 = true
		if want := nodeBase64Slow(in); !bytes.Equal(vector, want) || !bytes.Equal(table, want) {
			t.Fatalf("len %d: vector %x, table %x, want %x", len(in), vector, table, want)
		}
	}
}

// FuzzNodeBase64: for any text, the vector loop, the table decoder and the
// plain decoder agree.
func FuzzNodeBase64(f *testing.F) {
	for _, s := range []string{"", "aGVsbG8=", "aGk", "a", "!!!", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk=", "-_-_" + string(make([]byte, 40))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		want := nodeBase64Slow(in)
		if got := nodeBase64(in); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %x, want %x", in, got, want)
		}
		if !cpu.X86.HasAVX2 {
			return
		}
		base64AVX2 = false
		defer func() { base64AVX2 = true }()
		if got := nodeBase64(in); !bytes.Equal(got, want) {
			t.Fatalf("%q without AVX2: got %x, want %x", in, got, want)
		}
	})
}
