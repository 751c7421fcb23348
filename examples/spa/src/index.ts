interface Env {
  STAGE: string;
  ASSETS: Fetcher;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/api/stage") {
      return Response.json({ stage: env.STAGE });
    }
    if (url.pathname === "/api/shell") {
      // The app's HTML shell, fetched through the assets binding.
      const shell = await env.ASSETS.fetch(new URL("/", request.url));
      return new Response(`shell is ${(await shell.text()).length} bytes`);
    }
    return Response.json({ error: "no such API route" }, { status: 404 });
  },
};
