package conformance

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestCopy_matchesSharedSuite checks that testdata/shared is exactly the
// team's shared suite where that suite sits beside the checkout, so the
// copy a clone runs is never a drifted or hand-edited one.
func TestCopy_matchesSharedSuite(t *testing.T) {
	orig := filepath.Join(here(), "..", "..", "..", "shared", "conformance", "fixtures")
	if _, err := os.Stat(orig); err != nil {
		t.Skipf("no shared suite beside the checkout (%v); the in-repo copy is the suite", err)
	}
	want := tree(t, orig)
	got := tree(t, Dir)
	delete(got, "FIXTURES.md") // the suite's fixtures.md, kept beside the copy
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: in the shared suite, missing from testdata/shared", name)
		case !bytes.Equal(g, w):
			t.Errorf("%s: differs from the shared suite", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: in testdata/shared but not in the shared suite", name)
		}
	}
	if len(want) == 0 {
		t.Fatal("the shared suite has no files")
	}
}

func TestAllFixtures_listsBothRoots(t *testing.T) {
	dirs, err := AllFixtures()
	if err != nil {
		t.Fatal(err)
	}
	shared, err := Fixtures(Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(shared) < 28 || len(dirs) < len(shared) {
		t.Fatalf("fixtures: %d shared, %d in all", len(shared), len(dirs))
	}
}

func tree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
