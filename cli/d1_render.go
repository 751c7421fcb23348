package cli

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/celldgo/celld/d1"
)

// How celld d1 prints results, tables and migration lists, as Wrangler does.

// renderD1Results prints Wrangler's local --json shape: one
// {results, success, meta: {duration}} per statement, rows as objects in
// column order, a BLOB as the string "[1, 2]".
func renderD1Results(w io.Writer, res []d1.Result) error {
	out := make([]d1Object, len(res))
	for i, r := range res {
		rows := make([]d1Object, len(r.Rows))
		for j, row := range r.Rows {
			o := make(d1Object, len(r.Columns))
			for k, col := range r.Columns {
				o[k] = d1Field{col, d1JSONValue(row[k])}
			}
			rows[j] = o
		}
		out[i] = d1Object{{"results", rows}, {"success", true}, {"meta", d1Object{{"duration", r.Meta.Duration}}}}
	}
	return writeJSON(w, out)
}

func d1JSONValue(v any) any {
	if b, ok := v.([]any); ok {
		return d1Text(b)
	}
	return v
}

// d1Text is a value as Wrangler's table prints it.
func d1Text(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(v))
		for i, b := range v {
			parts[i] = fmt.Sprint(b)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	default:
		return fmt.Sprint(v)
	}
}

// renderD1Tables prints, for every statement that returned rows, the
// statement (cut to 48 characters) and a table of its rows.
func renderD1Tables(w io.Writer, stmts []string, res []d1.Result) error {
	for i, r := range res {
		if len(r.Rows) == 0 {
			continue
		}
		q := ""
		if i < len(stmts) {
			q = strings.Join(strings.Fields(stmts[i]), " ")
		}
		if utf8.RuneCountInString(q) > 48 {
			q = string([]rune(q)[:48]) + "..."
		}
		fmt.Fprintln(w, q)
		rows := make([][]string, len(r.Rows))
		for j, row := range r.Rows {
			rows[j] = make([]string, len(row))
			for k, v := range row {
				rows[j][k] = d1Text(v)
			}
		}
		if err := d1BoxTable(w, r.Columns, rows); err != nil {
			return err
		}
	}
	return nil
}

// d1BoxTable draws a table with box characters, as Wrangler does.
func d1BoxTable(w io.Writer, header []string, rows [][]string) error {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = d1Width(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], d1Width(c))
			}
		}
	}
	line := func(l, m, r string) string {
		var b strings.Builder
		b.WriteString(l)
		for i, wd := range widths {
			if i > 0 {
				b.WriteString(m)
			}
			b.WriteString(strings.Repeat("─", wd+2))
		}
		return b.String() + r + "\n"
	}
	row := func(cells []string) string {
		var b strings.Builder
		b.WriteString("│")
		for i, wd := range widths {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			b.WriteString(" " + c + strings.Repeat(" ", wd-d1Width(c)) + " │")
		}
		return b.String() + "\n"
	}
	var b strings.Builder
	b.WriteString(line("┌", "┬", "┐"))
	b.WriteString(row(header))
	b.WriteString(line("├", "┼", "┤"))
	for _, r := range rows {
		b.WriteString(row(r))
	}
	b.WriteString(line("└", "┴", "┘"))
	_, err := io.WriteString(w, b.String())
	return err
}

// d1Width is the number of terminal cells s takes: wide (East Asian)
// characters and emoji such as ✅ and ❌ take two.
func d1Width(s string) int {
	n := 0
	for _, r := range s {
		n++
		switch {
		case r == 0x2705, r == 0x274C, r >= 0x1F300 && r <= 0x1FAFF,
			r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF, r >= 0xAC00 && r <= 0xD7A3,
			r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F, r >= 0xFF00 && r <= 0xFF60,
			r >= 0xFFE0 && r <= 0xFFE6, r >= 0x20000 && r <= 0x3FFFD:
			n++
		}
	}
	return n
}

// d1Object is a JSON object whose keys keep their order.
type d1Object []d1Field

type d1Field struct {
	k string
	v any
}

func (o d1Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshalJSON(f.k)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalJSON(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func d1RenderPending(w io.Writer, pending []d1.MigrationFile) error {
	if len(pending) == 0 {
		_, err := fmt.Fprintln(w, "✅ No migrations to apply!")
		return err
	}
	fmt.Fprintln(w, "Migrations to be applied:")
	rows := make([][]string, len(pending))
	for i, f := range pending {
		rows[i] = []string{f.Name}
	}
	return d1BoxTable(w, []string{"Name"}, rows)
}
