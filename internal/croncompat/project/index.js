"use strict";
// scheduled() records what it sees of its controller and ctx in KV, under
// its cron; GET /seen?cron= returns the record (KV, not a global: celld
// runs several isolates).

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/seen") return new Response(await env.SEEN.get("seen:" + url.searchParams.get("cron")));
    return new Response("not found", { status: 404 });
  },
  async scheduled(controller, env, ctx) {
    const proto = Object.getPrototypeOf(controller);
    const d = {
      cron: controller.cron,
      scheduledTime: typeof controller.scheduledTime,
      keys: Object.keys(controller),
      proto: Object.getOwnPropertyNames(proto).sort(),
      ctor: controller.constructor.name,
      global: typeof ScheduledController,
      type: typeof controller.type,
      nargs: arguments.length,
      envType: typeof env,
      waitUntil: typeof ctx.waitUntil,
      noRetry: controller.noRetry === undefined ? "missing" : typeof controller.noRetry(),
      str: String(controller),
    };
    try { controller.cron = "x"; d.assign = "allowed"; } catch (e) { d.assign = e.constructor.name; }
    try { delete controller.scheduledTime; d.del = "allowed"; } catch (e) { d.del = e.constructor.name; }
    if (controller.cron === "fixed") d.time = controller.scheduledTime;
    const save = () => env.SEEN.put("seen:" + controller.cron, JSON.stringify(d));
    if (controller.cron === "wait") {
      ctx.waitUntil(new Promise((r) => setTimeout(r, 100)).then(() => { d.waited = true; return save(); }));
      return;
    }
    await save();
    if (controller.cron === "throw") throw new Error("boom");
    if (controller.cron === "reject") ctx.waitUntil(Promise.reject(new Error("late")));
    if (controller.cron === "async-throw") { await null; throw new TypeError("later"); }
  },
};
