package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/celldgo/celld/worker"
)

// A Worker's (or a Durable Object's) streamed body leaves as the script
// produces it: each chunk is written and flushed at once, on the public
// listener and between peers alike.

// streamBody copies a streamed body to w, flushing after each chunk, and
// closes it. ctx ending (the client went away) closes it early, which
// cancels the stream in the script. A body that fails mid-way ends the
// response abruptly: the client must not take a truncated body for a
// whole one (workerd resets the stream the same way).
func streamBody(ctx context.Context, w http.ResponseWriter, body io.ReadCloser) {
	defer body.Close()
	stop := context.AfterFunc(ctx, func() { body.Close() })
	defer stop()
	if err := copyFlushing(w, body); err != nil {
		panic(http.ErrAbortHandler)
	}
}

// Copy buffers: a script's stream comes a chunk at a time and may live
// long (server-sent events), so it gets a small one; a Go body of known
// length (an R2 object) is bulk, copied in few large writes through a
// pooled buffer (at most one per response in flight).
const (
	streamBufSize = 32 << 10
	bulkBufSize   = 512 << 10
	bulkMinWrite  = 64 << 10
)

var bulkBufs = sync.Pool{New: func() any { b := make([]byte, bulkBufSize); return &b }}

// copyFlushing copies body to w, flushing after each chunk.
func copyFlushing(w http.ResponseWriter, body io.Reader) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, streamBufSize)
	read := body.Read
	if worker.BodySize(body) > streamBufSize {
		// Bulk: each write waits for at least bulkMinWrite bytes (or the
		// end) and takes all that has arrived, up to the buffer: the
		// client is woken per large chunk, not per segment the store
		// sent, and more so when the node was slow to be scheduled.
		p := bulkBufs.Get().(*[]byte)
		defer bulkBufs.Put(p)
		buf = *p
		read = func(b []byte) (int, error) {
			n, err := io.ReadAtLeast(body, b, bulkMinWrite)
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			return n, err
		}
	}
	for {
		n, err := read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
			if ferr := rc.Flush(); ferr != nil && !errors.Is(ferr, http.ErrNotSupported) {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
