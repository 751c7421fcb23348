package assets

import (
	"net/http"
	"path"
	"strings"
)

// Kind is what a request resolves to.
type Kind int

const (
	ToWorker Kind = iota // run the Worker
	Serve                // serve Entry with Status
	Redirect             // answer Status with Location
	NotFound             // 404 with no body
)

// Decision is the outcome of routing one request.
type Decision struct {
	Kind     Kind
	Status   int
	Path     string // the asset's path, for Serve
	Entry    Entry
	Location string // for Redirect
}

// Router applies Cloudflare's asset routing to an Index. It is safe for
// concurrent use.
type Router struct {
	idx       *Index
	headers   []headerRule
	redirects []redirectRule
	rwf       *rwfMatcher
	// navigation sends a browser navigation that matches no asset to
	// not_found_handling even though a Worker exists (Cloudflare's
	// assets_navigation_prefers_asset_serving, on by default from
	// compatibility date 2025-04-01).
	navigation bool
}

// NewRouter compiles idx's rules. compatDate and flags are the Worker's.
func NewRouter(idx *Index, compatDate string, flags []string) (*Router, error) {
	r := &Router{idx: idx}
	var err error
	if r.headers, err = parseHeaders(idx.Headers); err != nil {
		return nil, err
	}
	if r.redirects, err = parseRedirects(idx.Redirects); err != nil {
		return nil, err
	}
	if r.rwf, err = newRWF(idx.Config.RunWorkerFirst); err != nil {
		return nil, err
	}
	r.navigation = compatDate >= "2025-04-01"
	for _, f := range flags {
		switch f {
		case "assets_navigation_prefers_asset_serving":
			r.navigation = true
		case "assets_navigation_has_no_effect":
			r.navigation = false
		}
	}
	return r, nil
}

// Index returns the router's index.
func (r *Router) Index() *Index { return r.idx }

// CheckRules compiles the _headers and _redirects of idx, for deploy.
func CheckRules(idx *Index) error {
	_, err := NewRouter(idx, "", nil)
	return err
}

// Route decides a request that reached the node (hasWorker: the
// deployment has a Worker to fall back on).
func (r *Router) Route(method, urlPath string, h http.Header, hasWorker bool) Decision {
	if method != http.MethodGet && method != http.MethodHead {
		if hasWorker {
			return Decision{Kind: ToWorker}
		}
		return Decision{Kind: Serve, Status: http.StatusMethodNotAllowed}
	}
	if hasWorker && r.rwf.match(urlPath) {
		return Decision{Kind: ToWorker}
	}
	d := r.lookup(urlPath)
	if d.Kind != NotFound {
		return d
	}
	if hasWorker && !(r.navigation && h.Get("Sec-Fetch-Mode") == "navigate" && r.notFound() != "none") {
		return Decision{Kind: ToWorker}
	}
	return r.fallback(urlPath)
}

// Fetch decides a request made through the env.ASSETS binding: no Worker
// to fall back on, so not_found_handling always applies.
func (r *Router) Fetch(method, urlPath string) Decision {
	if method != http.MethodGet && method != http.MethodHead {
		return Decision{Kind: Serve, Status: http.StatusMethodNotAllowed}
	}
	d := r.lookup(urlPath)
	if d.Kind != NotFound {
		return d
	}
	return r.fallback(urlPath)
}

func (r *Router) notFound() string {
	if r.idx.Config.NotFoundHandling == "" {
		return "none"
	}
	return r.idx.Config.NotFoundHandling
}

// lookup applies _redirects (a 200 rule rewrites the path once) and then
// html_handling.
func (r *Router) lookup(p string) Decision {
	for _, rule := range r.redirects {
		vals, ok := rule.pat.match(p)
		if !ok {
			continue
		}
		to := substitute(rule.to, vals)
		if rule.status == http.StatusOK {
			if d := r.resolve(to); d.Kind == Serve {
				d.Path = p // _headers match the URL the client asked for
				return d
			}
			return Decision{Kind: NotFound}
		}
		return Decision{Kind: Redirect, Status: rule.status, Location: to}
	}
	return r.resolve(p)
}

func (r *Router) fallback(p string) Decision {
	switch r.notFound() {
	case "single-page-application":
		if e, ok := r.idx.Files["/index.html"]; ok {
			return Decision{Kind: Serve, Status: http.StatusOK, Path: p, Entry: e}
		}
	case "404-page":
		for dir := path.Dir(p); ; dir = path.Dir(dir) {
			if e, ok := r.idx.Files[path.Join(dir, "404.html")]; ok {
				return Decision{Kind: Serve, Status: http.StatusNotFound, Path: p, Entry: e}
			}
			if dir == "/" || dir == "." {
				break
			}
		}
	}
	return Decision{Kind: NotFound, Status: http.StatusNotFound}
}

// resolve maps a path to an asset with html_handling: it serves the file
// a pretty URL stands for, and redirects (307) a URL spelled otherwise to
// its canonical form.
func (r *Router) resolve(p string) Decision {
	has := func(q string) bool { _, ok := r.idx.Files[q]; return ok }
	serve := func(q string) Decision {
		return Decision{Kind: Serve, Status: http.StatusOK, Path: q, Entry: r.idx.Files[q]}
	}
	redirect := func(q string) Decision {
		return Decision{Kind: Redirect, Status: http.StatusTemporaryRedirect, Location: q}
	}
	miss := Decision{Kind: NotFound}
	trimSlash := strings.TrimSuffix(p, "/")
	mode := r.idx.Config.HTMLHandling
	switch mode {
	case "none":
		if has(p) {
			return serve(p)
		}
		return miss
	case "drop-trailing-slash":
		switch {
		case strings.HasSuffix(p, "/index.html") && has(p):
			return redirect(orRoot(strings.TrimSuffix(p, "/index.html")))
		case strings.HasSuffix(p, ".html") && has(p):
			return redirect(orRoot(strings.TrimSuffix(p, ".html")))
		case p == "/" && has("/index.html"):
			return serve("/index.html")
		case strings.HasSuffix(p, "/") && (has(trimSlash+".html") || has(trimSlash+"/index.html")):
			return redirect(trimSlash)
		case has(p):
			return serve(p)
		case has(p + ".html"):
			return serve(p + ".html")
		case has(p + "/index.html"):
			return serve(p + "/index.html")
		}
		return miss
	case "force-trailing-slash":
		switch {
		case strings.HasSuffix(p, "/index.html") && has(p):
			return redirect(strings.TrimSuffix(p, "index.html"))
		case strings.HasSuffix(p, ".html") && has(p):
			return redirect(strings.TrimSuffix(p, ".html") + "/")
		case strings.HasSuffix(p, "/") && has(p+"index.html"):
			return serve(p + "index.html")
		case strings.HasSuffix(p, "/") && p != "/" && has(trimSlash+".html"):
			return serve(trimSlash + ".html")
		case has(p):
			return serve(p)
		case has(p+".html") || has(p+"/index.html"):
			return redirect(p + "/")
		}
		return miss
	default: // auto-trailing-slash
		switch {
		case strings.HasSuffix(p, "/index.html") && has(p):
			return redirect(strings.TrimSuffix(p, "index.html"))
		case strings.HasSuffix(p, ".html") && has(p):
			base := strings.TrimSuffix(p, ".html")
			if has(base + "/index.html") {
				return serve(p) // /a.html and /a/ are different files
			}
			return redirect(base)
		case strings.HasSuffix(p, "/") && has(p+"index.html"):
			return serve(p + "index.html")
		case strings.HasSuffix(p, "/") && p != "/" && has(trimSlash+".html"):
			return redirect(trimSlash)
		case has(p):
			return serve(p)
		case has(p + ".html"):
			return serve(p + ".html")
		case has(p + "/index.html"):
			return redirect(p + "/")
		}
		return miss
	}
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
