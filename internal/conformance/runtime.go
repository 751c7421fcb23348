package conformance

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/celldgo/celld/worker"
)

// ReplayRuntime replays the fixture in dir against rt in-process: each
// step's request as an HTTP client would send it (Content-Length set when
// it has a body), each answer read whole (a streamed body too) and
// compared. Problems are reported on t.
func ReplayRuntime(t testing.TB, rt *worker.Runtime, dir string) {
	t.Helper()
	steps, err := LoadSteps(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		if s.SleepMsBefore > 0 {
			time.Sleep(time.Duration(s.SleepMsBefore) * time.Millisecond)
		}
		req := &worker.Request{Method: s.MethodOrGet(), URL: "http://localhost" + s.Path, Header: http.Header{}}
		for k, v := range s.Headers {
			req.Header.Set(k, v)
		}
		if req.Body, err = s.RequestBody(); err != nil {
			t.Fatalf("step %d %q: %v", i, s.Name, err)
		}
		if req.Body != nil {
			req.Header.Set("Content-Length", strconv.Itoa(len(req.Body)))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := rt.Fetch(ctx, req)
		if err == nil {
			err = resp.Buffer(100 << 20)
		}
		cancel()
		if err != nil {
			t.Errorf("step %d %q: fetch: %v", i, s.Name, err)
			continue
		}
		for _, problem := range Compare(s, resp.Status, resp.Header, resp.Body) {
			t.Errorf("step %d %q: %s", i, s.Name, problem)
		}
	}
}
