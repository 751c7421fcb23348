package worker

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"sync"

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
	src := "(function (module, exports, require) {\n" + string(code) + "\n})"
	prog, err := goja.Compile(name, src, false)
	if err != nil {
		return nil, fmt.Errorf("compile script %s: %w", name, err)
	}
	return &Script{name: name, program: prog}, nil
}

//go:embed prelude/*.js
var preludeFS embed.FS

type preludeProgram struct {
	name    string
	program *goja.Program
}

// compilePrelude compiles the embedded Web API prelude once per process.
// Each file is a function (native, internal, global) run in name order in
// every new isolate.
var compilePrelude = sync.OnceValues(func() ([]preludeProgram, error) {
	names, err := fs.Glob(preludeFS, "prelude/*.js")
	if err != nil {
		return nil, fmt.Errorf("list prelude: %w", err)
	}
	sort.Strings(names)
	out := make([]preludeProgram, 0, len(names))
	for _, n := range names {
		src, err := preludeFS.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("read prelude %s: %w", n, err)
		}
		prog, err := goja.Compile(n, "(function (native, internal, global) {\n\"use strict\";\n"+string(src)+"\n})", true)
		if err != nil {
			return nil, fmt.Errorf("compile prelude %s: %w", n, err)
		}
		out = append(out, preludeProgram{name: n, program: prog})
	}
	return out, nil
})
