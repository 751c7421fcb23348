// node:assert (and assert/strict).

const inspectShort = (v) => internal.nodeInspect(v, { depth: 1000, breakLength: Infinity, compact: true }).slice(0, 512);

class AssertionError extends Error {
  constructor(options) {
    if (options === null || typeof options !== "object") throw internal.invalidArgType("options", "of type object", options);
    const { message, actual, expected, operator } = options;
    super(message !== undefined ? String(message) : defaultMessage(actual, expected, operator));
    this.generatedMessage = message === undefined;
    this.code = "ERR_ASSERTION";
    this.actual = actual;
    this.expected = expected;
    this.operator = operator;
  }
  get name() { return "AssertionError"; }
}
Object.defineProperty(AssertionError.prototype, "name", { value: "AssertionError", writable: true, configurable: true });

const kReadable = {
  deepStrictEqual: "Expected values to be strictly deep-equal:",
  strictEqual: "Expected values to be strictly equal:",
  deepEqual: "Expected values to be loosely deep-equal:",
  notDeepStrictEqual: 'Expected "actual" not to be strictly deep-equal to:',
  notStrictEqual: 'Expected "actual" to be strictly unequal to:',
  notDeepEqual: 'Expected "actual" not to be loosely deep-equal to:',
};
function defaultMessage(actual, expected, operator) {
  if (operator === "fail") return "Failed";
  if (operator === "strictEqual") {
    return `Values are not strictly equal:\n\n\n[Diff] Actual / Expected\n\n\n-   ${inspectShort(actual)}\n+   ${inspectShort(expected)}\n`;
  }
  if (operator === "deepStrictEqual") {
    const a = inspectShort(actual), b = inspectShort(expected);
    let msg = `${kReadable.deepStrictEqual}\n+ actual - expected\n\n+ ${a}\n- ${b}`;
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    if (i > 2) msg += `\n  ${" ".repeat(i)}^`;
    return msg;
  }
  const head = kReadable[operator];
  if (head && operator.startsWith("not")) return `${head}\n\n${inspectShort(expected)}\n`;
  if (head) return `${head}\n\n${inspectShort(actual)} !== ${inspectShort(expected)}\n`;
  return `${inspectShort(actual)} ${operator} ${inspectShort(expected)}`;
}

const fail = (actual, expected, message, operator, fn) => {
  if (message instanceof Error) throw message;
  const e = new AssertionError({ actual, expected, message, operator });
  if (Error.captureStackTrace && fn) Error.captureStackTrace(e, fn);
  throw e;
};

function innerOk(fn, argLen, value, message) {
  if (value) return;
  if (message instanceof Error) message = String(message);
  if (argLen === 0) {
    fail(value, true, "No value argument passed to `assert.ok()`", "==", fn);
  }
  fail(value, true, message === undefined ? "The expression evaluated to a falsy value:\n\n  assert.ok(" + inspectShort(value) + ")\n" : message, "==", fn);
}

function matchesExpected(actual, expected, message, fn) {
  if (typeof expected === "function") {
    if (expected.prototype !== undefined && actual instanceof expected) return true;
    if (Error.isPrototypeOf(expected) || expected === Error) return false;
    const r = expected.call({}, actual);
    if (r !== true) {
      fail(actual, expected, message || `The ${fn.name === "rejects" ? "rejection" : "error"} validation function is expected to return "true". Received ${inspectShort(r)}`, fn.name, fn);
    }
    return true;
  }
  if (expected instanceof RegExp) {
    if (expected.test(String(actual))) return true;
    fail(actual, expected, message || `The input did not match the regular expression ${expected}. Input:\n\n${inspectShort(String(actual))}\n`, fn.name, fn);
  }
  if (expected && typeof expected === "object") {
    for (const k of Object.keys(expected)) {
      const want = expected[k], got = actual == null ? undefined : actual[k];
      const ok = want instanceof RegExp && typeof got === "string" ? want.test(got) : internal.isDeepEqual(got, want, true);
      if (!ok) fail(actual, expected, message || `Expected values to be strictly deep-equal:\n\n${inspectShort(got)} !== ${inspectShort(want)}\n`, fn.name, fn);
    }
    return true;
  }
  return true;
}

const NO_EXCEPTION = Symbol("no exception");
function getActual(fn) {
  internal.validateFunction(fn, "fn");
  try {
    fn();
  } catch (e) {
    return e;
  }
  return NO_EXCEPTION;
}
async function waitActual(p) {
  let promise = p;
  if (typeof p === "function") {
    promise = p();
    if (!promise || typeof promise.then !== "function") {
      throw internal.nodeError(TypeError, "ERR_INVALID_RETURN_VALUE", `Expected instance of Promise to be returned from the "promiseFn" function but got ${promise === undefined ? "undefined" : typeof promise}.`);
    }
  } else if (!p || typeof p.then !== "function") {
    throw internal.invalidArgType("promiseFn", "of type function or an instance of Promise", p);
  }
  try {
    await promise;
  } catch (e) {
    return e;
  }
  return NO_EXCEPTION;
}
function expectsError(fn, actual, error, message) {
  if (typeof error === "string") { message = error; error = undefined; }
  if (actual === NO_EXCEPTION) {
    let details = "";
    if (error && error.name) details += ` (${error.name})`;
    details += message ? `: ${message}` : ".";
    const what = fn.name === "rejects" ? "rejection" : "exception";
    fail(undefined, error, `Missing expected ${what}${details}`, fn.name, fn);
  }
  if (error === undefined) return;
  if (!matchesExpected(actual, error, message, fn)) throw actual;
}
function expectsNoError(fn, actual, error, message) {
  if (actual === NO_EXCEPTION) return;
  if (typeof error === "string") { message = error; error = undefined; }
  if (!error || (typeof error === "function" && actual instanceof error) || (error instanceof RegExp && error.test(String(actual)))) {
    const details = message ? `: ${message}` : ".";
    const what = fn.name === "doesNotReject" ? "rejection" : "exception";
    fail(actual, error, `Got unwanted ${what}${details}\nActual message: "${actual && actual.message}"`, fn.name, fn);
  }
  throw actual;
}

function assert(...args) { innerOk(assert, args.length, ...args); }
Object.assign(assert, {
  AssertionError,
  ok(...args) { innerOk(assert.ok, args.length, ...args); },
  fail(message = "Failed") {
    if (message instanceof Error) throw message;
    const e = new AssertionError({ message, operator: "fail" });
    e.generatedMessage = message === "Failed";
    throw e;
  },
  // workerd's equal, notEqual, deepEqual and notDeepEqual are the strict
  // ones (recorded in node-process-misc).
  equal(a, b, m) { if (!Object.is(a, b)) fail(a, b, m, "strictEqual", assert.equal); },
  notEqual(a, b, m) { if (Object.is(a, b)) fail(a, b, m, "notStrictEqual", assert.notEqual); },
  strictEqual(a, b, m) { if (!Object.is(a, b)) fail(a, b, m, "strictEqual", assert.strictEqual); },
  notStrictEqual(a, b, m) { if (Object.is(a, b)) fail(a, b, m, "notStrictEqual", assert.notStrictEqual); },
  deepEqual(a, b, m) { if (!internal.isDeepEqual(a, b, true)) fail(a, b, m, "deepStrictEqual", assert.deepEqual); },
  notDeepEqual(a, b, m) { if (internal.isDeepEqual(a, b, true)) fail(a, b, m, "notDeepStrictEqual", assert.notDeepEqual); },
  deepStrictEqual(a, b, m) { if (!internal.isDeepEqual(a, b, true)) fail(a, b, m, "deepStrictEqual", assert.deepStrictEqual); },
  notDeepStrictEqual(a, b, m) { if (internal.isDeepEqual(a, b, true)) fail(a, b, m, "notDeepStrictEqual", assert.notDeepStrictEqual); },
  throws: function throws(fn, error, message) { expectsError(throws, getActual(fn), error, message); },
  doesNotThrow: function doesNotThrow(fn, error, message) { expectsNoError(doesNotThrow, getActual(fn), error, message); },
  rejects: async function rejects(p, error, message) { expectsError(rejects, await waitActual(p), error, message); },
  doesNotReject: async function doesNotReject(p, error, message) { expectsNoError(doesNotReject, await waitActual(p), error, message); },
  match(s, re, m) {
    if (!(re instanceof RegExp)) throw internal.invalidArgType("regexp", "an instance of RegExp", re);
    if (typeof s !== "string" || !re.test(s)) {
      fail(s, re, m || (typeof s !== "string"
        ? `The "string" argument must be of type string. Received type ${typeof s} (${inspectShort(s)})`
        : `The input did not match the regular expression ${re}. Input:\n\n${inspectShort(s)}\n`), "match", assert.match);
    }
  },
  doesNotMatch(s, re, m) {
    if (!(re instanceof RegExp)) throw internal.invalidArgType("regexp", "an instance of RegExp", re);
    if (typeof s !== "string" || re.test(s)) {
      fail(s, re, m || `The input was expected to not match the regular expression ${re}. Input:\n\n${inspectShort(s)}\n`, "doesNotMatch", assert.doesNotMatch);
    }
  },
  ifError(err) {
    if (err === null || err === undefined) return;
    let message = "ifError got unwanted exception: ";
    message += typeof err === "object" && typeof err.message === "string" ? (err.message.length === 0 && err.constructor ? err.constructor.name : err.message) : inspectShort(err);
    const e = new AssertionError({ actual: err, expected: null, operator: "ifError", message });
    e.generatedMessage = true;
    throw e;
  },
});
const strict = function strict(...args) { innerOk(strict, args.length, ...args); };
Object.assign(strict, assert, {
  equal: assert.strictEqual, notEqual: assert.notStrictEqual,
  deepEqual: assert.deepStrictEqual, notDeepEqual: assert.notDeepStrictEqual,
});
strict.strict = strict;
assert.strict = strict;
internal["node:assert"] = assert;
