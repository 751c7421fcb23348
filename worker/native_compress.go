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
)

type compressor struct {
	buf bytes.Buffer
	w   io.WriteCloser
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
	out := bytes.Clone(st.out.Bytes())
	st.out.Reset()
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
		c := &compressor{}
		switch format {
		// klauspost/compress's writers (a dependency already, through
		// minio-go): the same formats as Go's, about twice as fast at
		// the default level, nearer zlib, which workerd uses.
		case "gzip":
			c.w = kgzip.NewWriter(&c.buf)
		case "deflate":
			c.w = kzlib.NewWriter(&c.buf)
		default:
			c.w, _ = kflate.NewWriter(&c.buf, kflate.DefaultCompression)
		}
		return iso.vm.ToValue(c)
	})
	// zPush(z, bytes, end) -> [output ArrayBuffer, error message or null]
	set("zPush", func(iso *isolate, call goja.FunctionCall) goja.Value {
		vm := iso.vm
		data, end := iso.bytesArg(call.Argument(1)), call.Argument(2).ToBoolean()
		var out []byte
		var err error
		switch z := call.Argument(0).Export().(type) {
		case *compressor:
			if len(data) > 0 {
				_, err = z.w.Write(data)
			}
			if end && err == nil {
				err = z.w.Close()
			}
			out = bytes.Clone(z.buf.Bytes())
			z.buf.Reset()
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
