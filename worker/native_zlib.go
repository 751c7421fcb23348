package worker

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"runtime"

	"github.com/dop251/goja"
)

// node:zlib on Go's compress packages (prelude/88_node_zlib.js). Kinds:
// deflate, inflate, gzip, gunzip, deflateRaw, inflateRaw, unzip.

// zlibStream is one compressor or decompressor of a zlib stream object;
// each hands out its output as it is produced.
type zlibStream struct {
	kind string
	out  bytes.Buffer
	w    io.WriteCloser // compressors
	inf  *inflater      // decompressors (native_inflate.go)
}

func isCompressor(kind string) bool {
	return kind == "deflate" || kind == "gzip" || kind == "deflateRaw"
}

func newCompressor(kind string, level int, out io.Writer) (io.WriteCloser, error) {
	if level < -1 || level > 9 {
		level = -1
	}
	switch kind {
	case "deflate":
		return zlib.NewWriterLevel(out, level)
	case "gzip":
		w, err := gzip.NewWriterLevel(out, level)
		if err == nil {
			w.Header.OS = 3 // Unix, as zlib writes it
		}
		return w, err
	case "deflateRaw":
		return flate.NewWriter(out, level)
	}
	return nil, errors.New("unknown kind " + kind)
}

// inflate decompresses data of one kind; the error is one of Node's
// zlib codes (see zlibError in the prelude).
func inflate(kind string, data []byte) ([]byte, string) {
	var (
		r   io.Reader
		err error
	)
	src := bytes.NewReader(data)
	if kind == "unzip" {
		kind = "inflate"
		if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
			kind = "gunzip"
		}
	}
	switch kind {
	case "inflate":
		r, err = zlib.NewReader(src)
	case "gunzip":
		r, err = gzip.NewReader(src)
	case "inflateRaw":
		r = flate.NewReader(src)
	default:
		return nil, "kind"
	}
	if err != nil {
		return nil, zlibCode(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, zlibCode(err)
	}
	return out, ""
}

func zlibCode(err error) string {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "eof"
	case errors.Is(err, zlib.ErrHeader), errors.Is(err, gzip.ErrHeader):
		return "header"
	case errors.Is(err, zlib.ErrChecksum), errors.Is(err, gzip.ErrChecksum):
		return "checksum"
	case errors.As(err, &corrupt):
		return "data"
	}
	return "data"
}

func registerZlibNatives(set func(string, nativeFunc)) {
	ab := func(vm *goja.Runtime, b []byte) goja.Value { return vm.ToValue(vm.NewArrayBuffer(b)) }
	// zlibSync(kind, bytes, level) -> ArrayBuffer or an error code string
	set("zlibSync", func(iso *isolate, call goja.FunctionCall) goja.Value {
		kind, data := call.Argument(0).String(), iso.bytesArg(call.Argument(1))
		if !isCompressor(kind) {
			out, code := inflate(kind, data)
			if code != "" {
				return iso.vm.ToValue(code)
			}
			return ab(iso.vm, out)
		}
		var buf bytes.Buffer
		w, err := newCompressor(kind, int(call.Argument(2).ToInteger()), &buf)
		if err != nil {
			return iso.vm.ToValue("kind")
		}
		w.Write(data)
		w.Close()
		return ab(iso.vm, buf.Bytes())
	})
	// zlibNew(kind, level) -> handle or null
	set("zlibNew", func(iso *isolate, call goja.FunctionCall) goja.Value {
		z := &zlibStream{kind: call.Argument(0).String()}
		if isCompressor(z.kind) {
			w, err := newCompressor(z.kind, int(call.Argument(1).ToInteger()), &z.out)
			if err != nil {
				return goja.Null()
			}
			z.w = w
		} else {
			switch z.kind {
			case "inflate", "gunzip", "inflateRaw", "unzip":
			default:
				return goja.Null()
			}
			z.inf = newInflater(z.kind)
			// A stream the script drops without ending it must not keep its
			// goroutine waiting for input forever.
			runtime.AddCleanup(z, (*inflater).close, z.inf)
		}
		return iso.vm.ToValue(z)
	})
	// zlibWrite(handle, bytes, flush) -> ArrayBuffer of the output ready
	set("zlibWrite", func(iso *isolate, call goja.FunctionCall) goja.Value {
		z, _ := call.Argument(0).Export().(*zlibStream)
		if z == nil {
			return goja.Null()
		}
		data := iso.bytesArg(call.Argument(1))
		if z.inf != nil {
			return ab(iso.vm, z.inf.write(data))
		}
		z.w.Write(data)
		if call.Argument(2).ToBoolean() {
			if f, ok := z.w.(interface{ Flush() error }); ok {
				f.Flush()
			}
		}
		out := bytes.Clone(z.out.Bytes())
		z.out.Reset()
		return ab(iso.vm, out)
	})
	// zlibEnd(handle) -> ArrayBuffer of the rest, or an error code string
	set("zlibEnd", func(iso *isolate, call goja.FunctionCall) goja.Value {
		z, _ := call.Argument(0).Export().(*zlibStream)
		if z == nil {
			return iso.vm.ToValue("kind")
		}
		if z.inf != nil {
			out, code := z.inf.end()
			if code != "" {
				return iso.vm.ToValue(code)
			}
			return ab(iso.vm, out)
		}
		z.w.Close()
		return ab(iso.vm, bytes.Clone(z.out.Bytes()))
	})
}
