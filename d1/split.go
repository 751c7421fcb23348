package d1

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Wrangler's SQL splitting (wrangler's src/d1/splitter.ts), used by
// `celld d1 execute` and by migrations so that a file splits into the
// same statements here as under `wrangler d1 execute` / `migrations apply`.
//
// The rules, kept quirk for quirk because users' files were written
// against them:
//
//   - a single statement (no ';' except, at most, one at the very end) is
//     returned as it is, comments included;
//   - otherwise the text is cut at ';' outside '…', "…", `…` and $tag$…$tag$,
//     and outside compound bodies: after a whitespace-delimited BEGIN or
//     CASE (any case) the text runs to a matching whitespace-led END
//     followed by ';' or whitespace (upper case only, as in Wrangler);
//   - "--" comments are dropped up to and including their newline, which
//     is kept; "/* */" comments are dropped; a '$' followed by identifier
//     characters swallows the character that ends them (so "$a;" does not
//     split, as in Wrangler);
//   - pieces are trimmed and empty ones dropped.
//
// Before splitting, a sqlite3 ".dump" transaction wrapper is removed: the
// first "BEGIN TRANSACTION;" and one "COMMIT;". Wrangler removes the first
// "COMMIT;"; this removes the last one, so a text value containing
// "COMMIT;" ahead of the dump's own is not damaged.

// ErrSeveralTransactions is returned for SQL that still contains BEGIN
// TRANSACTION after the dump wrapper is removed.
var ErrSeveralTransactions = errors.New("the SQL contains several transactions; D1 runs your SQL in a transaction for you: export a plain SQL file (sqlite3 .dump) and try again")

// SplitStatements splits sql into statements by Wrangler's rules.
func SplitStatements(sql string) ([]string, error) {
	trimmed, err := trimTransaction(sql)
	if err != nil {
		return nil, err
	}
	if !mayContainMultipleStatements(trimmed) {
		return []string{trimmed}, nil
	}
	split := splitIntoStatements(trimmed)
	if len(split) == 0 {
		return []string{trimmed}, nil
	}
	return split, nil
}

func trimTransaction(sql string) (string, error) {
	const begin, commit = "BEGIN TRANSACTION", "COMMIT;"
	if !strings.Contains(sql, begin) {
		return sql, nil
	}
	out := strings.Replace(sql, begin+";", "", 1)
	if i := strings.LastIndex(out, commit); i >= 0 {
		out = out[:i] + out[i+len(commit):]
	}
	if strings.Contains(out, begin) {
		return "", ErrSeveralTransactions
	}
	return out, nil
}

func mayContainMultipleStatements(sql string) bool {
	t := strings.TrimRightFunc(sql, isJSSpace)
	i := strings.IndexByte(t, ';')
	return i >= 0 && i != len(t)-1
}

// splitIntoStatements is the splitter proper. It works on bytes: every
// character it treats specially is ASCII, and multi-byte characters are
// copied whole.
func splitIntoStatements(sql string) []string {
	var stmts []string
	cur := make([]byte, 0, 256)
	depth := 0 // open compound statements (BEGIN/CASE without END)
	i := 0
	for i < len(sql) {
		ch := sql[i]
		if depth > 0 && endsCompound(cur, ch) {
			depth--
		}
		switch ch {
		case '\'', '"', '`':
			j := strings.IndexByte(sql[i+1:], ch)
			if j < 0 {
				cur = append(cur, sql[i:]...)
				i = len(sql)
			} else {
				cur = append(cur, sql[i:i+1+j+1]...)
				i += j + 2
			}
		case '$':
			i = consumeDollar(sql, i, &cur)
		case '-':
			if i+1 < len(sql) && sql[i+1] == '-' {
				j := strings.IndexByte(sql[i+2:], '\n')
				if j < 0 {
					i = len(sql)
				} else {
					i += 2 + j + 1
				}
				cur = append(cur, '\n')
			} else {
				cur = append(cur, '-')
				i++
				continue // as Wrangler: no compound check after this character
			}
		case '/':
			if i+1 < len(sql) && sql[i+1] == '*' {
				j := strings.Index(sql[i+2:], "*/")
				if j < 0 {
					i = len(sql)
				} else {
					i += 2 + j + 2
				}
			} else {
				cur = append(cur, '/')
				i++
				continue
			}
		case ';':
			if depth == 0 {
				stmts = append(stmts, string(cur))
				cur = cur[:0]
			} else {
				cur = append(cur, ';')
			}
			i++
		default:
			_, n := utf8.DecodeRuneInString(sql[i:])
			cur = append(cur, sql[i:i+n]...)
			i += n
		}
		if startsCompound(cur) {
			depth++
		}
	}
	stmts = append(stmts, string(cur))
	out := stmts[:0]
	for _, s := range stmts {
		if s = strings.TrimFunc(s, isJSSpace); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// consumeDollar copies a '$' and the identifier characters after it plus
// the character that ends them; when that is '$' the text up to the
// closing tag is copied too. It returns the index after what it copied.
func consumeDollar(sql string, i int, cur *[]byte) int {
	start := i
	i++
	for i < len(sql) {
		r, n := utf8.DecodeRuneInString(sql[i:])
		i += n
		if !isDollarIdent(r) {
			break
		}
	}
	tag := sql[start:i]
	*cur = append(*cur, tag...)
	if len(tag) < 2 || tag[len(tag)-1] != '$' {
		return i
	}
	j := strings.Index(sql[i:], tag)
	if j < 0 {
		*cur = append(*cur, sql[i:]...)
		return len(sql)
	}
	*cur = append(*cur, sql[i:i+j+len(tag)]...)
	return i + j + len(tag)
}

// isDollarIdent is Wrangler's test for a character of a $tag$: not '$',
// and a digit, '_' or a letter that has case.
func isDollarIdent(r rune) bool {
	if r == '$' {
		return false
	}
	if r >= '0' && r <= '9' || r == '_' {
		return true
	}
	// JavaScript compares UTF-16 units: a character outside the BMP is a
	// lone surrogate there, which has no case.
	return r <= 0xFFFF && unicode.ToLower(r) != unicode.ToUpper(r)
}

// startsCompound reports whether cur ends with whitespace, BEGIN or CASE
// (any case), whitespace: /\s(BEGIN|CASE)\s$/i.
func startsCompound(cur []byte) bool {
	last, size := utf8.DecodeLastRune(cur)
	if size == 0 || !isJSSpace(last) {
		return false
	}
	word := cur[:len(cur)-size]
	for _, kw := range [...]string{"BEGIN", "CASE"} {
		if len(word) <= len(kw) || !strings.EqualFold(string(word[len(word)-len(kw):]), kw) {
			continue
		}
		before, _ := utf8.DecodeLastRune(word[:len(word)-len(kw)])
		return isJSSpace(before)
	}
	return false
}

// endsCompound reports whether cur followed by ch ends with whitespace,
// END, then ';' or whitespace: /\sEND[;\s]$/ (case-sensitive).
func endsCompound(cur []byte, ch byte) bool {
	if ch != ';' && !isJSSpace(rune(ch)) {
		return false
	}
	n := len(cur)
	if n < 4 || string(cur[n-3:]) != "END" {
		return false
	}
	before, _ := utf8.DecodeLastRune(cur[:n-3])
	return isJSSpace(before)
}

// isJSSpace is JavaScript's \s (and what String.prototype.trim removes).
func isJSSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// isTrivia reports whether s holds no statement: only whitespace, ';' and
// comments. Such a piece (a migration file holding only its header
// comment, say) is skipped rather than failed.
func isTrivia(s string) bool {
	for i := 0; i < len(s); {
		switch ch := s[i]; {
		case ch == ';' || ch < 0x80 && isJSSpace(rune(ch)):
			i++
		case ch == '-' && i+1 < len(s) && s[i+1] == '-':
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return true
			}
			i += j + 1
		case ch == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return true
			}
			i += 2 + j + 2
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if !isJSSpace(r) {
				return false
			}
			i += n
		}
	}
	return true
}
