package deploy

import (
	"errors"
	"strings"
	"testing"

	"github.com/dop251/goja/parser"
)

func TestQuoteAccessorNamedFields(t *testing.T) {
	cases := []struct {
		name, src, want string
		fixed           int
	}{
		{"nothing to do", "class A { x = 1; get y() { return 1 } }", "class A { x = 1; get y() { return 1 } }", 0},
		{"all three", "class A {\n  get = 1;\n  set = (v) => v;\n  async = 3;\n}", "class A {\n  \"get\" = 1;\n  \"set\" = (v) => v;\n  \"async\" = 3;\n}", 3},
		{"static", "class A { static get = 1; static set\n = 2 }", "class A { static \"get\" = 1; static \"set\"\n = 2 }", 2},
		{"not a member access or a destructuring default",
			"var {get = 1} = {}; x.get = 2; class B { get = x.set }",
			"var {get = 1} = {}; x.get = 2; class B { \"get\" = x.set }", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, n, err := quoteAccessorNamedFields([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want || n != c.fixed {
				t.Errorf("got %q (%d fixed), want %q (%d)", got, n, c.want, c.fixed)
			}
			if _, err := parser.ParseFile(nil, "x.js", string(got), 0); err != nil {
				t.Errorf("result does not parse: %v", err)
			}
		})
	}
}

func TestQuoteAccessorNamedFields_refusesOtherErrors(t *testing.T) {
	for _, src := range []string{
		"function (",              // an unrelated syntax error
		"class A { other = = 1 }", // '=' not after get/set/async
		"class A { #get = = 1 }",
	} {
		if _, _, _, err := quoteAccessorNamedFields([]byte(src)); !errors.Is(err, errFieldRewrite) {
			t.Errorf("%q: err = %v, want errFieldRewrite", src, err)
		}
	}
}

func TestQuoteAccessorNamedFields_boundedRounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("class A {\n")
	for i := 0; i <= maxFieldRewrites; i++ {
		b.WriteString("  get = 1;\n")
	}
	b.WriteString("}\n")
	if _, _, n, err := quoteAccessorNamedFields([]byte(b.String())); !errors.Is(err, errFieldRewrite) || n != maxFieldRewrites {
		t.Fatalf("n = %d, err = %v; want the bound to stop it", n, err)
	}
}
