package assets

import "testing"

// FuzzRules: _headers, _redirects and .assetsignore of any text compile or
// fail with an error; a compiled rule set matches any path without a panic.
func FuzzRules(f *testing.F) {
	f.Add("/a/*\n  X-A: :splat\n  ! X-B\n", "/old/:id /new/:id 301\n/* /index.html 200\n", "*.map\n!keep.map\n/dir/\n**/x\n", "/a/b/c")
	f.Add("/\n", "/ / 200\n", "\\!x\n", "/")
	f.Fuzz(func(t *testing.T, headers, redirects, ignore, path string) {
		if rules, err := parseHeaders(headers); err == nil {
			applyHeaders(rules, path, map[string][]string{})
		}
		if _, err := NewRouter(&Index{Headers: headers, Redirects: redirects, Files: map[string]Entry{"/index.html": {}}}, "", nil); err == nil {
			r, _ := NewRouter(&Index{Headers: headers, Redirects: redirects, Files: map[string]Entry{"/index.html": {}}}, "", nil)
			r.Fetch("GET", path)
			r.Route("GET", path, nil, true)
		}
		if rules, err := parseIgnore(ignore); err == nil {
			ignored(rules, path, false)
		}
	})
}
