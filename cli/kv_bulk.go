package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/celldgo/celld/kv"
)

// What the kv bulk commands share: their warnings and progress bar.

func kvCapLines(lines []string) string {
	if len(lines) > kv.MaxListedProblems {
		lines = append(lines[:kv.MaxListedProblems:kv.MaxListedProblems], "...")
	}
	return strings.Join(lines, "\n")
}

// kvProgress writes Wrangler's progress lines; on a terminal it redraws one
// line with a bar instead.
type kvProgress struct {
	w    io.Writer
	verb string
	tty  bool
	drew bool
}

func newKVProgress(w io.Writer, verb string) *kvProgress {
	f, ok := w.(*os.File)
	return &kvProgress{w: w, verb: verb, tty: ok && isTerminal(f)}
}

func (p *kvProgress) update(done, total int) {
	line := kv.ProgressLine(p.verb, done, total)
	if !p.tty {
		fmt.Fprintln(p.w, line)
		return
	}
	const width = 30
	n := width
	if total > 0 {
		n = width * done / total
	}
	fmt.Fprintf(p.w, "\r[%s%s] %s", strings.Repeat("█", n), strings.Repeat("░", width-n), line)
	p.drew = true
}

func (p *kvProgress) finish() {
	if p.drew {
		fmt.Fprintln(p.w)
		p.drew = false
	}
}
