package worker_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/worker"
)

// waitingHost is an ObjectHost whose objects never answer an RPC call:
// each call waits for its context and reports how it ended.
type waitingHost struct {
	ended chan error
	stop  chan struct{} // closed when the test ends
}

func (h waitingHost) Object(ctx context.Context, class, id string) (worker.ObjectHandle, error) {
	return h, nil
}

func (h waitingHost) Fetch(ctx context.Context, req *worker.Request) (*worker.Response, error) {
	return nil, errors.New("not used")
}

func (h waitingHost) Call(ctx context.Context, method string, args []byte) ([]byte, error) {
	select {
	case <-ctx.Done():
		h.ended <- context.Cause(ctx)
		return nil, ctx.Err()
	case <-h.stop:
		return nil, errors.New("test over")
	}
}

// A client that goes away before the response ends the request's Durable
// Object calls in flight — unless the request asked for waitUntil work,
// which goes on without the client.
func TestRuntime_ClientGoneEndsCalls(t *testing.T) {
	host := waitingHost{ended: make(chan error, 4), stop: make(chan struct{})}
	rt := newRuntime(t, `
module.exports.default = {
  async fetch(request, env, ctx) {
    if (new URL(request.url).pathname === "/wait") ctx.waitUntil(new Promise((r) => setTimeout(r, 300)));
    return new Response(await env.C.getByName("x").hang());
  },
};`, worker.Config{Objects: host, DurableObjects: map[string]string{"C": "C"}, Logger: testLogger(t)})
	t.Cleanup(func() { close(host.stop) }) // before the runtime closes

	call := func(path string) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			rt.Fetch(ctx, &worker.Request{Method: "GET", URL: "http://localhost" + path})
		}()
		time.Sleep(100 * time.Millisecond) // the call is in flight
		cancel()
		<-done
	}
	call("/")
	select {
	case cause := <-host.ended:
		if cause == nil || !strings.Contains(cause.Error(), "client disconnected") {
			t.Fatalf("the call ended with %v; want the client's disconnection", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call of a request whose client went away still runs after 5s")
	}
	call("/wait")
	select {
	case cause := <-host.ended:
		t.Fatalf("a request with waitUntil work had its call ended when the client left: %v", cause)
	case <-time.After(500 * time.Millisecond):
	}
}

// The same for fetch(): an origin still working on the request of a
// client that left sees it cancelled.
func TestRuntime_ClientGoneEndsFetch(t *testing.T) {
	cancelled := make(chan struct{}, 1)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled <- struct{}{}
		case <-time.After(10 * time.Second):
		}
	}))
	defer origin.Close()
	rt := newRuntime(t, `
module.exports.default = {
  async fetch(request) {
    const r = await fetch(new URL(request.url).searchParams.get("origin"));
    return new Response(await r.text());
  },
};`, worker.Config{Logger: testLogger(t)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rt.Fetch(ctx, &worker.Request{Method: "GET", URL: "http://localhost/?origin=" + origin.URL})
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	<-done
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the origin request of a client that left still runs after 5s")
	}
}
