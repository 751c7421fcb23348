// Package assets serves a Worker's static assets (the wrangler "assets"
// key) without running JavaScript: celld deploy scans the directory
// (Scan), stores each body once under deploy-blobs/<sha256> (Upload) and
// an index beside the version's manifest; every node loads the index and
// answers GET and HEAD for assets itself (Server), from a bounded on-disk
// cache, with Cloudflare's routing rules (html_handling,
// not_found_handling, run_worker_first, _headers, _redirects).
//
// It is a data-plane package: it never imports the JavaScript engine. The
// env.ASSETS binding lives in assets/assetsjs.
package assets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Config is the "assets" section of a Wrangler config.
type Config struct {
	Directory        string         `json:"directory"`
	Binding          string         `json:"binding,omitempty"`
	HTMLHandling     string         `json:"html_handling,omitempty"`      // auto-trailing-slash (default), force-trailing-slash, drop-trailing-slash, none
	NotFoundHandling string         `json:"not_found_handling,omitempty"` // none (default), single-page-application, 404-page
	RunWorkerFirst   RunWorkerFirst `json:"run_worker_first"`
}

// RunWorkerFirst is run_worker_first: true/false, or a list of path
// patterns ("/api/*"; "!/api/docs/*" excludes) that go to the Worker
// before any asset is looked up.
type RunWorkerFirst struct {
	All      bool
	Patterns []string
}

// UnmarshalJSON accepts a boolean or an array of strings.
func (r *RunWorkerFirst) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*r = RunWorkerFirst{}
		return nil
	}
	if err := json.Unmarshal(b, &r.All); err == nil {
		return nil
	}
	var ps []string
	if err := json.Unmarshal(b, &ps); err != nil {
		return fmt.Errorf("run_worker_first: want true, false or an array of path patterns")
	}
	*r = RunWorkerFirst{Patterns: ps}
	return nil
}

// MarshalJSON writes what UnmarshalJSON reads.
func (r RunWorkerFirst) MarshalJSON() ([]byte, error) {
	if r.Patterns != nil {
		return json.Marshal(r.Patterns)
	}
	return json.Marshal(r.All)
}

// Cloudflare's limits on a Worker's assets.
const (
	MaxFiles       = 20000
	MaxFileSize    = 25 << 20 // 25 MiB per file
	MaxRulesFile   = 100 << 10
	MaxRWFPatterns = 100
)

var (
	htmlHandlings     = []string{"auto-trailing-slash", "force-trailing-slash", "drop-trailing-slash", "none"}
	notFoundHandlings = []string{"none", "single-page-application", "404-page"}
)

// Validate reports every problem of c for a project in dir, each a
// sentence naming its key.
func (c *Config) Validate(dir string) []string {
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	switch {
	case c.Directory == "":
		add(`assets: "directory" is required, e.g. "./public"`)
	default:
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(c.Directory)))
		switch {
		case err != nil:
			add("assets.directory %q does not exist", c.Directory)
		case !st.IsDir():
			add("assets.directory %q is not a directory", c.Directory)
		}
	}
	if c.HTMLHandling != "" && !contains(htmlHandlings, c.HTMLHandling) {
		add("assets.html_handling %q: want one of %s", c.HTMLHandling, strings.Join(htmlHandlings, ", "))
	}
	if c.NotFoundHandling != "" && !contains(notFoundHandlings, c.NotFoundHandling) {
		add("assets.not_found_handling %q: want one of %s", c.NotFoundHandling, strings.Join(notFoundHandlings, ", "))
	}
	if n := len(c.RunWorkerFirst.Patterns); n > MaxRWFPatterns {
		add("assets.run_worker_first: %d patterns, at most %d", n, MaxRWFPatterns)
	}
	for i, p := range c.RunWorkerFirst.Patterns {
		if !strings.HasPrefix(strings.TrimPrefix(p, "!"), "/") {
			add("assets.run_worker_first[%d] %q: a pattern starts with / (or !/ to exclude)", i, p)
		}
	}
	return ps
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
