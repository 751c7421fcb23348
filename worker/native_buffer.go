package worker

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// The hot half of node:buffer (prelude/84_node_buffer.js): converting
// between strings and bytes in Node's encodings, comparing and searching.

// Encodings arrive normalised by the prelude: utf8, hex, base64,
// base64url, latin1, ascii, utf16le.
func registerBufferNatives(set func(string, nativeFunc)) {
	// bufFromString(string, encoding) -> ArrayBuffer
	set("bufFromString", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		b := encodeString(jsString(call.Argument(0)), call.Argument(1).String())
		return vm.ToValue(vm.NewArrayBuffer(b))
	})
	// bufByteLength(string, encoding) -> number
	set("bufByteLength", func(iso *isolate, call goja.FunctionCall) goja.Value {
		s := jsString(call.Argument(0))
		switch enc := call.Argument(1).String(); enc {
		case "utf8":
			return iso.vm.ToValue(utf8Len(s))
		case "latin1", "ascii":
			return iso.vm.ToValue(s.Length())
		case "utf16le":
			return iso.vm.ToValue(2 * s.Length())
		case "hex":
			return iso.vm.ToValue(s.Length() / 2)
		case "base64", "base64url":
			// Node's estimate from the length, not a decode.
			n := s.Length()
			for k := 0; k < 2 && n > 0 && s.CharAt(n-1) == '='; k++ {
				n--
			}
			return iso.vm.ToValue(n * 3 / 4)
		default:
			return iso.vm.ToValue(len(encodeString(s, enc)))
		}
	})
	// bufToString(Uint8Array, encoding, start, end) -> string
	set("bufToString", func(iso *isolate, call goja.FunctionCall) goja.Value {
		b := iso.bytesArg(call.Argument(0))
		start, end := int(call.Argument(2).ToInteger()), int(call.Argument(3).ToInteger())
		end = min(max(end, 0), len(b))
		start = min(max(start, 0), end)
		return decodeBytes(iso.vm, b[start:end], call.Argument(1).String())
	})
	// bufWrite(Uint8Array, string, offset, length, encoding) -> bytes written
	set("bufWrite", func(iso *isolate, call goja.FunctionCall) goja.Value {
		dst := iso.bytesArg(call.Argument(0))
		off, n := int(call.Argument(2).ToInteger()), int(call.Argument(3).ToInteger())
		off = min(max(off, 0), len(dst))
		n = min(max(n, 0), len(dst)-off)
		enc := call.Argument(4).String()
		src := encodeString(jsString(call.Argument(1)), enc)
		if len(src) > n {
			cut := n
			if enc == "utf8" { // never a partial character
				for cut > 0 && src[cut]&0xC0 == 0x80 {
					cut--
				}
			}
			if enc == "utf16le" {
				cut &^= 1
			}
			src = src[:cut]
		}
		return iso.vm.ToValue(copy(dst[off:], src))
	})
	// bufCompare(a, b) -> -1, 0 or 1
	set("bufCompare", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.vm.ToValue(bytes.Compare(iso.bytesArg(call.Argument(0)), iso.bytesArg(call.Argument(1))))
	})
	// bufIndexOf(haystack, needle, from, last) -> index or -1. from is
	// already normalised into [0, len] by the prelude.
	set("bufIndexOf", func(iso *isolate, call goja.FunctionCall) goja.Value {
		h, n := iso.bytesArg(call.Argument(0)), iso.bytesArg(call.Argument(1))
		from := int(call.Argument(2).ToInteger())
		if call.Argument(3).ToBoolean() {
			end := min(len(h), from+len(n))
			if end < 0 {
				return iso.vm.ToValue(-1)
			}
			return iso.vm.ToValue(bytes.LastIndex(h[:end], n))
		}
		if from > len(h) {
			return iso.vm.ToValue(-1)
		}
		i := bytes.Index(h[from:], n)
		if i >= 0 {
			i += from
		}
		return iso.vm.ToValue(i)
	})
	// bufFill(Uint8Array, pattern Uint8Array, start, end)
	set("bufFill", func(iso *isolate, call goja.FunctionCall) goja.Value {
		dst, pat := iso.bytesArg(call.Argument(0)), iso.bytesArg(call.Argument(1))
		start, end := int(call.Argument(2).ToInteger()), int(call.Argument(3).ToInteger())
		end = min(max(end, 0), len(dst))
		start = min(max(start, 0), end)
		if len(pat) == 0 {
			return goja.Undefined()
		}
		d := dst[start:end]
		for i := 0; i < len(d); i += copy(d[i:], pat) {
		}
		return goja.Undefined()
	})
	// bufIsUtf8(bytes), bufIsAscii(bytes)
	set("bufIsUtf8", func(iso *isolate, call goja.FunctionCall) goja.Value {
		return iso.vm.ToValue(utf8.Valid(iso.bytesArg(call.Argument(0))))
	})
	set("bufIsAscii", func(iso *isolate, call goja.FunctionCall) goja.Value {
		for _, c := range iso.bytesArg(call.Argument(0)) {
			if c >= 0x80 {
				return iso.vm.ToValue(false)
			}
		}
		return iso.vm.ToValue(true)
	})
}

func utf8Len(s goja.String) int {
	n, l := 0, s.Length()
	for i := 0; i < l; i++ {
		c := s.CharAt(i)
		switch {
		case c < 0x80:
			n++
		case c < 0x800:
			n += 2
		case c >= 0xD800 && c <= 0xDBFF && i+1 < l && s.CharAt(i+1) >= 0xDC00 && s.CharAt(i+1) <= 0xDFFF:
			n += 4
			i++
		default:
			n += 3
		}
	}
	return n
}

// encodeString encodes a JS string in one of Node's encodings.
func encodeString(s goja.String, enc string) []byte {
	switch enc {
	case "hex":
		t := s.String()
		n := len(t) / 2
		out := make([]byte, n)
		for i := 0; i < n; i++ { // stops at the first pair that is not hex, as Node does
			a, b := t[2*i], t[2*i+1]
			if !isHex(a) || !isHex(b) {
				return out[:i]
			}
			out[i] = unhex(a)<<4 | unhex(b)
		}
		return out
	case "base64", "base64url":
		return nodeBase64(s.String())
	case "latin1", "ascii":
		l := s.Length()
		out := make([]byte, l)
		for i := 0; i < l; i++ {
			out[i] = byte(s.CharAt(i))
		}
		return out
	case "utf16le":
		l := s.Length()
		out := make([]byte, 2*l)
		for i := 0; i < l; i++ {
			c := s.CharAt(i)
			out[2*i], out[2*i+1] = byte(c), byte(c>>8)
		}
		return out
	}
	return []byte(s.String()) // utf8: lone surrogates become U+FFFD, as in Node
}

// decodeBytes turns bytes into a JS string in one of Node's encodings.
func decodeBytes(vm *goja.Runtime, b []byte, enc string) goja.Value {
	switch enc {
	case "hex":
		return vm.ToValue(hex.EncodeToString(b))
	case "base64":
		return vm.ToValue(base64.StdEncoding.EncodeToString(b))
	case "base64url":
		return vm.ToValue(base64.RawURLEncoding.EncodeToString(b))
	case "latin1":
		return vm.ToValue(latin1String(b))
	case "ascii":
		out := make([]byte, len(b))
		for i, c := range b {
			out[i] = c & 0x7F
		}
		return vm.ToValue(string(out))
	case "utf16le":
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = uint16(b[2*i]) | uint16(b[2*i+1])<<8
		}
		return goja.StringFromUTF16(u)
	}
	if isASCII(b) {
		return vm.ToValue(string(b))
	}
	s, _, _ := decodeUTF8(b, false, false)
	return vm.ToValue(s)
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// jsString is v as a string value (its UTF-16 code units reachable).
func jsString(v goja.Value) goja.String {
	if s, ok := v.(goja.String); ok {
		return s
	}
	s, _ := v.ToString().(goja.String)
	if s == nil {
		return goja.StringFromUTF16(nil)
	}
	return s
}
