package deploy

import "fmt"

// stripJSONC turns JSON with comments and trailing commas (the dialect of
// wrangler.jsonc) into plain JSON. Every removed byte becomes a space and
// newlines are kept, so a byte offset in the result is the same offset in
// the source: a decode error can name the line and column the user wrote.
func stripJSONC(src []byte) ([]byte, error) {
	out := append([]byte(nil), src...)
	// lastComma is the offset of a comma not yet followed by anything but
	// whitespace and comments; -1 when there is none.
	lastComma := -1
	// prev is the last byte of the last token (a string counts as '"'):
	// a comma right after '[', '{' or another comma is an error, as in
	// Wrangler's parser (only a trailing comma is allowed).
	prev := byte(0)
	for i := 0; i < len(out); i++ {
		c := out[i]
		if c == ',' && (prev == '[' || prev == '{' || prev == ',') {
			line, col := position(src, i)
			return nil, &syntaxError{line: line, col: col, msg: "unexpected ',' (a value is expected)"}
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' && !(c == '/' && i+1 < len(out) && (out[i+1] == '/' || out[i+1] == '*')) {
			prev = c
		}
		switch {
		case c == '"':
			lastComma = -1
			j, err := skipString(out, i)
			if err != nil {
				return nil, err
			}
			i = j
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			start := i
			out[i], out[i+1] = ' ', ' '
			i += 2
			for ; i+1 < len(out) && !(out[i] == '*' && out[i+1] == '/'); i++ {
				if out[i] != '\n' && out[i] != '\r' {
					out[i] = ' '
				}
			}
			if i+1 >= len(out) {
				line, col := position(src, start)
				return nil, &syntaxError{line: line, col: col, msg: "unterminated /* comment"}
			}
			out[i], out[i+1] = ' ', ' '
			i++
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	// A UTF-8 byte order mark is common in files saved on Windows.
	if len(out) >= 3 && out[0] == 0xEF && out[1] == 0xBB && out[2] == 0xBF {
		out[0], out[1], out[2] = ' ', ' ', ' '
	}
	return out, nil
}

// skipString returns the offset of the quote that closes the string
// opening at b[i].
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j, nil
		case '\n':
			line, col := position(b, i)
			return 0, &syntaxError{line: line, col: col, msg: "unterminated string"}
		}
	}
	line, col := position(b, i)
	return 0, &syntaxError{line: line, col: col, msg: "unterminated string"}
}

// position converts a byte offset to a 1-based line and column (columns
// count characters, not bytes).
func position(b []byte, off int) (line, col int) {
	off = max(0, min(off, len(b)))
	line, col = 1, 1
	for _, r := range string(b[:off]) {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

type syntaxError struct {
	line, col int
	msg       string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.line, e.col, e.msg) }

// StripJSONC is stripJSONC for readers of a project's config outside this
// package (the d1 and kv commands, which read only their own sections).
// A syntax error names the line and column.
func StripJSONC(src []byte) ([]byte, error) { return stripJSONC(src) }
