package deploy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// goja's regexp engines know neither Unicode property escapes (\p{L}
// under the u flag is read as the letters "p{L}", so it silently matches
// nothing a letter would) nor the v flag (a SyntaxError). esbuild already
// turns every such literal into new RegExp("…", "u"|"v") (gojaGaps);
// translateUnicodePattern rewrites the pattern of those calls into one
// with only explicit code point ranges under the u flag, which goja runs
// as V8 would: each \p{…}/\P{…} becomes a class of the property's ranges
// (from Go's unicode tables), and under v each class, with its nesting,
// -- and && operations, is computed to one flat class.
//
// Not translated (the pattern is left as it was, so it fails as before):
// properties Go's tables do not hold (Emoji, Extended_Pictographic, the
// properties of strings such as RGI_Emoji, Case_Ignorable, Changes_When_*),
// \q{…} string literals, and patterns built at run time.

// cpRange is an inclusive range of code points.
type cpRange struct{ lo, hi rune }

// cpSet is a sorted list of disjoint, non-adjacent ranges.
type cpSet []cpRange

func normalize(rs []cpRange) cpSet {
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	out := cpSet{}
	for _, r := range rs {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi+1 {
			if r.hi > out[n-1].hi {
				out[n-1].hi = r.hi
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func union(sets ...cpSet) cpSet {
	var all []cpRange
	for _, s := range sets {
		all = append(all, s...)
	}
	return normalize(all)
}

func complement(s cpSet) cpSet {
	out := cpSet{}
	next := rune(0)
	for _, r := range s {
		if r.lo > next {
			out = append(out, cpRange{next, r.lo - 1})
		}
		next = r.hi + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, cpRange{next, unicode.MaxRune})
	}
	return out
}

func intersect(a, b cpSet) cpSet { return complement(union(complement(a), complement(b))) }

func subtract(a, b cpSet) cpSet { return intersect(a, complement(b)) }

func fromTable(t *unicode.RangeTable) cpSet {
	var rs []cpRange
	for _, r := range t.R16 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			if r.Stride == 1 {
				rs = append(rs, cpRange{rune(r.Lo), rune(r.Hi)})
				break
			}
			rs = append(rs, cpRange{c, c})
		}
	}
	for _, r := range t.R32 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			if r.Stride == 1 {
				rs = append(rs, cpRange{rune(r.Lo), rune(r.Hi)})
				break
			}
			rs = append(rs, cpRange{c, c})
		}
	}
	return normalize(rs)
}

func tables(names ...string) cpSet {
	var sets []cpSet
	for _, n := range names {
		if t, ok := unicode.Categories[n]; ok {
			sets = append(sets, fromTable(t))
		} else if t, ok := unicode.Properties[n]; ok {
			sets = append(sets, fromTable(t))
		} else {
			panic("no unicode table " + n)
		}
	}
	return union(sets...)
}

// gcNames maps ECMAScript's General_Category names and aliases to Go's
// category names (LC, Cn and C are computed).
var gcNames = map[string]string{
	"Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
	"Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo",
	"Mark": "M", "Combining_Mark": "M", "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me",
	"Number": "N", "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
	"Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd",
	"Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
	"Final_Punctuation": "Pf", "Other_Punctuation": "Po",
	"Symbol": "S", "Math_Symbol": "Sm", "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Other_Symbol": "So",
	"Separator": "Z", "Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp",
	"Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs",
	"Private_Use": "Co", "Unassigned": "Cn",
}

func generalCategory(name string) (cpSet, bool) {
	if long, ok := gcNames[name]; ok {
		name = long
	}
	switch name {
	case "LC":
		return tables("Lu", "Ll", "Lt"), true
	case "Cn":
		return complement(tables("L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Co", "Cs")), true
	case "C":
		return union(tables("Cc", "Cf", "Co", "Cs"), complement(tables("L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Co", "Cs"))), true
	}
	if len(name) > 2 {
		return nil, false
	}
	if t, ok := unicode.Categories[name]; ok {
		return fromTable(t), true
	}
	return nil, false
}

// binaryAliases maps ECMAScript's short names of binary properties to
// the long ones.
var binaryAliases = map[string]string{
	"AHex": "ASCII_Hex_Digit", "Alpha": "Alphabetic", "Bidi_C": "Bidi_Control", "DI": "Default_Ignorable_Code_Point",
	"Dep": "Deprecated", "Dia": "Diacritic", "Ext": "Extender", "Gr_Ext": "Grapheme_Extend", "Hex": "Hex_Digit",
	"IDC": "ID_Continue", "IDS": "ID_Start", "IDSB": "IDS_Binary_Operator", "IDST": "IDS_Trinary_Operator",
	"Ideo": "Ideographic", "Join_C": "Join_Control", "LOE": "Logical_Order_Exception", "Lower": "Lowercase",
	"NChar": "Noncharacter_Code_Point", "Pat_Syn": "Pattern_Syntax", "Pat_WS": "Pattern_White_Space",
	"QMark": "Quotation_Mark", "RI": "Regional_Indicator", "SD": "Soft_Dotted", "STerm": "Sentence_Terminal",
	"Term": "Terminal_Punctuation", "UIdeo": "Unified_Ideograph", "Upper": "Uppercase", "VS": "Variation_Selector",
	"space": "White_Space", "XIDC": "XID_Continue", "XIDS": "XID_Start",
}

// goBinary are the binary properties ECMAScript names that Go's
// unicode.Properties holds as they are.
var goBinary = map[string]bool{
	"ASCII_Hex_Digit": true, "Bidi_Control": true, "Dash": true, "Deprecated": true, "Diacritic": true,
	"Extender": true, "Hex_Digit": true, "IDS_Binary_Operator": true, "IDS_Trinary_Operator": true,
	"Ideographic": true, "Join_Control": true, "Logical_Order_Exception": true, "Noncharacter_Code_Point": true,
	"Pattern_Syntax": true, "Pattern_White_Space": true, "Quotation_Mark": true, "Radical": true,
	"Regional_Indicator": true, "Sentence_Terminal": true, "Soft_Dotted": true, "Terminal_Punctuation": true,
	"Unified_Ideograph": true, "Variation_Selector": true, "White_Space": true,
}

func binaryProperty(name string) (cpSet, bool) {
	if long, ok := binaryAliases[name]; ok {
		name = long
	}
	if goBinary[name] {
		return fromTable(unicode.Properties[name]), true
	}
	// The derived ones, as DerivedCoreProperties.txt defines them.
	idStart := func() cpSet {
		return subtract(tables("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Other_ID_Start"), tables("Pattern_Syntax", "Pattern_White_Space"))
	}
	switch name {
	case "Any":
		return cpSet{{0, unicode.MaxRune}}, true
	case "ASCII":
		return cpSet{{0, 0x7f}}, true
	case "Assigned":
		return tables("L", "M", "N", "P", "S", "Z", "Cc", "Cf", "Co", "Cs"), true
	case "Alphabetic":
		return tables("Lu", "Ll", "Lt", "Lm", "Lo", "Nl", "Other_Alphabetic"), true
	case "Lowercase":
		return tables("Ll", "Other_Lowercase"), true
	case "Uppercase":
		return tables("Lu", "Other_Uppercase"), true
	case "Cased":
		return tables("Lu", "Ll", "Lt", "Other_Lowercase", "Other_Uppercase"), true
	case "Math":
		return tables("Sm", "Other_Math"), true
	case "Grapheme_Extend":
		return tables("Me", "Mn", "Other_Grapheme_Extend"), true
	case "ID_Start", "XID_Start":
		return idStart(), true
	case "ID_Continue", "XID_Continue":
		return subtract(union(idStart(), tables("Mn", "Mc", "Nd", "Pc", "Other_ID_Continue")), tables("Pattern_Syntax", "Pattern_White_Space")), true
	case "Default_Ignorable_Code_Point":
		s := union(tables("Other_Default_Ignorable_Code_Point", "Cf", "Variation_Selector"))
		s = subtract(s, union(tables("White_Space", "Prepended_Concatenation_Mark"), cpSet{{0xfff9, 0xfffb}, {0x13430, 0x1343f}}))
		return s, true
	}
	return nil, false
}

// property resolves the inside of \p{…}.
func property(name string) (cpSet, bool) {
	if key, val, ok := strings.Cut(name, "="); ok {
		switch key {
		case "General_Category", "gc":
			return generalCategory(val)
		case "Script", "sc", "Script_Extensions", "scx":
			// Script_Extensions is read as Script: Go has no extensions
			// table (a difference only for the shared marks).
			if t, ok := unicode.Scripts[val]; ok {
				return fromTable(t), true
			}
		}
		return nil, false
	}
	if s, ok := generalCategory(name); ok {
		return s, true
	}
	return binaryProperty(name)
}

var (
	digitSet = cpSet{{'0', '9'}}
	wordSet  = normalize([]cpRange{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}})
	// ECMAScript's WhiteSpace and LineTerminator.
	spaceSet = union(fromTable(unicode.Zs), cpSet{{'\t', '\r'}, {0xa0, 0xa0}, {0x2028, 0x2029}, {0xfeff, 0xfeff}})
)

type patternTranslator struct {
	src   []rune
	i     int
	v     bool // the v flag: classes nest and take -- and &&
	out   strings.Builder
	fails string
}

// translateUnicodePattern rewrites a u- or v-flag pattern that uses
// property escapes or v-only class syntax into an equivalent u-flag one
// of explicit ranges; ok is false where it cannot (see above).
func translateUnicodePattern(pattern string, vFlag bool) (string, bool) {
	t := &patternTranslator{src: []rune(pattern), v: vFlag}
	for t.i < len(t.src) && t.fails == "" {
		c := t.src[t.i]
		switch {
		case c == '\\' && t.i+1 < len(t.src) && (t.src[t.i+1] == 'p' || t.src[t.i+1] == 'P'):
			t.i++
			neg := t.src[t.i] == 'P'
			t.i++
			s := t.propertyBody()
			if neg {
				s = complement(s)
			}
			t.emit(s)
		case c == '\\' && t.i+1 < len(t.src):
			t.out.WriteRune(c)
			t.out.WriteRune(t.src[t.i+1])
			t.i += 2
		case c == '[':
			start := t.i
			s := t.class()
			if t.fails != "" {
				break
			}
			if !t.v && !strings.Contains(string(t.src[start:t.i]), `\p{`) && !strings.Contains(string(t.src[start:t.i]), `\P{`) {
				t.out.WriteString(string(t.src[start:t.i]))
			} else {
				t.emit(s)
			}
		default:
			t.out.WriteRune(c)
			t.i++
		}
	}
	if t.fails != "" {
		return "", false
	}
	return t.out.String(), true
}

func (t *patternTranslator) fail(format string, args ...any) {
	if t.fails == "" {
		t.fails = fmt.Sprintf(format, args...)
	}
}

// propertyBody reads "{Name}" after \p and resolves it.
func (t *patternTranslator) propertyBody() cpSet {
	if t.i >= len(t.src) || t.src[t.i] != '{' {
		t.fail("\\p without {")
		return nil
	}
	end := t.i + 1
	for end < len(t.src) && t.src[end] != '}' {
		end++
	}
	if end >= len(t.src) {
		t.fail("unterminated \\p{")
		return nil
	}
	name := string(t.src[t.i+1 : end])
	t.i = end + 1
	s, ok := property(name)
	if !ok {
		t.fail("property %s", name)
	}
	return s
}

func (t *patternTranslator) emit(s cpSet) {
	t.out.WriteByte('[')
	if len(s) == 0 {
		// matches nothing: the complement of every code point
		t.out.WriteString(`^\u{0}-\u{10ffff}`)
	}
	for _, r := range s {
		fmt.Fprintf(&t.out, `\u{%x}`, r.lo)
		if r.hi > r.lo {
			fmt.Fprintf(&t.out, `-\u{%x}`, r.hi)
		}
	}
	t.out.WriteByte(']')
}

// class reads a character class from its '[' to past its ']'.
func (t *patternTranslator) class() cpSet {
	t.i++ // [
	neg := false
	if t.i < len(t.src) && t.src[t.i] == '^' {
		neg = true
		t.i++
	}
	var s cpSet
	if t.v {
		s = t.classSetExpression()
	} else {
		s = t.classRanges()
	}
	if t.i >= len(t.src) || t.src[t.i] != ']' {
		t.fail("unterminated class")
		return nil
	}
	t.i++
	if neg {
		s = complement(s)
	}
	return s
}

// classRanges reads a u-flag class body up to its ']'.
func (t *patternTranslator) classRanges() cpSet {
	var parts []cpSet
	for t.i < len(t.src) && t.src[t.i] != ']' && t.fails == "" {
		lo, single := t.classAtom()
		if single && t.i+1 < len(t.src) && t.src[t.i] == '-' && t.src[t.i+1] != ']' {
			t.i++
			hi, single2 := t.classAtom()
			if !single2 || hi[0].lo < lo[0].lo {
				t.fail("bad class range")
				return nil
			}
			parts = append(parts, cpSet{{lo[0].lo, hi[0].lo}})
			continue
		}
		parts = append(parts, lo)
	}
	return union(parts...)
}

// classSetExpression reads a v-flag class body: a union of operands, or
// operands joined by one kind of -- or &&.
func (t *patternTranslator) classSetExpression() cpSet {
	first := t.classSetOperand()
	if t.fails != "" {
		return nil
	}
	if op := t.peek2(); op == "--" || op == "&&" {
		acc := first
		for t.peek2() == op && t.fails == "" {
			t.i += 2
			next := t.classSetOperand()
			if op == "--" {
				acc = subtract(acc, next)
			} else {
				acc = intersect(acc, next)
			}
		}
		return acc
	}
	parts := []cpSet{first}
	for t.i < len(t.src) && t.src[t.i] != ']' && t.fails == "" {
		if op := t.peek2(); op == "--" || op == "&&" {
			t.fail("mixed class set operators")
			return nil
		}
		parts = append(parts, t.classSetOperand())
	}
	return union(parts...)
}

func (t *patternTranslator) peek2() string {
	if t.i+1 < len(t.src) {
		return string(t.src[t.i : t.i+2])
	}
	return ""
}

// classSetOperand reads a nested class, an escape, a character or a
// range under the v flag.
func (t *patternTranslator) classSetOperand() cpSet {
	if t.i < len(t.src) && t.src[t.i] == '[' {
		return t.class()
	}
	if t.peek2() == `\q` {
		t.fail(`\q{…}`)
		return nil
	}
	lo, single := t.classAtom()
	if single && t.i+1 < len(t.src) && t.src[t.i] == '-' && t.src[t.i+1] != '-' && t.src[t.i+1] != ']' {
		t.i++
		hi, single2 := t.classAtom()
		if !single2 || hi[0].lo < lo[0].lo {
			t.fail("bad class range")
			return nil
		}
		return cpSet{{lo[0].lo, hi[0].lo}}
	}
	return lo
}

// classAtom reads one character or class escape inside a class; single
// says it is one code point (so it may start or end a range).
func (t *patternTranslator) classAtom() (cpSet, bool) {
	if t.i >= len(t.src) {
		t.fail("unterminated class")
		return nil, false
	}
	c := t.src[t.i]
	t.i++
	if c != '\\' {
		return cpSet{{c, c}}, true
	}
	if t.i >= len(t.src) {
		t.fail("trailing backslash")
		return nil, false
	}
	e := t.src[t.i]
	t.i++
	one := func(r rune) (cpSet, bool) { return cpSet{{r, r}}, true }
	switch e {
	case 'd':
		return digitSet, false
	case 'D':
		return complement(digitSet), false
	case 'w':
		return wordSet, false
	case 'W':
		return complement(wordSet), false
	case 's':
		return spaceSet, false
	case 'S':
		return complement(spaceSet), false
	case 'p', 'P':
		s := t.propertyBody()
		if e == 'P' {
			s = complement(s)
		}
		return s, false
	case 'b':
		return one('\b')
	case 'n':
		return one('\n')
	case 'r':
		return one('\r')
	case 't':
		return one('\t')
	case 'v':
		return one('\v')
	case 'f':
		return one('\f')
	case '0':
		return one(0)
	case 'c':
		if t.i < len(t.src) && (t.src[t.i]|0x20) >= 'a' && (t.src[t.i]|0x20) <= 'z' {
			r := t.src[t.i] % 32
			t.i++
			return one(r)
		}
		t.fail(`bad \c`)
		return nil, false
	case 'x':
		return one(t.hex(2))
	case 'u':
		if t.i < len(t.src) && t.src[t.i] == '{' {
			end := t.i + 1
			for end < len(t.src) && t.src[end] != '}' {
				end++
			}
			n, err := strconv.ParseUint(string(t.src[t.i+1:min(end, len(t.src))]), 16, 32)
			if err != nil || end >= len(t.src) || n > unicode.MaxRune {
				t.fail(`bad \u{}`)
				return nil, false
			}
			t.i = end + 1
			return one(rune(n))
		}
		r := t.hex(4)
		// a surrogate pair written as two \u escapes is one code point
		if r >= 0xd800 && r < 0xdc00 && t.peek2() == `\u` {
			save := t.i
			t.i += 2
			if lo := t.hex(4); t.fails == "" && lo >= 0xdc00 && lo < 0xe000 {
				return one((r-0xd800)<<10 + (lo - 0xdc00) + 0x10000)
			}
			t.fails, t.i = "", save
		}
		return one(r)
	}
	// an identity escape of a syntax character (or '-')
	return one(e)
}

func (t *patternTranslator) hex(n int) rune {
	if t.i+n > len(t.src) {
		t.fail("short hex escape")
		return 0
	}
	v, err := strconv.ParseUint(string(t.src[t.i:t.i+n]), 16, 32)
	if err != nil {
		t.fail("bad hex escape")
		return 0
	}
	t.i += n
	return rune(v)
}
