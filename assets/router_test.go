package assets

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/celldgo/celld/bucket"
)

func router(t *testing.T, cfg Config, files ...string) *Router {
	t.Helper()
	idx := &Index{Format: IndexFormat, Config: cfg, Files: map[string]Entry{}}
	for _, f := range files {
		idx.Files[f] = Entry{Digest: f}
	}
	r, err := NewRouter(idx, "2025-06-01", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRouter_HTMLHandling(t *testing.T) {
	files := []string{"/index.html", "/about.html", "/blog/index.html", "/logo.png"}
	type want struct {
		kind Kind
		to   string // asset path or Location
	}
	for mode, cases := range map[string]map[string]want{
		"auto-trailing-slash": {
			"/": {Serve, "/index.html"}, "/index.html": {Redirect, "/"}, "/about": {Serve, "/about.html"},
			"/about.html": {Redirect, "/about"}, "/about/": {Redirect, "/about"}, "/blog": {Redirect, "/blog/"},
			"/blog/": {Serve, "/blog/index.html"}, "/blog/index.html": {Redirect, "/blog/"}, "/logo.png": {Serve, "/logo.png"},
			"/nope": {NotFound, ""},
		},
		"drop-trailing-slash": {
			"/": {Serve, "/index.html"}, "/blog": {Serve, "/blog/index.html"}, "/blog/": {Redirect, "/blog"},
			"/about.html": {Redirect, "/about"}, "/blog/index.html": {Redirect, "/blog"},
		},
		"force-trailing-slash": {
			"/about": {Redirect, "/about/"}, "/about/": {Serve, "/about.html"}, "/blog": {Redirect, "/blog/"},
			"/blog/": {Serve, "/blog/index.html"}, "/logo.png": {Serve, "/logo.png"},
		},
		"none": {
			"/about": {NotFound, ""}, "/about.html": {Serve, "/about.html"}, "/": {NotFound, ""},
		},
	} {
		r := router(t, Config{HTMLHandling: mode}, files...)
		for p, w := range cases {
			d := r.Fetch(http.MethodGet, p)
			got := d.Path
			if d.Kind == Redirect {
				got = d.Location
			}
			if d.Kind != w.kind || got != w.to {
				t.Errorf("%s %s: kind %d %q, want %d %q", mode, p, d.Kind, got, w.kind, w.to)
			}
		}
	}
}

func TestRouter_NotFoundAndWorkerFirst(t *testing.T) {
	r := router(t, Config{NotFoundHandling: "404-page", RunWorkerFirst: RunWorkerFirst{Patterns: []string{"/api/*", "!/api/docs/*"}}},
		"/404.html", "/blog/404.html", "/api/docs/index.html")
	if d := r.Fetch("GET", "/blog/x/y"); d.Kind != Serve || d.Status != 404 || d.Entry.Digest != "/blog/404.html" {
		t.Errorf("nearest 404.html: %+v", d)
	}
	if d := r.Fetch("GET", "/x"); d.Status != 404 || d.Entry.Digest != "/404.html" {
		t.Errorf("root 404.html: %+v", d)
	}
	if d := r.Route("GET", "/api/users", nil, true); d.Kind != ToWorker {
		t.Errorf("/api/users: %+v, want the Worker first", d)
	}
	if d := r.Route("GET", "/api/docs/", http.Header{}, true); d.Kind != Serve {
		t.Errorf("/api/docs/: %+v, want the excluded pattern served as an asset", d)
	}
	if d := r.Route("POST", "/404.html", nil, true); d.Kind != ToWorker {
		t.Errorf("POST: %+v, want the Worker", d)
	}
	if d := r.Fetch("POST", "/404.html"); d.Status != 405 {
		t.Errorf("POST through the binding: %+v, want 405", d)
	}
}

func TestRules_Errors(t *testing.T) {
	for _, tc := range []struct{ headers, redirects string }{
		{headers: "  X: y\n"},
		{headers: "/a\n  Content-Length: 3\n"},
		{headers: "/a\n  novalue\n"},
		{redirects: "/a\n"},
		{redirects: "/a /b 404\n"},
		{redirects: "a /b\n"},
	} {
		if _, err := NewRouter(&Index{Headers: tc.headers, Redirects: tc.redirects}, "", nil); err == nil {
			t.Errorf("%q %q: no error", tc.headers, tc.redirects)
		}
	}
	rules, err := parseHeaders("/blog/:slug\n  X-Slug: :slug\n/*\n  X-All: 1\n  ! X-Remove\n")
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"X-Remove": {"x"}}
	applyHeaders(rules, "/blog/hello", h)
	if h.Get("X-Slug") != "hello" || h.Get("X-All") != "1" || h.Get("X-Remove") != "" {
		t.Errorf("headers %v", h)
	}
}

func TestCache_EvictsAndVerifies(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		os.WriteFile(filepath.Join(dir, n), []byte(n+"-0123456789"), 0o644) // 12 bytes each
	}
	os.WriteFile(filepath.Join(dir, "_headers"), []byte("/a\n  X: 1\n"), 0o644)
	s, err := Scan(filepath.Dir(dir), Config{Directory: filepath.Base(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Index.Files) != 3 || s.Index.Headers == "" {
		t.Fatalf("scan: %d files, headers %q", len(s.Index.Files), s.Index.Headers)
	}
	store := bucket.NewMem()
	ctx := context.Background()
	if _, err := Upload(ctx, store, s, "deploy/w/v/assets.json"); err != nil {
		t.Fatal(err)
	}
	c, err := NewCache(store, t.TempDir(), 30) // room for two bodies
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/a", "/b", "/c", "/a"} {
		f, err := c.Open(ctx, s.Index.Files[p].Digest)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if c.Size() > 30 {
			t.Fatalf("cache holds %d bytes, bound 30", c.Size())
		}
	}
	// A body damaged in the bucket is refused, never served.
	bad := s.Index.Files["/b"].Digest
	store.Put(ctx, BlobKey(bad), []byte("tampered"), bucket.Cond{})
	c2, _ := NewCache(store, t.TempDir(), 0)
	if _, err := c2.Open(ctx, bad); err == nil {
		t.Fatal("a body whose digest does not match was served")
	}
}

func TestScan_Limits(t *testing.T) {
	dir := t.TempDir()
	pub := filepath.Join(dir, "public")
	os.MkdirAll(pub, 0o755)
	f, _ := os.Create(filepath.Join(pub, "big.bin"))
	f.Truncate(MaxFileSize + 1)
	f.Close()
	os.Symlink("/etc/passwd", filepath.Join(pub, "link"))
	_, err := Scan(dir, Config{Directory: "public"})
	se, ok := err.(*ScanError)
	if !ok || len(se.Problems) != 2 {
		t.Fatalf("err %v: want the big file and the symlink named", err)
	}
}

func TestScan_AssetsIgnore(t *testing.T) {
	dir := t.TempDir()
	pub := filepath.Join(dir, "public")
	for name, body := range map[string]string{
		".assetsignore": "# framework output\n_worker.js\n*.map\n/private/\n!keep.map\ndocs/**/draft.md\n",
		"_worker.js":    "server code", "app.js": "a", "app.js.map": "m", "keep.map": "k",
		"private/secret.txt": "s", "sub/private/ok.txt": "o", "docs/a/b/draft.md": "d", "docs/a/final.md": "f",
	} {
		p := filepath.Join(pub, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	s, err := Scan(dir, Config{Directory: "public"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for p := range s.Index.Files {
		got = append(got, p)
	}
	slices.Sort(got)
	want := []string{"/app.js", "/docs/a/final.md", "/keep.map", "/sub/private/ok.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("assets %q, want %q", got, want)
	}
}
