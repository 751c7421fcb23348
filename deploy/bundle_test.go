package deploy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/celldgo/celld/deploy"
)

// gojaLoad runs a bundle the way the host will: inside
// (function(module, exports, require){ … }), with require serving
// cloudflare:workers from a stub. It returns module.exports. The source
// is first compiled on its own, so a parse failure is reported as such.
func gojaLoad(t *testing.T, code []byte) (*goja.Runtime, *goja.Object) {
	t.Helper()
	src := "(function(module, exports, require){" + string(code) + "\n})"
	prog, err := goja.Compile("index.js", src, true)
	if err != nil {
		t.Fatalf("goja cannot parse the bundle: %v\n%s", err, numbered(src))
	}
	vm := goja.New()
	stub, err := vm.RunString(`({
		DurableObject: class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } },
		WorkerEntrypoint: class WorkerEntrypoint {},
	})`)
	if err != nil {
		t.Fatal(err)
	}
	var required []string
	require := func(name string) goja.Value {
		required = append(required, name)
		if name != "cloudflare:workers" {
			panic(vm.NewTypeError("no module " + name))
		}
		return stub
	}
	fn, err := vm.RunProgram(prog)
	if err != nil {
		t.Fatalf("evaluate the wrapper: %v", err)
	}
	call, ok := goja.AssertFunction(fn)
	if !ok {
		t.Fatalf("the wrapper is a %T, not a function", fn.Export())
	}
	module := vm.NewObject()
	exports := vm.NewObject()
	if err := module.Set("exports", exports); err != nil {
		t.Fatal(err)
	}
	if _, err := call(goja.Undefined(), module, exports, vm.ToValue(require)); err != nil {
		t.Fatalf("run the bundle: %v\n%s", err, numbered(src))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("modules required: %q", required)
		}
	})
	return vm, module.Get("exports").ToObject(vm)
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}

// settle returns v, or what v resolves to when it is a promise; goja runs
// promise jobs before a call from Go returns.
func settle(t *testing.T, vm *goja.Runtime, v goja.Value) goja.Value {
	t.Helper()
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return v
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return p.Result()
	case goja.PromiseStateRejected:
		t.Fatalf("promise rejected: %v", p.Result())
	default:
		t.Fatal("promise still pending")
	}
	return nil
}

func callExport(t *testing.T, vm *goja.Runtime, exports *goja.Object, path ...string) goja.Value {
	t.Helper()
	obj := exports
	for _, p := range path[:len(path)-1] {
		obj = obj.Get(p).ToObject(vm)
	}
	f, ok := goja.AssertFunction(obj.Get(path[len(path)-1]))
	if !ok {
		t.Fatalf("%s is not a function", strings.Join(path, "."))
	}
	v, err := f(obj)
	if err != nil {
		t.Fatalf("%s(): %v", strings.Join(path, "."), err)
	}
	return settle(t, vm, v)
}

func bundle(t *testing.T, files map[string]string, main string) []byte {
	t.Helper()
	b, err := deploy.Bundle(project(t, files), main)
	if err != nil {
		t.Fatalf("bundle: %v", err)
	}
	return b.Code
}

func TestBundle_ClassFieldsNamedLikeKeywords(t *testing.T) {
	// Hono declares fields like these; goja cannot parse `get = …` in a
	// class body, so the bundle must not contain it.
	code := bundle(t, map[string]string{"src/index.js": `
import { DurableObject } from "cloudflare:workers";
class R { get = 1; set = 2; async = 3; static x = 4; static get = 5; #p = 6; p() { return this.#p; } }
export class Counter extends DurableObject {
  count = 0;
  static async = "static";
  #secret = 7;
  bump() { return ++this.count + this.#secret; }
}
export default {
  fetch() {
    const r = new R();
    return [r.get, r.set, r.async, R.x, R.get, r.p()].join(",");
  },
};
`}, "src/index.js")
	if !strings.Contains(string(code), `require("cloudflare:workers")`) {
		t.Errorf("cloudflare:workers is not an external require:\n%s", code)
	}
	vm, exports := gojaLoad(t, code)
	if got, want := callExport(t, vm, exports, "default", "fetch").String(), "1,2,3,4,5,6"; got != want {
		t.Errorf("fetch() = %q, want %q", got, want)
	}
	if err := vm.Set("mod", exports); err != nil {
		t.Fatal(err)
	}
	got, err := vm.RunString(`
		const c = new mod.Counter({id: "x"}, {});
		[c.bump(), c.bump(), c.ctx.id, mod.Counter.async, Object.getPrototypeOf(mod.Counter).name].join(",")`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := got.String(), "8,9,x,static,DurableObject"; got != want {
		t.Errorf("Counter = %q, want %q", got, want)
	}
}

func TestBundle_AsyncIteration(t *testing.T) {
	code := bundle(t, map[string]string{"index.js": `
async function* ticks(n) { for (let i = 1; i <= n; i++) { await null; yield i; } }
const o = { async *twice(x) { yield x; yield x; } };
class S { static async *one() { yield 1; } }
export default {
  async fetch() {
    let sum = 0;
    for await (const t of ticks(4)) sum += t;
    for await (const t of o.twice(10)) sum += t;
    for await (const t of S.one()) sum += t;
    for await (const t of [100, Promise.resolve(1000)]) sum += t;
    return sum;
  },
};
`}, "index.js")
	vm, exports := gojaLoad(t, code)
	if got, want := callExport(t, vm, exports, "default", "fetch").ToInteger(), int64(1+2+3+4+20+1+1100); got != want {
		t.Errorf("fetch() = %d, want %d", got, want)
	}
}

// TestBundle_SyntaxGoja holds the target and gojaGaps to the truth: a
// module using the syntax Workers code is written in bundles to
// something goja parses and runs.
func TestBundle_SyntaxGoja(t *testing.T) {
	code := bundle(t, map[string]string{
		"src/index.ts": `
import { helper } from "./lib";
import text from "./hello.txt";
enum Color { Red = 1, Green }
type Pair = [number, number];
class Box<T> {
  static #count = 0;
  static { Box.#count = 10; }
  #v: T;
  constructor(v: T) { this.#v = v; Box.#count++; }
  get value(): T { return this.#v; }
  static count() { return Box.#count; }
  #twice() { return 2; }
  twice() { return this.#twice(); }
  static isBox(o: object) { return #v in o; }
}
function log(_t: any, _c: any) {}
class Decorated { @log method() { return "decorated"; } }
export default {
  async fetch(): Promise<string> {
    const p: Pair = [1, 2];
    let a: number | undefined;
    a ??= 5;
    let b = 0;
    b ||= 6;
    const deep = ({ x: { y: 7 } } as any)?.x?.y ?? 0;
    const { first, ...rest } = { first: 1, second: 2, third: 3 };
    const big = 10n ** 3n;
    const re = /(?<year>\d{4})-(?<m>\d\d)/u.exec("2025-01")!.groups!.year;
    let indices = "lazy";
    try { indices = String(/a/d.exec("xa")!.indices![0][0]); } catch { indices = "unsupported"; }
    let prop = "lazy";
    try { prop = String(/\p{L}+/u.test("abc")); } catch { prop = "unsupported"; }
    const mod = await import("cloudflare:workers");
    const box = new Box("v");
    return [p[1], a, b, deep, first, Object.keys(rest).length, big, re, Color.Green,
      box.value, Box.count(), box.twice(), Box.isBox(box), helper(), text.trim(),
      new Decorated().method(), typeof mod.DurableObject, 1_000, indices, prop].join(",");
  },
};
`,
		"src/lib.ts":    `export const helper = (): string => "lib";`,
		"src/hello.txt": "hello\n",
		"tsconfig.json": `{"compilerOptions":{"experimentalDecorators":true,"target":"ES2022"}}`,
	}, "src/index.ts")
	vm, exports := gojaLoad(t, code)
	got := callExport(t, vm, exports, "default", "fetch").String()
	// The regexp `d` flag and \p{…} are not in goja's engine; esbuild turns
	// those literals into new RegExp(…), so the module loads and only the
	// lines that use them throw — caught above as "unsupported" or run.
	t.Logf("fetch() = %q", got)
	want := "2,5,6,7,1,2,1000,2025,2,v,11,2,true,lib,hello,decorated,function,1000,"
	if !strings.HasPrefix(got, want) {
		t.Errorf("fetch() = %q, want prefix %q", got, want)
	}
}

func TestBundle_Errors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		main  string
		want  string
	}{
		{"syntax error", map[string]string{"index.js": "export default {\n  fetch() {\n    return 1 +* 2;\n  },\n};\n"}, "index.js",
			`index.js:3:15: Unexpected "*"`},
		{"syntax error in an imported file, after a multi-byte character", map[string]string{
			"src/index.ts": `import { x } from "./lib/x";` + "\nexport default { fetch() { return x; } };\n",
			"src/lib/x.ts": "export const x = \"é\"; let let = 1;\n",
		}, "src/index.ts", `src/lib/x.ts:1:27: `},
		{"unresolved import", map[string]string{"index.js": `import x from "./missing.js";` + "\nexport default x;\n"}, "index.js",
			`index.js:1:15: Could not resolve "./missing.js"`},
		{"node built-in without prefix", map[string]string{"index.js": `import { Buffer } from "buffer";` + "\nexport default Buffer;\n"}, "index.js",
			`index.js:1:24: Could not resolve "buffer" (Node built-ins are imported with the "node:" prefix`},
		{"top-level await", map[string]string{"index.js": "const x = await Promise.resolve(1);\nexport default { fetch() { return x; } };\n"}, "index.js",
			`index.js:1:11: Top-level await is currently not supported with the "cjs" output format (celld loads a Worker as CommonJS`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deploy.Bundle(project(t, tc.files), tc.main)
			wantProblem(t, err, tc.want)
			var pe *deploy.ProjectError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ProjectError", err)
			}
			for _, p := range pe.Problems {
				if strings.Contains(p, "/tmp/") || strings.Contains(p, t.TempDir()) {
					t.Errorf("problem %q names an absolute path", p)
				}
			}
		})
	}
}

// TestBundle_ClassFieldsStayNative checks that class fields reach goja as
// written (no lowering helpers) and keep their semantics: [[Define]]
// rather than [[Set]], brand checks on private members, and the
// initialisation order of fields, static fields and static blocks.
func TestBundle_ClassFieldsStayNative(t *testing.T) {
	code := bundle(t, map[string]string{"index.js": `
const log = [];
class Base {
  constructor() { log.push("base ctor"); }
  set trap(v) { log.push("setter ran"); }
}
class A extends Base {
  trap = "defined";          // [[Define]]: the base's setter must not run
  a = log.push("field a");
  #p = log.push("field #p");
  get = () => "get field";
  static s1 = log.push("static s1");
  static { log.push("static block"); }
  static s2 = log.push("static s2");
  static async = "static async field";
  constructor() { super(); log.push("A ctor body"); }
  static hasP(o) { return #p in o; }
  readP() { return this.#p; }
}
export default {
  fetch() {
    const a = new A();
    let brand = "";
    try { A.prototype.readP.call({}); } catch (e) { brand = e instanceof TypeError ? "TypeError" : String(e); }
    const own = Object.getOwnPropertyDescriptor(a, "trap");
    return JSON.stringify({
      log, own: own && own.value, enumerable: own && own.enumerable,
      get: a.get(), asyncField: A.async, hasP: [A.hasP(a), A.hasP({})], brand, p: a.readP(),
    });
  },
};
`}, "index.js")
	for _, helper := range []string{"__publicField", "__privateAdd", "__privateGet", "__defNormalProp"} {
		if strings.Contains(string(code), helper) {
			t.Errorf("bundle lowers class fields (%s found)", helper)
		}
	}
	vm, exports := gojaLoad(t, code)
	got := callExport(t, vm, exports, "default", "fetch").String()
	want := `{"log":["static s1","static block","static s2","base ctor","field a","field #p","A ctor body"],` +
		`"own":"defined","enumerable":true,"get":"get field","asyncField":"static async field","hasP":[true,false],"brand":"TypeError","p":6}`
	if got != want {
		t.Errorf("fetch() =\n %s\nwant\n %s", got, want)
	}
}
