package assets

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// pattern is a path pattern of _headers, _redirects and run_worker_first:
// "*" matches anything (captured as :splat), ":name" one path segment.
type pattern struct {
	re    *regexp.Regexp
	names []string
}

func compilePattern(p string) (*pattern, error) {
	var b strings.Builder
	b.WriteString("^")
	var names []string
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '*':
			b.WriteString("(.*)")
			names = append(names, "splat")
		case c == ':' && i+1 < len(p) && isNameByte(p[i+1]):
			j := i + 1
			for j < len(p) && isNameByte(p[j]) {
				j++
			}
			names = append(names, p[i+1:j])
			b.WriteString("([^/]+)")
			i = j - 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	return &pattern{re: re, names: names}, nil
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// match reports whether path matches, and the captured values by name.
func (p *pattern) match(path string) (map[string]string, bool) {
	m := p.re.FindStringSubmatch(path)
	if m == nil {
		return nil, false
	}
	vals := make(map[string]string, len(p.names))
	for i, n := range p.names {
		vals[n] = m[i+1]
	}
	return vals, true
}

// substitute replaces :splat and :name in s with the captured values.
func substitute(s string, vals map[string]string) string {
	if len(vals) == 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == ':' && i+1 < len(s) && isNameByte(s[i+1]) {
			j := i + 1
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			if v, ok := vals[s[i+1:j]]; ok {
				b.WriteString(v)
				i = j - 1
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// headerRule is one block of _headers: a path pattern, headers to set and
// headers to remove ("! Name").
type headerRule struct {
	pat    *pattern
	set    [][2]string
	remove []string
}

// forbiddenHeaders cannot be set by _headers: they describe the
// connection and the framing, which the server owns.
var forbiddenHeaders = map[string]bool{"connection": true, "content-length": true, "transfer-encoding": true}

func parseHeaders(text string) ([]headerRule, error) {
	var rules []headerRule
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		if !indented {
			if !strings.HasPrefix(trimmed, "/") {
				return nil, fmt.Errorf("_headers line %d: %q: a rule starts with a path (/…); absolute URLs are not supported", n+1, trimmed)
			}
			p, err := compilePattern(trimmed)
			if err != nil {
				return nil, fmt.Errorf("_headers line %d: %w", n+1, err)
			}
			rules = append(rules, headerRule{pat: p})
			if len(rules) > MaxHeaderRules {
				return nil, fmt.Errorf("_headers: more than %d rules, Cloudflare's limit", MaxHeaderRules)
			}
			continue
		}
		if len(rules) == 0 {
			return nil, fmt.Errorf("_headers line %d: a header before any path", n+1)
		}
		r := &rules[len(rules)-1]
		if name, ok := strings.CutPrefix(trimmed, "!"); ok {
			r.remove = append(r.remove, strings.TrimSpace(name))
			continue
		}
		name, value, ok := strings.Cut(trimmed, ":")
		if !ok {
			return nil, fmt.Errorf("_headers line %d: %q: want Name: value", n+1, trimmed)
		}
		name = strings.TrimSpace(name)
		if forbiddenHeaders[strings.ToLower(name)] {
			return nil, fmt.Errorf("_headers line %d: %s cannot be set", n+1, name)
		}
		r.set = append(r.set, [2]string{name, strings.TrimSpace(value)})
	}
	return rules, nil
}

// apply sets the headers of every rule that matches path: the values of
// several matching rules for one name are joined with ", ".
func applyHeaders(rules []headerRule, path string, h http.Header) {
	seen := map[string]bool{}
	for _, r := range rules {
		vals, ok := r.pat.match(path)
		if !ok {
			continue
		}
		for _, kv := range r.set {
			k := http.CanonicalHeaderKey(kv[0])
			v := substitute(kv[1], vals)
			if seen[k] {
				h.Set(k, h.Get(k)+", "+v)
			} else {
				h.Set(k, v)
				seen[k] = true
			}
		}
		for _, k := range r.remove {
			h.Del(k)
		}
	}
}

// redirectRule is one line of _redirects.
type redirectRule struct {
	pat    *pattern
	to     string
	status int
}

func parseRedirects(text string) ([]redirectRule, error) {
	var rules []redirectRule
	static, dynamic := 0, 0
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("_redirects line %d: %q: want FROM TO [STATUS]", n+1, line)
		}
		if !strings.HasPrefix(f[0], "/") {
			return nil, fmt.Errorf("_redirects line %d: %q: FROM starts with /", n+1, f[0])
		}
		status := http.StatusFound
		if len(f) == 3 {
			s, err := strconv.Atoi(f[2])
			if err != nil || !validRedirectStatus[s] {
				return nil, fmt.Errorf("_redirects line %d: status %q: want 200, 301, 302, 303, 307 or 308", n+1, f[2])
			}
			status = s
		}
		if status == http.StatusOK && !strings.HasPrefix(f[1], "/") {
			return nil, fmt.Errorf("_redirects line %d: a 200 rewrite goes to a path of this site, not %q", n+1, f[1])
		}
		p, err := compilePattern(f[0])
		if err != nil {
			return nil, fmt.Errorf("_redirects line %d: %w", n+1, err)
		}
		rules = append(rules, redirectRule{pat: p, to: f[1], status: status})
		if len(p.names) == 0 {
			static++
		} else {
			dynamic++
		}
	}
	if static > MaxStaticRedirects || dynamic > MaxDynamicRedirects {
		return nil, fmt.Errorf("_redirects: %d static and %d dynamic rules; Cloudflare's limits are %d and %d", static, dynamic, MaxStaticRedirects, MaxDynamicRedirects)
	}
	return rules, nil
}

// Cloudflare's limits on _redirects and _headers rules.
const (
	MaxStaticRedirects  = 2000
	MaxDynamicRedirects = 100
	MaxHeaderRules      = 100
)

var validRedirectStatus = map[int]bool{200: true, 301: true, 302: true, 303: true, 307: true, 308: true}

// rwfMatcher decides run_worker_first for a path.
type rwfMatcher struct {
	all     bool
	include []*pattern
	exclude []*pattern
}

func newRWF(r RunWorkerFirst) (*rwfMatcher, error) {
	m := &rwfMatcher{all: r.All}
	for _, p := range r.Patterns {
		neg := strings.HasPrefix(p, "!")
		cp, err := compilePattern(strings.TrimPrefix(p, "!"))
		if err != nil {
			return nil, fmt.Errorf("run_worker_first %q: %w", p, err)
		}
		if neg {
			m.exclude = append(m.exclude, cp)
		} else {
			m.include = append(m.include, cp)
		}
	}
	return m, nil
}

func (m *rwfMatcher) match(path string) bool {
	if m.all {
		return true
	}
	for _, p := range m.exclude {
		if _, ok := p.match(path); ok {
			return false
		}
	}
	for _, p := range m.include {
		if _, ok := p.match(path); ok {
			return true
		}
	}
	return false
}
