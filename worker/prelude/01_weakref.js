// WeakRef and FinalizationRegistry where goja lacks them.

const expose = internal.expose;

if (typeof WeakRef === "undefined") {
  // Without engine support a WeakRef holds its target strongly: deref()
  // always succeeds, which is an allowed outcome for code using WeakRef.
  class WeakRef {
    #target;
    constructor(target) {
      if (target === null || (typeof target !== "object" && typeof target !== "function")) {
        throw new TypeError("WeakRef: target must be an object");
      }
      this.#target = target;
    }
    deref() { return this.#target; }
  }
  expose("WeakRef", WeakRef);
}
if (typeof FinalizationRegistry === "undefined") {
  // Cleanup callbacks never run: goja cannot observe collection.
  class FinalizationRegistry {
    constructor(cleanup) {
      if (typeof cleanup !== "function") throw new TypeError("FinalizationRegistry: cleanup must be callable");
    }
    register() {}
    unregister() { return false; }
  }
  expose("FinalizationRegistry", FinalizationRegistry);
}
