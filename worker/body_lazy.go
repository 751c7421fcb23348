package worker

import "github.com/dop251/goja"

// Lazy body streams made in Go. A text or bytes body read as .body gets a
// lazy bytes stream (internal.lazyBytesStream, 30_readable.js: an object
// on ReadableStream.prototype with one hidden property, its source, and
// no state until a stream method needs one). Frameworks read .body per
// request only to hand it to a new Response (Hono does so to add a
// header after the handler ran), so Go makes that stream itself and
// remembers the last few it made: while one has no state (nobody called
// a method on it), it is readable, unlocked and undisturbed, and Go may
// check it, read it or take its source without a call into JavaScript.
// A stream's state is always made by native.defineHidden(stream, kRS,
// state) (stream_in.go), which drops it from lazyStreams.

// lazyStreams is how many Go-made lazy streams are remembered, and
// lazyMaxSource the largest source remembered (in bytes, or UTF-16 units
// for a string): the memory holds a stream the script dropped until newer
// ones push it out, and a larger body gains little (the prelude takes
// it whole too).
const (
	lazyStreams   = 4
	lazyMaxSource = 64 << 10
)

type lazyStream struct {
	s   *goja.Object
	src goja.Value // a string or a Uint8Array
}

// lazyMarks are 30_readable.js's values Go needs to make and drain a lazy
// stream as it does.
type lazyMarks struct {
	source  *goja.Symbol // kLazy: the stream's bytes source
	state   *goja.Symbol // kRS: the stream's state
	drained goja.Value   // the state of a lazy stream drained whole
}

// newLazyStream is internal.lazyBytesStream(src), remembered unless src
// is larger than lazyMaxSource; size is its length.
func (c *fetchClass) newLazyStream(src goja.Value, size int) *goja.Object {
	s := c.iso.vm.CreateObject(c.helpers.rsProto)
	if err := s.DefineDataPropertySymbol(c.marks.source, src, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
	if size <= lazyMaxSource {
		copy(c.lazy[1:], c.lazy[:lazyStreams-1])
		c.lazy[0] = lazyStream{s: s, src: src}
	}
	return s
}

// lazySource is the source of s when s is a lazy stream Go made that has
// no state yet, or nil.
func (c *fetchClass) lazySource(s *goja.Object) goja.Value {
	for i := range c.lazy {
		if c.lazy[i].s == s {
			return c.lazy[i].src
		}
	}
	return nil
}

// forgetLazy drops s from the lazy streams (its state is being made).
func (c *fetchClass) forgetLazy(s *goja.Object) {
	for i := range c.lazy {
		if c.lazy[i].s == s {
			c.lazy[i] = lazyStream{}
		}
	}
}

// takeLazy takes the source of s, a lazy stream without a state, and
// leaves s as internal.drainBodySource does: locked for good, disturbed,
// closed, its source dropped.
func (c *fetchClass) takeLazy(s *goja.Object, src goja.Value) goja.Value {
	c.forgetLazy(s)
	if err := s.DefineDataPropertySymbol(c.marks.state, c.marks.drained, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
	if err := s.DefineDataPropertySymbol(c.marks.source, goja.Null(), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(err)
	}
	return src
}

// sourceBody is the body a lazy stream's source holds.
func (c *fetchClass) sourceBody(src goja.Value) jsBody {
	if goja.IsString(src) {
		return jsBody{kind: bodyText, text: src}
	}
	return jsBody{kind: bodyBytes, data: c.iso.bytesArg(src)}
}
