// The scheduled event (cron triggers): scheduled(controller, env, ctx) as
// workerd calls it. The controller's cron and scheduledTime are own,
// enumerable, read-only (but configurable) properties; noRetry() is on
// its prototype, with toStringTag; the class itself is not a global. The event is done once the handler's
// promise and every ctx.waitUntil promise have settled; it failed if the
// handler threw or a waitUntil promise rejected.

class ScheduledController {
  #noRetry = false;
  constructor(key, cron, scheduledTime) {
    if (key !== internal.kCreate) throw new TypeError("Illegal constructor");
    Object.defineProperty(this, "cron", { value: cron, enumerable: true, configurable: true });
    Object.defineProperty(this, "scheduledTime", { value: scheduledTime, enumerable: true, configurable: true });
  }
  noRetry() { this.#noRetry = true; }
  static retryRefused(c) { return c.#noRetry; }
  get [Symbol.toStringTag]() { return "ScheduledController"; }
}

const noScheduledHandler = "Received a ScheduledEvent but we lack a handler for ScheduledEvents (a.k.a. Cron Triggers). Did you remember to export a scheduled() function?";

// dispatchScheduled runs the handler and returns a promise of
// { noRetry } that rejects with what failed the event.
internal.dispatchScheduled = (handler, env, cron, scheduledTime) => {
  const controller = new ScheduledController(internal.kCreate, cron, scheduledTime);
  const ctx = Object.create(globalThis.ExecutionContext.prototype);
  ctx.props = {};
  const waits = [];
  const base = globalThis.ExecutionContext.prototype.waitUntil;
  Object.defineProperty(ctx, "waitUntil", {
    value: function waitUntil(p) { waits.push(Promise.resolve(p)); return base.call(ctx, p); },
    writable: true, configurable: true,
  });
  const run = async () => {
    let result;
    if (typeof handler === "function" && handler.prototype && typeof handler.prototype.scheduled === "function") {
      result = new handler(ctx, env).scheduled(controller);
    } else if (handler && typeof handler.scheduled === "function") {
      result = handler.scheduled(controller, env, ctx);
    } else {
      native.log("error", noScheduledHandler);
      throw new internal.NoScheduledHandler(noScheduledHandler);
    }
    let failed = false, error, reported = false;
    try { await result; } catch (e) { failed = true; error = e; }
    for (let i = 0; i < waits.length; i++) {
      // a rejected waitUntil promise was logged by waitUntil itself
      try { await waits[i]; } catch (e) { if (!failed) { failed = true; error = e; reported = true; } }
    }
    if (failed) throw { error, reported };
  };
  return run().then(
    () => ({ noRetry: ScheduledController.retryRefused(controller) }),
    (e) => {
      const why = e instanceof internal.NoScheduledHandler ? { error: e, reported: true } : e;
      throw { error: why.error, reported: why.reported, noRetry: ScheduledController.retryRefused(controller) };
    },
  );
};

internal.NoScheduledHandler = class NoScheduledHandler extends Error {};
