const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escape = (s) => String(s).replace(/[&<>"']/g, (ch) => ESC[ch]);

function rows(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push({
      id: i,
      name: `Product <${i}> & "friends"`,
      price: Math.round((i * 37) % 1000) / 10,
      tags: ["a", "b", "c"].slice(0, (i % 3) + 1),
      inStock: i % 4 !== 0,
    });
  }
  return out;
}

function Row(p) {
  return `<tr class="${p.inStock ? "in" : "out"}"><td>${p.id}</td><td>${escape(p.name)}</td>` +
    `<td>${p.price.toFixed(2)}</td><td>${p.tags.map((t) => `<span>${escape(t)}</span>`).join("")}</td></tr>`;
}

function Page(items, q) {
  const visible = items.filter((p) => p.inStock && (!q || p.name.includes(q)));
  const total = visible.reduce((s, p) => s + p.price, 0);
  return `<!doctype html><html><head><title>${escape(`Shop: ${visible.length} items`)}</title></head><body>` +
    `<h1>Products</h1><table>${visible.map(Row).join("")}</table>` +
    `<p>Total ${total.toFixed(2)}</p>` +
    `<script>window.__DATA__=${JSON.stringify({ count: visible.length, ids: visible.map((p) => p.id) })}</script>` +
    `</body></html>`;
}

export default {
  fetch(request) {
    const q = new URL(request.url).searchParams.get("q") ?? "";
    return new Response(Page(rows(200), q), { headers: { "content-type": "text/html; charset=utf-8" } });
  },
};
