const atStartup = {};
try { atStartup.fn = new Function("a", "b", "return a * b")(6, 7); } catch (e) { atStartup.fn = e.name; }
try { atStartup.eval = (0, eval)("20 + 22"); } catch (e) { atStartup.eval = e.name; }
try { atStartup.direct = eval("typeof atStartup"); } catch (e) { atStartup.direct = e.name; }
const compiled = new Function("x", "return x + 1");

const attempt = (fn) => {
  try { return { value: fn() }; } catch (e) { return { name: e.name, message: e.message, isEvalError: e instanceof EvalError }; }
};

export default {
  fetch() {
    return Response.json({
      atStartup,
      compiledStillRuns: compiled(41),
      eval: attempt(() => eval("1 + 1")),
      indirectEval: attempt(() => (0, eval)("1 + 1")),
      evalNonString: attempt(() => eval(5)),
      evalObject: attempt(() => typeof eval({ a: 1 })),
      newFunction: attempt(() => new Function("return 1")),
      callFunction: attempt(() => Function("return this")),
      emptyFunction: attempt(() => new Function()),
      viaPrototype: attempt(() => (function () {}).constructor("return 2")),
      asyncFunction: attempt(() => new (Object.getPrototypeOf(async function () {}).constructor)("return 3")),
      generatorFunction: attempt(() => new (Object.getPrototypeOf(function* () {}).constructor)("yield 4")),
      emptyIsFunction: typeof new Function(),
      identity: [Function.prototype.constructor === Function, typeof Function, Function.name, Function.length, (() => {}) instanceof Function, compiled instanceof Function, Object.prototype.toString.call(Function)],
      evalInfo: [typeof eval, eval.name, eval.length],
    });
  },
};
