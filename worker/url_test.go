package worker_test

import (
	"testing"

	"github.com/celldgo/celld/worker"
)

// Go remembers the parts a URL setter produced for the last few (href,
// part, value); URLs set alike share those parts but stay separate
// objects: changing one later does not change the other, and a rejected
// value leaves a URL as it was, each time.
func TestURL_SettersRememberedStayPerObject(t *testing.T) {
	rt := newRuntime(t, `
module.exports.default = {
  async fetch() {
    const out = [];
    for (let i = 0; i < 3; i++) {
      const a = new URL("https://h.test/rooms/lobby/items/7?x=1");
      const b = new URL("https://h.test/rooms/lobby/items/7?x=1");
      a.pathname = "/items/7";
      b.pathname = "/items/7";
      b.search = "?y=2";
      const p = a.searchParams;
      a.search = "?z=3";
      const c = new URL("https://h.test/a");
      c.port = "nope";
      c.protocol = "1bad";
      out.push([a.href, b.href, p.get("z"), p.get("x"), c.href]);
    }
    return Response.json(out);
  },
};`, worker.Config{})
	resp := fetch(t, rt, "GET", "/", nil)
	one := `["https://h.test/items/7?z=3","https://h.test/items/7?y=2","3",null,"https://h.test/a"]`
	if want := "[" + one + "," + one + "," + one + "]"; string(resp.Body) != want {
		t.Errorf("body = %s, want %s", resp.Body, want)
	}
}
