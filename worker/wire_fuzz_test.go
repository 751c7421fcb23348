package worker

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzWireDecode feeds the reader arbitrary bytes: it must never panic or
// hang, and what it accepts must re-encode to a canonical form that reads
// back to the same form (the decoder and the writer agree on the grammar).
// `go test` runs the seeds in testdata/fuzz/FuzzWireDecode; `go test
// -fuzz FuzzWireDecode ./worker` explores.
func FuzzWireDecode(f *testing.F) {
	for _, v := range []any{
		nil, Undefined{}, true, 1.5, -7, "text ✓", []byte{1, 2},
		[]any{1.0, []any{"x"}, map[string]any{"k": nil}},
		&JSMap{Keys: []any{"a"}, Values: []any{&JSSet{Values: []any{1.0}}}},
		&JSTypedArray{Type: "Uint16Array", Data: []byte{1, 0, 2, 0}},
		&JSError{Name: "TypeError", Message: "m", Stack: "s", Cause: "c"},
		&JSBlob{File: true, Name: "a", Type: "t", Data: []byte("d")},
	} {
		b, err := Serialize(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Deserialize(data)
		if err != nil {
			return
		}
		canon, err := Serialize(v)
		if err != nil {
			return // a shared or cyclic object: Go values have no identity to write it with
		}
		v2, err := Deserialize(canon)
		if err != nil {
			t.Fatalf("the canonical form %x of %x does not read back: %v", canon, data, err)
		}
		again, err := Serialize(v2)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatalf("canonical form not stable: %x then %x (%v)", canon, again, err)
		}
	})
}

// TestWireDecode_Seeds checks the reader's verdict on each hand-made seed
// in testdata/fuzz/FuzzWireDecode.
func TestWireDecode_Seeds(t *testing.T) {
	accept := map[string]bool{
		"shared-buffer": true, "cycle": true, "error-cause-cycle": true, "mixed": true, "deep": true,
		"view-out-of-bounds": false, "view-over-array": false, "ref-to-unfinished-view": false,
		"huge-count": false, "bad-utf8": false,
	}
	for name, want := range accept {
		raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzWireDecode", name))
		if err != nil {
			t.Fatal(err)
		}
		_, lit, _ := strings.Cut(strings.TrimSpace(string(raw)), "[]byte(")
		data, err := strconv.Unquote(strings.TrimSuffix(lit, ")"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = Deserialize([]byte(data))
		if (err == nil) != want {
			t.Errorf("%s: accepted %v (%v), want %v", name, err == nil, err, want)
		}
	}
	// The shared buffer is one Go slice under both references.
	v, _ := Deserialize([]byte("\x01a\x02v\x01B\x04abcd\x00\x04r\x02"))
	arr := v.([]any)
	if view, buf := arr[0].(*JSTypedArray), arr[1].([]byte); &view.Data[0] != &buf[0] {
		t.Error("a view and a back reference to its buffer decoded to two copies")
	}
}
