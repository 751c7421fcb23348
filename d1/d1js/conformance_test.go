package d1js_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/celldgo/celld/d1"
	"github.com/celldgo/celld/d1/d1js"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/internal/conformance"
	"github.com/celldgo/celld/worker"
)

// TestConformance replays the D1 fixtures recorded on workerd against the
// binding over a local cell, and compares every response.
func TestConformance(t *testing.T) {
	dirs, err := conformance.Fixtures(conformance.Dir)
	if err != nil {
		t.Fatalf("%v (fixtures: internal/conformance/testdata)", err)
	}
	ran := 0
	for _, dir := range dirs {
		src, err := os.ReadFile(filepath.Join(dir, "wrangler.jsonc"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := deploy.ParseConfig("wrangler.jsonc", src)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.D1Databases) == 0 || len(cfg.DurableObjects.Bindings) > 0 || len(cfg.KVNamespaces) > 0 ||
			len(cfg.R2Buckets) > 0 || len(cfg.Queues.Producers) > 0 || len(cfg.Queues.Consumers) > 0 {
			continue
		}
		ran++
		t.Run(filepath.Base(dir), func(t *testing.T) { replay(t, dir, cfg) })
	}
	if ran == 0 {
		t.Fatal("no D1 fixture found")
	}
}

func replay(t *testing.T, dir string, cfg *deploy.Config) {
	caller := newLocalCaller(t)
	bindings := map[string]worker.Binding{}
	for _, db := range cfg.D1Databases {
		bindings[db.Binding] = d1js.Binding(caller, d1.CellName(db.DatabaseID, db.DatabaseName))
	}
	bundle, err := deploy.Bundle(dir, cfg.Main)
	if err != nil {
		t.Fatalf("bundle: %v", err)
	}
	script, err := worker.Compile(cfg.Name, bundle.Code)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := worker.New(script, worker.Config{Vars: cfg.Vars, Bindings: bindings, Isolates: 1,
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	conformance.ReplayRuntime(t, rt, dir)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
