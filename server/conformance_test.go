package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/internal/conformance"
)

// unserved names the bindings a fixture needs that this node does not
// serve yet, from its config and source.
func unserved(t *testing.T, dir string) []string {
	src, err := os.ReadFile(filepath.Join(dir, "wrangler.jsonc"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := deploy.ParseConfig("wrangler.jsonc", src)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	served := deploy.Served()
	if len(cfg.D1Databases) > 0 && !served.D1 {
		missing = append(missing, "d1_databases")
	}
	if len(cfg.KVNamespaces) > 0 && !served.KV {
		missing = append(missing, "kv_namespaces")
	}
	if len(cfg.R2Buckets) > 0 && !served.R2 {
		missing = append(missing, "r2_buckets")
	}
	if len(cfg.Queues.Producers) > 0 || len(cfg.Queues.Consumers) > 0 {
		if !served.Queues {
			missing = append(missing, "queues")
		}
	}
	return missing
}

// TestConformance deploys each shared fixture to a fresh node on a temp
// file:// bucket and replays its cases over HTTP.
func TestConformance(t *testing.T) {
	dirs, err := conformance.AllFixtures()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if missing := unserved(t, dir); len(missing) > 0 {
				t.Skipf("needs bindings celld does not serve yet: %s", strings.Join(missing, ", "))
			}
			base := startFixtureNode(t, dir)
			replayFixture(t, base, dir)
		})
	}
}

// replayFixture sends dir's cases.json steps in order to the node at base
// and reports every step whose answer differs from the recorded one.
func replayFixture(t *testing.T, base, dir string) {
	t.Helper()
	steps, err := conformance.LoadSteps(dir)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{
		Timeout:       30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	for i, s := range steps {
		if s.SleepMsBefore > 0 {
			time.Sleep(time.Duration(s.SleepMsBefore) * time.Millisecond)
		}
		body, err := s.RequestBody()
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(s.MethodOrGet(), base+s.Path, rd)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		req.Host = "localhost"
		for k, v := range s.Headers {
			req.Header.Set(k, v)
		}
		if body != nil {
			req.ContentLength = int64(len(body))
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Errorf("step %d %q: %v", i, s.Name, err)
			continue
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, p := range conformance.Compare(s, resp.StatusCode, resp.Header, got) {
			t.Errorf("step %d %q: %s", i, s.Name, p)
		}
	}
}

// startFixtureNode deploys dir to a fresh file:// bucket and runs a node
// on it; it returns the node's base URL.
func startFixtureNode(t *testing.T, dir string) string {
	t.Helper()
	tmp := t.TempDir()
	store, err := bucket.NewFile(filepath.Join(tmp, "bucket"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(context.Background(), store, dir, deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatalf("deploy: %v", err)
	}
	return runTestNode(t, Options{Store: store, Node: "conformance-" + strconv.Itoa(os.Getpid()), StateDir: filepath.Join(tmp, "state")})
}
