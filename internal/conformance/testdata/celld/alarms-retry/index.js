import { DurableObject } from "cloudflare:workers";

export class Flaky extends DurableObject {
  async arm(mode) {
    await this.ctx.storage.put("mode", mode);
    await this.ctx.storage.setAlarm(Date.now() + 100);
    return { armed: true };
  }
  async alarm(info) {
    const s = this.ctx.storage;
    const mode = await s.get("mode");
    const runs = ((await s.get("runs")) ?? []);
    runs.push({ is_retry: info.isRetry, retry_count: info.retryCount, keys: Object.keys(info).sort(), pending: await s.getAlarm() !== null });
    await s.put("runs", runs);
    if (mode === "fail-once" && runs.length === 1) throw new Error("first run fails");
    if (mode === "fail-and-delete") {
      await s.deleteAlarm();
      throw new Error("fails but deleted its alarm");
    }
    if (mode === "rearm" && runs.length === 1) {
      await s.setAlarm(Date.now() + 100);
      runs[0].pending_after_set = await s.getAlarm() !== null;
      await s.put("runs", runs);
    }
  }
  async status() {
    return { runs: (await this.ctx.storage.get("runs")) ?? [], pending: (await this.ctx.storage.getAlarm()) !== null };
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const stub = env.A.getByName(url.searchParams.get("name"));
    switch (url.pathname) {
      case "/arm": return Response.json(await stub.arm(url.searchParams.get("mode")));
      case "/status": return Response.json(await stub.status());
      default: return new Response("no such route", { status: 404 });
    }
  },
};
