package worker_test

import (
	"strings"
	"testing"

	"github.com/celldgo/celld/worker"
)

// The rewriter is fed the same document one byte per chunk (every token
// split at every position) and cut in two at many places; the output must
// not depend on where the chunks end.
func TestHTMLRewriter_EveryChunkBoundary(t *testing.T) {
	rt := newRuntime(t, `
		const doc = '<!DOCTYPE html><html><head><script>if (a < b && "</p>") x();</script><style>p>b{}</style></head>' +
			'<body><div id="a" data-x=\'q"r\' checked><p>t&amp;e <b>b</b></p><!-- c --><textarea><p>raw</p></textarea><img src=x></div></body></html>';
		async function rewrite(parts) {
			const body = new ReadableStream({ start(c) { for (const p of parts) c.enqueue(new TextEncoder().encode(p)); c.close(); } });
			const seen = [];
			const out = await new HTMLRewriter()
				.on("p", { element(e) { e.setAttribute("k", "1"); seen.push("p"); }, text(t) { seen.push(t.text); } })
				.on("div", { element(e) { seen.push(e.getAttribute("data-x"), e.hasAttribute("checked")); } })
				.on("*", { comments(c) { seen.push("c:" + c.text); } })
				.transform(new Response(body)).text();
			return JSON.stringify({ out, seen: seen.join("|").replace(/\|\|/g, "|") });
		}
		module.exports.default = { async fetch() {
			const whole = await rewrite([doc]);
			const bad = [];
			if (await rewrite(Array.from(doc)) !== whole) bad.push("one byte at a time");
			for (let i = 1; i < doc.length; i += 17) {
				if (await rewrite([doc.slice(0, i), doc.slice(i)]) !== whole) bad.push(i);
			}
			return Response.json({ whole: JSON.parse(whole), bad });
		} };`, worker.Config{})
	got := fetch(t, rt, "GET", "/", nil)
	body := string(got.Body)
	if !strings.Contains(body, `"bad":[]`) {
		t.Fatalf("output depends on the chunk boundary: %s", body)
	}
	for _, want := range []string{
		`<script>if (a < b && \"</p>\") x();</script>`, // raw text is not parsed
		`<p k=\"1\">t&amp;e <b>b</b></p>`,
		`<textarea><p>raw</p></textarea>`,
		`q\"r|true`, // a single-quoted value with a double quote, a valueless attribute
		`c: c `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s in %s", want, body)
		}
	}
}

// The output streams: its first chunk is readable before the input ends.
func TestHTMLRewriter_Streams(t *testing.T) {
	rt := newRuntime(t, `
		module.exports.default = { async fetch() {
			let release;
			const gate = new Promise((r) => { release = r; });
			let step = 0;
			const body = new ReadableStream({ async pull(c) {
				if (step === 0) { step++; c.enqueue(new TextEncoder().encode("<p>first</p>")); return; }
				if (step === 1) { step++; await gate; c.enqueue(new TextEncoder().encode("<p>second</p>")); return; }
				c.close();
			} });
			const out = new HTMLRewriter().on("p", { element(e) { e.setAttribute("n", "1"); } }).transform(new Response(body));
			const r = out.body.getReader();
			const timeout = new Promise((res) => setTimeout(() => res("timeout"), 2000));
			const first = await Promise.race([r.read(), timeout]);
			release();
			let rest = "";
			for (;;) { const { value, done } = await r.read(); if (done) break; rest += new TextDecoder().decode(value); }
			return Response.json({ first: first === "timeout" ? first : new TextDecoder().decode(first.value), rest });
		} };`, worker.Config{})
	got := fetch(t, rt, "GET", "/", nil)
	if string(got.Body) != `{"first":"<p n=\"1\">first</p>","rest":"<p n=\"1\">second</p>"}` {
		t.Fatalf("body = %s", got.Body)
	}
}
