package deploy

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// NodeMode is how much of Node.js a Worker gets, decided by its
// compatibility flags and date as workerd decides it.
type NodeMode int

// Node.js compatibility modes.
const (
	// NodeOff: no node:* module; importing one fails the deploy.
	NodeOff NodeMode = iota
	// NodeALS (flag nodejs_als): node:async_hooks only.
	NodeALS
	// NodeV1 (nodejs_compat before 2024-09-23): node:* modules, imported
	// with the prefix only; no Buffer or process global.
	NodeV1
	// NodeV2 (nodejs_compat from 2024-09-23, or nodejs_compat_v2): bare
	// names ("buffer") resolve too, and Buffer and process are globals.
	NodeV2
)

// nodeV2Date is the compatibility date from which nodejs_compat implies
// nodejs_compat_v2 (workerd's compatibility-date.capnp).
const nodeV2Date = "2024-09-23"

// NodeCompat returns the Node.js mode of a compatibility date and flags.
func NodeCompat(date string, flags []string) NodeMode {
	has := func(f string) bool {
		for _, x := range flags {
			if x == f {
				return true
			}
		}
		return false
	}
	switch {
	case has("nodejs_compat_v2"):
		return NodeV2
	case has("nodejs_compat") && date >= nodeV2Date && !has("no_nodejs_compat_v2"):
		return NodeV2
	case has("nodejs_compat"):
		return NodeV1
	case has("nodejs_als"):
		return NodeALS
	}
	return NodeOff
}

// nodeEnvDate is the compatibility date from which nodejs_compat fills
// process.env from the Worker's text bindings (vars, secrets).
const nodeEnvDate = "2025-04-01"

// NodeProcessEnv reports whether process.env holds the Worker's vars, as
// workerd's nodejs_compat_populate_process_env decides it.
func NodeProcessEnv(date string, flags []string) bool {
	has := func(f string) bool {
		for _, x := range flags {
			if x == f {
				return true
			}
		}
		return false
	}
	if NodeCompat(date, flags) < NodeV1 || has("nodejs_compat_do_not_populate_process_env") {
		return false
	}
	return has("nodejs_compat_populate_process_env") || date >= nodeEnvDate
}

// NodeModules are the Node.js built-ins celld provides (without "node:").
// The runtime's require serves exactly these.
var NodeModules = []string{
	"assert", "assert/strict", "async_hooks", "buffer", "crypto",
	"diagnostics_channel", "events", "path", "path/posix", "process",
	"querystring", "stream", "stream/promises", "stream/web",
	"string_decoder", "timers", "timers/promises", "url", "util",
	"util/types", "zlib",
}

// nodeSocketModules need raw sockets (or processes, or a file system),
// which a Worker on celld does not have.
var nodeSocketModules = map[string]bool{
	"net": true, "tls": true, "http": true, "https": true, "http2": true,
	"dgram": true, "dns": true, "dns/promises": true, "child_process": true,
	"cluster": true, "inspector": true, "inspector/promises": true,
	"worker_threads": true, "fs": true, "fs/promises": true, "readline": true,
	"readline/promises": true, "repl": true, "tty": true,
}

// nodeBuiltins is every name Node.js itself has as a built-in module, so
// that a bare import of one is recognised as such.
var nodeBuiltins = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range NodeModules {
		m[n] = true
	}
	for n := range nodeSocketModules {
		m[n] = true
	}
	for _, n := range []string{"os", "perf_hooks", "punycode", "module", "v8", "vm", "sys",
		"path/win32", "stream/consumers", "trace_events", "wasi", "sqlite", "test", "constants", "domain",
		"util/types", "async_hooks"} {
		m[n] = true
	}
	return m
}()

var nodeProvided = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range NodeModules {
		m[n] = true
	}
	return m
}()

// nodeImport matches an import that could name a Node.js built-in.
var nodeImport = regexp.MustCompile(`^(node:)?[a-z_]+(/[a-z_]+)?$`)

// nodePlugin decides, for every import of a Node.js built-in, whether the
// runtime serves it (external "node:NAME") or the deploy stops with a
// message naming the import and the file that imports it. It runs before
// esbuild looks in node_modules, so a polyfill package installed under a
// built-in's name ("buffer", "events") is not bundled in place of the
// runtime's module when Node.js compatibility is on (as with Wrangler).
func nodePlugin(abs string, mode NodeMode) api.Plugin {
	return api.Plugin{
		Name: "celld-node",
		Setup: func(b api.PluginBuild) {
			b.OnResolve(api.OnResolveOptions{Filter: `^(node:)?[a-z_]+(/[a-z_]+)?$`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				if !nodeImport.MatchString(a.Path) {
					return api.OnResolveResult{}, nil
				}
				name, prefixed := strings.CutPrefix(a.Path, "node:")
				if !prefixed && (!nodeBuiltins[name] || mode != NodeV2) {
					// A package of that name, or a bare name without
					// nodejs_compat_v2: esbuild resolves it as usual (and,
					// finding nothing, says it is built into Node).
					return api.OnResolveResult{}, nil
				}
				importer := a.Importer
				if rel, err := filepath.Rel(abs, importer); err == nil && !strings.HasPrefix(rel, "..") {
					importer = filepath.ToSlash(rel)
				}
				fail := func(format string, args ...any) (api.OnResolveResult, error) {
					return api.OnResolveResult{}, fmt.Errorf(format, args...)
				}
				switch {
				case mode == NodeOff:
					return fail("%q (imported by %s) needs Node.js compatibility: add \"nodejs_compat\" to compatibility_flags in wrangler.jsonc", a.Path, importer)
				case mode == NodeALS && name != "async_hooks":
					return fail("%q (imported by %s) needs Node.js compatibility: the nodejs_als flag provides only node:async_hooks; use \"nodejs_compat\"", a.Path, importer)
				case nodeSocketModules[name]:
					return fail("%q (imported by %s) is not available on celld: it needs raw sockets, processes or a file system, which a Worker here does not have", a.Path, importer)
				case !nodeProvided[name]:
					return fail("%q (imported by %s) is not provided by celld's Node.js compatibility (available: %s)", a.Path, importer, providedList())
				}
				return api.OnResolveResult{Path: "node:" + name, External: true}, nil
			})
		},
	}
}

func providedList() string {
	l := append([]string(nil), NodeModules...)
	sort.Strings(l)
	return strings.Join(l, ", ")
}
