package worker_test

import (
	"testing"

	"github.com/celldgo/celld/worker"
)

// A Request made from another makes its signal when first read, and it
// follows the other's as if made at once: aborted already when that one
// was, or later with it; a signal given in init (or null) wins.
func TestRequest_SignalFollowsItsInputWhenMadeLate(t *testing.T) {
	rt := newRuntime(t, `
module.exports.default = {
  async fetch() {
    const ac = new AbortController();
    const a = new Request("https://h.test/", { signal: ac.signal });
    const early = new Request(a);       // its signal read before the abort
    let heard = 0;
    early.signal.addEventListener("abort", () => heard++);
    const late = new Request(a);        // read only after the abort
    const chained = new Request(new Request(late));
    const unfollowed = new Request(a, { signal: null });
    const fresh = new Request(new Request("https://h.test/"));
    ac.abort("why");
    return Response.json({
      early: [early.signal.aborted, early.signal.reason, heard],
      late: [late.signal.aborted, late.signal.reason],
      chained: [chained.signal.aborted, chained.signal.reason],
      unfollowed: unfollowed.signal.aborted,
      fresh: fresh.signal.aborted,
      own: late.signal !== a.signal && late.signal instanceof AbortSignal,
    });
  },
};`, worker.Config{})
	resp := fetch(t, rt, "GET", "/", nil)
	want := `{"early":[true,"why",1],"late":[true,"why"],"chained":[true,"why"],"unfollowed":false,"fresh":false,"own":true}`
	if string(resp.Body) != want {
		t.Errorf("body = %s, want %s", resp.Body, want)
	}
}
