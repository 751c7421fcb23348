package worker

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/dop251/goja"
)

// A Response whose body is a ReadableStream reaches Go as soon as the
// handler returns it: status and headers at once, the body through
// Response.Stream, pulled one reader.read() at a time on the isolate's
// loop. Buffering the whole body first would hold back a response the
// script means to trickle out (server-sent events, progress output) until
// its last chunk.

// Stream errors.
var (
	// ErrStreamCanceled is what Read returns once Close was called.
	ErrStreamCanceled = errors.New("response body stream canceled")
	// ErrStreamHung means the script's stream waits for something nothing
	// can deliver any more: workerd ends such a response the same way.
	ErrStreamHung = errors.New("response body stream will never produce more data")
)

// streamChunk is one outcome of a read: bytes, or an error (io.EOF at the
// end).
type streamChunk struct {
	data []byte
	err  error
}

// bodyStream is a Response body the script is still producing. Read and
// Close run off the loop; every touch of the JavaScript reader is a task
// on it.
type bodyStream struct {
	iso    *isolate
	chunks chan streamChunk // one read in flight at most, so one slot is enough
	closed chan struct{}    // closed by Close
	once   sync.Once

	// Read's side.
	buf []byte
	err error

	// The loop's side.
	reader   goja.Value
	pf       *pendingFetch // in iso.waiting while the stream lives
	reading  bool          // a read() is in flight
	finished bool          // the reader is done, failed or canceled
}

// newBodyStream starts tracking reader as a response body. Call it on the
// loop. The stream counts as a request in flight until it ends, so a
// stateless isolate keeps the timers that feed it, Close waits for it and
// a Durable Object does not hibernate under it.
func (iso *isolate) newBodyStream(reader goja.Value) *bodyStream {
	s := &bodyStream{
		iso:    iso,
		chunks: make(chan streamChunk, 1),
		closed: make(chan struct{}),
		reader: reader,
	}
	s.pf = &pendingFetch{hung: s.hung}
	iso.waiting = append(iso.waiting, s.pf)
	return s
}

// Read returns the next bytes of the body, waiting for the script to
// produce them.
func (s *bodyStream) Read(p []byte) (int, error) {
	if len(s.buf) > 0 {
		n := copy(p, s.buf)
		s.buf = s.buf[n:]
		return n, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	select {
	case <-s.closed:
		s.err = ErrStreamCanceled
		return 0, s.err
	default:
	}
	if !s.iso.post(s.pull) {
		s.err = s.iso.stoppedErr()
		return 0, s.err
	}
	select {
	case c := <-s.chunks:
		if c.err != nil {
			s.err = c.err
			return 0, c.err
		}
		n := copy(p, c.data)
		s.buf = c.data[n:]
		return n, nil
	case <-s.closed:
		s.err = ErrStreamCanceled
	case <-s.iso.stop:
		s.err = s.iso.stoppedErr()
	}
	return 0, s.err
}

// Close cancels the stream in the script (reader.cancel(), as when the
// client goes away) unless it has ended, and frees the isolate of it. It
// may run while a Read waits, which it then ends.
func (s *bodyStream) Close() error {
	s.once.Do(func() {
		close(s.closed)
		s.iso.post(s.cancel)
	})
	return nil
}

// discard closes the stream from the loop (the body of an answer to
// HEAD).
func (s *bodyStream) discard() {
	s.once.Do(func() { close(s.closed) })
	s.cancel()
}

// stoppedErr is what a read fails with once the isolate has stopped.
func (iso *isolate) stoppedErr() error {
	if iso.obj != nil {
		return ErrObjectStopped
	}
	return ErrClosed
}

// pull runs on the loop: it reads one chunk and hands it to Read.
func (s *bodyStream) pull() {
	iso := s.iso
	if s.finished {
		s.chunks <- streamChunk{err: ErrStreamCanceled}
		return
	}
	fn, ok := goja.AssertFunction(iso.internal.Get("pullChunk"))
	if !ok {
		s.fail(errors.New("prelude: internal.pullChunk missing"))
		return
	}
	res, err := fn(goja.Undefined(), s.reader)
	if err != nil {
		iso.reportException("read response body", thrownOr(err))
		s.fail(fmt.Errorf("read response body: %w", err))
		return
	}
	s.reading = true
	iso.await(res, func(ok bool, v goja.Value) {
		if !s.reading {
			return // failed as hung meanwhile
		}
		s.reading = false
		switch {
		case !ok:
			iso.log.Error("response body stream failed", "error", describeValue(v), "stack", stackOf(v))
			s.fail(fmt.Errorf("read response body: %s", describeValue(v)))
		case goja.IsNull(v) || goja.IsUndefined(v):
			s.end()
			s.chunks <- streamChunk{err: io.EOF}
		default:
			var data []byte
			if err := iso.vm.ExportTo(v, &data); err != nil {
				s.fail(fmt.Errorf("export response body chunk: %w", err))
				return
			}
			s.chunks <- streamChunk{data: append([]byte(nil), data...)}
		}
	})
}

// fail ends the stream with err. Call it on the loop.
func (s *bodyStream) fail(err error) {
	s.end()
	s.chunks <- streamChunk{err: err}
}

// hung is called by the loop when nothing can run any more. Between reads
// that is no news (Go is busy writing the last chunk); during one, the
// read can never complete.
func (s *bodyStream) hung() {
	if !s.reading {
		return
	}
	s.reading = false
	s.iso.log.Error("The script will never generate a response.")
	s.fail(ErrStreamHung)
}

// cancel runs on the loop after Close.
func (s *bodyStream) cancel() {
	if s.finished {
		return
	}
	iso := s.iso
	s.reading = false
	s.end()
	if fn, ok := goja.AssertFunction(iso.internal.Get("cancelBody")); ok {
		if _, err := fn(goja.Undefined(), s.reader); err != nil {
			iso.reportException("cancel response body", thrownOr(err))
		}
	}
}

// end forgets the stream on the loop.
func (s *bodyStream) end() {
	if s.finished {
		return
	}
	s.finished = true
	s.iso.unwatch(s.pf)
}

// Buffer reads a streamed body to its end into Body (at most limit
// bytes) and closes the stream, for a caller that needs the body whole.
// It does nothing for a buffered body.
func (r *Response) Buffer(limit int64) error {
	if r.Stream == nil {
		return nil
	}
	defer r.Stream.Close()
	data, err := io.ReadAll(io.LimitReader(r.Stream, limit+1))
	r.Stream = nil
	if err != nil {
		return err
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("response body larger than %d bytes", limit)
	}
	r.Body = data
	return nil
}
