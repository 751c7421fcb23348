// Timers, microtasks, scheduler, performance and navigator.

const expose = internal.expose;

// ---- timers and microtasks -------------------------------------------------

expose("setTimeout", function setTimeout(fn, delay = 0, ...args) {
  return native.setTimer(fn, Number(delay), false, args);
});
expose("setInterval", function setInterval(fn, delay = 0, ...args) {
  return native.setTimer(fn, Number(delay), true, args);
});
expose("clearTimeout", function clearTimeout(id) { if (id != null) native.clearTimer(Number(id)); });
expose("clearInterval", function clearInterval(id) { if (id != null) native.clearTimer(Number(id)); });
const resolved = Promise.resolve();
expose("queueMicrotask", function queueMicrotask(fn) {
  if (typeof fn !== "function") {
    throw new TypeError("Failed to execute 'queueMicrotask': parameter 1 is not of type 'Function'.");
  }
  resolved.then(() => {
    try { fn(); } catch (e) { internal.reportError(e); }
  });
});
expose("scheduler", {
  wait(ms, options = undefined) {
    return new Promise((resolve, reject) => {
      const signal = options && options.signal;
      if (signal && signal.aborted) return reject(signal.reason);
      const id = native.setTimer(resolve, Number(ms), false);
      if (signal) signal.addEventListener("abort", () => { native.clearTimer(id); reject(signal.reason); });
    });
  },
});

// ---- performance, navigator -----------------------------------------------

const timeOrigin = native.timeOrigin();
const performance = {
  now: () => native.now(),
  get timeOrigin() { return timeOrigin; },
  toJSON() { return { timeOrigin }; },
};
Object.defineProperty(performance, Symbol.toStringTag, { value: "Performance", configurable: true });
expose("performance", performance);
expose("self", global);
const navigator = { userAgent: "Cloudflare-Workers", hardwareConcurrency: 1, language: "en" };
Object.defineProperty(navigator, Symbol.toStringTag, { value: "Navigator", configurable: true });
expose("navigator", navigator);
