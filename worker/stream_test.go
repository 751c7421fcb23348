package worker_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/worker"
)

// streamScript answers /ticks with a body of 5 chunks, one every 100 ms,
// from a start(controller) source or (on /piped) a TransformStream
// writer; /state reports, from the same isolate, how many chunks were
// enqueued and whether the stream saw cancel.
const streamScript = `
let enqueued = 0, canceled = "";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
module.exports.default = {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    const enc = new TextEncoder();
    if (path === "/state") return Response.json({ enqueued, canceled });
    if (path === "/ticks") {
      enqueued = 0; canceled = "";
      return new Response(new ReadableStream({
        async start(c) {
          for (let i = 0; i < 5; i++) {
            if (i > 0) await sleep(100);
            if (canceled) return;
            enqueued++;
            c.enqueue(enc.encode("tick" + i + ";"));
          }
          c.close();
        },
        cancel(reason) { canceled = (reason && reason.name) || String(reason); },
      }), { headers: { "content-type": "text/plain" } });
    }
    if (path === "/piped") {
      enqueued = 0;
      const { readable, writable } = new TransformStream();
      const w = writable.getWriter();
      (async () => {
        for (let i = 0; i < 5; i++) {
          if (i > 0) await sleep(100);
          enqueued++;
          await w.write(enc.encode("part" + i + ";"));
        }
        await w.close();
      })();
      return new Response(readable);
    }
    if (path === "/fails") {
      return new Response(new ReadableStream({
        async start(c) {
          c.enqueue(enc.encode("first;"));
          await sleep(20);
          c.error(new Error("boom"));
        },
      }));
    }
    if (path === "/stalls") {
      // A pull that waits on nothing: no timer, no I/O can ever settle it.
      return new Response(new ReadableStream({ pull() { return new Promise(() => {}); } }));
    }
    return new Response("ok");
  },
};`

// state asks the isolate how far the stream got.
func state(t *testing.T, rt *worker.Runtime) string {
	t.Helper()
	return string(fetch(t, rt, "GET", "/state", nil).Body)
}

func TestRuntime_FetchStreamsBody(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{"/ticks", "tick0;tick1;tick2;tick3;tick4;"},
		{"/piped", "part0;part1;part2;part3;part4;"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			rt := newRuntime(t, streamScript, worker.Config{Isolates: 1})
			resp := fetch(t, rt, "GET", tc.path, nil)
			if resp.Stream == nil {
				t.Fatalf("Stream = nil, Body = %q: want a streamed body", resp.Body)
			}
			defer resp.Stream.Close()
			if resp.Status != 200 {
				t.Errorf("status = %d, want 200", resp.Status)
			}
			buf := make([]byte, 64)
			n, err := resp.Stream.Read(buf)
			if err != nil {
				t.Fatalf("first read: %v", err)
			}
			got := string(buf[:n])
			// The first chunk is here; the script has not yet produced the
			// third (it does so 200 ms after the first).
			if s := state(t, rt); !strings.Contains(s, `"enqueued":1`) && !strings.Contains(s, `"enqueued":2`) {
				t.Errorf("after the first chunk the script reports %s, want fewer than 3 enqueued", s)
			}
			rest, err := io.ReadAll(resp.Stream)
			if err != nil {
				t.Fatalf("read rest: %v", err)
			}
			if got += string(rest); got != tc.want {
				t.Errorf("body = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRuntime_FetchStreamCancel(t *testing.T) {
	rt := newRuntime(t, streamScript, worker.Config{Isolates: 1})
	resp := fetch(t, rt, "GET", "/ticks", nil)
	if resp.Stream == nil {
		t.Fatal("Stream = nil")
	}
	if _, err := resp.Stream.Read(make([]byte, 64)); err != nil {
		t.Fatalf("first read: %v", err)
	}
	resp.Stream.Close()
	if _, err := resp.Stream.Read(make([]byte, 64)); !errors.Is(err, worker.ErrStreamCanceled) {
		t.Errorf("read after Close: err = %v, want ErrStreamCanceled", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(state(t, rt), `"canceled":"AbortError"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the stream never saw cancel: %s", state(t, rt))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := fetch(t, rt, "GET", "/", nil); string(got.Body) != "ok" {
		t.Errorf("after a canceled stream: body = %q", got.Body)
	}
	// The stream no longer counts as in flight: Close does not wait for it.
	start := time.Now()
	if err := rt.Close(context.Background()); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
}

func TestRuntime_FetchStreamEndsOnError(t *testing.T) {
	for _, path := range []string{"/fails", "/stalls"} {
		t.Run(path, func(t *testing.T) {
			rt := newRuntime(t, streamScript, worker.Config{Isolates: 1})
			resp := fetch(t, rt, "GET", path, nil)
			if resp.Stream == nil {
				t.Fatal("Stream = nil")
			}
			defer resp.Stream.Close()
			done := make(chan error, 1)
			go func() {
				_, err := io.ReadAll(resp.Stream)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Error("body read to its end, want an error")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("reading a failed stream hangs")
			}
			if got := fetch(t, rt, "GET", "/", nil); string(got.Body) != "ok" {
				t.Errorf("after a failed stream: body = %q", got.Body)
			}
		})
	}
}

func TestRuntime_FetchStreamHead(t *testing.T) {
	rt := newRuntime(t, streamScript, worker.Config{Isolates: 1})
	resp := fetch(t, rt, "HEAD", "/ticks", nil)
	if resp.Stream != nil || len(resp.Body) != 0 {
		t.Errorf("HEAD: Stream = %v, Body = %q, want no body", resp.Stream, resp.Body)
	}
	deadline := time.Now().Add(2 * time.Second)
	for !strings.Contains(state(t, rt), `"canceled":"AbortError"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the HEAD response's stream was not canceled: %s", state(t, rt))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
