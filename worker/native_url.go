package worker

import (
	"sync"

	"github.com/dop251/goja"
	whatwg "github.com/nlnwa/whatwg-url/url"
)

// URL parsing follows the WHATWG URL standard through
// github.com/nlnwa/whatwg-url. The JavaScript URL class keeps only the
// serialized parts; every change reparses, so no Go object outlives a call.

// urlCacheSize bounds the parsed URLs an isolate remembers.
const urlCacheSize = 16

// urlParser keeps only options, so one serves every goroutine.
var urlParser = whatwg.NewParser()

// parseURL parses input against an optional base; nil when either is
// invalid.
func parseURL(input string, base *string) *whatwg.Url {
	var b *whatwg.Url
	if base != nil {
		var err error
		if b, err = urlParser.Parse(*base); err != nil {
			return nil
		}
	}
	u, err := urlParser.BasicParser(input, b, nil, whatwg.NoState)
	if err != nil {
		return nil
	}
	return u
}

func registerURLNatives(set func(string, nativeFunc)) {
	parse := func(input string, base goja.Value) *whatwg.Url {
		if base == nil || goja.IsUndefined(base) {
			return parseURL(input, nil)
		}
		b := base.String()
		return parseURL(input, &b)
	}
	// urlParse(input, base?) -> parts or null. The parts of the last few
	// inputs parsed without a base are remembered: the script cannot
	// reach them (URL keeps them private) and never changes them.
	set("urlParse", func(iso *isolate, call goja.FunctionCall) goja.Value {
		input, base := call.Argument(0).String(), call.Argument(1)
		cacheable := base == nil || goja.IsUndefined(base)
		if cacheable {
			if parts, ok := iso.urls[input]; ok {
				return parts
			}
		}
		u := parse(input, base)
		if u == nil {
			return goja.Null()
		}
		parts := iso.urlParts(u)
		if cacheable {
			if iso.urls == nil || len(iso.urls) >= urlCacheSize {
				iso.urls = make(map[string]goja.Value, urlCacheSize)
			}
			iso.urls[input] = parts
		}
		return parts
	})
	// urlSet(href, component, value) -> parts (unchanged when the value is
	// rejected, as URL setters never throw) or null for an invalid href.
	// The results for the last few (href, component, value) are
	// remembered, as urlParse's are: a script sets the same part of the
	// same URL per request (a router rewriting the path).
	set("urlSet", func(iso *isolate, call goja.FunctionCall) goja.Value {
		key := urlSetKey{call.Argument(0).String(), call.Argument(1).String(), call.Argument(2).String()}
		if parts, ok := iso.urlSets[key]; ok {
			return parts
		}
		u := parse(key.href, nil)
		if u == nil {
			return goja.Null()
		}
		v := key.value
		switch key.component {
		case "protocol":
			u.SetProtocol(v)
		case "username":
			u.SetUsername(v)
		case "password":
			u.SetPassword(v)
		case "host":
			u.SetHost(v)
		case "hostname":
			u.SetHostname(v)
		case "port":
			u.SetPort(v)
		case "pathname":
			u.SetPathname(v)
		case "search":
			u.SetSearch(v)
		case "hash":
			u.SetHash(v)
		}
		parts := iso.urlParts(u)
		if len(key.href)+len(v) <= urlSetKeyMax {
			if iso.urlSets == nil || len(iso.urlSets) >= urlCacheSize {
				iso.urlSets = make(map[urlSetKey]goja.Value, urlCacheSize)
			}
			iso.urlSets[key] = parts
		}
		return parts
	})
}

// urlSetKey is a call of native.urlSet.
type urlSetKey struct{ href, component, value string }

// urlSetKeyMax bounds the href and value a remembered urlSet holds.
const urlSetKeyMax = 4096

// hrefs remembers the serialization of (short) request URLs recently
// seen: the same few come back on every request, and parsing is not free.
var hrefs = struct {
	sync.Mutex
	m map[string]string
}{m: map[string]string{}}

// requestHref returns the WHATWG serialization of a request URL, or false
// when it does not parse.
func requestHref(raw string) (string, bool) {
	hrefs.Lock()
	href, ok := hrefs.m[raw]
	hrefs.Unlock()
	if ok {
		return href, true
	}
	u := parseURL(raw, nil)
	if u == nil {
		return "", false
	}
	href = u.Href(false)
	if len(raw) > 512 {
		return href, true
	}
	hrefs.Lock()
	if len(hrefs.m) >= 1024 {
		clear(hrefs.m)
	}
	hrefs.m[raw] = href
	hrefs.Unlock()
	return href, true
}

func (iso *isolate) urlParts(u *whatwg.Url) goja.Value {
	o := iso.vm.NewObject()
	o.Set("href", u.Href(false))
	o.Set("protocol", u.Protocol())
	o.Set("username", u.Username())
	o.Set("password", u.Password())
	o.Set("host", u.Host())
	o.Set("hostname", u.Hostname())
	o.Set("port", u.Port())
	o.Set("pathname", u.Pathname())
	o.Set("search", u.Search())
	o.Set("hash", u.Hash())
	o.Set("origin", urlOrigin(u))
	return o
}

// urlOrigin serializes a URL's origin: scheme://host[:port] for the
// special network schemes, "null" for everything else (file: included).
func urlOrigin(u *whatwg.Url) string {
	switch u.Scheme() {
	case "http", "https", "ws", "wss", "ftp":
		return u.Protocol() + "//" + u.Host()
	case "blob":
		if inner := parseURL(u.Pathname(), nil); inner != nil {
			switch inner.Scheme() {
			case "http", "https":
				return urlOrigin(inner)
			}
		}
	}
	return "null"
}
