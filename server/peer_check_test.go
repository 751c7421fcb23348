package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/worker"
)

// TestPeer_MalformedCallWakesNoCell: signed peer calls whose body the
// cell could not take — RPC arguments not in the wire format, no method,
// a fetch with no absolute URL, built-in requests that do not decode —
// are refused 400 before the cell is activated: no ownership record is
// written. A well-formed call (the control) does activate it.
func TestPeer_MalformedCallWakesNoCell(t *testing.T) {
	ctx := context.Background()
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(ctx, store, "../examples/counter", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, store, "node-a")
	secret, err := fleet.PeerSecret(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	signer := &fleet.Signer{Secret: secret, Node: "node-b"}
	send := func(path string, q url.Values, body []byte) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, n.internal+path+"?"+q.Encode(), bytes.NewReader(body))
		signer.Sign(req, body)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	id := worker.ObjectIDFromName("Counter", "malformed")
	obj := url.Values{"class": {"Counter"}, "id": {id}}
	withMethod := func(m string) url.Values {
		q := url.Values{"class": {"Counter"}, "id": {id}}
		if m != "" {
			q.Set("method", m)
		}
		return q
	}
	emptyArgs := []byte{1, 'a', 0} // wire format: []
	cases := []struct {
		name string
		path string
		q    url.Values
		body []byte
		want string
	}{
		{"call with garbage arguments", peerCallPath, withMethod("increment"), []byte("garbage"), "decode call arguments"},
		{"call with truncated arguments", peerCallPath, withMethod("increment"), []byte{1, 'a', 2, 'i'}, "decode call arguments"},
		{"call with no method", peerCallPath, withMethod(""), emptyArgs, "no method"},
		{"fetch that is not JSON", peerFetchPath, obj, []byte("{"), "decode peer fetch"},
		{"fetch with a relative URL", peerFetchPath, obj, []byte(`{"method":"GET","url":"/x","header":{}}`), "absolute"},
		{"fetch with a bad method", peerFetchPath, obj, []byte(`{"method":"G T","url":"http://a/","header":{}}`), "method"},
		{"kv request that does not decode", fleet.PeerCellCallPath, url.Values{"cell": {"kv:ns1"}}, []byte("{"), "decode kv request"},
		{"d1 request that does not decode", fleet.PeerCellCallPath, url.Values{"cell": {"d1:db1"}}, []byte("nope"), "malformed request"},
	}
	for _, c := range cases {
		if code, body := send(c.path, c.q, c.body); code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %q, want 400 with %q", c.name, code, body, c.want)
		}
	}
	cells, err := fleet.ListCells(ctx, store, time.Now().UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 0 {
		t.Fatalf("malformed calls activated cells: %+v", cells)
	}
	// The control: the same call, well formed, runs.
	if code, body := send(peerCallPath, withMethod("increment"), emptyArgs); code != http.StatusOK {
		t.Fatalf("well-formed call: %d %q", code, body)
	}
	if code, body := send(fleet.PeerCellCallPath, url.Values{"cell": {"kv:ns1"}}, []byte(`{"op":"get","key":"k"}`)); code != http.StatusOK {
		t.Fatalf("well-formed kv request: %d %q", code, body)
	}
	cells, _ = fleet.ListCells(ctx, store, time.Now().UnixMilli())
	if len(cells) != 2 {
		t.Fatalf("well-formed calls: %d cells active, want 2: %+v", len(cells), cells)
	}
}
