package deploy_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/celldgo/celld/bucket"
)

// project writes files (path → content) into a fresh directory and
// returns it.
func project(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const okConfig = `{
  // a Worker with one Durable Object class
  "name": "my-worker",
  "main": "src/index.js",
  "compatibility_date": "2025-01-01",
  "durable_objects": { "bindings": [ { "name": "COUNTER", "class_name": "Counter" }, ] },
  "migrations": [ { "tag": "v1", "new_sqlite_classes": ["Counter"] } ],
  "vars": { "GREETING": "hi" },
}
`

const okWorker = `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  async fetch() { return new Response("1"); }
}
export default {
  async fetch(req, env) { return new Response(env.GREETING); },
};
`

func okProject(t testing.TB) string {
	return project(t, map[string]string{"wrangler.jsonc": okConfig, "src/index.js": okWorker})
}

// countingStore is a Mem store that counts every call made to it.
type countingStore struct {
	*bucket.Mem
	mu    sync.Mutex
	calls map[string]int // method → count
}

func newCountingStore() *countingStore {
	s := &countingStore{Mem: bucket.NewMem(), calls: map[string]int{}}
	s.SetFaults(func(c bucket.Call) bucket.Fault {
		s.mu.Lock()
		s.calls[c.Method]++
		s.mu.Unlock()
		return bucket.Fault{}
	})
	return s
}

func (s *countingStore) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

func (s *countingStore) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		n += c
	}
	return n
}

// keys lists every key in s, sorted.
func keys(t testing.TB, s bucket.Store) []string {
	t.Helper()
	objs, err := bucket.ListAll(context.Background(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	slices.Sort(ks)
	return ks
}

func wantProblem(t testing.TB, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q\ndoes not contain %q", err, want)
	}
}
