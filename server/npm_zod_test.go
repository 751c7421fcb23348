package server

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestZod runs the zod library, unchanged from npm, on a node: object
// schemas with coercion, transforms and defaults, the issues and messages
// of a rejected payload, prettifyError, discriminated unions, async
// refinements, toJSONSchema and a handful of other schema kinds. Each
// route's answer must equal testdata/npm/zod/node-answers.json, which is
// what the same index.js answers under Node.js (every route's fetch called
// in turn, the JSON bodies collected by path).
func TestZod(t *testing.T) {
	dir, err := filepath.Abs("testdata/npm/zod")
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, dir)
	raw, err := os.ReadFile(filepath.Join(dir, "node-answers.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("node-answers.json: %v", err)
	}
	base := startFixtureNode(t, dir)
	client := &http.Client{Timeout: 30 * time.Second}
	for path, w := range want {
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
		if !reflect.DeepEqual(got, w) {
			g, _ := json.MarshalIndent(got, "", " ")
			e, _ := json.MarshalIndent(w, "", " ")
			t.Errorf("%s:\ngot  %s\nwant %s", path, g, e)
		}
	}
	if len(want) != 7 {
		t.Errorf("node-answers.json has %d routes, want 7", len(want))
	}
}
