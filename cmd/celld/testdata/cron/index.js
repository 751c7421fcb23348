async function table(env) {
  await env.DB.prepare("CREATE TABLE IF NOT EXISTS runs (cron TEXT, scheduled INTEGER, started INTEGER)").run();
}

export default {
  async fetch(request, env) {
    await table(env);
    const { results } = await env.DB.prepare("SELECT cron, scheduled, started FROM runs ORDER BY scheduled, started").all();
    return Response.json(results);
  },
  async scheduled(controller, env, ctx) {
    await table(env);
    await env.DB.prepare("INSERT INTO runs VALUES (?, ?, ?)").bind(controller.cron, controller.scheduledTime, Date.now()).run();
    if (controller.cron === "throw") throw new Error("scheduled failed on purpose");
  },
};
