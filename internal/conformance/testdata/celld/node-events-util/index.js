// node:events and node:util as workerd provides them.
import EventEmitter, { once, on, errorMonitor, getEventListeners } from "node:events";
import * as events from "events";
import util, { inspect, format, promisify, callbackify, types, isDeepStrictEqual, inherits } from "node:util";

const err = (f) => {
  try { f(); return "no error"; } catch (e) { return { name: e.name, code: e.code, message: e.message }; }
};

const routes = {
  "/events": async () => {
    const log = [];
    const e = new EventEmitter();
    e.on("newListener", (name) => log.push(`new:${String(name)}`));
    const a = (x) => log.push(`a${x}`);
    e.on("x", a);
    e.prependListener("x", (x) => log.push(`p${x}`));
    e.once("x", (x) => log.push(`once${x}`));
    const r1 = e.emit("x", 1);
    const r2 = e.emit("x", 2);
    const r3 = e.emit("nothing");
    e.off("x", a);
    e.emit("x", 3);
    const counts = [e.listenerCount("x"), e.eventNames().map(String), e.listeners("x").length, e.rawListeners("x").length];
    e.removeAllListeners("x");
    const errs = {
      unhandled: err(() => new EventEmitter().emit("error", new Error("boom"))),
      unhandledValue: err(() => new EventEmitter().emit("error", "text")),
      badListener: err(() => new EventEmitter().on("x", 5)),
      maxListeners: err(() => new EventEmitter().setMaxListeners(-1)),
    };
    const mon = [];
    const em = new EventEmitter();
    em.on(errorMonitor, (er) => mon.push(`monitor:${er.message}`));
    em.on("error", (er) => mon.push(`error:${er.message}`));
    em.emit("error", new Error("m"));
    const oe = new EventEmitter();
    setTimeout(() => oe.emit("ready", 1, 2), 1);
    const onceArgs = await once(oe, "ready");
    const re = new EventEmitter();
    setTimeout(() => re.emit("error", new Error("rejected")), 1);
    let onceErr;
    try { await once(re, "go"); } catch (x) { onceErr = x.message; }
    const ie = new EventEmitter();
    const it = on(ie, "tick");
    setTimeout(() => { ie.emit("tick", "a"); ie.emit("tick", "b"); }, 1);
    const t1 = await it.next();
    const t2 = await it.next();
    await it.return();
    class Sub extends EventEmitter {}
    const s = new Sub();
    s.on("q", () => {});
    const et = new EventTarget();
    setTimeout(() => et.dispatchEvent(new Event("ping")), 1);
    const [ev] = await once(et, "ping");
    return {
      log, r: [r1, r2, r3], counts, errs, mon, onceArgs, onceErr, iter: [t1.value, t2.value],
      sub: [s instanceof EventEmitter, getEventListeners(s, "q").length, EventEmitter.listenerCount(s, "q")],
      defaults: [EventEmitter.defaultMaxListeners, e.getMaxListeners(), typeof events.EventEmitter, events.default === EventEmitter, EventEmitter.EventEmitter === EventEmitter],
      eventTarget: ev.type,
      symbols: [typeof EventEmitter.captureRejectionSymbol, String(errorMonitor)],
    };
  },
  "/inspect": () => {
    class Point { constructor() { this.x = 1; this.y = 2; } }
    const circ = { name: "c" };
    circ.self = circ;
    const long = { alpha: "aaaaaaaaaaaaaaaa", beta: "bbbbbbbbbbbbbbbbb", gamma: "ccccccccccccccccc", delta: "ddddddddddd" };
    return {
      values: [
        inspect("str"), inspect("it's"), inspect(5), inspect(-0), inspect(10n), inspect(null), inspect(undefined), inspect(true),
        inspect(Symbol("s")), inspect([1, "a", [2, [3, [4, [5]]]]]), inspect({ a: { b: { c: { d: 1 } } } }),
        inspect({ a: { b: { c: { d: 1 } } } }, { depth: 0 }), inspect({ a: { b: { c: { d: 1 } } } }, { depth: null }),
        inspect(new Point()), inspect(Object.create(null)), inspect({}), inspect([]), inspect(new Map([["k", { v: 1 }]])),
        inspect(new Set([1, "two"])), inspect(new Map()), inspect(function named() {}), inspect(() => {}), inspect(class K {}),
        inspect(/re/g), inspect(new Date(86400000)), inspect(new Uint8Array([1, 2, 3])), inspect([1, , 3]),
        inspect({ "key with space": 1, valid_id: 2, [Symbol("sym")]: 3 }), inspect(long), inspect(circ),
        inspect(new Array(120).fill(0).length), inspect("a\nb'c"), inspect({ s: "x'y" }), inspect([undefined, null]),
        inspect({ get g() { return 1; }, set s(v) {} }), inspect(Promise.resolve(1)).startsWith("Promise {"),
        inspect(new Number(3)), inspect(new String("boxed")), inspect([[[[1]]]]),
      ],
    };
  },
  "/format": () => ({
    values: [
      format("%s:%s", "a"), format("%d", "42"), format("%i", 4.9), format("%f", "1.5x"), format("%j", { a: [1] }),
      format("%s", { a: 1 }), format("%s", [1, 2]), format("%s", 5n), format("%s", null), format("%s", Symbol("z")),
      format("%o", { a: 1 }), format("%O", { a: { b: { c: { d: 1 } } } }), format("%%s %s", "x"), format("a", "b", 3, { c: 1 }),
      format(1, 2), format("%c%s", "color: red", "styled"), format("%s"), format(), format("%d", 10n), format("x%"),
    ],
  }),
  "/misc": async () => {
    const cbStyle = (a, b, cb) => setTimeout(() => (a < 0 ? cb(new Error("neg")) : cb(null, a + b)), 1);
    const p = promisify(cbStyle);
    const sum = await p(1, 2);
    let perr;
    try { await p(-1, 2); } catch (e) { perr = e.message; }
    const custom = function () {};
    custom[promisify.custom] = () => Promise.resolve("custom");
    const viaCustom = await promisify(custom)();
    const cbd = callbackify(async (x) => x * 2);
    const cbResult = await new Promise((res) => cbd(21, (e, v) => res([e, v])));
    function Animal() {}
    Animal.prototype.speak = () => "...";
    function Dog() {}
    inherits(Dog, Animal);
    return {
      sum, perr, viaCustom, cbResult, inherits: [new Dog().speak(), Dog.super_ === Animal],
      types: [types.isPromise(Promise.resolve()), types.isDate(new Date()), types.isRegExp(/x/), types.isUint8Array(new Uint8Array()),
        types.isUint8Array(Buffer.alloc(1)), types.isAsyncFunction(async () => {}), types.isMap(new Map()), types.isArrayBuffer(new ArrayBuffer(1)),
        types.isNativeError(new TypeError()), types.isBoxedPrimitive(new Number(1)), types.isTypedArray(new Float32Array())],
      deep: [isDeepStrictEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }), isDeepStrictEqual({ a: 1 }, { a: "1" }),
        isDeepStrictEqual(new Map([[1, { x: 1 }]]), new Map([[1, { x: 1 }]])), isDeepStrictEqual(new Set([1, 2]), new Set([2, 1])),
        isDeepStrictEqual([1, 2], [1, 2, 3]), isDeepStrictEqual(NaN, NaN), isDeepStrictEqual(0, -0), isDeepStrictEqual(new Date(1), new Date(1))],
      legacy: [util.isArray([]), util.isString("s"), util.isFunction(() => {}), util.isPrimitive(null), util.isObject(null)],
      encoders: [typeof util.TextEncoder, new util.TextDecoder().decode(new util.TextEncoder().encode("hé"))],
      strip: util.stripVTControlCharacters("\u001b[31mred\u001b[0m"),
      errors: {
        promisifyBad: err(() => promisify(5)),
        inheritsBad: err(() => inherits(function () {}, null)),
      },
    };
  },
};

export default {
  async fetch(request) {
    const { pathname } = new URL(request.url);
    const route = routes[pathname];
    if (!route) return new Response("not found", { status: 404 });
    return Response.json(await route());
  },
};
