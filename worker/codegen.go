package worker

import (
	"fmt"

	"github.com/dop251/goja"
)

// workerd lets a Worker generate code from strings (eval, new Function and
// the async and generator function constructors) only while its script's
// top level runs (allow_eval_during_startup, the default since
// 2025-06-01); in a request it throws EvalError. lockCodeGeneration puts
// that rule in place once the script has loaded: eval and the function
// constructors become guards that throw what workerd throws. Libraries
// that compile at startup (ajv schemas, handlebars templates) work; the
// same compile inside a handler fails here as it does on Cloudflare.
var codegenProgram = goja.MustCompile("celld:codegen", `(function (global) {
  "use strict";
  const message = "Code generation from strings disallowed for this context";
  const refuse = () => { throw new EvalError(message); };
  // Each guard stands in for a constructor: same prototype (so instanceof
  // and the constructor property still work), name and length. Without
  // arguments there is no source, and workerd makes the empty function.
  const guard = (ctor) => {
    const g = function (body) {
      if (arguments.length > 0) refuse();
      return Reflect.construct(ctor, [], new.target || ctor);
    };
    Object.defineProperty(g, "name", { value: ctor.name, configurable: true });
    Object.defineProperty(g, "prototype", { value: ctor.prototype, writable: false });
    Object.setPrototypeOf(g, Object.getPrototypeOf(ctor));
    return g;
  };
  const define = (o, k, v) => Object.defineProperty(o, k, { value: v, writable: true, configurable: true, enumerable: false });
  const ctors = [
    Function,
    Object.getPrototypeOf(async function () {}).constructor,
    Object.getPrototypeOf(function* () {}).constructor,
  ];
  for (const ctor of ctors) define(ctor.prototype, "constructor", guard(ctor));
  define(global, "Function", Function.prototype.constructor);
  define(global, "eval", { eval(x) { refuse(); } }.eval);
})`, false)

func (iso *isolate) lockCodeGeneration() error {
	v, err := iso.vm.RunProgram(codegenProgram)
	if err != nil {
		return fmt.Errorf("lock code generation: %w", err)
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return fmt.Errorf("lock code generation: not a function")
	}
	if _, err := fn(goja.Undefined(), iso.vm.GlobalObject()); err != nil {
		return fmt.Errorf("lock code generation: %w", err)
	}
	return nil
}
