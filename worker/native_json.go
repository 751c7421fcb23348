package worker

import (
	"unicode/utf16"

	"github.com/dop251/goja"
)

// JSON.parse's errors carry V8's texts (prelude/00_builtins.js formats
// them): goja's parser says only that the text is not JSON, so on a
// failure the text is scanned again here to find what V8 reports — the
// first error by the JSON grammar, as a kind and a position in UTF-16
// units. Only the error path pays for it.

// The kinds jsonSyntaxError answers; 00_builtins.js maps them to texts.
const (
	jsonEOS                  = iota // Unexpected end of JSON input
	jsonUnexpectedToken             // Unexpected token 'x', "…" is not valid JSON
	jsonUnexpectedNumber            // Unexpected number in JSON at position
	jsonPropNameOrRBrace            // Expected property name or '}'
	jsonCommaOrRBrack               // Expected ',' or ']' after array element
	jsonCommaOrRBrace               // Expected ',' or '}' after property value
	jsonColon                       // Expected ':' after property name
	jsonDoubleQuotedName            // Expected double-quoted property name
	jsonUnterminatedString          // Unterminated string in JSON
	jsonBadControl                  // Bad control character in string literal
	jsonBadEscape                   // Bad escaped character
	jsonBadUnicode                  // Bad Unicode escape
	jsonNoNumberAfterMinus          // No number after minus sign
	jsonExponentMissing             // Exponent part is missing a number
	jsonUnterminatedFraction        // Unterminated fractional number
	jsonTrailing                    // Unexpected non-whitespace character after JSON
)

func registerJSONNatives(set func(string, nativeFunc)) {
	// jsonSyntaxError(text) -> [kind, position] | null (text is JSON).
	set("jsonSyntaxError", func(iso *isolate, call goja.FunctionCall) goja.Value {
		kind, pos, ok := jsonSyntaxError(utf16Of(call.Argument(0)))
		if ok {
			return goja.Null()
		}
		return iso.vm.NewArray(kind, pos)
	})
}

// utf16Of is v's string as UTF-16 code units.
func utf16Of(v goja.Value) []uint16 { return utf16.Encode([]rune(v.String())) }

type jsonScan struct {
	s    []uint16
	i    int
	kind int
}

// jsonSyntaxError finds the first error in s by the JSON grammar, or ok.
func jsonSyntaxError(s []uint16) (kind, pos int, ok bool) {
	p := &jsonScan{s: s}
	p.ws()
	if p.value() {
		p.ws()
		if p.i == len(p.s) {
			return 0, 0, true
		}
		p.fail(jsonTrailing)
	}
	return p.kind, p.i, false
}

func (p *jsonScan) fail(kind int) bool {
	p.kind = kind
	return false
}

func (p *jsonScan) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScan) value() bool {
	if p.i == len(p.s) {
		return p.fail(jsonEOS)
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	}
	return p.fail(jsonUnexpectedToken)
}

func (p *jsonScan) literal(word string) bool {
	for k := 0; k < len(word); k++ {
		if p.i == len(p.s) {
			return p.fail(jsonEOS)
		}
		if p.s[p.i] != uint16(word[k]) {
			return p.fail(jsonUnexpectedToken)
		}
		p.i++
	}
	return true
}

func (p *jsonScan) object() bool {
	p.i++ // {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return true
	}
	if p.i == len(p.s) || p.s[p.i] != '"' {
		return p.fail(jsonPropNameOrRBrace)
	}
	for {
		if !p.str() {
			return false
		}
		p.ws()
		if p.i == len(p.s) || p.s[p.i] != ':' {
			return p.fail(jsonColon)
		}
		p.i++
		p.ws()
		if !p.value() {
			return false
		}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return true
		}
		if p.i == len(p.s) || p.s[p.i] != ',' {
			return p.fail(jsonCommaOrRBrace)
		}
		p.i++
		p.ws()
		if p.i == len(p.s) || p.s[p.i] != '"' {
			return p.fail(jsonDoubleQuotedName)
		}
	}
}

func (p *jsonScan) array() bool {
	p.i++ // [
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return true
	}
	for {
		if !p.value() {
			return false
		}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return true
		}
		if p.i == len(p.s) || p.s[p.i] != ',' {
			return p.fail(jsonCommaOrRBrack)
		}
		p.i++
		p.ws()
	}
}

func isHexUnit(c uint16) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func (p *jsonScan) str() bool {
	p.i++ // "
	for {
		if p.i == len(p.s) {
			return p.fail(jsonUnterminatedString)
		}
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			return true
		case c < 0x20:
			return p.fail(jsonBadControl)
		case c == '\\':
			p.i++
			if p.i == len(p.s) {
				return p.fail(jsonEOS)
			}
			switch p.s[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.i++
			case 'u':
				p.i++
				for k := 0; k < 4; k++ {
					if p.i == len(p.s) || !isHexUnit(p.s[p.i]) {
						return p.fail(jsonBadUnicode)
					}
					p.i++
				}
			default:
				return p.fail(jsonBadEscape)
			}
		default:
			p.i++
		}
	}
}

func (p *jsonScan) digits() int {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

func (p *jsonScan) number() bool {
	if p.s[p.i] == '-' {
		p.i++
		if p.i == len(p.s) || p.s[p.i] < '0' || p.s[p.i] > '9' {
			return p.fail(jsonNoNumberAfterMinus)
		}
	}
	if p.s[p.i] == '0' {
		p.i++
		if p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			return p.fail(jsonUnexpectedNumber)
		}
	} else {
		p.digits()
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return p.fail(jsonUnterminatedFraction)
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return p.fail(jsonExponentMissing)
		}
	}
	return true
}
