package httpcache

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestCache_EvictsLeastRecentlyUsedWithinBound(t *testing.T) {
	c := New(1 << 20)
	body := make([]byte, 200<<10) // five fit, a sixth evicts
	cc := hdr("Cache-Control", "max-age=60")
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if !c.Put("", "https://x/"+k, 200, cc, body) {
			t.Fatalf("put %s refused", k)
		}
	}
	if _, ok := c.Match("", "https://x/a", nil); !ok { // a is now the most recently used
		t.Fatal("a missing before the bound is reached")
	}
	c.Put("", "https://x/f", 200, cc, body)
	if c.Size() > 1<<20 {
		t.Fatalf("size %d over the bound", c.Size())
	}
	if _, ok := c.Match("", "https://x/b", nil); ok {
		t.Error("b (least recently used) was kept")
	}
	for _, k := range []string{"a", "f"} {
		if _, ok := c.Match("", "https://x/"+k, nil); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	if c.Put("", "https://x/huge", 200, cc, make([]byte, 300<<10)) {
		t.Error("an entry over a quarter of the bound was stored")
	}
}

func TestCache_SizeFollowsReplaceAndDelete(t *testing.T) {
	c := New(0)
	cc := hdr("Cache-Control", "max-age=60")
	c.Put("", "u", 200, cc, []byte("12345"))
	one := c.Size()
	c.Put("", "u", 200, cc, []byte("12345"))
	if c.Size() != one {
		t.Errorf("size after replace %d, want %d", c.Size(), one)
	}
	if !c.Delete("", "u") || c.Delete("", "u") || c.Size() != 0 {
		t.Errorf("delete: size %d", c.Size())
	}
	c.Put("named:a", "u", 200, cc, []byte("x"))
	if _, ok := c.Match("", "u", nil); ok {
		t.Error("a named cache's entry found in the default cache")
	}
}

func TestCache_Expiry(t *testing.T) {
	c := New(0)
	now := time.Unix(1000, 0)
	c.SetClock(func() time.Time { return now })
	c.Put("", "u", 200, hdr("Cache-Control", "max-age=10, s-maxage=20"), []byte("x"))
	now = now.Add(15 * time.Second)
	if _, ok := c.Match("", "u", nil); !ok {
		t.Fatal("s-maxage did not win over max-age")
	}
	now = now.Add(6 * time.Second)
	if _, ok := c.Match("", "u", nil); ok {
		t.Fatal("expired entry matched")
	}
	if c.Size() != 0 {
		t.Errorf("expired entry still counted: %d", c.Size())
	}
}

func TestLifetime_Rules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		h      http.Header
		keep   bool
	}{
		{"max-age", 200, hdr("Cache-Control", "max-age=5"), true},
		{"no lifetime", 200, hdr(), false},
		{"no-store", 200, hdr("Cache-Control", "max-age=5, no-store"), false},
		{"private", 200, hdr("Cache-Control", "private, max-age=5"), false},
		{"cookie", 200, hdr("Cache-Control", "max-age=5", "Set-Cookie", "a=b"), false},
		{"cookie private=Set-Cookie", 200, hdr("Cache-Control", "max-age=5, private=Set-Cookie", "Set-Cookie", "a=b"), true},
		{"status 500", 500, hdr("Cache-Control", "max-age=5"), false},
		{"status 404", 404, hdr("Cache-Control", "max-age=5"), true},
		{"bad expires", 200, hdr("Expires", "soon"), false},
		{"garbage max-age", 200, hdr("Cache-Control", "max-age=abc"), false},
	} {
		if _, keep := lifetime(tc.status, tc.h); keep != tc.keep {
			t.Errorf("%s: keep = %v, want %v", tc.name, keep, tc.keep)
		}
	}
}

func TestCache_RangeAndConditional(t *testing.T) {
	c := New(0)
	c.Put("", "u", 200, hdr("Cache-Control", "max-age=60", "ETag", `"v"`), []byte("0123456789"))
	for _, tc := range []struct {
		rng, body, cr string
		status        int
	}{
		{"bytes=0-0", "0", "bytes 0-0/10", 206},
		{"bytes=8-", "89", "bytes 8-9/10", 206},
		{"bytes=5-100", "56789", "bytes 5-9/10", 206},
		{"bytes=-20", "0123456789", "bytes 0-9/10", 206},
		{"bytes=10-", "", "bytes */10", 416},
		{"bytes=3-1", "", "bytes */10", 416},
		{"bytes=0-1,3-4", "", "bytes */10", 416},
	} {
		hit, ok := c.Match("", "u", hdr("Range", tc.rng))
		if !ok || hit.Status != tc.status || string(hit.Body) != tc.body || hit.Header.Get("Content-Range") != tc.cr {
			t.Errorf("%s: got %v %d %q %q", tc.rng, ok, hit.Status, hit.Body, hit.Header.Get("Content-Range"))
		}
	}
	if hit, _ := c.Match("", "u", hdr("If-None-Match", `W/"v", "w"`)); hit.Status != 304 || len(hit.Body) != 0 {
		t.Errorf("If-None-Match: %d", hit.Status)
	}
	if hit, _ := c.Match("", "u", hdr("If-None-Match", `"w"`)); hit.Status != 200 || !strings.HasPrefix(string(hit.Body), "0123") {
		t.Errorf("other If-None-Match: %d", hit.Status)
	}
}
