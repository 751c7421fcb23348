package worker_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/celldgo/celld/worker"
)

// TestRuntime_OutboundFetch: fetch() reaches a server (on loopback),
// sending method, headers and body, and returns status, headers, body,
// the final URL after redirects, or the redirect itself in manual mode.
func TestRuntime_OutboundFetch(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Seen-Method", r.Method)
			w.Header().Set("X-Seen-Token", r.Header.Get("X-Token"))
			w.Header().Add("Set-Cookie", "a=1")
			w.Header().Add("Set-Cookie", "b=2")
			w.WriteHeader(201)
			w.Write(append([]byte("got "), b...))
		case "/moved":
			http.Redirect(w, r, "/echo", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer origin.Close()

	rt := newRuntime(t, `
module.exports.default = {
  async fetch(request, env) {
    const base = new URL(request.url).searchParams.get("origin");
    const a = await fetch(base + "/echo", { method: "POST", headers: { "x-token": "t1" }, body: "hello" });
    const b = await fetch(base + "/moved");
    const c = await fetch(base + "/moved", { redirect: "manual" });
    let failed = "";
    try { await fetch("http://127.0.0.1:1/"); } catch (e) { failed = e.name; }
    return Response.json({
      a: { status: a.status, text: await a.text(), method: a.headers.get("x-seen-method"), token: a.headers.get("x-seen-token"),
           cookies: a.headers.getSetCookie(), redirected: a.redirected },
      b: { status: b.status, redirected: b.redirected, url: b.url.endsWith("/echo") },
      c: { status: c.status, location: c.headers.get("location") },
      failed,
    });
  },
};`, worker.Config{})
	resp := fetch(t, rt, "GET", "/?origin="+origin.URL, nil)
	if resp.Status != 200 {
		t.Fatalf("status %d: %s", resp.Status, resp.Body)
	}
	var got struct {
		A struct {
			Status              int
			Text, Method, Token string
			Cookies             []string
			Redirected          bool
		}
		B struct {
			Status          int
			Redirected, URL bool
		}
		C struct {
			Status   int
			Location string
		}
		Failed string
	}
	if err := json.Unmarshal(resp.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.A.Status != 201 || got.A.Text != "got hello" || got.A.Method != "POST" || got.A.Token != "t1" ||
		strings.Join(got.A.Cookies, ";") != "a=1;b=2" || got.A.Redirected {
		t.Errorf("POST /echo = %+v", got.A)
	}
	if got.B.Status != 201 || !got.B.Redirected || !got.B.URL {
		t.Errorf("followed redirect = %+v", got.B)
	}
	if got.C.Status != 302 || got.C.Location != "/echo" {
		t.Errorf("manual redirect = %+v", got.C)
	}
	if got.Failed != "TypeError" {
		t.Errorf("unreachable origin threw %q, want TypeError", got.Failed)
	}
}
