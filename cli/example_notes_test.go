package cli

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/server"
)

// examples/notes end to end: deploy it, run a node, apply its D1
// migrations with `celld d1 migrate` (through the node, which owns the
// database once the Worker has used it), and use both bindings over HTTP.
func TestExampleNotes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, err := bucket.NewFile(filepath.Join(dir, "bucket"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := deploy.Deploy(ctx, store, "../examples/notes", deploy.Options{Capabilities: deploy.Served()}); err != nil {
		t.Fatal(err)
	}
	nctx, cancel := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(nctx, server.Options{Store: store, Node: "n1", Listen: "127.0.0.1:0", InternalListen: "127.0.0.1:0",
			TTL: 5 * time.Second, StateDir: filepath.Join(dir, "state"), Logger: slog.New(slog.DiscardHandler), Poll: 100 * time.Millisecond,
			OnReady: func(pub, _ string) { ready <- "http://" + pub }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	var base string
	select {
	case base = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// Before the migration the table is missing: the Worker's D1 error.
	if status, body := do("GET", "/notes", ""); status != 500 {
		t.Fatalf("before migrating: %d %s", status, body)
	}
	var out, errOut strings.Builder
	cmd := New("test")
	cmd.Writer, cmd.ErrWriter = &out, &errOut
	if err := cmd.Run(ctx, []string{"celld", "--bucket", "file://" + filepath.Join(dir, "bucket"), "d1", "migrate", "notes", "../examples/notes"}); err != nil {
		t.Fatalf("migrate: %v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "0001_notes.sql") {
		t.Errorf("migrate output:\n%s", out.String())
	}
	for _, n := range []string{`{"author":"ann","body":"hello"}`, `{"author":"bob","body":"hi"}`, `{"author":"ann","body":"again"}`} {
		if status, body := do("POST", "/notes", n); status != 201 {
			t.Fatalf("POST %s: %d %s", n, status, body)
		}
	}
	if status, body := do("POST", "/notes", `{"author":""}`); status != 400 {
		t.Errorf("bad note: %d %s", status, body)
	}
	_, body := do("GET", "/notes?author=ann", "")
	var notes []struct {
		ID     int    `json:"id"`
		Author string `json:"author"`
		Body   string `json:"body"`
	}
	if err := json.Unmarshal([]byte(body), &notes); err != nil || len(notes) != 2 || notes[0].Body != "again" || notes[1].Body != "hello" {
		t.Errorf("ann's notes: %s (%v)", body, err)
	}
	for want := 1; want <= 3; want++ {
		if _, body := do("GET", "/visits", ""); strings.TrimSpace(body) != string(rune('0'+want)) {
			t.Errorf("visit %d: %q", want, body)
		}
	}
}
