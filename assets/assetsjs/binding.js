// The env object of an assets binding: a Fetcher whose fetch() is answered
// by the node's asset server (assets/serve.go), never by the Worker.
// Evaluates to a factory that takes the native fetch.
(function (native) {
  "use strict";
  const nullBody = (s) => s === 101 || s === 204 || s === 205 || s === 304;
  return Object.freeze({
    async fetch(input, init) {
      const req = new Request(input, init);
      const headers = [];
      for (const [k, v] of req.headers) headers.push([k, v]);
      const r = await native.fetch(req.method, req.url, headers);
      const body = nullBody(r.status) || req.method === "HEAD" ? null : r.body;
      return new Response(body, { status: r.status, headers: r.headers });
    },
  });
});
