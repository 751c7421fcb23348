package worker_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
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
	gogc := serveGC(b)
	benchFetch(b, rt, url, string(resp.Body))
	if gogc > 0 {
		b.ReportMetric(float64(gogc), "gogc")
	}
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

// BenchmarkRenderShapes measures what parts of bench/apps/ssr cost in goja
// by running the bundle as written and with its escape function rewritten
// (docs/performance.md, "Server-side render"). The rewrites change what the
// page costs, not what it says: every variant must answer the same bytes.
//   - as-written: escape = (s) => String(s).replace(/[&<>"']/g, (ch) => ESC[ch])
//   - hoisted: the same regexp and callback made once, outside escape (goja
//     builds a RegExp object and a closure at every evaluation, as the
//     language requires; this is what those two cost)
//   - identity-escape: escape returns String(s) (the output then differs,
//     so only its length is compared: the cost of everything else)
func BenchmarkRenderShapes(b *testing.B) {
	const escape = `var escape = (s) => String(s).replace(/[&<>"']/g, (ch) => ESC[ch]);`
	code := benchApp(b, "ssr")
	if !strings.Contains(code, escape) {
		b.Fatalf("bench/apps/ssr's bundle no longer has %s", escape)
	}
	variants := []struct{ name, escape string }{
		{"as-written", escape},
		{"hoisted", `var RX = /[&<>"']/g; var REP = (ch) => ESC[ch]; var escape = (s) => String(s).replace(RX, REP);`},
		{"identity-escape", `var escape = (s) => String(s);`},
	}
	var want string
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			rt := newRuntime(b, strings.Replace(code, escape, v.escape, 1), worker.Config{Logger: slog.New(slog.DiscardHandler)})
			resp, err := rt.Fetch(context.Background(), &worker.Request{Method: "GET", URL: "http://localhost/", Header: loadHeaders()})
			if err != nil || resp.Status != 200 {
				b.Fatalf("fetch: %v %v", resp, err)
			}
			body := string(resp.Body)
			switch {
			case want == "":
				want = body
			case v.name != "identity-escape" && body != want:
				b.Fatalf("%s answered a different page", v.name)
			}
			gogc := serveGC(b)
			benchFetch(b, rt, "http://localhost/", body)
			if gogc > 0 {
				b.ReportMetric(float64(gogc), "gogc")
			}
		})
	}
}
