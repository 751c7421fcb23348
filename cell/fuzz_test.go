package cell

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzApplyLTX feeds arbitrary bytes to the restore's LTX applier, as a
// hostile or corrupt object in the bucket would: it must return an error
// or apply, never panic or allocate by what a header or length claims
// (go test's fuzzer runs under a memory limit).
func FuzzApplyLTX(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0}, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "db")
		w, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		var st dbState
		seg := segment{key: "x", epoch: 1, min: 1, max: 1}
		if err := applyLTX(seg, bytes.NewReader(data), w, &st); err == nil {
			// Whatever applied is a database of the size it claims.
			fi, err := w.Stat()
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() != int64(st.pages())*int64(st.pageSize) {
				t.Fatalf("file is %d bytes, state says %d pages of %d", fi.Size(), st.pages(), st.pageSize)
			}
		}
	})
}
