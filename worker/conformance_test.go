package worker_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/httpcache"
	"github.com/celldgo/celld/internal/conformance"
	"github.com/celldgo/celld/worker"
)

// TestConformance replays every fixture this runtime can serve on its own
// and compares the responses with the ones recorded on workerd, using the
// rules of internal/conformance/testdata/README.md.
func TestConformance(t *testing.T) {
	dirs, err := conformance.AllFixtures()
	if err != nil {
		t.Fatalf("%v (fixtures: internal/conformance/testdata)", err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) { runFixture(t, dir) })
	}
}

func runFixture(t *testing.T, dir string) {
	src, err := os.ReadFile(filepath.Join(dir, "wrangler.jsonc"))
	if err != nil {
		t.Fatalf("read config: %v", err)
	}
	cfg, err := deploy.ParseConfig("wrangler.jsonc", src)
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	bindings := map[string]worker.Binding{}
	var missing []string
	if len(cfg.D1Databases) > 0 {
		missing = append(missing, "d1_databases")
	}
	if len(cfg.R2Buckets) > 0 {
		missing = append(missing, "r2_buckets")
	}
	if len(cfg.Queues.Producers) > 0 || len(cfg.Queues.Consumers) > 0 {
		missing = append(missing, "queues")
	}
	if len(cfg.KVNamespaces) > 0 {
		missing = append(missing, "kv_namespaces")
	}
	if len(missing) > 0 {
		t.Skipf("needs bindings the worker runtime does not serve yet: %s", strings.Join(missing, ", "))
	}
	var namespaces map[string]string
	var objects *localObjects
	if len(cfg.DurableObjects.Bindings) > 0 {
		namespaces = map[string]string{}
		for _, b := range cfg.DurableObjects.Bindings {
			namespaces[b.Name] = b.ClassName
		}
		objects = newLocalObjects(t)
	}

	node := deploy.NodeCompat(cfg.CompatibilityDate, cfg.CompatibilityFlags)
	bundle, err := deploy.BundleNode(dir, cfg.Main, node)
	if err != nil {
		t.Fatalf("bundle: %v", err)
	}
	script, err := worker.Compile(cfg.Name, bundle.Code)
	if err != nil {
		t.Fatal(err)
	}
	wcfg := worker.Config{Vars: cfg.Vars, Bindings: bindings, DurableObjects: namespaces, Logger: testLogger(t),
		Node:           map[deploy.NodeMode]worker.NodeMode{deploy.NodeALS: worker.NodeALS, deploy.NodeV1: worker.NodeV1, deploy.NodeV2: worker.NodeV2}[node],
		NodeProcessEnv: deploy.NodeProcessEnv(cfg.CompatibilityDate, cfg.CompatibilityFlags)}
	if objects != nil {
		wcfg.Objects = objects
	}
	wcfg.Cache = httpcache.New(0)
	for _, s := range cfg.Services {
		if wcfg.Services == nil {
			wcfg.Services = map[string]worker.Service{}
		}
		wcfg.Services[s.Binding] = worker.Service{Entrypoint: s.Entrypoint, Props: s.Props}
	}
	for _, c := range namespaces {
		wcfg.ObjectClasses = append(wcfg.ObjectClasses, c)
	}
	rt, err := worker.New(script, wcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	if objects != nil {
		objects.use(rt)
	}

	conformance.ReplayRuntime(t, rt, dir)
}

// testLogger sends the runtime's log lines (console output, uncaught
// exceptions) to the test log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
