export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    return new Response(`${env.GREETING} from celld! You asked for ${url.pathname}\n`, {
      headers: { "content-type": "text/plain; charset=utf-8" },
    });
  },
};
