package worker

import (
	"bytes"
	"io"
	"runtime"
	"strings"

	"github.com/dop251/goja"
	"golang.org/x/net/html"
)

// The tokenizer behind HTMLRewriter (prelude/64_htmlrewriter.js): the
// response body goes in chunk by chunk (htmlWrite) and comes back as the
// tokens that chunk completed, each with its raw bytes, so what no
// handler touches is passed on byte for byte. golang.org/x/net/html's
// tokenizer runs on a goroutine of its own, reading from the chunks it is
// fed; a token cut by a chunk boundary is held until the next chunk
// completes it. Attribute values are kept as written (workerd's
// getAttribute returns them undecoded), so they are read from the raw tag
// here rather than from the tokenizer, which decodes them.

// htmlToken kinds, as the prelude reads them.
const (
	htmlText = iota
	htmlStart
	htmlEnd
	htmlComment
	htmlDoctype
)

type htmlTok struct {
	kind        int
	raw         string
	name        string   // tag name (lowercase) or doctype name
	attrs       []string // name, raw value, ...; doctype: publicId, systemId ("\x00" for none)
	selfClosing bool
}

// htmlFeed is the tokenizer's reader: Read hands over the chunks fed in
// and, when it runs out, reports the tokens completed so far (out) and
// waits for the next chunk (in; nil is the end).
type htmlFeed struct {
	in      chan []byte
	out     chan []htmlTok
	pending []byte
	batch   []htmlTok
	fed     bool
	eof     bool
}

func (f *htmlFeed) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.eof {
			return 0, io.EOF
		}
		if f.fed {
			f.out <- f.batch
			f.batch = nil
		}
		chunk, ok := <-f.in
		f.fed = true
		if !ok || chunk == nil {
			f.eof = true
			return 0, io.EOF
		}
		f.pending = chunk
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// htmlStream is one transform's tokenizer.
type htmlStream struct {
	feed *htmlFeed
	done chan struct{}
}

// newHTMLStream starts a tokenizer; a stream the script drops unfinished
// is ended by the garbage collector, so its goroutine exits.
func newHTMLStream() *htmlStream {
	s := &htmlStream{feed: &htmlFeed{in: make(chan []byte), out: make(chan []htmlTok)}, done: make(chan struct{})}
	go runHTML(s.feed, s.done)
	runtime.AddCleanup(s, func(e htmlEnder) { e.end() }, htmlEnder{s.feed, s.done})
	return s
}

func runHTML(feed *htmlFeed, done chan struct{}) {
	s := struct {
		feed *htmlFeed
		done chan struct{}
	}{feed, done}
	z := html.NewTokenizer(s.feed)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			// The end (or an error the tokenizer cannot get past): what it
			// holds unread is passed on as text.
			if raw := z.Raw(); len(raw) > 0 {
				s.feed.batch = append(s.feed.batch, htmlTok{kind: htmlText, raw: string(raw)})
			}
			s.feed.out <- s.feed.batch
			close(s.done)
			return
		}
		raw := string(z.Raw())
		t := htmlTok{raw: raw}
		switch tt {
		case html.TextToken:
			t.kind = htmlText
		case html.StartTagToken, html.SelfClosingTagToken:
			t.kind = htmlStart
			name, _ := z.TagName()
			t.name = string(name)
			t.attrs = rawAttrs(raw, len(name))
			t.selfClosing = tt == html.SelfClosingTagToken
		case html.EndTagToken:
			t.kind = htmlEnd
			name, _ := z.TagName()
			t.name = string(name)
		case html.CommentToken:
			t.kind = htmlComment
			t.name = commentText(raw)
		case html.DoctypeToken:
			t.kind = htmlDoctype
			t.name, t.attrs = doctypeParts(string(z.Text()))
		}
		s.feed.batch = append(s.feed.batch, t)
	}
}

// write feeds a chunk (nil: the end) and returns the tokens it completed.
func (s *htmlStream) write(chunk []byte) []htmlTok {
	select {
	case <-s.done:
		return nil
	default:
	}
	defer func() { _ = recover() }() // in closed by close(): the stream was given up
	if chunk == nil {
		close(s.feed.in)
	} else {
		s.feed.in <- chunk
	}
	select {
	case toks := <-s.feed.out:
		return toks
	case <-s.done:
		return nil
	}
}

// close ends a stream nobody finishes (a cancelled body), so its
// goroutine exits.
func (s *htmlStream) close() { htmlEnder{s.feed, s.done}.end() }

type htmlEnder struct {
	feed *htmlFeed
	done chan struct{}
}

func (e htmlEnder) end() {
	select {
	case <-e.done:
		return
	default:
	}
	go func() {
		defer func() { _ = recover() }() // in may be closed already
		close(e.feed.in)
	}()
	go func() {
		for {
			select {
			case <-e.feed.out:
			case <-e.done:
				return
			}
		}
	}()
}

func commentText(raw string) string {
	switch {
	case strings.HasPrefix(raw, "<!--"):
		return strings.TrimSuffix(strings.TrimPrefix(raw, "<!--"), "-->")
	case strings.HasPrefix(raw, "<!"), strings.HasPrefix(raw, "</"):
		return strings.TrimSuffix(raw[2:], ">")
	case strings.HasPrefix(raw, "<?"):
		return strings.TrimSuffix(raw[1:], ">")
	}
	return raw
}

// doctypeParts reads "html PUBLIC "p" "s"" (the tokenizer's text of a
// doctype) into its name and [publicId, systemId], "\x00" for absent.
func doctypeParts(text string) (string, []string) {
	name, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	ids := []string{"\x00", "\x00"}
	rest = strings.TrimSpace(rest)
	quoted := func(s string) (string, string, bool) {
		s = strings.TrimSpace(s)
		if s == "" || (s[0] != '"' && s[0] != '\'') {
			return "", s, false
		}
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return s[1:], "", true
		}
		return s[1 : end+1], s[end+2:], true
	}
	upper := strings.ToUpper(rest)
	switch {
	case strings.HasPrefix(upper, "PUBLIC"):
		v, r, ok := quoted(rest[6:])
		if ok {
			ids[0] = v
		}
		if v, _, ok := quoted(r); ok {
			ids[1] = v
		}
	case strings.HasPrefix(upper, "SYSTEM"):
		if v, _, ok := quoted(rest[6:]); ok {
			ids[1] = v
		}
	}
	return strings.ToLower(name), ids
}

// rawAttrs reads a start tag's attributes as written: names lowercased,
// values without their quotes and undecoded. nameLen is the tag name's
// length (the tag starts "<" + name).
func rawAttrs(raw string, nameLen int) []string {
	s := raw[min(1+nameLen, len(raw)):]
	s = strings.TrimSuffix(s, ">")
	var out []string
	seen := map[string]bool{}
	i := 0
	space := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }
	for i < len(s) {
		for i < len(s) && (space(s[i]) || s[i] == '/') {
			i++
		}
		start := i
		for i < len(s) && !space(s[i]) && s[i] != '=' && s[i] != '>' && (s[i] != '/' || i == start) {
			i++
		}
		if i == start {
			break
		}
		name := strings.ToLower(s[start:i])
		for i < len(s) && space(s[i]) {
			i++
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && space(s[i]) {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				q := s[i]
				end := strings.IndexByte(s[i+1:], q)
				if end < 0 {
					val, i = s[i+1:], len(s)
				} else {
					val, i = s[i+1:i+1+end], i+2+end
				}
			} else {
				vs := i
				for i < len(s) && !space(s[i]) && s[i] != '>' {
					i++
				}
				val = s[vs:i]
			}
		}
		if !seen[name] { // the first of duplicates counts, as in HTML
			seen[name] = true
			out = append(out, name, val)
		}
	}
	return out
}

func (iso *isolate) htmlTokens(toks []htmlTok) goja.Value {
	vm := iso.vm
	arr := make([]any, len(toks))
	for i, t := range toks {
		attrs := make([]any, len(t.attrs))
		for j, a := range t.attrs {
			if a == "\x00" {
				attrs[j] = nil
			} else {
				attrs[j] = a
			}
		}
		arr[i] = vm.NewArray(t.kind, t.raw, t.name, vm.NewArray(attrs...), t.selfClosing)
	}
	return vm.NewArray(arr...)
}

func registerHTMLNatives(set func(string, nativeFunc)) {
	set("htmlNew", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.vm.ToValue(newHTMLStream())
	})
	// htmlWrite(stream, bytes | null) -> Promise<tokens>
	set("htmlWrite", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s, _ := call.Argument(0).Export().(*htmlStream)
		if s == nil {
			panic(iso.vm.NewTypeError("not an HTML stream"))
		}
		var chunk []byte
		if b := call.Argument(1); !goja.IsNull(b) && !goja.IsUndefined(b) {
			chunk = bytes.Clone(iso.bytesArg(b))
			if chunk == nil {
				chunk = []byte{}
			}
		}
		host := &Host{iso: iso}
		return host.Async(func() func(*goja.Runtime) (goja.Value, error) {
			toks := s.write(chunk)
			return func(vm *goja.Runtime) (goja.Value, error) { return iso.htmlTokens(toks), nil }
		})
	})
	set("htmlClose", func(iso *isolate, call goja.FunctionCall) goja.Value {
		if s, _ := call.Argument(0).Export().(*htmlStream); s != nil {
			s.close()
		}
		return goja.Undefined()
	})
}
