package worker

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A Go body the script never reads goes back to Go whole: the response
// body Go writes out is the origin's own reader, not one that pulls the
// chunks through the script's stream. Read whole with text(), it is read
// by Go in one call; read through a reader, it still streams.
func TestGoBodiesGoBackToGoUnread(t *testing.T) {
	payload := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, payload)
	}))
	defer origin.Close()
	script, err := Compile("takeback.js", []byte(`
module.exports.default = {
  async fetch(request) {
    const url = new URL(request.url);
    const r = await fetch(url.searchParams.get("origin"));
    switch (url.pathname) {
    case "/as-is": return r;
    case "/rewrapped": return new Response(r.body, { headers: { "x-rewrapped": "1" } });
    case "/text": { const t = await r.text(); return new Response(String(t.length) + ":" + r.bodyUsed + ":" + r.body.locked); }
    case "/reader": {
      const reader = r.body.getReader();
      let n = 0;
      for (;;) { const { done, value } = await reader.read(); if (done) break; n += value.byteLength; }
      return new Response(String(n));
    }
    }
    return new Response("?", { status: 404 });
  },
};`))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := New(script, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	get := func(path string) *Response {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t.Cleanup(cancel)
		resp, err := rt.Fetch(ctx, &Request{Method: "GET", URL: "http://localhost" + path + "?origin=" + origin.URL, Header: http.Header{}})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp
	}
	for _, path := range []string{"/as-is", "/rewrapped"} {
		resp := get(path)
		if resp.Stream == nil {
			t.Fatalf("%s: no streamed body", path)
		}
		if _, pulled := resp.Stream.(*bodyStream); pulled {
			t.Errorf("%s: the body is pulled through the script's stream, not taken back by Go", path)
		}
		data, err := io.ReadAll(resp.Stream)
		resp.Stream.Close()
		if err != nil || string(data) != payload {
			t.Errorf("%s: %d bytes, %v", path, len(data), err)
		}
	}
	if resp := get("/text"); string(resp.Body) != "1048576:true:true" {
		t.Errorf("/text: %q, want the length, bodyUsed and locked", resp.Body)
	}
	if resp := get("/reader"); string(resp.Body) != "1048576" {
		t.Errorf("/reader: %q", resp.Body)
	}
}
