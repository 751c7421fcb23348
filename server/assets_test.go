package server

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
)

// spaProject is a wrangler.toml project: an SPA in public/ with a Worker
// for /api/*, a staging environment, _headers and _redirects.
var spaProject = map[string]string{
	"wrangler.toml": `name = "spa"
main = "src/index.js"
compatibility_date = "2025-06-01"
account_id = "0123"

[observability]
enabled = true

[vars]
STAGE = "production"

[assets]
directory = "./public"
binding = "ASSETS"
not_found_handling = "single-page-application"
run_worker_first = ["/api/*"]

[env.staging]
vars = { STAGE = "staging" }
`,
	"src/index.js": `export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    if (url.pathname === "/api/stage") return new Response(env.STAGE);
    if (url.pathname === "/api/secret") return new Response(String(env.TOKEN));
    if (url.pathname === "/api/asset") {
      const r = await env.ASSETS.fetch(new URL("/app.js", req.url));
      return new Response("via binding: " + r.status + " " + r.headers.get("content-type") + " " + (await r.text()));
    }
    if (url.pathname === "/api/missing") {
      const r = await env.ASSETS.fetch("http://x/no/such/route");
      return new Response("spa fallback: " + r.status + " " + (await r.text()).slice(0, 15));
    }
    return new Response("worker " + url.pathname, { status: 404 });
  },
};
`,
	"public/index.html": "<!doctype html><title>spa</title>",
	"public/app.js":     "console.log('app')",
	"public/about.html": "about",
	"public/_headers":   "/app.js\n  X-Frame-Options: DENY\n",
	"public/_redirects": "/old /about 301\n",
}

func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func get(t *testing.T, url string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestAssets_SPAWithAPIAndStagingEnv(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := writeProject(t, spaProject)
	ctx := context.Background()
	if _, err := deploy.UpdateSecrets(ctx, store, "spa-staging", func(v map[string]string) error { v["TOKEN"] = "s3cr3t"; return nil }); err != nil {
		t.Fatal(err)
	}
	res, err := deploy.Deploy(ctx, store, dir, deploy.Options{Env: "staging", Capabilities: deploy.Served()})
	if err != nil {
		t.Fatal(err)
	}
	if res.Worker != "spa-staging" || res.Assets != 3 || res.Uploaded.Stored != 3 {
		t.Errorf("deploy: worker %q, %d assets, %d stored", res.Worker, res.Assets, res.Uploaded.Stored)
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "account_id, observability") {
		t.Errorf("warnings %q: want one naming the ignored keys", res.Warnings)
	}
	if len(res.Secrets) != 1 || res.Secrets[0] != "TOKEN" {
		t.Errorf("secrets %q", res.Secrets)
	}
	m, _, _ := store.Get(ctx, res.Prefix+"manifest.json")
	if strings.Contains(string(m), "s3cr3t") {
		t.Fatal("the manifest holds a secret value")
	}
	// The same assets again (the top level) are not uploaded twice.
	res2, err := deploy.Deploy(ctx, store, dir, deploy.Options{Env: "staging", Capabilities: deploy.Served(), SourceMaps: true})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Uploaded.Stored != 0 || res2.Uploaded.Present != 3 {
		t.Errorf("redeploy stored %d, found %d: want every body deduplicated", res2.Uploaded.Stored, res2.Uploaded.Present)
	}

	n := startNode(t, store, "a")
	if resp, body := get(t, n.public+"/api/stage"); resp.StatusCode != 200 || body != "staging" {
		t.Errorf("/api/stage: %d %q, want the staging value", resp.StatusCode, body)
	}
	if _, body := get(t, n.public+"/api/secret"); body != "s3cr3t" {
		t.Errorf("/api/secret: %q: want the secret in env", body)
	}
	// A client-side route, as a browser navigates to it.
	if resp, body := get(t, n.public+"/dashboard/settings", "Sec-Fetch-Mode", "navigate"); resp.StatusCode != 200 || !strings.Contains(body, "<title>spa</title>") {
		t.Errorf("/dashboard/settings: %d %q, want index.html", resp.StatusCode, body)
	}
	// The same path fetched by script goes to the Worker (Cloudflare's
	// navigation rule from 2025-04-01).
	if resp, body := get(t, n.public+"/dashboard/settings"); resp.StatusCode != 404 || body != "worker /dashboard/settings" {
		t.Errorf("non-navigation miss: %d %q, want the Worker", resp.StatusCode, body)
	}
	resp, body := get(t, n.public+"/app.js")
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != 200 || body != "console.log('app')" || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || len(etag) != 34 ||
		resp.Header.Get("X-Frame-Options") != "DENY" || !strings.HasPrefix(etag, `"`) {
		t.Errorf("/app.js: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if resp, _ := get(t, n.public+"/app.js", "If-None-Match", etag); resp.StatusCode != 304 {
		t.Errorf("If-None-Match: %d, want 304", resp.StatusCode)
	}
	if resp, body := get(t, n.public+"/app.js", "Range", "bytes=0-6"); resp.StatusCode != 206 || body != "console" {
		t.Errorf("Range: %d %q, want 206 console", resp.StatusCode, body)
	}
	if resp, _ := get(t, n.public+"/about.html"); resp.StatusCode != 307 || resp.Header.Get("Location") != "/about" {
		t.Errorf("/about.html: %d %q, want 307 /about", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := get(t, n.public+"/about"); resp.StatusCode != 200 || body != "about" {
		t.Errorf("/about: %d %q", resp.StatusCode, body)
	}
	if resp, _ := get(t, n.public+"/old"); resp.StatusCode != 301 || resp.Header.Get("Location") != "/about" {
		t.Errorf("/old: %d %q, want the _redirects 301", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, body := get(t, n.public+"/api/asset"); body != "via binding: 200 text/javascript; charset=utf-8 console.log('app')" {
		t.Errorf("env.ASSETS.fetch: %q", body)
	}
	if _, body := get(t, n.public+"/api/missing"); body != "spa fallback: 200 <!doctype html>" {
		t.Errorf("env.ASSETS.fetch of a miss: %q", body)
	}
}
