import React, { Suspense, use, createContext, useContext, useId, useState } from "react";
import { renderToString, renderToReadableStream, renderToStaticMarkup } from "react-dom/server";
import { h } from "preact";
import { renderToString as preactToString, renderToStringAsync } from "preact-render-to-string";
import { renderToReadableStream as preactStream } from "preact-render-to-string/stream";

const Theme = createContext("light");

function Item({ name, n }) {
  const id = useId();
  const [count] = useState(n * 2);
  const theme = useContext(Theme);
  return (
    <li id={id} className={theme} data-n={n}>
      {name} &amp; <b>{count}</b> {"<escaped>"}
    </li>
  );
}

function Page({ items }) {
  return (
    <Theme.Provider value="dark">
      <html lang="en">
        <head><title>{`Items: ${items.length}`}</title></head>
        <body>
          <ul style={{ marginTop: 4, color: "red" }}>
            {items.map((it, i) => <Item key={it} name={it} n={i} />)}
          </ul>
          <input type="checkbox" defaultChecked readOnly />
          <div dangerouslySetInnerHTML={{ __html: "<i>raw</i>" }} />
        </body>
      </html>
    </Theme.Provider>
  );
}

const later = (ms, v) => new Promise((r) => setTimeout(() => r(v), ms));

function Slow({ p }) {
  const v = use(p);
  return <p className="slow">loaded {v}</p>;
}

function Broken() {
  throw new Error("broken component");
}

function Streamed({ a, b }) {
  return (
    <main>
      <h1>shell</h1>
      <Suspense fallback={<span>loading a</span>}><Slow p={a} /></Suspense>
      <Suspense fallback={<span>loading b</span>}><Slow p={b} /></Suspense>
      <Suspense fallback={<span>fallback for broken</span>}><Broken /></Suspense>
    </main>
  );
}

async function readChunks(stream) {
  const dec = new TextDecoder();
  const chunks = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(dec.decode(value));
  }
  return chunks;
}

function preactApp(props) {
  return h("section", { class: "p", "data-x": props.x },
    h("h2", null, "Preact ", props.x),
    h("ul", null, ["a", "b"].map((k) => h("li", { key: k }, k))),
    h("input", { disabled: true, value: "v<" }));
}

async function AsyncPreact() {
  await later(5);
  return h("em", null, "async preact");
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const items = ["alpha", "beta", "gamma"];
    switch (url.pathname) {
      case "/string":
        return new Response("<!DOCTYPE html>" + renderToString(<Page items={items} />), {
          headers: { "content-type": "text/html; charset=utf-8" },
        });
      case "/static":
        return new Response(renderToStaticMarkup(<Page items={items.slice(0, 1)} />));
      case "/stream": {
        const errors = [];
        const stream = await renderToReadableStream(<Streamed a={later(10, "A")} b={later(30, "B")} />, {
          bootstrapScriptContent: "window.booted=1",
          onError(e) { errors.push(e.message); },
        });
        const chunks = await readChunks(stream);
        const html = chunks.join("");
        return Response.json({
          errors,
          multipleChunks: chunks.length > 1,
          shellFirst: chunks[0].includes("loading a") && !chunks[0].includes("loaded A"),
          html,
        });
      }
      case "/stream-all-ready": {
        const stream = await renderToReadableStream(<Streamed a={later(5, "A")} b={later(5, "B")} />, { onError() {} });
        await stream.allReady;
        return new Response(stream, { headers: { "content-type": "text/html" } });
      }
      case "/stream-abort": {
        const ac = new AbortController();
        const errors = [];
        const stream = await renderToReadableStream(<Streamed a={later(5000, "A")} b={later(5000, "B")} />, {
          signal: ac.signal,
          onError(e) { errors.push(String(e && e.message || e)); },
        });
        setTimeout(() => ac.abort(new Error("too slow")), 20);
        const html = (await readChunks(stream)).join("");
        return Response.json({ errors, html });
      }
      case "/shell-error": {
        try {
          await renderToReadableStream(<Broken />, { onError() {} });
          return Response.json({ ok: true });
        } catch (e) {
          return Response.json({ name: e.name, message: e.message });
        }
      }
      case "/preact":
        return Response.json({
          html: preactToString(preactApp({ x: "<1>" })),
          async: await renderToStringAsync(h("div", null, h(AsyncPreact, null))),
        });
      case "/preact-stream": {
        const chunks = await readChunks(preactStream(h("div", null, preactApp({ x: 2 }))));
        return Response.json({ html: chunks.join("") });
      }
    }
    return new Response("not found", { status: 404 });
  },
};
