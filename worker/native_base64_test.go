package worker

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"
)

func TestNodeBase64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 300; n++ {
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(r.Uint32())
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			s := enc.EncodeToString(raw)
			if got := nodeBase64(s); !bytes.Equal(got, raw) {
				t.Fatalf("len %d %q: got %x", n, s, got)
			}
			// Whitespace anywhere is skipped.
			if n > 10 {
				ws := s[:5] + " \n" + s[5:]
				if got := nodeBase64(ws); !bytes.Equal(got, raw) {
					t.Fatalf("len %d with whitespace: got %x", n, got)
				}
			}
		}
	}
	// Decoding stops at the first '='; a lone trailing character is dropped.
	for in, want := range map[string]string{"aGVsbG8=aGVsbG8=": "hello", "aGk": "hi", "aGVsbG8gd29ybGQhIQ=junk": "hello world!!", "a": "", "!!!": ""} {
		if got := string(nodeBase64(in)); got != want {
			t.Errorf("nodeBase64(%q) = %q, want %q", in, got, want)
		}
	}
}

func BenchmarkNodeBase64Decode(b *testing.B) {
	raw := make([]byte, 1<<20)
	for i := range raw {
		raw[i] = byte(i*31 + 7)
	}
	s := base64.StdEncoding.EncodeToString(raw)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		nodeBase64(s)
	}
}

func BenchmarkStdBase64Decode(b *testing.B) {
	raw := make([]byte, 1<<20)
	s := base64.StdEncoding.EncodeToString(raw)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		base64.StdEncoding.DecodeString(s)
	}
}
