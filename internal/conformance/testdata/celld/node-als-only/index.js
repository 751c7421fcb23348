// nodejs_als: node:async_hooks alone.
import { AsyncLocalStorage } from "node:async_hooks";

const als = new AsyncLocalStorage();
export default {
  async fetch() {
    const store = await als.run("kept", async () => {
      await new Promise((r) => setTimeout(r, 1));
      return als.getStore();
    });
    return Response.json({ store, globals: ["Buffer", "process"].map((n) => typeof globalThis[n]) });
  },
};
