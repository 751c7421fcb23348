import { createSSRApp, h, ref, computed, defineComponent, Suspense } from "vue";
import { renderToString, renderToWebStream } from "vue/server-renderer";
import { OpenAPIHono, createRoute, z } from "@hono/zod-openapi";
import OpenAI from "openai";
import { streamText, generateText, generateObject } from "ai";
import { MockLanguageModelV3, simulateReadableStream } from "ai/test";
import * as cheerio from "cheerio";
import Papa from "papaparse";
import ky, { HTTPError } from "ky";
import { from, interval, lastValueFrom, of, firstValueFrom, Subject, timer } from "rxjs";
import { map, filter, scan, take, toArray, mergeMap, bufferCount, catchError, delay, switchMap, debounceTime } from "rxjs/operators";
import MarkdownIt from "markdown-it";
import moment from "moment-timezone";

const caught = async (fn) => { try { return await fn(); } catch (e) { return { error: e.name, message: e.message }; } };
const json = (v, init) => Response.json(v, init);

// ---- Vue
const Item = defineComponent({
  props: { label: String, n: Number },
  setup(props) { const twice = computed(() => props.n * 2); return () => h("li", { class: ["item", { odd: props.n % 2 }] }, `${props.label}: ${twice.value}`); },
});
const Async = defineComponent({
  async setup() { await new Promise((r) => setTimeout(r, 2)); const msg = ref("loaded <late>"); return () => h("p", msg.value); },
});
const App = defineComponent({
  props: { items: Array },
  setup(props, { slots }) {
    const count = ref(props.items.length);
    return () => h("main", { id: "app", "data-count": count.value, style: { color: "red", fontSize: "2px" } }, [
      h("h1", "Vue & <SSR>"),
      h("ul", props.items.map((it, i) => h(Item, { key: i, label: it, n: i + 1 }))),
      h(Suspense, null, { default: () => h(Async) }),
      h("input", { value: "x\"y", disabled: true, hidden: false }),
      slots.default?.(),
    ]);
  },
});
const vueApp = () => createSSRApp({ render: () => h(App, { items: ["a", "b", "c"] }, { default: () => h("footer", "slot") }) });

// ---- @hono/zod-openapi
const api = new OpenAPIHono();
const User = z.object({ id: z.string().openapi({ example: "42" }), name: z.string().min(2), age: z.number().int().optional() }).openapi("User");
api.openapi(createRoute({
  method: "get", path: "/oa/users/{id}",
  request: { params: z.object({ id: z.string().regex(/^\d+$/).openapi({ param: { name: "id", in: "path" } }) }) },
  responses: { 200: { content: { "application/json": { schema: User } }, description: "a user" } },
}), (c) => c.json({ id: c.req.valid("param").id, name: "Ada" }, 200));
api.openapi(createRoute({
  method: "post", path: "/oa/users",
  request: { body: { content: { "application/json": { schema: User.omit({ id: true }) } } } },
  responses: { 201: { content: { "application/json": { schema: User } }, description: "created" } },
}), (c) => c.json({ id: "7", ...c.req.valid("json") }, 201));
api.doc("/oa/doc", { openapi: "3.0.0", info: { title: "stack", version: "1.0.0" } });

// ---- a local "upstream" for the SDKs: what they send and what they parse
const seen = [];
const upstream = async (input, init) => {
  const req = new Request(input, init);
  const body = req.method === "POST" ? await req.json() : null;
  const hdr = {};
  for (const [k, v] of req.headers) if (!/^x-stainless-(retry-count|timeout)$/.test(k)) hdr[k] = v;
  seen.push({ method: req.method, url: req.url, headers: hdr, body });
  if (body?.stream) {
    const chunks = ["Hel", "lo", " there"].map((t, i) => ({ id: "c1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta: i ? { content: t } : { role: "assistant", content: t }, finish_reason: null }] }));
    chunks.push({ id: "c1", object: "chat.completion.chunk", created: 1, model: body.model, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
    const text = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
    // split across reads at awkward places
    const bytes = new TextEncoder().encode(text);
    return new Response(new ReadableStream({ start(c) { for (let i = 0; i < bytes.length; i += 37) c.enqueue(bytes.slice(i, i + 37)); c.close(); } }), { headers: { "content-type": "text/event-stream" } });
  }
  if (req.url.endsWith("/models/nope")) return Response.json({ error: { message: "model not found", type: "invalid_request_error", code: "model_not_found" } }, { status: 404, headers: { "x-request-id": "req_1" } });
  return Response.json({ id: "c0", object: "chat.completion", created: 1, model: body?.model ?? "m", choices: [{ index: 0, message: { role: "assistant", content: "hi " + (body?.messages?.at(-1)?.content ?? "") }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } });
};

// ---- ky's upstream: fails twice, then answers
let flaky = 0;
const kyFetch = async (input, init) => {
  const req = input instanceof Request ? input : new Request(input, init);
  const u = new URL(req.url);
  if (u.pathname === "/flaky" && flaky++ < 2) return new Response("busy", { status: 503 });
  if (u.pathname === "/teapot") return new Response("short and stout", { status: 418, statusText: "I'm a teapot" });
  return Response.json({ path: u.pathname, q: Object.fromEntries(u.searchParams), method: req.method, hook: req.headers.get("x-hook"), body: req.method === "POST" ? await req.json() : null });
};

export default {
  async fetch(request) {
    const url = new URL(request.url);
    switch (url.pathname) {
      case "/vue": return new Response(await renderToString(vueApp()), { headers: { "content-type": "text/html" } });
      case "/vue-stream": return new Response(renderToWebStream(vueApp()), { headers: { "content-type": "text/html" } });
      case "/openai": {
        seen.length = 0;
        const client = new OpenAI({ apiKey: "sk-test", baseURL: "https://llm.example/v1", fetch: upstream, maxRetries: 0 });
        const out = await client.chat.completions.create({ model: "gpt-x", messages: [{ role: "user", content: "ada" }] });
        let streamed = "";
        const stream = await client.chat.completions.create({ model: "gpt-x", stream: true, messages: [{ role: "user", content: "s" }] });
        for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? "";
        const err = await caught(() => client.models.retrieve("nope"));
        const e2 = await client.models.retrieve("nope").catch((e) => ({ status: e.status, ctor: e.constructor.name, code: e.code, type: e.type, requestID: e.requestID, isAPIError: e instanceof OpenAI.APIError }));
        return json({ answer: out.choices[0].message.content, usage: out.usage, streamed, err, e2, seen });
      }
      case "/ai": {
        const model = new MockLanguageModelV3({
          doGenerate: async () => ({ content: [{ type: "text", text: '{"city":"Oslo","temp":-3}' }], finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 4 }, outputTokens: { total: 6 } }, warnings: [] }),
          doStream: async () => ({ stream: simulateReadableStream({ chunks: [
            { type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: "Once " }, { type: "text-delta", id: "t", delta: "upon " },
            { type: "text-delta", id: "t", delta: "a time." }, { type: "text-end", id: "t" },
            { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: 2 }, outputTokens: { total: 3 } } },
          ], chunkDelayInMs: 1 }) }),
        });
        const gen = await generateText({ model, prompt: "weather?" });
        const obj = await generateObject({ model, schema: z.object({ city: z.string(), temp: z.number() }), prompt: "weather?" });
        if (url.searchParams.has("stream")) return streamText({ model, prompt: "story" }).toTextStreamResponse();
        const st = streamText({ model, prompt: "story" });
        const parts = [];
        for await (const p of st.textStream) parts.push(p);
        return json({ text: gen.text, finish: gen.finishReason, usage: gen.usage.totalTokens, object: obj.object, parts, final: await st.text });
      }
      case "/cheerio": {
        const $ = cheerio.load(`<!doctype html><html><head><title>T &amp; t</title></head><body><ul id="l"><li class="a">one</li><li>two <b>2</b></li><li class="a" data-x='{"k":1}'>three</li></ul><p>caf&eacute; &lt;x&gt;</p></body></html>`);
        $("li.a").addClass("hit").attr("title", "y\"z");
        $("ul").append("<li>four</li>");
        $("b").replaceWith("<i>II</i>");
        return json({
          title: $("title").text(), items: $("li").map((_, el) => $(el).text()).get(),
          hits: $(".hit").length, data: $("li[data-x]").data("x"), p: $("p").text(), pHtml: $("p").html(),
          list: $.html("#l"), nth: $("li:nth-child(2)").text(), parents: $("i").parents().map((_, e) => e.tagName).get(),
          xml: cheerio.load("<r><a n='1'/><a n='2'>x</a></r>", { xml: true }).xml(),
        });
      }
      case "/csv": {
        const csv = 'name,age,city\n"Lovelace, Ada",36,London\nTuring,41,"Wilmslow\n(UK)"\nHopper,,"New ""York"""\n';
        const parsed = Papa.parse(csv, { header: true, dynamicTyping: true, skipEmptyLines: true });
        const bad = Papa.parse('a,b\n1,"2\n3,4', { header: true });
        return json({ data: parsed.data, fields: parsed.meta.fields, errors: parsed.errors, bad: bad.errors.map((e) => ({ type: e.type, code: e.code, row: e.row })),
          unparsed: Papa.unparse([{ x: 1, y: 'a "q"' }, { x: 2, y: "b,c" }], { quotes: false }), tsv: Papa.parse("a\tb\n1\t2").data });
      }
      case "/ky": {
        flaky = 0;
        const k = ky.create({ prefixUrl: "https://api.example/", fetch: kyFetch, retry: { limit: 3, delay: () => 1 }, hooks: { beforeRequest: [(req) => { req.headers.set("x-hook", "yes"); }] } });
        const got = await k.get("items", { searchParams: { page: 2, tag: "a b" } }).json();
        const posted = await k.post("items", { json: { name: "n" } }).json();
        const retried = await k.get("flaky").json();
        const fail = await k.get("teapot").catch(async (e) => ({ httpError: e instanceof HTTPError, name: e.name, message: e.message, status: e.response.status, body: await e.response.text() }));
        return json({ got, posted, retried, attempts: flaky, fail });
      }
      case "/rx": {
        const evens = await lastValueFrom(from([1, 2, 3, 4, 5, 6]).pipe(filter((x) => x % 2 === 0), map((x) => x * 10), toArray()));
        const ticks = await lastValueFrom(interval(1).pipe(take(5), scan((a, x) => a + x, 0), toArray()));
        const merged = await lastValueFrom(of(3, 1, 2).pipe(mergeMap((x) => timer(x * 3).pipe(map(() => x))), toArray()));
        const buffered = await lastValueFrom(from("abcdefg").pipe(bufferCount(3), map((b) => b.join("")), toArray()));
        const recovered = await firstValueFrom(of(1).pipe(map(() => { throw new Error("boom"); }), catchError((e) => of(`caught ${e.message}`))));
        const s = new Subject(); const got = []; s.pipe(debounceTime(5)).subscribe((v) => got.push(v));
        s.next(1); s.next(2); await new Promise((r) => setTimeout(r, 20)); s.next(3); await new Promise((r) => setTimeout(r, 20)); s.complete();
        const switched = await lastValueFrom(of("a", "b").pipe(switchMap((x) => of(x + 1, x + 2).pipe(delay(1))), toArray()));
        return json({ evens, ticks, merged, buffered, recovered, debounced: got, switched });
      }
      case "/markdown": {
        const md = new MarkdownIt({ html: false, linkify: true, typographer: true, breaks: true });
        const src = '# Title\n\n"Quotes" -- and (c) ... see https://example.com/a?b=1\nline two\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n\n```js\nlet x = 1 < 2;\n```\n\n<script>alert(1)</script>\n\n- [x] done\n- item *em* __strong__ ~~del~~\n\n> quote\n\n1. one\n2. two\n';
        return json({ html: md.render(src), inline: md.renderInline("a `code` & **b**"), tokens: md.parse("*x*", {}).map((t) => t.type) });
      }
      case "/moment": {
        const t = moment.tz("2024-03-10 01:30", "America/New_York");
        return json({
          ny: t.format(), plus1h: t.clone().add(1, "hour").format("YYYY-MM-DD HH:mm z Z"),
          tokyo: t.clone().tz("Asia/Tokyo").format("dddd, MMMM Do YYYY, h:mm:ss a z"),
          kolkata: moment.tz("2024-11-03T12:00:00Z", "Asia/Kolkata").format("LLLL z"),
          gap: moment.tz("2024-03-31 02:30", "Europe/Berlin").format(),
          utc: moment.utc("2024-02-29T23:59:59Z").add(1, "year").toISOString(),
          diff: moment("2024-01-01").diff(moment("2023-01-15"), "months", true).toFixed(4),
          humanize: [moment.duration(90, "minutes").humanize(), moment.duration(-3, "days").humanize(true), moment.duration(45, "seconds").humanize()],
          fromNow: moment("2020-01-01T00:00:00Z").from(moment("2024-06-01T00:00:00Z")),
          calendar: moment("2024-06-03T09:00:00Z").utc().calendar(moment("2024-06-02T12:00:00Z").utc()),
          valid: moment("2024-02-30", "YYYY-MM-DD", true).isValid(), zones: moment.tz.zonesForCountry("NZ"),
          guess: moment.tz.guess(),
        });
      }
    }
    return api.fetch(request);
  },
};
