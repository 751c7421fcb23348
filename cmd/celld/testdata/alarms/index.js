import { DurableObject } from "cloudflare:workers";

export class Timer extends DurableObject {
  async arm(at) {
    await this.ctx.storage.setAlarm(at);
    return { armed: await this.ctx.storage.getAlarm() };
  }
  async alarm(info) {
    const fires = (await this.ctx.storage.get("fires")) ?? [];
    fires.push({ at: Date.now(), retry: info.retryCount });
    await this.ctx.storage.put("fires", fires);
  }
  async status() {
    return { fires: (await this.ctx.storage.get("fires")) ?? [], pending: await this.ctx.storage.getAlarm() };
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const stub = env.T.getByName(url.searchParams.get("name"));
    switch (url.pathname) {
      case "/arm": return Response.json(await stub.arm(Number(url.searchParams.get("at"))));
      case "/status": return Response.json(await stub.status());
      default: return new Response("no such route", { status: 404 });
    }
  },
};
