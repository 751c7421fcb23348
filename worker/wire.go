package worker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"unicode/utf8"
)

// The structured-clone wire format: how a JavaScript value crosses an
// isolate boundary (RPC arguments and results) and how Durable Object
// storage keeps values (the bytes cell.DB stores). This file is the
// format, once: its grammar, a writer with one method per production and
// a reader that parses the grammar (tags, lengths, back references,
// bounds, depth) and hands each value to a wireSink that builds it.
// wire_goja.go writes JavaScript values with the writer and builds them
// with a sink; tests build Go values with another sink. The bytes are a
// contract of stored data: change them only with a new version byte.
//
//	wire    = 0x01 value                      (format version 1)
//	value   = 'u'                             undefined
//	        | 'n'                             null
//	        | 'T' | 'F'                       true, false
//	        | 'i' zigzag-varint               integer in [-2^31, 2^31), not -0
//	        | 'd' float64                     any other number
//	        | 's' str                         string
//	        | 'g' sign-byte str               bigint: 0|1, then magnitude in hex
//	        | 'w' value                       Boolean/Number/String/BigInt wrapper object
//	        | 'D' float64                     Date (ms since the epoch)
//	        | 'R' str str                     RegExp: source, flags
//	        | 'B' bytes                       ArrayBuffer
//	        | 'v' kind value varint varint    view: kind byte, buffer, byteOffset, length
//	                                          (elements; bytes for DataView)
//	        | 'a' varint {value | 'h'}        Array: length, then each element or a hole
//	        | 'o' varint {str value}          Object: own enumerable string keys
//	        | 'M' varint {value value}        Map
//	        | 'S' varint {value}              Set
//	        | 'E' str flags [str] [str] [value]  Error: name, flags (1 message, 2 stack,
//	                                          4 cause), then those present
//	        | 'X' str str                     DOMException: name, message
//	        | 'L' str bytes                   Blob: type, data
//	        | 'f' str str float64 bytes       File: name, type, lastModified, data
//	        | 'r' varint                      the n-th object met so far (cycles, shared references)
//	str     = varint-length UTF-8
//	bytes   = varint-length octets
//	float64 = 8 bytes little endian
//
// Objects (everything but primitives) are numbered in the order they
// begin, parents before children; a view's number precedes its buffer's.
const wireVersion = 1

// The tags.
const (
	tagUndefined = 'u'
	tagNull      = 'n'
	tagTrue      = 'T'
	tagFalse     = 'F'
	tagInt       = 'i'
	tagDouble    = 'd'
	tagString    = 's'
	tagBigInt    = 'g'
	tagWrapper   = 'w'
	tagDate      = 'D'
	tagRegExp    = 'R'
	tagBuffer    = 'B'
	tagView      = 'v'
	tagArray     = 'a'
	tagHole      = 'h'
	tagObject    = 'o'
	tagMap       = 'M'
	tagSet       = 'S'
	tagError     = 'E'
	tagDOMEx     = 'X'
	tagBlob      = 'L'
	tagFile      = 'f'
	tagRef       = 'r'
)

// Error flags.
const (
	errHasMessage = 1
	errHasStack   = 2
	errHasCause   = 4
)

// maxWireDepth bounds nesting, so a hostile or cyclic value cannot
// exhaust the stack.
const maxWireDepth = 10000

// viewKinds are the view kinds, by kind byte.
var viewKinds = []string{"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
	"Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array", "DataView"}

// viewElementSize is the bytes of one element of a view kind (1 for a
// DataView, whose length counts bytes).
func viewElementSize(kind int) uint64 {
	switch viewKinds[kind] {
	case "Int16Array", "Uint16Array":
		return 2
	case "Int32Array", "Uint32Array", "Float32Array":
		return 4
	case "Float64Array", "BigInt64Array", "BigUint64Array":
		return 8
	}
	return 1
}

// standardErrors are the error names that survive a clone; any other
// name is written as "Error".
var standardErrors = map[string]bool{"Error": true, "EvalError": true, "RangeError": true,
	"ReferenceError": true, "SyntaxError": true, "TypeError": true, "URIError": true}

// wireWriter writes the format, one method per production. A container's
// method writes its head; the caller writes its members after it.
type wireWriter struct {
	buf   []byte
	depth int // the caller's nesting count, bounded by maxWireDepth
}

func newWireWriter() wireWriter { return wireWriter{buf: []byte{wireVersion}} }

func (w *wireWriter) tag(t byte)      { w.buf = append(w.buf, t) }
func (w *wireWriter) varint(n uint64) { w.buf = binary.AppendUvarint(w.buf, n) }
func (w *wireWriter) str(s string)    { w.varint(uint64(len(s))); w.buf = append(w.buf, s...) }
func (w *wireWriter) bytes(b []byte)  { w.varint(uint64(len(b))); w.buf = append(w.buf, b...) }
func (w *wireWriter) f64(f float64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(f))
}
func (w *wireWriter) undefined()              { w.tag(tagUndefined) }
func (w *wireWriter) null()                   { w.tag(tagNull) }
func (w *wireWriter) text(s string)           { w.tag(tagString); w.str(s) }
func (w *wireWriter) wrapper()                { w.tag(tagWrapper) } // then the primitive
func (w *wireWriter) date(ms float64)         { w.tag(tagDate); w.f64(ms) }
func (w *wireWriter) buffer(b []byte)         { w.tag(tagBuffer); w.bytes(b) }
func (w *wireWriter) array(n int)             { w.tag(tagArray); w.varint(uint64(n)) } // then n elements or holes
func (w *wireWriter) hole()                   { w.tag(tagHole) }
func (w *wireWriter) object(n int)            { w.tag(tagObject); w.varint(uint64(n)) } // then n key, value
func (w *wireWriter) key(k string)            { w.str(k) }
func (w *wireWriter) mapOf(n int)             { w.tag(tagMap); w.varint(uint64(n)) } // then n key, value
func (w *wireWriter) setOf(n int)             { w.tag(tagSet); w.varint(uint64(n)) } // then n values
func (w *wireWriter) backRef(n uint64)        { w.tag(tagRef); w.varint(n) }
func (w *wireWriter) view(kind int)           { w.tag(tagView); w.buf = append(w.buf, byte(kind)) } // then the buffer, then viewRange
func (w *wireWriter) viewRange(off, n uint64) { w.varint(off); w.varint(n) }

func (w *wireWriter) boolean(b bool) {
	if b {
		w.tag(tagTrue)
	} else {
		w.tag(tagFalse)
	}
}

func (w *wireWriter) number(f float64) {
	if f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32 && !(f == 0 && math.Signbit(f)) {
		n := int64(f)
		w.tag(tagInt)
		w.varint(uint64((n << 1) ^ (n >> 63)))
		return
	}
	w.tag(tagDouble)
	w.f64(f)
}

func (w *wireWriter) bigint(x *big.Int) {
	w.tag(tagBigInt)
	if x.Sign() < 0 {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
	w.str(new(big.Int).Abs(x).Text(16))
}

func (w *wireWriter) regexp(source, flags string) {
	w.tag(tagRegExp)
	w.str(source)
	w.str(flags)
}

// errorHead writes an Error's name (a non-standard one as "Error"),
// message and stack when given; the cause, when hasCause, follows.
func (w *wireWriter) errorHead(name string, message, stack *string, hasCause bool) {
	if !standardErrors[name] {
		name = "Error"
	}
	flags := byte(0)
	if message != nil {
		flags |= errHasMessage
	}
	if stack != nil {
		flags |= errHasStack
	}
	if hasCause {
		flags |= errHasCause
	}
	w.tag(tagError)
	w.str(name)
	w.buf = append(w.buf, flags)
	if message != nil {
		w.str(*message)
	}
	if stack != nil {
		w.str(*stack)
	}
}

func (w *wireWriter) domException(name, message string) {
	w.tag(tagDOMEx)
	w.str(name)
	w.str(message)
}

func (w *wireWriter) blob(typ string, data []byte) {
	w.tag(tagBlob)
	w.str(typ)
	w.bytes(data)
}

func (w *wireWriter) file(name, typ string, lastModified float64, data []byte) {
	w.tag(tagFile)
	w.str(name)
	w.str(typ)
	w.f64(lastModified)
	w.bytes(data)
}

// wireSink builds the values the reader parses. Objects are numbered by
// the reader; a container is created (and numbered) before its members,
// which are added one by one. A method that returns an error stops the
// read.
type wireSink[V any] interface {
	undefined() V
	null() V
	boolean(bool) V
	number(float64) V
	text(string) V
	bigint(*big.Int) V
	wrapper(primitive V) V
	date(ms float64) V
	regexp(source, flags string) (V, error)
	buffer(data []byte) V // data is the reader's: copy it
	// view is kind's view of buf (a buffer the reader parsed), whose
	// elements off .. off+n the reader has checked are inside it.
	view(kind int, buf V, off, n uint64) (V, error)
	array(n int) V // n holes
	arraySet(arr V, i int, el V) error
	object(n int) V
	objectSet(obj V, key string, v V) error
	mapOf(n int) V
	mapSet(m V, key, v V) error
	setOf(n int) V
	setAdd(s V, v V) error
	jsError(name string, message, stack *string) (V, error)
	errorCause(e V, cause V) error
	domException(name, message string) V
	blob(typ string, data []byte) V // data is the reader's: copy it
	file(name, typ string, lastModified float64, data []byte) V
}

var errTruncated = errors.New("truncated value")

// readWire parses data into a value built by sink.
func readWire[V any](data []byte, sink wireSink[V]) (V, error) {
	var zero V
	if len(data) == 0 || data[0] != wireVersion {
		return zero, errors.New("not in wire format version 1")
	}
	r := &wireReader[V]{b: data, p: 1, sink: sink}
	v, err := r.value()
	if err != nil {
		return zero, err
	}
	if r.p != len(data) {
		return zero, fmt.Errorf("%d trailing bytes", len(data)-r.p)
	}
	return v, nil
}

type wireReader[V any] struct {
	b       []byte
	p       int
	sink    wireSink[V]
	refs    []V
	known   []bool // refs[i] is built (a view's or wrapper's slot is taken first)
	bufLen  []int  // the byte length of refs[i] if it is a buffer, else -1
	lastBuf int    // the byte length of the value just read if a buffer, else -1
	depth   int
}

func (r *wireReader[V]) byte() (byte, error) {
	if r.p >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.p]
	r.p++
	return c, nil
}

func (r *wireReader[V]) varint() (uint64, error) {
	n, k := binary.Uvarint(r.b[r.p:])
	if k <= 0 {
		return 0, errTruncated
	}
	r.p += k
	return n, nil
}

// count reads a member count, which cannot exceed the bytes left (every
// member takes at least one).
func (r *wireReader[V]) count() (int, error) {
	n, err := r.varint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.b)-r.p) {
		return 0, errTruncated
	}
	return int(n), nil
}

func (r *wireReader[V]) raw() ([]byte, error) {
	n, err := r.varint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)-r.p) {
		return nil, errTruncated
	}
	out := r.b[r.p : r.p+int(n)]
	r.p += int(n)
	return out, nil
}

func (r *wireReader[V]) str() (string, error) {
	b, err := r.raw()
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", errors.New("string is not UTF-8")
	}
	return string(b), nil
}

func (r *wireReader[V]) f64() (float64, error) {
	if len(r.b)-r.p < 8 {
		return 0, errTruncated
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.p:]))
	r.p += 8
	return f, nil
}

// slot takes the next object number, to be filled by fill.
func (r *wireReader[V]) slot() int {
	var zero V
	r.refs = append(r.refs, zero)
	r.known = append(r.known, false)
	r.bufLen = append(r.bufLen, -1)
	return len(r.refs) - 1
}

func (r *wireReader[V]) fill(i int, v V) V {
	r.refs[i], r.known[i] = v, true
	return v
}

// object numbers v, a value just created.
func (r *wireReader[V]) object(v V) V { return r.fill(r.slot(), v) }

func (r *wireReader[V]) value() (V, error) {
	var zero V
	lastBuf := -1 // what r.lastBuf says once this value is read
	r.depth++
	defer func() { r.depth--; r.lastBuf = lastBuf }()
	if r.depth > maxWireDepth {
		return zero, errors.New("value nested too deeply")
	}
	s := r.sink
	tag, err := r.byte()
	if err != nil {
		return zero, err
	}
	switch tag {
	case tagUndefined:
		return s.undefined(), nil
	case tagNull:
		return s.null(), nil
	case tagTrue:
		return s.boolean(true), nil
	case tagFalse:
		return s.boolean(false), nil
	case tagInt:
		z, err := r.varint()
		if err != nil {
			return zero, err
		}
		return s.number(float64(int64(z>>1) ^ -int64(z&1))), nil
	case tagDouble:
		f, err := r.f64()
		if err != nil {
			return zero, err
		}
		return s.number(f), nil
	case tagString:
		str, err := r.str()
		if err != nil {
			return zero, err
		}
		return s.text(str), nil
	case tagBigInt:
		sign, err := r.byte()
		if err != nil {
			return zero, err
		}
		hex, err := r.str()
		if err != nil {
			return zero, err
		}
		n, ok := new(big.Int).SetString(hex, 16)
		if !ok || sign > 1 {
			return zero, fmt.Errorf("bad bigint %d %q", sign, hex)
		}
		if sign == 1 {
			n.Neg(n)
		}
		return s.bigint(n), nil
	case tagWrapper:
		i := r.slot()
		prim, err := r.value()
		if err != nil {
			return zero, err
		}
		return r.fill(i, s.wrapper(prim)), nil
	case tagDate:
		ms, err := r.f64()
		if err != nil {
			return zero, err
		}
		return r.object(s.date(ms)), nil
	case tagRegExp:
		src, err := r.str()
		if err != nil {
			return zero, err
		}
		flags, err := r.str()
		if err != nil {
			return zero, err
		}
		v, err := s.regexp(src, flags)
		if err != nil {
			return zero, err
		}
		return r.object(v), nil
	case tagBuffer:
		b, err := r.raw()
		if err != nil {
			return zero, err
		}
		v := r.object(s.buffer(b))
		r.bufLen[len(r.bufLen)-1] = len(b)
		lastBuf = len(b)
		return v, nil
	case tagView:
		return r.view()
	case tagArray:
		n, err := r.count()
		if err != nil {
			return zero, err
		}
		arr := r.object(s.array(n))
		for i := range n {
			if r.p < len(r.b) && r.b[r.p] == tagHole {
				r.p++
				continue
			}
			el, err := r.value()
			if err != nil {
				return zero, err
			}
			if err := s.arraySet(arr, i, el); err != nil {
				return zero, err
			}
		}
		return arr, nil
	case tagObject:
		n, err := r.count()
		if err != nil {
			return zero, err
		}
		obj := r.object(s.object(n))
		for range n {
			k, err := r.str()
			if err != nil {
				return zero, err
			}
			v, err := r.value()
			if err != nil {
				return zero, err
			}
			if err := s.objectSet(obj, k, v); err != nil {
				return zero, err
			}
		}
		return obj, nil
	case tagMap:
		n, err := r.count()
		if err != nil {
			return zero, err
		}
		m := r.object(s.mapOf(n))
		for range n {
			k, err := r.value()
			if err != nil {
				return zero, err
			}
			v, err := r.value()
			if err != nil {
				return zero, err
			}
			if err := s.mapSet(m, k, v); err != nil {
				return zero, err
			}
		}
		return m, nil
	case tagSet:
		n, err := r.count()
		if err != nil {
			return zero, err
		}
		set := r.object(s.setOf(n))
		for range n {
			v, err := r.value()
			if err != nil {
				return zero, err
			}
			if err := s.setAdd(set, v); err != nil {
				return zero, err
			}
		}
		return set, nil
	case tagError:
		return r.jsError()
	case tagDOMEx:
		name, err := r.str()
		if err != nil {
			return zero, err
		}
		msg, err := r.str()
		if err != nil {
			return zero, err
		}
		return r.object(s.domException(name, msg)), nil
	case tagBlob, tagFile:
		var name, typ string
		var lastModified float64
		if tag == tagFile {
			if name, err = r.str(); err != nil {
				return zero, err
			}
		}
		if typ, err = r.str(); err != nil {
			return zero, err
		}
		if tag == tagFile {
			if lastModified, err = r.f64(); err != nil {
				return zero, err
			}
		}
		data, err := r.raw()
		if err != nil {
			return zero, err
		}
		if tag == tagFile {
			return r.object(s.file(name, typ, lastModified, data)), nil
		}
		return r.object(s.blob(typ, data)), nil
	case tagRef:
		n, err := r.varint()
		if err != nil {
			return zero, err
		}
		if n >= uint64(len(r.refs)) || !r.known[n] {
			return zero, fmt.Errorf("bad back reference %d", n)
		}
		lastBuf = r.bufLen[n]
		return r.refs[n], nil
	}
	return zero, fmt.Errorf("unknown tag 0x%02x at offset %d", tag, r.p-1)
}

func (r *wireReader[V]) view() (V, error) {
	var zero V
	kind, err := r.byte()
	if err != nil {
		return zero, err
	}
	if int(kind) >= len(viewKinds) {
		return zero, fmt.Errorf("unknown view kind %d", kind)
	}
	i := r.slot()
	buf, err := r.value()
	if err != nil {
		return zero, err
	}
	size := r.lastBuf
	if size < 0 {
		return zero, errors.New("view over something that is not an ArrayBuffer")
	}
	off, err := r.varint()
	if err != nil {
		return zero, err
	}
	n, err := r.varint()
	if err != nil {
		return zero, err
	}
	el := viewElementSize(int(kind))
	if n > uint64(size) || off > uint64(size) || off+n*el > uint64(size) || (el > 1 && off%el != 0) {
		return zero, errors.New("view out of its buffer's bounds")
	}
	v, err := r.sink.view(int(kind), buf, off, n)
	if err != nil {
		return zero, err
	}
	return r.fill(i, v), nil
}

func (r *wireReader[V]) jsError() (V, error) {
	var zero V
	name, err := r.str()
	if err != nil {
		return zero, err
	}
	flags, err := r.byte()
	if err != nil {
		return zero, err
	}
	var message, stack *string
	if flags&errHasMessage != 0 {
		m, err := r.str()
		if err != nil {
			return zero, err
		}
		message = &m
	}
	if flags&errHasStack != 0 {
		s, err := r.str()
		if err != nil {
			return zero, err
		}
		stack = &s
	}
	e, err := r.sink.jsError(name, message, stack)
	if err != nil {
		return zero, err
	}
	r.object(e)
	if flags&errHasCause != 0 {
		cause, err := r.value()
		if err != nil {
			return zero, err
		}
		if err := r.sink.errorCause(e, cause); err != nil {
			return zero, err
		}
	}
	return e, nil
}
