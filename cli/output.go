package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
)

// The output layer every command prints through: JSON as JavaScript's
// JSON.stringify(v, null, 2) writes it (what Wrangler prints), the check
// for a terminal that switches a command between its human and its
// machine form, and the success line.

// writeJSON prints v indented by two spaces, without HTML escaping, and a
// newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// marshalJSON is json.Marshal without HTML escaping, as JavaScript's
// JSON.stringify.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// isTerminal reports that f (a command's writer or reader) is a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(file.Fd())
}

// success prints the line that ends a command which did what it was
// asked (Wrangler's "Success!").
func success(w io.Writer) error {
	_, err := fmt.Fprintln(w, "Success!")
	return err
}
