package deploy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// goja parses class fields, private members and static blocks natively,
// with one exception: a field named get, set or async that has an
// initializer (`get = () => …`) is read as the start of an accessor or
// async method and fails with "Unexpected token =". The same field with
// its name quoted (`"get" = …`) parses, and defines exactly the same
// property, so instead of letting esbuild lower every class field in the
// bundle (which turned each field access into __privateGet/__publicField
// helper calls and cost about a third of a framework's JS time), the
// bundle keeps fields native and quoteAccessorNamedFields quotes just
// those names.
//
// It is driven by goja's own parser, so it only ever touches a place the
// engine actually rejects: parse, and while the first error is an
// "Unexpected token =" right after a bare get/set/async name, quote that
// name and parse again. Anything else — a different error, a fix that
// does not move the error on, too many rounds — is errFieldRewrite, and
// Bundle falls back to lowering all class fields, which always parses.

// maxFieldRewrites bounds the parse-and-fix rounds for one bundle (each
// round parses the whole bundle once).
const maxFieldRewrites = 256

var errFieldRewrite = errors.New("quote accessor-named class fields")

// quoteAccessorNamedFields returns code with every class field named get,
// set or async that has an initializer quoted, and how many it quoted. The
// result parses in goja (its program is returned too, so that later
// rewrites need not parse it again), or the error says why it could not
// be made to.
func quoteAccessorNamedFields(code []byte) ([]byte, *ast.Program, int, error) {
	src := string(code)
	fixed := 0
	lastAt := -1
	for round := 0; ; round++ {
		prog, err := parser.ParseFile(nil, "index.js", src, 0)
		if err == nil {
			return []byte(src), prog, fixed, nil
		}
		if round >= maxFieldRewrites {
			return nil, nil, fixed, fmt.Errorf("%w: more than %d fields", errFieldRewrite, maxFieldRewrites)
		}
		line, col, msg, ok := firstParseError(err)
		if !ok || msg != "Unexpected token =" {
			return nil, nil, fixed, fmt.Errorf("%w: %v", errFieldRewrite, err)
		}
		at, ok := offsetOf(src, line, col)
		if ok {
			at, ok = equalsAt(src, at)
		}
		if !ok || at <= lastAt {
			return nil, nil, fixed, fmt.Errorf("%w: cannot place %v", errFieldRewrite, err)
		}
		start, end, ok := nameBefore(src, at)
		if !ok {
			return nil, nil, fixed, fmt.Errorf("%w: %v is not after get, set or async", errFieldRewrite, err)
		}
		src = src[:start] + `"` + src[start:end] + `"` + src[end:]
		lastAt = at + 2
		fixed++
	}
}

// firstParseError extracts the position and message of goja's first parse
// error.
func firstParseError(err error) (line, col int, msg string, ok bool) {
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		e := list[0]
		return e.Position.Line, e.Position.Column, e.Message, true
	}
	var one *parser.Error
	if errors.As(err, &one) {
		return one.Position.Line, one.Position.Column, one.Message, true
	}
	return 0, 0, "", false
}

// offsetOf converts goja's 1-based line and column to a byte offset. The
// bundle is ASCII (esbuild escapes everything else by default), so columns
// and bytes agree; a position that lands outside its line is refused.
func offsetOf(src string, line, col int) (int, bool) {
	off := 0
	for l := 1; l < line; l++ {
		nl := strings.IndexByte(src[off:], '\n')
		if nl < 0 {
			return 0, false
		}
		off += nl + 1
	}
	end := strings.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src) - off
	}
	if col < 1 || col > end {
		return 0, false
	}
	return off + col - 1, true
}

// equalsAt finds the '=' goja complains about: goja reports the error at
// the token after it, so it is at or before pos, with only spaces between.
func equalsAt(src string, pos int) (int, bool) {
	if src[pos] == '=' {
		return pos, true
	}
	for pos > 0 && isSpace(src[pos-1]) {
		pos--
	}
	if pos > 0 && src[pos-1] == '=' {
		return pos - 1, true
	}
	return 0, false
}

// nameBefore finds the bare identifier get, set or async that ends just
// before at (spaces and line breaks between allowed) and returns its span.
// A name that is part of a longer identifier, a member access (x.get) or
// already quoted is refused.
func nameBefore(src string, at int) (start, end int, ok bool) {
	end = at
	for end > 0 && isSpace(src[end-1]) {
		end--
	}
	start = end
	for start > 0 && isIdentByte(src[start-1]) {
		start--
	}
	switch src[start:end] {
	case "get", "set", "async":
	default:
		return 0, 0, false
	}
	if start > 0 && (src[start-1] == '.' || src[start-1] == '#' || src[start-1] == '"' || src[start-1] == '\'') {
		return 0, 0, false
	}
	return start, end, true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
