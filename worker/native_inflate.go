package worker

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"sync"
)

// inflater decompresses a zlib stream object's input as it arrives. Go's
// decompressors pull from an io.Reader, so one runs on a goroutine of its
// own that reads the chunks write hands it; write returns once the chunk
// is used up (or the stream ended), so the loop gets the output a chunk
// makes before the next one, as with zlib. Only one side runs at a time.
type inflater struct {
	in     chan []byte   // chunks; closed at the end of the input
	used   chan struct{} // the goroutine used up a chunk
	exited chan struct{} // closed when the goroutine is done
	mu     sync.Mutex
	out    bytes.Buffer
	code   string // Node's zlib error code once it failed ("" ok)
	closed bool
	once   sync.Once
}

func newInflater(kind string) *inflater {
	f := &inflater{in: make(chan []byte), used: make(chan struct{}), exited: make(chan struct{})}
	go f.run(kind)
	return f
}

// chanReader hands the decompressor the chunks write sends.
type chanReader struct {
	f    *inflater
	cur  []byte
	seen bool
}

func (r *chanReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.seen {
			r.f.used <- struct{}{}
		}
		b, ok := <-r.f.in
		if !ok {
			return 0, io.EOF
		}
		r.cur, r.seen = b, true
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// outWriter collects output under the lock.
type outWriter struct{ f *inflater }

func (w outWriter) Write(p []byte) (int, error) {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	return w.f.out.Write(p)
}

func (f *inflater) run(kind string) {
	defer close(f.exited)
	src := &chanReader{f: f}
	var (
		r   io.Reader
		err error
	)
	switch kind {
	case "inflate":
		r, err = zlib.NewReader(src)
	case "gunzip":
		r, err = gzip.NewReader(src)
	case "inflateRaw":
		r = flate.NewReader(src)
	case "unzip":
		// The first two bytes say gzip or zlib.
		var head [2]byte
		if _, err = io.ReadFull(src, head[:]); err == nil {
			both := io.MultiReader(bytes.NewReader(head[:]), src)
			if head[0] == 0x1f && head[1] == 0x8b {
				r, err = gzip.NewReader(both)
			} else {
				r, err = zlib.NewReader(both)
			}
		}
	}
	if err == nil {
		_, err = io.Copy(outWriter{f}, r)
	}
	if err != nil {
		f.mu.Lock()
		f.code = zlibCode(err)
		f.mu.Unlock()
	}
	// Drain what is still sent, so write and end never block on a
	// decompressor that stopped early.
	go func() {
		for range f.in {
		}
	}()
}

// write hands b to the decompressor and returns the output so far.
func (f *inflater) write(b []byte) []byte {
	if len(b) > 0 && !f.closed {
		select {
		case f.in <- bytes.Clone(b):
			select {
			case <-f.used:
			case <-f.exited:
			}
		case <-f.exited:
		}
	}
	return f.take()
}

// end closes the input and returns the rest of the output, or Node's
// error code.
func (f *inflater) end() ([]byte, string) {
	f.close()
	<-f.exited
	out := f.take()
	f.mu.Lock()
	defer f.mu.Unlock()
	return out, f.code
}

// close ends the input; it may run from a cleanup, once nothing else
// can reach the stream.
func (f *inflater) close() {
	f.once.Do(func() {
		f.closed = true
		close(f.in)
	})
}

func (f *inflater) take() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := bytes.Clone(f.out.Bytes())
	f.out.Reset()
	return out
}
