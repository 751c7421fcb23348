package worker

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/dop251/goja"
	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"
	kzlib "github.com/klauspost/compress/zlib"
)

// CompressionStream and DecompressionStream (prelude/36_compression.js) on
// Go's compress packages. A compressor writes into a buffer that each
// call drains. A decompressor is a pull-based Go reader fed from pushed
// chunks: it runs on its own goroutine, and each push waits until the
// reader has used all the input and asks for more (or has finished), so a
// call returns all the output that input produced.

var (
	errTrailing   = errors.New("Trailing bytes after end of compressed data")
	errIncomplete = errors.New("Called close() on a decompression stream with incomplete data")
	errBadData    = errors.New("Decompression failed.")
	errEnded      = errors.New("The compression stream has already ended.")
)

type compressor struct {
	buf  bytes.Buffer
	w    resetWriter
	pool *sync.Pool // where w goes back once the stream has ended
}

// resetWriter is what klauspost's gzip, zlib and flate writers share.
type resetWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// A compressor's state is about 1 MiB (klauspost's encoder tables), so
// writers are pooled per format: a CompressionStream that reaches its end
// hands its writer back, and the next one resets it instead of making one.
var (
	gzipWriters  = sync.Pool{New: func() any { return kgzip.NewWriter(io.Discard) }}
	zlibWriters  = sync.Pool{New: func() any { return kzlib.NewWriter(io.Discard) }}
	flateWriters = sync.Pool{New: func() any {
		w, _ := kflate.NewWriter(io.Discard, kflate.DefaultCompression)
		return w
	}}
)

func newStreamCompressor(format string) *compressor {
	c := &compressor{pool: &flateWriters}
	switch format {
	case "gzip":
		c.pool = &gzipWriters
	case "deflate":
		c.pool = &zlibWriters
	}
	c.w = c.pool.Get().(resetWriter)
	c.w.Reset(&c.buf)
	return c
}

// release returns the writer to its pool (once, after Close).
func (c *compressor) release() {
	if c.w != nil {
		c.w.Reset(io.Discard)
		c.pool.Put(c.w)
		c.w = nil
	}
}

// takeOutput hands out what the writer has produced: a large output's
// buffer itself (the next output starts a new one), a small one copied.
func takeOutput(buf *bytes.Buffer) []byte {
	if buf.Len() < 4<<10 {
		out := bytes.Clone(buf.Bytes())
		buf.Reset()
		return out
	}
	out := buf.Bytes()
	*buf = bytes.Buffer{}
	return out
}

// inflateState is shared by a decompressor and its goroutine; it must not
// point back at the decompressor, so an abandoned one can be collected
// (its cleanup ends the goroutine).
type inflateState struct {
	in    chan []byte   // input chunks; closed at the end of input
	need  chan struct{} // the reader wants input; closed when it has finished
	cur   []byte
	owes  bool // a chunk was taken since the last request for input
	out   bytes.Buffer
	err   error
	ended bool
}

type inputCloser struct {
	once sync.Once
	in   chan []byte
}

func (c *inputCloser) close() { c.once.Do(func() { close(c.in) }) }

type decompressor struct {
	st     *inflateState
	closer *inputCloser
	done   bool
}

func (st *inflateState) ReadByte() (byte, error) {
	for len(st.cur) == 0 {
		if st.owes {
			st.owes = false
			st.need <- struct{}{}
		}
		chunk, ok := <-st.in
		if !ok {
			return 0, io.EOF
		}
		st.cur, st.owes = chunk, true
	}
	b := st.cur[0]
	st.cur = st.cur[1:]
	return b, nil
}

func (st *inflateState) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	b, err := st.ReadByte()
	if err != nil {
		return 0, err
	}
	p[0] = b
	n := 1
	m := copy(p[1:], st.cur)
	st.cur = st.cur[m:]
	return n + m, nil
}

func (st *inflateState) run(format string) {
	defer close(st.need)
	var r io.Reader
	var err error
	switch format {
	case "gzip":
		var g *gzip.Reader
		if g, err = gzip.NewReader(st); err == nil {
			g.Multistream(false)
			r = g
		}
	case "deflate":
		r, err = zlib.NewReader(st)
	default:
		r = flate.NewReader(st)
	}
	if err == nil {
		var buf [32 << 10]byte
		for {
			var n int
			n, err = r.Read(buf[:])
			st.out.Write(buf[:n])
			if err != nil {
				break
			}
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		if len(st.cur) > 0 {
			st.err = errTrailing
		}
	case errors.Is(err, io.ErrUnexpectedEOF):
		st.err = errIncomplete
	default:
		st.err = errBadData
	}
	st.ended = true
}

// push feeds data (nil: the end of input) and returns the output so far.
func (d *decompressor) push(data []byte, end bool) ([]byte, error) {
	st := d.st
	if !d.done {
		if end {
			d.closer.close()
			<-st.need
		} else if len(data) > 0 {
			st.in <- data
			<-st.need
		}
		if st.ended {
			d.done = true
		}
	} else if len(data) > 0 && st.err == nil {
		st.err = errTrailing
	}
	out := takeOutput(&st.out)
	if d.done && st.err != nil {
		return out, st.err
	}
	return out, nil
}

func newDecompressor(format string) *decompressor {
	st := &inflateState{in: make(chan []byte), need: make(chan struct{})}
	d := &decompressor{st: st, closer: &inputCloser{in: st.in}}
	runtime.AddCleanup(d, func(c *inputCloser) { c.close() }, d.closer)
	go st.run(format)
	return d
}

func registerCompressNatives(set func(string, nativeFunc)) {
	// zNew(format, compress) -> a (de)compressor
	set("zNew", func(iso *isolate, call goja.FunctionCall) goja.Value {
		format := call.Argument(0).String()
		if !call.Argument(1).ToBoolean() {
			return iso.vm.ToValue(newDecompressor(format))
		}
		// klauspost/compress's writers (a dependency already, through
		// minio-go): the same formats as Go's, about twice as fast at
		// the default level, nearer zlib, which workerd uses.
		return iso.vm.ToValue(newStreamCompressor(format))
	})
	// zPush(z, bytes, end) -> [output ArrayBuffer, error message or null]
	set("zPush", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		data, end := iso.bytesArg(call.Argument(1)), call.Argument(2).ToBoolean()
		var out []byte
		var err error
		switch z := call.Argument(0).Export().(type) {
		case *compressor:
			if z.w == nil {
				err = errEnded
				break
			}
			if len(data) > 0 {
				_, err = z.w.Write(data)
			}
			if end && err == nil {
				err = z.w.Close()
			}
			if end || err != nil {
				z.release()
			}
			out = takeOutput(&z.buf)
		case *decompressor:
			// The reader keeps no reference to data after push returns, but
			// the caller's buffer may change afterwards: copy it.
			out, err = z.push(bytes.Clone(data), end)
		}
		msg := goja.Null()
		if err != nil {
			msg = vm.ToValue(err.Error())
		}
		return vm.NewArray(vm.NewArrayBuffer(out), msg)
	})
}
