// Package httpcache is the store behind the Workers Cache API
// (caches.default, caches.open(name)): one node's memory, bounded in
// bytes, least recently used entries evicted first.
//
// What it decides: whether a response may be stored and for how long
// (Cloudflare's rules, as workerd's local cache applies them: only
// understood statuses; no-store, no-cache and private refuse; Set-Cookie
// refuses unless the response says private=Set-Cookie, which stores it
// without the cookie; s-maxage, then max-age, then Expires give the
// lifetime, and no lifetime means not stored), and what a lookup answers
// (the stored response, 206 for one satisfiable Range, 416 for an
// unsatisfiable one, 304 for a matching If-None-Match). What it does not
// decide: the JavaScript API's argument rules (the worker package throws
// those), or anything across nodes: each node has its own cache, as each
// Cloudflare data center has.
package httpcache

import (
	"container/list"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultMaxBytes is the bound New uses for max <= 0.
const DefaultMaxBytes = 64 << 20

// Cache is one node's Cache API store. It is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	lru   *list.List               // of *entry, most recently used first
	byKey map[string]*list.Element // ns + "\x00" + url
	now   func() time.Time
}

type entry struct {
	key     string
	status  int
	header  http.Header
	body    []byte
	expires time.Time
}

func (e *entry) cost() int64 {
	n := int64(len(e.key) + len(e.body) + 64)
	for k, vs := range e.header {
		for _, v := range vs {
			n += int64(len(k) + len(v))
		}
	}
	return n
}

// New makes a cache holding at most max bytes (keys, headers and bodies).
func New(max int64) *Cache {
	if max <= 0 {
		max = DefaultMaxBytes
	}
	return &Cache{max: max, lru: list.New(), byKey: map[string]*list.Element{}, now: time.Now}
}

// SetClock replaces the clock (tests).
func (c *Cache) SetClock(now func() time.Time) { c.now = now }

// Size is the bytes held now.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// storable are the statuses a response may be stored with.
var storable = map[int]bool{200: true, 203: true, 300: true, 301: true, 302: true, 303: true, 307: true,
	308: true, 404: true, 405: true, 410: true, 414: true, 501: true}

// Put stores a response to a GET of url in cache ns when the rules allow,
// and reports whether it did. An entry bigger than a quarter of the bound
// is not stored (it would evict most of the cache).
func (c *Cache) Put(ns, url string, status int, header http.Header, body []byte) bool {
	key := ns + "\x00" + url
	ttl, keep := lifetime(status, header)
	if !keep {
		return false
	}
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Del("Set-Cookie") // stored only under private=Set-Cookie, without it
	e := &entry{key: key, status: status, header: h, body: append([]byte(nil), body...), expires: c.now().Add(ttl)}
	cost := e.cost()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(key)
	if cost > c.max/4 {
		return false
	}
	c.byKey[key] = c.lru.PushFront(e)
	c.size += cost
	for c.size > c.max {
		c.removeElement(c.lru.Back())
	}
	return true
}

// lifetime is how long a response may be kept, or false when it may not.
func lifetime(status int, header http.Header) (time.Duration, bool) {
	if !storable[status] {
		return 0, false
	}
	cc := parseCacheControl(header.Values("Cache-Control"))
	if _, ok := cc["no-store"]; ok {
		return 0, false
	}
	if _, ok := cc["no-cache"]; ok {
		return 0, false
	}
	if v, ok := cc["private"]; ok && !strings.EqualFold(v, "set-cookie") {
		return 0, false
	}
	if len(header.Values("Set-Cookie")) > 0 {
		if v, ok := cc["private"]; !ok || !strings.EqualFold(v, "set-cookie") {
			return 0, false
		}
	}
	age := func(k string) (time.Duration, bool) {
		v, ok := cc[k]
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, true
		}
		return time.Duration(min(n, 1<<32)) * time.Second, true
	}
	var ttl time.Duration
	if d, ok := age("s-maxage"); ok {
		ttl = d
	} else if d, ok := age("max-age"); ok {
		ttl = d
	} else if v := header.Get("Expires"); v != "" {
		t, err := http.ParseTime(v)
		if err != nil {
			return 0, false
		}
		ttl = time.Until(t)
	}
	return ttl, ttl > 0
}

// parseCacheControl reads the directives of Cache-Control: names as
// written (workerd's cache matches them case-sensitively), values without
// quotes.
func parseCacheControl(values []string) map[string]string {
	out := map[string]string{}
	for _, v := range values {
		for _, d := range strings.Split(v, ",") {
			name, val, _ := strings.Cut(d, "=")
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			out[name] = strings.Trim(strings.TrimSpace(val), `"`)
		}
	}
	return out
}

// Hit is what a lookup answers.
type Hit struct {
	Status int
	Header http.Header
	Body   []byte
}

// Match looks url up in cache ns for a GET with the request headers req
// (Range, If-None-Match).
func (c *Cache) Match(ns, url string, req http.Header) (*Hit, bool) {
	key := ns + "\x00" + url
	c.mu.Lock()
	el, ok := c.byKey[key]
	if !ok {
		c.mu.Unlock()
		return nil, false
	}
	e := el.Value.(*entry)
	if !c.now().Before(e.expires) {
		c.removeElement(el)
		c.mu.Unlock()
		return nil, false
	}
	c.lru.MoveToFront(el)
	c.mu.Unlock()
	h := e.header.Clone()
	h.Set("Cf-Cache-Status", "HIT")
	if inm := req.Get("If-None-Match"); inm != "" && etagMatch(inm, e.header.Get("ETag")) {
		return &Hit{Status: http.StatusNotModified, Header: h}, true
	}
	if rg := req.Get("Range"); rg != "" && e.status == http.StatusOK {
		start, end, ok := parseRange(rg, int64(len(e.body)))
		if !ok {
			return &Hit{Status: http.StatusRequestedRangeNotSatisfiable, Header: http.Header{
				"Content-Range":   {"bytes */" + strconv.Itoa(len(e.body))},
				"Cf-Cache-Status": {"HIT"},
			}}, true
		}
		h.Set("Content-Range", "bytes "+strconv.FormatInt(start, 10)+"-"+strconv.FormatInt(end, 10)+"/"+strconv.Itoa(len(e.body)))
		h.Del("Content-Length")
		return &Hit{Status: http.StatusPartialContent, Header: h, Body: e.body[start : end+1]}, true
	}
	return &Hit{Status: e.status, Header: h, Body: e.body}, true
}

// Delete removes url from cache ns and reports whether it was there.
func (c *Cache) Delete(ns, url string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.remove(ns + "\x00" + url)
}

func (c *Cache) remove(key string) bool {
	el, ok := c.byKey[key]
	if !ok {
		return false
	}
	live := c.now().Before(el.Value.(*entry).expires)
	c.removeElement(el)
	return live
}

func (c *Cache) removeElement(el *list.Element) {
	e := el.Value.(*entry)
	c.lru.Remove(el)
	delete(c.byKey, e.key)
	c.size -= e.cost()
}

func etagMatch(inm, etag string) bool {
	if etag == "" {
		return false
	}
	weak := func(s string) string { return strings.TrimPrefix(strings.TrimSpace(s), "W/") }
	for _, t := range strings.Split(inm, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || weak(t) == weak(etag) {
			return true
		}
	}
	return false
}

// parseRange reads one "bytes=a-b", "bytes=a-" or "bytes=-n" range of a
// body of n bytes, as the inclusive [start, end]; ok is false when it is
// unsatisfiable or not one byte range.
func parseRange(h string, n int64) (start, end int64, ok bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(h), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, 0, false
	}
	a, b, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, 0, false
	}
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == "" {
		k, err := strconv.ParseInt(b, 10, 64)
		if err != nil || k <= 0 || n == 0 {
			return 0, 0, false
		}
		return max(n-k, 0), n - 1, true
	}
	s, err := strconv.ParseInt(a, 10, 64)
	if err != nil || s < 0 || s >= n {
		return 0, 0, false
	}
	e := n - 1
	if b != "" {
		if e, err = strconv.ParseInt(b, 10, 64); err != nil || e < s {
			return 0, 0, false
		}
		e = min(e, n-1)
	}
	return s, e, true
}
