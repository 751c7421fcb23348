package deploy_test

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// sloppyRun evaluates a bundle as worker.Compile does, in a wrapper
// compiled without strict mode, so only a directive in the bundle makes
// it strict, and returns module.exports.probe().
func sloppyRun(t *testing.T, code []byte) string {
	t.Helper()
	src := "(function(module, exports, require){" + string(code) + "\n})"
	prog, err := goja.Compile("index.js", src, false)
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, numbered(src))
	}
	vm := goja.New()
	fn, err := vm.RunProgram(prog)
	if err != nil {
		t.Fatal(err)
	}
	call, _ := goja.AssertFunction(fn)
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	if _, err := call(goja.Undefined(), module, exports, goja.Undefined()); err != nil {
		t.Fatalf("run: %v", err)
	}
	probe, ok := goja.AssertFunction(module.Get("exports").ToObject(vm).Get("probe"))
	if !ok {
		t.Fatal("no probe export")
	}
	v, err := probe(goja.Undefined())
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	return v.String()
}

// A module Worker runs strict on workerd, CommonJS dependencies included
// (wrangler bundles them into its ES module); the probe reports `this` in
// a plain call and whether assigning an undeclared name throws.
func TestBundle_ModuleIsStrict(t *testing.T) {
	code := bundle(t, map[string]string{
		"index.js": `import { sloppy } from "./dep.cjs";
export function probe() {
  const self = (function () { return typeof this; })();
  return self + "," + sloppy();
}
export default { fetch() {} };`,
		"dep.cjs": `exports.sloppy = function () {
  try { undeclaredInDep = 1; return "assigned"; } catch (e) { return e.name; }
};`,
	}, "index.js")
	if got := sloppyRun(t, code); got != "undefined,ReferenceError" {
		t.Fatalf("module bundle ran as %q, want strict (undefined,ReferenceError)", got)
	}
}

// An entry without import or export is a service-worker script, which
// workerd runs sloppy; the bundle gets no directive.
func TestBundle_ScriptIsNotMadeStrict(t *testing.T) {
	code := bundle(t, map[string]string{
		"index.js": `exports.probe = function () {
  undeclaredInScript = 1;
  return typeof (function () { return this; })();
};`,
	}, "index.js")
	if strings.Contains(string(code), "use strict") {
		t.Fatalf("script bundle was made strict:\n%s", code)
	}
	if got := sloppyRun(t, code); got != "object" {
		t.Fatalf("script bundle ran as %q, want sloppy (object)", got)
	}
}
