package d1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// The request format of a D1 cell (see Handle): one line of JSON, the
// header, optionally followed by "\n" and a payload of raw SQL text. SQL
// that can be large (exec, a dump, a migration file) travels as the
// payload, so it is neither escaped nor re-encoded as valid UTF-8 on the
// way.
//
// The answer is JSON. Result rows are written by hand rather than with
// encoding/json: values keep SQLite's types (a BLOB becomes an array of
// byte numbers, as the binding returns it), column order is kept, and the
// size limits are checked while the rows are produced.

// Ops.
const (
	OpQuery          = "query"           // statements with parameters, one transaction: prepare().all/run/first/raw, batch
	OpExec           = "exec"            // D1Database.exec: one statement list per line, one transaction
	OpImport         = "import"          // a SQL file (a dump): split by Wrangler's rules, one transaction
	OpMigrationsList = "migrations_list" // the bookkeeping table's rows (creating the table)
	OpMigrationApply = "migration_apply" // one migration file and its record, one transaction
)

// Request is the header of a request to a D1 cell.
type Request struct {
	Op string `json:"op"`
	// Stmts are the statements of OpQuery.
	Stmts []Statement `json:"stmts,omitempty"`
	// Table is the migrations table of the migration ops.
	Table string `json:"table,omitempty"`
	// Name is the migration file name of OpMigrationApply.
	Name string `json:"name,omitempty"`
}

// Statement is one statement of OpQuery with its parameters: null, a
// number, a string, a boolean (1/0) or an array of byte values (a BLOB).
type Statement struct {
	SQL    string            `json:"sql"`
	Params []json.RawMessage `json:"params,omitempty"`
}

// EncodeRequest builds the bytes of a request: the header and, when
// payload is not empty, the payload after a newline.
func EncodeRequest(r Request, payload string) ([]byte, error) {
	h, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encode d1 request: %w", err)
	}
	if payload == "" {
		return h, nil
	}
	out := make([]byte, 0, len(h)+1+len(payload))
	out = append(out, h...)
	out = append(out, '\n')
	return append(out, payload...), nil
}

// decodeRequest splits req into its header and payload.
func decodeRequest(req []byte) (Request, string, error) {
	head, payload := req, []byte(nil)
	if i := bytes.IndexByte(req, '\n'); i >= 0 {
		head, payload = req[:i], req[i+1:]
	}
	var r Request
	if err := json.Unmarshal(head, &r); err != nil {
		return r, "", fmt.Errorf("d1: malformed request: %w", err)
	}
	return r, string(payload), nil
}

// param decodes one parameter into what cell.DB.Exec binds. As workerd's
// D1 binding (recorded in testdata/celld/d1-binding-types), every JS
// number binds as REAL and a boolean as REAL 1 or 0: typeof(?) of 5 is
// "real", and SQLite's column affinity makes it an integer where the
// column asks for one.
func param(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	switch raw[0] {
	case 'n':
		return nil, nil
	case 't':
		return float64(1), nil
	case 'f':
		return float64(0), nil
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var bs []int
		if err := json.Unmarshal(raw, &bs); err != nil {
			return nil, fmt.Errorf("a BLOB parameter must be an array of byte values: %w", err)
		}
		b := make([]byte, len(bs))
		for i, v := range bs {
			if v < 0 || v > 255 {
				return nil, fmt.Errorf("a BLOB parameter must be an array of byte values, got %d", v)
			}
			b[i] = byte(v)
		}
		return b, nil
	case '{':
		return nil, fmt.Errorf("type 'object' not supported")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return nil, fmt.Errorf("bad number parameter %s", raw)
	}
	return f, nil
}

// appendValue appends one SQLite value as JSON.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		return appendNumber(b, v)
	case string:
		return appendString(b, v)
	case []byte:
		b = append(b, '[')
		for i, c := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(b, uint64(c), 10)
		}
		return append(b, ']')
	default:
		return appendString(b, fmt.Sprint(v))
	}
}

// appendNumber writes f as JavaScript prints it. Infinities are written
// as 1e999, which JSON.parse reads back as Infinity; NaN (which SQLite
// never stores) as null.
func appendNumber(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "null"...)
	case math.IsInf(f, 1):
		return append(b, "1e999"...)
	case math.IsInf(f, -1):
		return append(b, "-1e999"...)
	}
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes e-07 and e+21; JavaScript e-7 and e+21.
		if i := bytes.IndexByte([]byte(s), 'e'); i >= 0 && i+2 < len(s) && s[i+2] == '0' {
			s = s[:i+2] + s[i+3:]
		}
		return append(b, s...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// appendString writes s as a JSON string. Bytes that are not UTF-8 become
// U+FFFD, as they would in JavaScript.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
