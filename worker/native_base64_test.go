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

// nodeBase64Slow is Node's lenient decoding alone (no table, no vectors):
// the reference for the fast paths.
func nodeBase64Slow(s string) []byte {
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(s)))
	return out[:decodeLenient(out, s)]
}

// TestNodeBase64EveryByteEverywhere puts each of the 256 byte values at
// each position of a vector step (and of the table's steps after it) in
// otherwise valid text of both alphabets: every class boundary of the
// fast paths is crossed.
func TestNodeBase64EveryByteEverywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
	base := make([]byte, 96)
	for i := range base {
		base[i] = alphabet[r.IntN(len(alphabet))]
	}
	for pos := 0; pos < 80; pos++ {
		for c := 0; c < 256; c++ {
			in := append([]byte(nil), base...)
			in[pos] = byte(c)
			if got, want := nodeBase64(string(in)), nodeBase64Slow(string(in)); !bytes.Equal(got, want) {
				t.Fatalf("byte %#x at %d: got %x, want %x", c, pos, got, want)
			}
		}
	}
}

// TestNodeBase64Random compares the fast paths with the plain decoder on
// random text: valid runs of either alphabet with whitespace, padding,
// junk and non-ASCII bytes sprinkled in, at every length up to 3000.
func TestNodeBase64Random(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
	junk := []byte(" \n\r\t=.!*\x00\x80\xff\xc3\xa9")
	for n := 0; n < 3000; n++ {
		in := make([]byte, n)
		for i := range in {
			in[i] = alphabet[r.IntN(len(alphabet))]
		}
		for k := r.IntN(3); k > 0 && n > 0; k-- {
			in[r.IntN(n)] = junk[r.IntN(len(junk))]
		}
		if got, want := nodeBase64(string(in)), nodeBase64Slow(string(in)); !bytes.Equal(got, want) {
			t.Fatalf("len %d %q: got %x, want %x", n, in, got, want)
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
