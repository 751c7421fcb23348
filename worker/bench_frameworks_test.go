package worker_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/worker"
)

// benchApp bundles bench/apps/NAME the way `celld deploy` does. The apps
// import hono from bench/apps/node_modules (npm ci there, as bench/run.sh
// does); without it the benchmark is skipped.
func benchApp(b *testing.B, name string) string {
	dir := filepath.Join("..", "bench", "apps", name)
	if _, err := os.Stat(filepath.Join(dir, "..", "node_modules", "hono")); err != nil {
		b.Skip("bench/apps/node_modules is missing: run npm ci in bench/apps")
	}
	res, err := deploy.Bundle(dir, "src/index.js")
	if err != nil {
		b.Fatal(err)
	}
	return string(res.Code)
}

func benchFetchStatus(b *testing.B, rt *worker.Runtime, url string) {
	ctx := context.Background()
	resp, err := rt.Fetch(ctx, &worker.Request{Method: "GET", URL: url, Header: loadHeaders()})
	if err != nil || resp.Status != 200 {
		b.Fatalf("fetch %s: %v %v", url, resp, err)
	}
	benchFetch(b, rt, url, string(resp.Body))
}

// BenchmarkFetchHono runs bench/apps/hono's GET /users/:id route.
func BenchmarkFetchHono(b *testing.B) {
	rt := newRuntime(b, benchApp(b, "hono"), worker.Config{Logger: slog.New(slog.DiscardHandler)})
	benchFetchStatus(b, rt, "http://localhost/users/42?fields=id,name,role&tag=a&tag=b")
}

// BenchmarkFetchSSR runs bench/apps/ssr: a CPU-bound render, no I/O.
func BenchmarkFetchSSR(b *testing.B) {
	rt := newRuntime(b, benchApp(b, "ssr"), worker.Config{Logger: slog.New(slog.DiscardHandler)})
	benchFetchStatus(b, rt, "http://localhost/")
}

// BenchmarkFetchHonoDO runs bench/apps/hono-do's GET
// /rooms/lobby/items/7: a Hono Worker forwarding to a local Durable
// Object whose fetch is another Hono app doing a SQL read.
func BenchmarkFetchHonoDO(b *testing.B) {
	host := newLocalObjects(b)
	rt := newRuntime(b, benchApp(b, "hono-do"), worker.Config{
		Objects: host, DurableObjects: map[string]string{"ROOMS": "Room"}, Logger: slog.New(slog.DiscardHandler),
	})
	host.use(rt)
	if resp := fetch(b, rt, "POST", "/rooms/lobby/seed", nil); resp.Status != 200 {
		b.Fatalf("seed = %d %s", resp.Status, resp.Body)
	}
	benchFetchStatus(b, rt, "http://localhost/rooms/lobby/items/7")
}
