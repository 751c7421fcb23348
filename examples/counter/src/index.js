import { DurableObject } from "cloudflare:workers";

export class Counter extends DurableObject {
  async increment() {
    const next = ((await this.ctx.storage.get("count")) ?? 0) + 1;
    await this.ctx.storage.put("count", next);
    return next;
  }

  async current() {
    return (await this.ctx.storage.get("count")) ?? 0;
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    // One counter per name: /?name=a and /?name=b count separately.
    const stub = env.COUNTER.getByName(url.searchParams.get("name") ?? "default");
    if (url.pathname === "/") {
      return new Response(`${await stub.increment()}\n`);
    }
    if (url.pathname === "/peek") {
      return new Response(`${await stub.current()}\n`);
    }
    return new Response("not found\n", { status: 404 });
  },
};
