package imports

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// moduleGraph reads the imports of every package of the module (non-test
// files, build constraints of this platform), keyed by import path.
func moduleGraph(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	graph := map[string][]string{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ip := Module
		if rel != "." {
			ip += "/" + filepath.ToSlash(rel)
		}
		graph[ip] = pkg.Imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

// TestRules checks the repository against design.md's import table.
func TestRules(t *testing.T) {
	graph := moduleGraph(t)
	for _, must := range []string{"cli", "server", "host", "cell", "d1", "d1/d1js", "kv/kvjs", "worker"} {
		if _, ok := graph[Module+"/"+must]; !ok {
			t.Fatalf("package %s not found: the graph is incomplete (%d packages)", must, len(graph))
		}
	}
	for _, v := range Check(Rules, graph) {
		t.Error(v)
	}
}

// TestRules_CatchViolations feeds the checker graphs that break the rules
// and checks each is reported.
func TestRules_CatchViolations(t *testing.T) {
	m := func(p string) string { return Module + "/" + p }
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  []string
	}{
		{"d1 links the JS engine",
			map[string][]string{m("d1"): {"fmt", m("cell"), "github.com/dop251/goja"}},
			[]string{"d1 imports github.com/dop251/goja"}},
		{"kv imports worker",
			map[string][]string{m("kv"): {m("worker")}},
			[]string{"kv imports worker"}},
		{"cli reaches cell again",
			map[string][]string{m("cli"): {m("host"), m("cell")}},
			[]string{"cli imports cell"}},
		{"cell imports host (upwards)",
			map[string][]string{m("cell"): {m("host")}},
			[]string{"cell imports host"}},
		{"host imports server",
			map[string][]string{m("host"): {m("server/api")}},
			[]string{"host imports server/api"}},
		{"tui reaches into server",
			map[string][]string{m("tui"): {m("server/api"), m("server")}},
			[]string{"tui imports server,"}},
		{"an unknown top-level package",
			map[string][]string{m("widgets"): {"fmt"}},
			[]string{"widgets has no rule"}},
		{"an adapter may link goja and worker",
			map[string][]string{m("r2/r2js"): {m("r2"), m("worker"), "github.com/dop251/goja"}},
			nil},
		{"a new subpackage inherits its parent's rule",
			map[string][]string{m("kv/internal/x"): {"github.com/dop251/goja/parser"}},
			[]string{"kv/internal/x imports github.com/dop251/goja/parser"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range Check(Rules, tc.graph) {
				got = append(got, v.String())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("violations %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("violation %q, want it to start %q", got[i], w)
				}
			}
		})
	}
	// The real graph with one deliberate violation added fails.
	graph := moduleGraph(t)
	graph[m("d1")] = append(slices.Clone(graph[m("d1")]), m("worker"))
	if vs := Check(Rules, graph); len(vs) != 1 || vs[0].Package != "d1" || vs[0].Import != "worker" {
		t.Fatalf("the repository plus d1 -> worker: %v", vs)
	}
}
