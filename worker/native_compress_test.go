package worker

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"
)

// A pooled writer, reset for the next stream, must produce a complete,
// independent stream each time (and not leak the previous stream's
// output or state).
func TestStreamCompressorPoolReuse(t *testing.T) {
	readers := map[string]func(io.Reader) (io.Reader, error){
		"gzip":        func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		"deflate":     func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
		"deflate-raw": func(r io.Reader) (io.Reader, error) { return flate.NewReader(r), nil },
	}
	for format, open := range readers {
		for i, text := range []string{strings.Repeat("alpha beta ", 5000), "", "x", strings.Repeat("gamma ", 100000)} {
			c := newStreamCompressor(format)
			var got []byte
			n := len(text) / 2
			for _, part := range []string{text[:n], text[n:]} {
				if _, err := c.w.Write([]byte(part)); err != nil {
					t.Fatal(err)
				}
				got = append(got, takeOutput(&c.buf)...)
			}
			if err := c.w.Close(); err != nil {
				t.Fatal(err)
			}
			c.release()
			got = append(got, takeOutput(&c.buf)...)
			r, err := open(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("%s #%d: %v", format, i, err)
			}
			plain, err := io.ReadAll(r)
			if err != nil || string(plain) != text {
				t.Fatalf("%s #%d: %d bytes back (want %d), err %v", format, i, len(plain), len(text), err)
			}
			if c.w != nil {
				t.Fatalf("%s: writer kept after release", format)
			}
		}
	}
}
