package worker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"time"
	"unicode/utf8"
)

// The structured-clone wire format: how a JavaScript value crosses an
// isolate boundary (RPC arguments and results) and how Durable Object
// storage keeps values (the bytes cell.DB stores). wire_goja.go writes and
// reads it for JavaScript values inside isolates; Serialize and
// Deserialize are the same format for Go values. The bytes are a contract
// of stored data: change them only with a new version byte.
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

// maxWireDepth bounds nesting, so a hostile or cyclic value cannot
// exhaust the stack.
const maxWireDepth = 10000

// Undefined is JavaScript's undefined (null is nil).
type Undefined struct{}

// JSMap is a JavaScript Map: Keys[i] maps to Values[i], in insertion order.
type JSMap struct {
	Keys, Values []any
}

// JSSet is a JavaScript Set, in insertion order.
type JSSet struct {
	Values []any
}

// JSRegExp is a JavaScript RegExp.
type JSRegExp struct {
	Source, Flags string
}

// JSTypedArray is a typed array or DataView over a copy of the bytes it
// views. Type is the constructor name ("Uint8Array", "DataView", ...).
type JSTypedArray struct {
	Type string
	Data []byte
}

// JSError is a JavaScript Error (or DOMException, with DOMException set).
type JSError struct {
	Name         string // Error, TypeError, ... (for a DOMException: its name)
	Message      string
	Stack        string // "" when absent
	Cause        any    // nil when absent
	DOMException bool
}

func (e *JSError) Error() string { return e.Name + ": " + e.Message }

// JSBlob is a Blob, or a File when File is set.
type JSBlob struct {
	Type         string
	Data         []byte
	File         bool
	Name         string  // File only
	LastModified float64 // File only, ms since the epoch
}

var viewKinds = []string{"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
	"Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array", "DataView"}

var standardErrors = map[string]bool{"Error": true, "EvalError": true, "RangeError": true,
	"ReferenceError": true, "SyntaxError": true, "TypeError": true, "URIError": true}

// Serialize encodes a Go value in the wire format. It accepts nil,
// Undefined, bool, every integer and float type, string, *big.Int,
// time.Time (a Date), []byte (an ArrayBuffer), []any, map[string]any
// (keys in sorted order), and pointers to JSMap, JSSet, JSRegExp,
// JSTypedArray, JSError and JSBlob. Go values have no identity, so shared
// references are written twice; a cycle through a pointer type is an
// error.
func Serialize(v any) ([]byte, error) {
	w := &wireWriter{buf: []byte{wireVersion}, active: map[any]bool{}}
	if err := w.value(v); err != nil {
		return nil, fmt.Errorf("serialize: %w", err)
	}
	return w.buf, nil
}

type wireWriter struct {
	buf    []byte
	active map[any]bool // pointers being written (cycle check)
	depth  int
}

func (w *wireWriter) varint(n uint64) { w.buf = binary.AppendUvarint(w.buf, n) }
func (w *wireWriter) str(s string) {
	w.varint(uint64(len(s)))
	w.buf = append(w.buf, s...)
}
func (w *wireWriter) bytes(b []byte) {
	w.varint(uint64(len(b)))
	w.buf = append(w.buf, b...)
}
func (w *wireWriter) f64(f float64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(f))
}

func (w *wireWriter) number(f float64) {
	if f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32 && !(f == 0 && math.Signbit(f)) {
		n := int64(f)
		w.buf = append(w.buf, 'i')
		w.varint(uint64((n << 1) ^ (n >> 63)))
		return
	}
	w.buf = append(w.buf, 'd')
	w.f64(f)
}

func (w *wireWriter) enter(p any) error {
	if w.active[p] {
		return errors.New("cycle in value")
	}
	w.active[p] = true
	return nil
}

func (w *wireWriter) value(v any) error {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxWireDepth {
		return errors.New("value nested too deeply (or a cycle)")
	}
	switch x := v.(type) {
	case nil:
		w.buf = append(w.buf, 'n')
	case Undefined:
		w.buf = append(w.buf, 'u')
	case bool:
		if x {
			w.buf = append(w.buf, 'T')
		} else {
			w.buf = append(w.buf, 'F')
		}
	case string:
		w.buf = append(w.buf, 's')
		w.str(x)
	case *big.Int:
		w.buf = append(w.buf, 'g')
		if x.Sign() < 0 {
			w.buf = append(w.buf, 1)
		} else {
			w.buf = append(w.buf, 0)
		}
		w.str(new(big.Int).Abs(x).Text(16))
	case time.Time:
		w.buf = append(w.buf, 'D')
		w.f64(float64(x.UnixMilli()))
	case []byte:
		w.buf = append(w.buf, 'B')
		w.bytes(x)
	case []any:
		w.buf = append(w.buf, 'a')
		w.varint(uint64(len(x)))
		for _, e := range x {
			if err := w.value(e); err != nil {
				return err
			}
		}
	case map[string]any:
		p := reflect.ValueOf(x).UnsafePointer()
		if err := w.enter(p); err != nil {
			return err
		}
		defer delete(w.active, p)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.buf = append(w.buf, 'o')
		w.varint(uint64(len(keys)))
		for _, k := range keys {
			w.str(k)
			if err := w.value(x[k]); err != nil {
				return err
			}
		}
	case *JSMap:
		if len(x.Keys) != len(x.Values) {
			return errors.New("JSMap: Keys and Values differ in length")
		}
		if err := w.enter(x); err != nil {
			return err
		}
		defer delete(w.active, x)
		w.buf = append(w.buf, 'M')
		w.varint(uint64(len(x.Keys)))
		for i := range x.Keys {
			if err := w.value(x.Keys[i]); err != nil {
				return err
			}
			if err := w.value(x.Values[i]); err != nil {
				return err
			}
		}
	case *JSSet:
		if err := w.enter(x); err != nil {
			return err
		}
		defer delete(w.active, x)
		w.buf = append(w.buf, 'S')
		w.varint(uint64(len(x.Values)))
		for _, e := range x.Values {
			if err := w.value(e); err != nil {
				return err
			}
		}
	case *JSRegExp:
		w.buf = append(w.buf, 'R')
		w.str(x.Source)
		w.str(x.Flags)
	case *JSTypedArray:
		kind := -1
		for i, k := range viewKinds {
			if k == x.Type {
				kind = i
			}
		}
		if kind < 0 {
			return fmt.Errorf("unknown typed array type %q", x.Type)
		}
		size := 1
		switch x.Type {
		case "Int16Array", "Uint16Array":
			size = 2
		case "Int32Array", "Uint32Array", "Float32Array":
			size = 4
		case "Float64Array", "BigInt64Array", "BigUint64Array":
			size = 8
		}
		if len(x.Data)%size != 0 {
			return fmt.Errorf("%s: %d bytes is not a whole number of elements", x.Type, len(x.Data))
		}
		w.buf = append(w.buf, 'v', byte(kind), 'B')
		w.bytes(x.Data)
		w.varint(0)
		w.varint(uint64(len(x.Data) / size))
	case *JSError:
		if err := w.enter(x); err != nil {
			return err
		}
		defer delete(w.active, x)
		if x.DOMException {
			w.buf = append(w.buf, 'X')
			w.str(x.Name)
			w.str(x.Message)
			return nil
		}
		name := x.Name
		if !standardErrors[name] {
			name = "Error"
		}
		flags := byte(1)
		if x.Stack != "" {
			flags |= 2
		}
		if x.Cause != nil {
			flags |= 4
		}
		w.buf = append(w.buf, 'E')
		w.str(name)
		w.buf = append(w.buf, flags)
		w.str(x.Message)
		if x.Stack != "" {
			w.str(x.Stack)
		}
		if x.Cause != nil {
			return w.value(x.Cause)
		}
	case *JSBlob:
		if x.File {
			w.buf = append(w.buf, 'f')
			w.str(x.Name)
			w.str(x.Type)
			w.f64(x.LastModified)
		} else {
			w.buf = append(w.buf, 'L')
			w.str(x.Type)
		}
		w.bytes(x.Data)
	default:
		return w.reflectValue(v)
	}
	return nil
}

// reflectValue handles the numeric kinds.
func (w *wireWriter) reflectValue(v any) error {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.number(float64(rv.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.number(float64(rv.Uint()))
	case reflect.Float32, reflect.Float64:
		w.number(rv.Float())
	default:
		return fmt.Errorf("unsupported Go type %T", v)
	}
	return nil
}

// Deserialize decodes the wire format into Go values: nil (null),
// Undefined, bool, float64, string, *big.Int, time.Time (UTC), []byte,
// []any, map[string]any, and pointers to JSMap, JSSet, JSRegExp,
// JSTypedArray, JSError and JSBlob. Array holes become Undefined; a
// primitive wrapper object becomes its primitive. Shared references decode
// to the same Go value where Go allows it (maps, slices, pointers).
func Deserialize(data []byte) (any, error) {
	if len(data) == 0 || data[0] != wireVersion {
		return nil, errors.New("deserialize: not in wire format version 1")
	}
	r := &wireReader{b: data, p: 1}
	v, err := r.value()
	if err != nil {
		return nil, fmt.Errorf("deserialize: %w", err)
	}
	if r.p != len(data) {
		return nil, fmt.Errorf("deserialize: %d trailing bytes", len(data)-r.p)
	}
	return v, nil
}

type wireReader struct {
	b     []byte
	p     int
	refs  []any
	depth int
}

var errTruncated = errors.New("truncated value")

func (r *wireReader) byte() (byte, error) {
	if r.p >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.p]
	r.p++
	return c, nil
}

func (r *wireReader) varint() (uint64, error) {
	n, k := binary.Uvarint(r.b[r.p:])
	if k <= 0 {
		return 0, errTruncated
	}
	r.p += k
	return n, nil
}

func (r *wireReader) count() (int, error) {
	n, err := r.varint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.b)-r.p) { // every element takes at least a byte
		return 0, errTruncated
	}
	return int(n), nil
}

func (r *wireReader) raw() ([]byte, error) {
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

func (r *wireReader) str() (string, error) {
	b, err := r.raw()
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", errors.New("string is not UTF-8")
	}
	return string(b), nil
}

func (r *wireReader) f64() (float64, error) {
	if len(r.b)-r.p < 8 {
		return 0, errTruncated
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.p:]))
	r.p += 8
	return f, nil
}

// ref registers an object at the next index.
func (r *wireReader) ref(v any) any {
	r.refs = append(r.refs, v)
	return v
}

func (r *wireReader) value() (any, error) {
	r.depth++
	defer func() { r.depth-- }()
	if r.depth > maxWireDepth {
		return nil, errors.New("value nested too deeply")
	}
	tag, err := r.byte()
	if err != nil {
		return nil, err
	}
	switch tag {
	case 'u':
		return Undefined{}, nil
	case 'n':
		return nil, nil
	case 'T':
		return true, nil
	case 'F':
		return false, nil
	case 'i':
		z, err := r.varint()
		if err != nil {
			return nil, err
		}
		return float64(int64(z>>1) ^ -int64(z&1)), nil
	case 'd':
		return r.f64()
	case 's':
		return r.str()
	case 'g':
		sign, err := r.byte()
		if err != nil {
			return nil, err
		}
		hex, err := r.str()
		if err != nil {
			return nil, err
		}
		n, ok := new(big.Int).SetString(hex, 16)
		if !ok {
			return nil, fmt.Errorf("bad bigint %q", hex)
		}
		if sign == 1 {
			n.Neg(n)
		}
		return n, nil
	case 'w':
		idx := len(r.refs)
		r.refs = append(r.refs, nil)
		v, err := r.value()
		r.refs[idx] = v
		return v, err
	case 'D':
		ms, err := r.f64()
		if err != nil {
			return nil, err
		}
		return r.ref(time.UnixMilli(int64(ms)).UTC()), nil
	case 'R':
		src, err := r.str()
		if err != nil {
			return nil, err
		}
		flags, err := r.str()
		if err != nil {
			return nil, err
		}
		return r.ref(&JSRegExp{Source: src, Flags: flags}), nil
	case 'B':
		b, err := r.raw()
		if err != nil {
			return nil, err
		}
		return r.ref(append([]byte{}, b...)), nil
	case 'v':
		return r.view()
	case 'a':
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		arr := make([]any, n)
		r.ref(arr)
		for i := range arr {
			if r.p < len(r.b) && r.b[r.p] == 'h' {
				r.p++
				arr[i] = Undefined{}
				continue
			}
			if arr[i], err = r.value(); err != nil {
				return nil, err
			}
		}
		return arr, nil
	case 'o':
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		obj := make(map[string]any, n)
		r.ref(obj)
		for range n {
			k, err := r.str()
			if err != nil {
				return nil, err
			}
			if obj[k], err = r.value(); err != nil {
				return nil, err
			}
		}
		return obj, nil
	case 'M':
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		m := &JSMap{Keys: make([]any, 0, n), Values: make([]any, 0, n)}
		r.ref(m)
		for range n {
			k, err := r.value()
			if err != nil {
				return nil, err
			}
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			m.Keys, m.Values = append(m.Keys, k), append(m.Values, v)
		}
		return m, nil
	case 'S':
		n, err := r.count()
		if err != nil {
			return nil, err
		}
		s := &JSSet{Values: make([]any, 0, n)}
		r.ref(s)
		for range n {
			v, err := r.value()
			if err != nil {
				return nil, err
			}
			s.Values = append(s.Values, v)
		}
		return s, nil
	case 'E':
		return r.jsError()
	case 'X':
		name, err := r.str()
		if err != nil {
			return nil, err
		}
		msg, err := r.str()
		if err != nil {
			return nil, err
		}
		return r.ref(&JSError{Name: name, Message: msg, DOMException: true}), nil
	case 'L', 'f':
		b := &JSBlob{File: tag == 'f'}
		if b.File {
			if b.Name, err = r.str(); err != nil {
				return nil, err
			}
		}
		if b.Type, err = r.str(); err != nil {
			return nil, err
		}
		if b.File {
			if b.LastModified, err = r.f64(); err != nil {
				return nil, err
			}
		}
		data, err := r.raw()
		if err != nil {
			return nil, err
		}
		b.Data = append([]byte{}, data...)
		return r.ref(b), nil
	case 'r':
		n, err := r.varint()
		if err != nil {
			return nil, err
		}
		if n >= uint64(len(r.refs)) || r.refs[n] == nil {
			return nil, fmt.Errorf("bad back reference %d", n)
		}
		return r.refs[n], nil
	}
	return nil, fmt.Errorf("unknown tag 0x%02x at offset %d", tag, r.p-1)
}

func (r *wireReader) view() (any, error) {
	kind, err := r.byte()
	if err != nil {
		return nil, err
	}
	if int(kind) >= len(viewKinds) {
		return nil, fmt.Errorf("unknown view kind %d", kind)
	}
	idx := len(r.refs)
	r.refs = append(r.refs, nil)
	bufV, err := r.value()
	if err != nil {
		return nil, err
	}
	buf, ok := bufV.([]byte)
	if !ok {
		return nil, errors.New("view over something that is not an ArrayBuffer")
	}
	off, err := r.varint()
	if err != nil {
		return nil, err
	}
	n, err := r.varint()
	if err != nil {
		return nil, err
	}
	size := uint64(1)
	switch viewKinds[kind] {
	case "Int16Array", "Uint16Array":
		size = 2
	case "Int32Array", "Uint32Array", "Float32Array":
		size = 4
	case "Float64Array", "BigInt64Array", "BigUint64Array":
		size = 8
	}
	if n > uint64(len(buf)) || off > uint64(len(buf)) || off+n*size > uint64(len(buf)) {
		return nil, errors.New("view out of its buffer's bounds")
	}
	v := &JSTypedArray{Type: viewKinds[kind], Data: buf[off : off+n*size]}
	r.refs[idx] = v
	return v, nil
}

func (r *wireReader) jsError() (any, error) {
	name, err := r.str()
	if err != nil {
		return nil, err
	}
	flags, err := r.byte()
	if err != nil {
		return nil, err
	}
	e := &JSError{Name: name}
	if flags&1 != 0 {
		if e.Message, err = r.str(); err != nil {
			return nil, err
		}
	}
	if flags&2 != 0 {
		if e.Stack, err = r.str(); err != nil {
			return nil, err
		}
	}
	r.ref(e)
	if flags&4 != 0 {
		if e.Cause, err = r.value(); err != nil {
			return nil, err
		}
	}
	return e, nil
}
