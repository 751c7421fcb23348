package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestNodeApp deploys testdata/nodeapp — npm libraries that need
// nodejs_compat (readable-stream on Buffer, node:events, process and
// string_decoder; safe-buffer; jsonwebtoken on node:crypto and jws's
// streams; nanoid; date-fns) — and checks that they
// run unchanged. The expected values are what the same module answers
// under Node.js. The packages come from package-lock.json through
// `npm ci` (run here when node_modules is missing).
func TestNodeApp(t *testing.T) {
	dir, err := filepath.Abs("testdata/nodeapp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "readable-stream")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("npm is not installed: cannot install testdata/nodeapp's packages")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
		}
	}
	base := startFixtureNode(t, dir)
	client := &http.Client{Timeout: 30 * time.Second}
	for path, want := range map[string]any{
		"/events":          map[string]any{"seen": []any{1.0, 2.0, 3.0}, "result": "ran 3", "isBuffer": true},
		"/safe-buffer":     map[string]any{"hex": "6869", "alloc": "010101", "same": true, "unsafe": 4.0},
		"/readable-stream": map[string]any{"out": "ALPHA;BETA;GAMMA;", "data": []any{"0102", "6f6b"}},
		"/string-decoder":  map[string]any{"parts": []any{"", "€uro", ""}},
		"/nanoid":          map[string]any{"idOk": true, "hexOk": true, "distinct": true},
		"/jsonwebtoken": map[string]any{
			"token":  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTEiLCJhZG1pbiI6dHJ1ZX0.ijz2URK-VlvgoU1JAg1DVorqqOIqq2_2RzicseA0Clw",
			"claims": map[string]any{"sub": "user-1", "admin": true},
			"bad":    []any{"JsonWebTokenError", "invalid signature"},
		},
		"/date-fns": map[string]any{"formatted": "2024-03-01 Friday", "days": 302.0, "distance": "2 months"},
	} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got any
		if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
			t.Errorf("%s: %d %s", path, resp.StatusCode, body)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %s", path, body)
		}
	}
}
