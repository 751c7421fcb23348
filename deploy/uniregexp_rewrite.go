package deploy

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// translateUnicodeRegExps rewrites, in a bundle, each RegExp construction
// whose pattern and flags are string literals — which is what esbuild
// makes of a /…/u literal with \p{…} and of any /…/v literal — and each
// regexp literal with either, so that its pattern goja can run
// (translateUnicodePattern). A bundle with none, or that goja cannot
// parse, comes back unchanged. prog is code's program when the caller has
// it (nil: parsed here, only if code has anything to translate).
func translateUnicodeRegExps(code []byte, prog *ast.Program) []byte {
	if !bytes.Contains(code, []byte(`\p{`)) && !bytes.Contains(code, []byte(`\P{`)) && !bytes.Contains(code, []byte(`"v")`)) {
		return code
	}
	src := string(code)
	if prog == nil {
		var err error
		if prog, err = parser.ParseFile(nil, "index.js", src, 0); err != nil {
			return code
		}
	}
	var edits []argEdit
	cached := 0
	seen := map[any]bool{} // a node can be reachable twice
	walkAST(reflect.ValueOf(prog), func(n any) {
		if seen[n] {
			return
		}
		seen[n] = true
		switch n := n.(type) {
		case *ast.RegExpLiteral:
			if pattern, flags, ok := translated(n.Pattern, n.Flags); ok {
				at := int(n.Idx) - 1
				edits = append(edits, argEdit{at, at + len(n.Literal), "/" + pattern + "/" + flags})
			}
		case *ast.NewExpression:
			if e, ok := regExpArgs(n.Callee, n.ArgumentList); ok {
				// Compiled once: new RegExp(aRegExp) clones it, sharing the
				// compiled pattern (a class of every letter takes goja
				// about a millisecond to compile, and this expression may
				// sit in a loop).
				e.text = fmt.Sprintf("%s(%d, %s)", cacheFunc, cached, e.text)
				cached++
				edits = append(edits, e)
			}
		case *ast.CallExpression:
			if e, ok := regExpArgs(n.Callee, n.ArgumentList); ok {
				edits = append(edits, e)
			}
		}
	})
	if len(edits) == 0 {
		return code
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	for i, e := range edits {
		if e.at < 0 || e.end > len(src) || (i > 0 && e.end > edits[i-1].at) {
			return code
		}
		src = src[:e.at] + e.text + src[e.end:]
	}
	if cached > 0 {
		// A function declaration is hoisted with its body, so appended
		// at the end it is there before the first line runs.
		src += "\nfunction " + cacheFunc + "(i, p, f) { var c = " + cacheFunc + ".c || (" + cacheFunc + ".c = []); return c[i] || (c[i] = new RegExp(p, f)); }\n"
	}
	return []byte(src)
}

// cacheFunc names the function that holds the compiled patterns.
const cacheFunc = "__celldRegExp"

// argEdit replaces code[at:end] with text.
type argEdit struct {
	at, end int
	text    string
}

// regExpArgs recognises RegExp("pattern", "flags") (with or without new)
// and returns the edit that replaces its two arguments.
func regExpArgs(callee ast.Expression, args []ast.Expression) (argEdit, bool) {
	id, ok := callee.(*ast.Identifier)
	if !ok || id.Name != "RegExp" || len(args) != 2 {
		return argEdit{}, false
	}
	p, ok1 := args[0].(*ast.StringLiteral)
	f, ok2 := args[1].(*ast.StringLiteral)
	if !ok1 || !ok2 {
		return argEdit{}, false
	}
	pattern, flags, ok := translated(p.Value.String(), f.Value.String())
	if !ok {
		return argEdit{}, false
	}
	at, end := int(p.Idx)-1, int(f.Idx)-1+len(f.Literal)
	return argEdit{at, end, jsQuote(pattern) + ", " + jsQuote(flags)}, true
}

// translated returns the pattern and flags to use instead, when the
// pattern needs translating and can be.
func translated(pattern, flags string) (string, string, bool) {
	v := strings.Contains(flags, "v")
	if !v && (!strings.Contains(flags, "u") || (!strings.Contains(pattern, `\p{`) && !strings.Contains(pattern, `\P{`))) {
		return "", "", false
	}
	out, ok := translateUnicodePattern(pattern, v)
	if !ok {
		return "", "", false
	}
	return out, strings.ReplaceAll(flags, "v", "u"), true
}

// jsQuote writes s as a JavaScript string literal, ASCII only.
func jsQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

var astPkg = reflect.TypeOf(ast.Program{}).PkgPath()

// walkAST calls visit with every node of goja's AST under v (goja's ast
// package has no walker of its own).
func walkAST(v reflect.Value, visit func(any)) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			walkAST(v.Elem(), visit)
		}
	case reflect.Pointer:
		if v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != astPkg {
			return
		}
		visit(v.Interface())
		walkAST(v.Elem(), visit)
	case reflect.Struct:
		if v.Type().PkgPath() != astPkg {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				walkAST(v.Field(i), visit)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			walkAST(v.Index(i), visit)
		}
	}
}
