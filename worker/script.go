package worker

import (
	"fmt"

	"github.com/dop251/goja"
)

// Script is a compiled Worker bundle, shared read-only by every isolate of
// every Runtime that runs it.
type Script struct {
	name    string
	program *goja.Program
}

// Name returns the name the script was compiled under.
func (s *Script) Name() string { return s.name }

// Compile compiles an esbuild CommonJS bundle once. The bundle is wrapped
// as a function of (module, exports, require); require serves the host
// modules ("cloudflare:workers").
func Compile(name string, code []byte) (*Script, error) {
	// The wrapper opens on the code's first line, so the code's line
	// numbers (and an inline source map of them) stay as they are.
	src := "(function (module, exports, require) {" + string(code) + "\n})"
	prog, err := goja.Compile(name, src, false)
	if err != nil {
		return nil, fmt.Errorf("compile script %s: %w", name, err)
	}
	return &Script{name: name, program: prog}, nil
}
