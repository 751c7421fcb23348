package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja/ast"
	"github.com/evanw/esbuild/pkg/api"
)

// The bundle is CommonJS: the host evaluates it inside
// (function(module, exports, require){ … }) and reads module.exports.
// goja has no ES module loader for us to feed, and a function wrapper
// gives the host the one place to hand in require for the externals.
//
// The target is ES2022 with goja's gaps switched off one by one in
// gojaGaps, so esbuild lowers exactly what goja cannot parse and leaves
// the rest (private methods, static blocks, ??=, optional chaining) as
// written. Everything newer than ES2022 (decorators, `using`, the regexp v
// flag) is lowered by the target itself. Tests parse and run bundles in
// goja to hold this table to the truth.
const bundleTarget = api.ES2022

// gojaGaps are the ES2022 features goja (v0.0.0-20260917113740) cannot
// parse. esbuild lowers each to code goja runs.
var gojaGaps = map[string]bool{
	// "Async generators are not supported yet"; for await depends on them.
	"async-generator": false,
	"for-await":       false,
	// Class fields, private members and static blocks stay native (goja
	// runs them); the one field shape goja cannot parse is quoted after
	// bundling (classfields.go), or, failing that, all class fields are
	// lowered (loweredFields).
	// Regexp syntax goja's engines do not know: esbuild turns such a
	// literal into new RegExp(…), so the module loads and only code that
	// uses the pattern throws. Those with property escapes (and the v
	// flag's, which the target lowers) are then rewritten to explicit
	// ranges goja runs (uniregexp.go).
	"regexp-match-indices":            false,
	"regexp-unicode-property-escapes": false,
	// A dynamic import of an external (cloudflare:workers) becomes a
	// require wrapped in a promise, served by the host's require.
	"dynamic-import": false,
}

// loweredFields is gojaGaps plus lowering of every class field: the
// fallback for a bundle whose get/set/async fields cannot be quoted.
// esbuild cannot lower only those fields, and lowering instance fields
// also lowers static and private ones to keep their initialisation
// order; they become __publicField/WeakMap calls in the constructor.
func loweredFields() map[string]bool {
	m := map[string]bool{"class-field": false, "class-static-field": false}
	for k, v := range gojaGaps {
		m[k] = v
	}
	return m
}

// externals are served by the host's require, not bundled. Node.js
// built-ins are decided by nodePlugin (node.go).
var externals = []string{"cloudflare:*"}

// BundleResult is the output of Bundle.
type BundleResult struct {
	Code     []byte
	Warnings []string // "file:line:column: text", paths relative to the project
}

// Bundle bundles the module main (relative to the project dir) and
// everything it imports into one CommonJS script. A syntax error, an
// unresolvable import or top-level await is a *ProjectError whose
// problems read "file:line:column: text" with the path relative to dir
// and a 1-based column.
//
// Top-level await cannot be expressed in CommonJS, and a module that uses
// it has no equivalent that keeps its evaluation order, so it is an error
// that says to move the await into a handler.
func Bundle(dir, main string) (BundleResult, error) {
	return BundleNode(dir, main, NodeOff)
}

// BundleNode is Bundle for a Worker with Node.js compatibility mode: the
// built-ins the mode provides stay imports the runtime serves ("node:x");
// any other Node.js import stops the bundle with a message naming it and
// its importer.
func BundleNode(dir, main string, node NodeMode) (BundleResult, error) {
	return bundle(dir, main, node, false)
}

// BundleWithSourceMap is BundleNode with an inline source map, so a stack
// trace names the project's own files and lines (celld dev,
// upload_source_maps).
func BundleWithSourceMap(dir, main string, node NodeMode) (BundleResult, error) {
	return bundle(dir, main, node, true)
}

func bundle(dir, main string, node NodeMode, sourceMap bool) (BundleResult, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return BundleResult{}, projectErr("", "project directory %s: %v", dir, err)
	}
	res := build(abs, main, gojaGaps, node, sourceMap)
	var prog *ast.Program // the bundle's, once parsed
	if len(res.Errors) == 0 {
		if code, ok := jsOutput(res); ok {
			quoted, p, _, err := quoteAccessorNamedFields(code)
			if err == nil {
				setJSOutput(res, quoted)
				prog = p
			} else {
				res = build(abs, main, loweredFields(), node, sourceMap)
			}
		}
	}
	if code, ok := jsOutput(res); ok && len(res.Errors) == 0 {
		setJSOutput(res, translateUnicodeRegExps(code, prog))
	}
	warnings := make([]string, 0, len(res.Warnings))
	for _, m := range res.Warnings {
		warnings = append(warnings, formatMessage(abs, m))
	}
	if len(res.Errors) > 0 {
		pe := &ProjectError{}
		for _, m := range res.Errors {
			pe.Problems = append(pe.Problems, formatMessage(abs, m))
		}
		return BundleResult{}, pe
	}
	var code []byte
	for _, f := range res.OutputFiles {
		if strings.HasSuffix(f.Path, ".js") {
			code = f.Contents
			continue
		}
		// e.g. a CSS import, which would need a file esbuild emits beside
		// the bundle: a Worker has nowhere to serve it from.
		rel, _ := filepath.Rel(abs, f.Path)
		return BundleResult{}, projectErr("", "%s: imports something that bundles to %s, which a Worker cannot load", main, filepath.ToSlash(rel))
	}
	if code == nil {
		return BundleResult{}, projectErr("", "%s: esbuild produced no output", main)
	}
	if entryIsModule(res) {
		code = strictModule(code)
	}
	return BundleResult{Code: code, Warnings: warnings}, nil
}

// build runs esbuild on main with the given feature table.
func build(abs, main string, supported map[string]bool, node NodeMode, sourceMap bool) api.BuildResult {
	sm := api.SourceMapNone
	if sourceMap {
		sm = api.SourceMapInline
	}
	return api.Build(api.BuildOptions{
		Sourcemap:     sm,
		AbsWorkingDir: abs,
		EntryPoints:   []string{filepath.Join(abs, filepath.FromSlash(main))},
		Outfile:       filepath.Join(abs, "index.js"), // names the output; Write is false
		Bundle:        true,
		Write:         false,
		Format:        api.FormatCommonJS,
		Platform:      api.PlatformNeutral,
		Target:        bundleTarget,
		Supported:     supported,
		External:      externals,
		Plugins:       []api.Plugin{nodePlugin(abs, node)},
		// What Wrangler resolves for workerd: packages' worker and
		// browser builds before their Node ones.
		Conditions: []string{"workerd", "worker", "browser"},
		MainFields: []string{"browser", "module", "main"},
		// Wrangler's default module rules import these as strings.
		Loader: map[string]api.Loader{".txt": api.LoaderText, ".html": api.LoaderText, ".sql": api.LoaderText},
		// Libraries branch on it; there is no process object to read.
		Define:   map[string]string{"process.env.NODE_ENV": `"production"`},
		LogLevel: api.LogLevelSilent,
		Metafile: true, // entryIsModule reads the entry's format from it
	})
}

// entryIsModule reports whether esbuild read the entry point as an ES
// module (it has import or export syntax): a module Worker, whose code
// workerd runs in strict mode as every ES module is. An entry without
// either is a service-worker script, which workerd runs sloppy.
func entryIsModule(res api.BuildResult) bool {
	var meta struct {
		Inputs map[string]struct {
			Format string `json:"format"`
		} `json:"inputs"`
		Outputs map[string]struct {
			EntryPoint string `json:"entryPoint"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(res.Metafile), &meta); err != nil {
		return false
	}
	for _, out := range meta.Outputs {
		if out.EntryPoint != "" {
			return meta.Inputs[out.EntryPoint].Format == "esm"
		}
	}
	return false
}

// strictModule makes a module Worker's CommonJS bundle strict, as the ES
// module it was is: esbuild's CommonJS output keeps a "use strict" the
// source wrote but adds none, and the host evaluates the bundle as the
// body of a function, so a directive first in the code makes that
// function, and everything bundled into it, strict (CommonJS
// dependencies too, as they are inside wrangler's ES module bundle). The
// directive goes on the first line, so line numbers and the source map's
// lines stay as they are.
func strictModule(code []byte) []byte {
	if bytes.HasPrefix(code, []byte(`"use strict";`)) {
		return code
	}
	return append([]byte(`"use strict";`), code...)
}

func jsOutput(res api.BuildResult) ([]byte, bool) {
	for _, f := range res.OutputFiles {
		if strings.HasSuffix(f.Path, ".js") {
			return f.Contents, true
		}
	}
	return nil, false
}

func setJSOutput(res api.BuildResult, code []byte) {
	for i, f := range res.OutputFiles {
		if strings.HasSuffix(f.Path, ".js") {
			res.OutputFiles[i].Contents = code
		}
	}
}

// formatMessage renders an esbuild message as "file:line:column: text",
// with the file relative to the project and a 1-based column counted in
// characters (esbuild counts bytes from 0).
func formatMessage(dir string, m api.Message) string {
	text := m.Text
	if strings.Contains(text, "Top-level await") {
		text += " (celld loads a Worker as CommonJS: move the await into a handler, or start the work in a promise and await that)"
	}
	for _, n := range m.Notes {
		if strings.Contains(n.Text, "built into node") {
			text += ` (Node built-ins are imported with the "node:" prefix, e.g. "node:buffer")`
		}
	}
	l := m.Location
	if l == nil || l.File == "" {
		return text
	}
	file := l.File
	if filepath.IsAbs(file) {
		if rel, err := filepath.Rel(dir, file); err == nil {
			file = rel
		}
	}
	col := l.Column
	if col <= len(l.LineText) {
		col = utf8.RuneCountInString(l.LineText[:col])
	}
	return fmt.Sprintf("%s:%d:%d: %s", filepath.ToSlash(file), l.Line, col+1, text)
}
