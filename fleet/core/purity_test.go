package core

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPurity fails the build of the core if it reaches for a clock,
// goroutine primitives, randomness or I/O: every decision must be a
// function of state and event so the simulator can replay it.
func TestPurity(t *testing.T) {
	banned := []string{"time", "os", "net", "sync", "math/rand", "math/rand/v2", "io/fs", "syscall", "crypto/rand"}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range banned {
				if path == b || strings.HasPrefix(path, b+"/") {
					t.Errorf("%s imports %q: the fleet core must stay pure", name, path)
				}
			}
		}
	}
	if checked < 4 {
		t.Fatalf("checked only %d files", checked)
	}
}
