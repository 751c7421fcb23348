package deploy

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// TestTranslateUnicodeRegExps runs rewritten constructions in goja: each
// expression must give what ECMAScript (and workerd) gives; untranslated,
// goja answers false or throws for every one.
func TestTranslateUnicodeRegExps(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`new RegExp("^\\p{L}+$", "u").test("héllo")`, "true"},
		{`new RegExp("^\\p{L}+$", "u").test("h3llo")`, "false"},
		{`RegExp("\\P{L}", "u").exec("ab1c")[0]`, "1"},
		{`/\p{Lu}/u.test("Ä")`, "true"},
		{`/\p{Lowercase_Letter}/u.test("Ä")`, "false"},
		{`/\p{Script=Greek}+/u.exec("abc αβγ")[0]`, "αβγ"},
		{`/\p{sc=Han}/u.test("日")`, "true"},
		{`"aBcÄd".replace(new RegExp("([\\p{Ll}\\d])(\\p{Lu})", "gu"), "$1 $2")`, "a Bc Äd"},
		{`/[^\p{L}\p{N}]+/gu[Symbol.split]("a-b_c 1é")`, "a,b,c,1é"},
		{`/\p{Default_Ignorable_Code_Point}/u.test("\u200b")`, "true"},
		{`/\p{Alphabetic}/u.test("ª")`, "true"},
		{`/\p{White_Space}/u.test("\u3000")`, "true"},
		{`/^\p{Any}$/u.test("😀")`, "true"},
		{`/\p{Nd}/u.test("٣")`, "true"},
		{`/\p{ID_Start}/u.test("1")`, "false"},
		{`/\p{Cn}/u.test("\u0378")`, "true"},
		{`new RegExp("[\\p{L}--[a-z]]", "v").test("a")`, "false"},
		{`new RegExp("[\\p{L}--[a-z]]", "v").test("B")`, "true"},
		{`new RegExp("[\\p{L}&&\\p{ASCII}]+", "v").exec("éabcé")[0]`, "abc"},
		{`new RegExp("[[a-z][0-9]]+", "v").exec("-a1-")[0]`, "a1"},
		{`new RegExp("[^\\p{L}]", "v").exec("ab.")[0]`, "."},
		{`new RegExp("\\p{L}", "v").flags`, "u"},
		{`new RegExp("[\\(\\)]", "v").test(")")`, "true"},
		{`/\p{Lu}/iu.test("a")`, "true"},
		{`/[\p{L}\uD83D\uDE00]/u.test("😀")`, "true"},
		{`/a\/[\p{L}]/u.test("a/b")`, "true"},
		// compiled once, but each evaluation is a fresh object, as a literal's is
		{`(() => { const f = () => new RegExp("\\p{L}", "gu"); const a = f(); a.test("ab"); const b = f(); return [a === b, a.lastIndex, b.lastIndex, b.flags, b instanceof RegExp].join() })()`, "false,1,0,gu,true"},
	} {
		code := translateUnicodeRegExps([]byte("var r = "+c.src+";"), nil)
		vm := goja.New()
		v, err := vm.RunString(string(code) + "String(r)")
		if err != nil || v.String() != c.want {
			t.Errorf("%s: got %v, %v; want %s\n  rewritten: %.300s", c.src, v, err, c.want, code)
		}
	}
}

// TestTranslateUnicodeRegExpsLeaves checks what is not translated comes
// back byte for byte: patterns without property escapes, patterns built
// at run time, and properties Go has no table for.
func TestTranslateUnicodeRegExpsLeaves(t *testing.T) {
	for _, src := range []string{
		`var a = /\d+/u, b = new RegExp("x", "g");`,
		`var p = "\\p{L}"; var r = new RegExp(p, "u");`,
		`var r = new RegExp("^\\p{RGI_Emoji}$", "v");`,
		`var r = /\p{Extended_Pictographic}/u;`,
		`var r = new RegExp("[\\q{abc}]", "v");`,
		`var s = "\\p{L}";`,
	} {
		if got := string(translateUnicodeRegExps([]byte(src), nil)); got != src {
			t.Errorf("%s was rewritten to %s", src, got)
		}
	}
	if !strings.Contains(string(translateUnicodeRegExps([]byte(`var r = new RegExp("\\p{L}", "u");`), nil)), `\\u{`) {
		t.Error("a \\p{L} construction was not rewritten")
	}
}
