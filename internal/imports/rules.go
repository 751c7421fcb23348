// Package imports holds the package import rules of design.md as data
// and checks an import graph against them (its test checks the
// repository's). A package of this module may import only the packages its
// rule names (and their subpackages), the standard library and third-party
// modules other than those its rule bans.
package imports

import (
	"fmt"
	"slices"
	"strings"
)

// Module is this module's path.
const Module = "github.com/celldgo/celld"

// Rule is what one package (and, unless a longer rule names them, its
// subpackages) may import from this module, and which third-party
// modules it must not.
type Rule struct {
	Package string   // relative to Module: "cell", "d1/d1js"
	May     []string // module packages it may import (each with its subpackages)
	Ban     []string // third-party import paths it must not import (with subpackages)
}

// engine is the JavaScript engine: only the runtime and the binding
// adapters may link it.
const engine = "github.com/dop251/goja"

// dataPlane lists the products whose JS binding adapter is a leaf
// subpackage named <product>js (static assets are served like one).
var dataPlane = []string{"d1", "kv", "r2", "queue", "assets"}

// Rules is design.md's table. The packages "below" cli are everything but
// cmd; internal/ and bench/ are test and benchmark support, free to use
// what they test.
var Rules = func() []Rule {
	below := []string{"bucket", "fleet", "fleetlog", "diagnose", "deploy", "worker", "cell", "host", "server", "tui", "internal", "wake", "assets", "metrics", "cron", "httpcache"}
	below = append(below, dataPlane...)
	rs := []Rule{
		{Package: "cmd/celld", May: []string{"cli"}},
		// cli reaches cells through host (and the products), never cell
		// itself: a cell's life has one home.
		{Package: "cli", May: slices.DeleteFunc(slices.Clone(below), func(p string) bool { return p == "cell" })},
		{Package: "bucket", Ban: []string{engine}},
		{Package: "fleet", May: []string{"bucket", "fleet"}, Ban: []string{engine}},
		{Package: "fleet/core", Ban: []string{engine}}, // pure: see its own purity test
		{Package: "diagnose", May: []string{"bucket", "fleet"}, Ban: []string{engine}},
		{Package: "deploy", May: []string{"bucket", "assets", "cron/spec"}},
		{Package: "worker", May: []string{"cell", "httpcache"}},
		// The Cache API's store: pure Go, no engine.
		{Package: "httpcache", Ban: []string{engine}},
		{Package: "cell", May: []string{"bucket", "fleet"}, Ban: []string{engine}},
		{Package: "host", May: []string{"cell", "fleet", "bucket"}, Ban: []string{engine}},
		// Fleet durability: a node's replication group, its followers'
		// disks and the takeover recovery gate.
		{Package: "fleetlog", May: []string{"cell", "fleet", "bucket"}, Ban: []string{engine}},
		// Alarm wake-ups across the fleet: the wake/ layout and the waker.
		{Package: "wake", May: []string{"bucket", "fleet"}, Ban: []string{engine}},
		// A node's Prometheus series and the instrumented bucket client;
		// the packages that report to it (server) import it, the ones
		// below report through plain hooks and stay free of it.
		{Package: "metrics", May: []string{"bucket"}, Ban: []string{engine}},
		{Package: "server", May: append([]string{"bucket", "fleet", "fleetlog", "diagnose", "deploy", "worker", "cell", "host", "server", "wake", "assets", "metrics", "cron", "httpcache"}, dataPlane...)},
		// Cron triggers: the dialect (spec, standard library only, so
		// deploy validates with it) and the cron:<script> cell kind.
		{Package: "cron/spec", Ban: []string{engine}},
		{Package: "cron", May: []string{"cell", "bucket", "fleet", "host", "cron"}, Ban: []string{engine}},
		{Package: "server/api"},
		// tui reads node snapshots through server's wire types and finds
		// nodes through fleet (which takes a bucket).
		{Package: "tui", May: []string{"fleet", "bucket", "server/api"}, Ban: []string{engine}},
		{Package: "internal", May: below},
		{Package: "bench", May: below},
	}
	for _, p := range dataPlane {
		rs = append(rs,
			Rule{Package: p, May: []string{"cell", "bucket", "fleet", "host", p}, Ban: []string{engine}},
			// The binding adapter: goja values <-> product calls.
			Rule{Package: p + "/" + p + "js", May: []string{p, "worker", "cell", "bucket", "fleet", "host", "deploy"}},
		)
	}
	return rs
}()

// Violation is one import a rule forbids.
type Violation struct {
	Package, Import string
	Rule            string // the rule's package, or "" when none applies
}

func (v Violation) String() string {
	if v.Rule == "" {
		return fmt.Sprintf("%s has no rule in internal/imports (add it, after design.md's table)", v.Package)
	}
	return fmt.Sprintf("%s imports %s, which the rule of %s does not allow (design.md, Packages)", v.Package, v.Import, v.Rule)
}

// Check returns every import in graph (package → its imports, full
// import paths) that rules forbid, in a stable order.
func Check(rules []Rule, graph map[string][]string) []Violation {
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	var out []Violation
	for _, full := range pkgs {
		rel, ok := relative(full)
		if !ok {
			continue
		}
		r, ok := ruleFor(rules, rel)
		if !ok {
			out = append(out, Violation{Package: rel})
			continue
		}
		imps := slices.Clone(graph[full])
		slices.Sort(imps)
		for _, imp := range imps {
			if irel, own := relative(imp); own {
				if !within(irel, r.Package) && !slices.ContainsFunc(r.May, func(m string) bool { return within(irel, m) }) {
					out = append(out, Violation{Package: rel, Import: irel, Rule: r.Package})
				}
				continue
			}
			if slices.ContainsFunc(r.Ban, func(b string) bool { return within(imp, b) }) {
				out = append(out, Violation{Package: rel, Import: imp, Rule: r.Package})
			}
		}
	}
	return out
}

// ruleFor is the rule of the longest package prefix of rel.
func ruleFor(rules []Rule, rel string) (Rule, bool) {
	var best Rule
	found := false
	for _, r := range rules {
		if within(rel, r.Package) && (!found || len(r.Package) > len(best.Package)) {
			best, found = r, true
		}
	}
	return best, found
}

// within reports that path is pkg or one of its subpackages.
func within(path, pkg string) bool {
	return path == pkg || strings.HasPrefix(path, pkg+"/")
}

// relative is path relative to the module, if it is in the module.
func relative(path string) (string, bool) {
	if path == Module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(path, Module+"/")
	return rel, ok
}
