package worker

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"golang.org/x/text/encoding/htmlindex"
)

// Text codecs, base64 and form encoding: the byte-level work behind
// TextEncoder/TextDecoder, atob/btoa and URLSearchParams. The JavaScript
// wrappers in prelude/ own argument handling and the exact error messages.

func registerTextNatives(set func(string, nativeFunc)) {
	set("utf8Encode", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		return vm.ToValue(vm.NewArrayBuffer([]byte(call.Argument(0).String())))
	})
	// utf8EncodeInto(string, Uint8Array) -> [read (UTF-16 units), written]
	set("utf8EncodeInto", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		src := call.Argument(0).String()
		dst := iso.bytesArg(call.Argument(1))
		read, written := 0, 0
		for _, r := range src {
			n := utf8.RuneLen(r)
			if written+n > len(dst) {
				break
			}
			utf8.EncodeRune(dst[written:], r)
			written += n
			if r >= 0x10000 {
				read += 2
			} else {
				read++
			}
		}
		return vm.NewArray(read, written)
	})
	// encodingName(label) -> canonical WHATWG name, or null when unknown or
	// unsupported (the "replacement" encoding included, as in workerd).
	set("encodingName", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		name := canonicalEncoding(call.Argument(0).String())
		if name == "" {
			return goja.Null()
		}
		return vm.ToValue(name)
	})
	// decode(name, bytes, fatal, stream) -> [text, consumed] or null on a
	// fatal error.
	set("decode", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		name := call.Argument(0).String()
		b := iso.bytesArg(call.Argument(1))
		fatal := call.Argument(2).ToBoolean()
		stream := call.Argument(3).ToBoolean()
		var (
			s        string
			consumed int
			ok       bool
		)
		switch name {
		case "utf-8":
			s, consumed, ok = decodeUTF8(b, fatal, stream)
		case "utf-16le":
			s, consumed, ok = decodeUTF16(b, false, fatal, stream)
		case "utf-16be":
			s, consumed, ok = decodeUTF16(b, true, fatal, stream)
		default:
			s, consumed, ok = decodeLegacy(name, b, fatal)
		}
		if !ok {
			return goja.Null()
		}
		return vm.NewArray(s, consumed)
	})
	set("btoa", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		s := call.Argument(0).String()
		b := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 0xFF {
				return goja.Null()
			}
			b = append(b, byte(r))
		}
		return vm.ToValue(base64.StdEncoding.EncodeToString(b))
	})
	set("atob", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		b, ok := forgivingBase64(call.Argument(0).String())
		if !ok {
			return goja.Null()
		}
		return vm.ToValue(latin1String(b))
	})
	// headerValue(string) -> the value without leading and trailing
	// whitespace (HTTP tab, LF, CR, space), or null when it holds NUL, CR
	// or LF.
	set("headerValue", func(iso *isolate, call goja.FunctionCall) goja.Value {
		arg := call.Argument(0)
		s := arg.String()
		t := strings.Trim(s, "\t\n\r ")
		if strings.ContainsAny(t, "\x00\r\n") {
			return goja.Null()
		}
		if len(t) == len(s) {
			return arg
		}
		return iso.vm.ToValue(t)
	})
	set("formParse", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		return vm.NewArray(parseForm(call.Argument(0).String())...)
	})
	set("formSerialize", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		obj, ok := call.Argument(0).(*goja.Object)
		if !ok {
			return vm.ToValue("")
		}
		n := int(obj.Get("length").ToInteger())
		var sb strings.Builder
		for i := 0; i+1 < n; i += 2 {
			if i > 0 {
				sb.WriteByte('&')
			}
			formEscape(&sb, obj.Get(itoa(i)).String())
			sb.WriteByte('=')
			formEscape(&sb, obj.Get(itoa(i+1)).String())
		}
		return vm.ToValue(sb.String())
	})
}

// bytesArg returns the bytes behind an ArrayBuffer, typed array or
// DataView argument (sharing memory), or nil.
func (iso *isolate) bytesArg(v goja.Value) []byte {
	obj, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	// A Uint8Array or an ArrayBuffer (nearly every call) without
	// ExportTo's reflection: both export their backing store.
	switch obj.ExportType() {
	case typeBytes:
		b, _ := obj.Export().([]byte)
		return b
	case typeArrayBuffer:
		if ab, ok := obj.Export().(goja.ArrayBuffer); ok {
			return ab.Bytes()
		}
	}
	var b []byte
	if err := iso.vm.ExportTo(obj, &b); err != nil {
		return nil
	}
	return b
}

func canonicalEncoding(label string) string {
	l := strings.ToLower(strings.Trim(label, "\t\n\f\r "))
	enc, err := htmlindex.Get(l)
	if err != nil {
		return ""
	}
	name, err := htmlindex.Name(enc)
	if err != nil || name == "replacement" {
		return ""
	}
	return name
}

// decodeUTF8 is the WHATWG UTF-8 decoder: each maximal invalid subpart
// becomes one U+FFFD. With stream, an incomplete sequence at the end is left
// unconsumed for the next call. With fatal, any error fails (ok=false).
func decodeUTF8(b []byte, fatal, stream bool) (s string, consumed int, ok bool) {
	if utf8.Valid(b) {
		return string(b), len(b), true
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	i := 0
	for i < len(b) {
		c := b[i]
		if c < 0x80 {
			sb.WriteByte(c)
			i++
			continue
		}
		need := 0
		lower, upper := byte(0x80), byte(0xBF)
		var cp rune
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need, cp = 1, rune(c&0x1F)
		case c >= 0xE0 && c <= 0xEF:
			if c == 0xE0 {
				lower = 0xA0
			} else if c == 0xED {
				upper = 0x9F
			}
			need, cp = 2, rune(c&0x0F)
		case c >= 0xF0 && c <= 0xF4:
			if c == 0xF0 {
				lower = 0x90
			} else if c == 0xF4 {
				upper = 0x8F
			}
			need, cp = 3, rune(c&0x07)
		default:
			if fatal {
				return "", i, false
			}
			sb.WriteRune(utf8.RuneError)
			i++
			continue
		}
		j := i + 1
		complete := true
		for k := 0; k < need; k++ {
			if j >= len(b) {
				complete = false
				break
			}
			cc := b[j]
			if cc < lower || cc > upper {
				break
			}
			lower, upper = 0x80, 0xBF
			cp = cp<<6 | rune(cc&0x3F)
			j++
		}
		switch {
		case j-i == need+1:
			sb.WriteRune(cp)
			i = j
		case !complete && stream:
			return sb.String(), i, true
		default:
			// Invalid or truncated: the bytes read so far are one error; the
			// byte that broke the sequence (if any) is looked at again.
			if fatal {
				return "", i, false
			}
			sb.WriteRune(utf8.RuneError)
			i = j
		}
	}
	return sb.String(), i, true
}

func decodeUTF16(b []byte, bigEndian, fatal, stream bool) (string, int, bool) {
	unit := func(i int) uint16 {
		if bigEndian {
			return uint16(b[i])<<8 | uint16(b[i+1])
		}
		return uint16(b[i+1])<<8 | uint16(b[i])
	}
	var sb strings.Builder
	i := 0
	for i+1 < len(b) {
		u := unit(i)
		switch {
		case u < 0xD800 || u > 0xDFFF:
			sb.WriteRune(rune(u))
			i += 2
			continue
		case u >= 0xDC00: // lone low surrogate
		case i+3 >= len(b): // high surrogate at the end
			if stream {
				return sb.String(), i, true
			}
		default:
			if u2 := unit(i + 2); u2 >= 0xDC00 && u2 <= 0xDFFF {
				sb.WriteRune(0x10000 + (rune(u)-0xD800)<<10 + rune(u2) - 0xDC00)
				i += 4
				continue
			}
		}
		if fatal {
			return "", i, false
		}
		sb.WriteRune(utf8.RuneError)
		i += 2
	}
	if i < len(b) {
		if stream {
			return sb.String(), i, true
		}
		if fatal {
			return "", i, false
		}
		sb.WriteRune(utf8.RuneError)
		i++
	}
	return sb.String(), i, true
}

// decodeLegacy decodes a non-Unicode encoding as a whole (legacy decoders
// keep no state between stream chunks here).
func decodeLegacy(name string, b []byte, fatal bool) (string, int, bool) {
	enc, err := htmlindex.Get(name)
	if err != nil {
		return "", 0, false
	}
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil || (fatal && strings.ContainsRune(string(out), utf8.RuneError)) {
		return "", 0, false
	}
	return string(out), len(b), true
}

// forgivingBase64 is the WHATWG forgiving-base64 decode used by atob.
func forgivingBase64(s string) ([]byte, bool) {
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t', '\n', '\f', '\r', ' ':
		default:
			clean = append(clean, c)
		}
	}
	if len(clean)%4 == 0 {
		if n := len(clean); n >= 2 && clean[n-1] == '=' && clean[n-2] == '=' {
			clean = clean[:n-2]
		} else if n >= 1 && clean[n-1] == '=' {
			clean = clean[:n-1]
		}
	}
	if len(clean)%4 == 1 {
		return nil, false
	}
	for _, c := range clean {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return nil, false
		}
	}
	out, err := base64.RawStdEncoding.DecodeString(string(clean))
	if err != nil {
		return nil, false
	}
	return out, true
}

// latin1String maps each byte to the code point of the same value (a JS
// "binary string").
func latin1String(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// parseForm is the application/x-www-form-urlencoded parser; it returns
// names and values interleaved.
func parseForm(s string) []any {
	var out []any
	for _, part := range strings.Split(s, "&") {
		if part == "" {
			continue
		}
		name, value, _ := strings.Cut(part, "=")
		out = append(out, formUnescape(name), formUnescape(value))
	}
	return out
}

func formUnescape(s string) string {
	if !strings.ContainsAny(s, "+%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	out, _, _ := decodeUTF8(b, false, false)
	return out
}

func formEscape(sb *strings.Builder, s string) {
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			sb.WriteByte('+')
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '*' || c == '-' || c == '.' || c == '_':
			sb.WriteByte(c)
		default:
			sb.WriteByte('%')
			sb.WriteByte(hexDigits[c>>4])
			sb.WriteByte(hexDigits[c&15])
		}
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
