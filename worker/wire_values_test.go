package worker

import (
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"time"
)

// The wire format for Go values: what tests (here and in worker_test)
// write a Durable Object's RPC arguments and stored values with, and read
// its answers with. It is the format of wire.go — the same writer and
// reader — with Go values on the outside; the runtime only ever uses the
// JavaScript side (wire_goja.go).

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

// Serialize encodes a Go value in the wire format. It accepts nil,
// Undefined, bool, every integer and float type, string, *big.Int,
// time.Time (a Date), []byte (an ArrayBuffer), []any, map[string]any
// (keys in sorted order), and pointers to JSMap, JSSet, JSRegExp,
// JSTypedArray, JSError and JSBlob. Go values have no identity, so shared
// references are written twice; a cycle through a pointer type is an
// error.
func Serialize(v any) ([]byte, error) {
	e := &goEncoder{w: newWireWriter(), active: map[any]bool{}}
	if err := e.value(v); err != nil {
		return nil, fmt.Errorf("serialize: %w", err)
	}
	return e.w.buf, nil
}

type goEncoder struct {
	w      wireWriter
	active map[any]bool // pointers being written (cycle check)
}

func (e *goEncoder) enter(p any) error {
	if e.active[p] {
		return errors.New("cycle in value")
	}
	e.active[p] = true
	return nil
}

func (e *goEncoder) value(v any) error {
	w := &e.w
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > maxWireDepth {
		return errors.New("value nested too deeply (or a cycle)")
	}
	switch x := v.(type) {
	case nil:
		w.null()
	case Undefined:
		w.undefined()
	case bool:
		w.boolean(x)
	case string:
		w.text(x)
	case *big.Int:
		w.bigint(x)
	case time.Time:
		w.date(float64(x.UnixMilli()))
	case []byte:
		w.buffer(x)
	case []any:
		w.array(len(x))
		for _, el := range x {
			if err := e.value(el); err != nil {
				return err
			}
		}
	case map[string]any:
		p := reflect.ValueOf(x).UnsafePointer()
		if err := e.enter(p); err != nil {
			return err
		}
		defer delete(e.active, p)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.object(len(keys))
		for _, k := range keys {
			w.key(k)
			if err := e.value(x[k]); err != nil {
				return err
			}
		}
	case *JSMap:
		if len(x.Keys) != len(x.Values) {
			return errors.New("JSMap: Keys and Values differ in length")
		}
		if err := e.enter(x); err != nil {
			return err
		}
		defer delete(e.active, x)
		w.mapOf(len(x.Keys))
		for i := range x.Keys {
			if err := e.value(x.Keys[i]); err != nil {
				return err
			}
			if err := e.value(x.Values[i]); err != nil {
				return err
			}
		}
	case *JSSet:
		if err := e.enter(x); err != nil {
			return err
		}
		defer delete(e.active, x)
		w.setOf(len(x.Values))
		for _, el := range x.Values {
			if err := e.value(el); err != nil {
				return err
			}
		}
	case *JSRegExp:
		w.regexp(x.Source, x.Flags)
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
		size := viewElementSize(kind)
		if uint64(len(x.Data))%size != 0 {
			return fmt.Errorf("%s: %d bytes is not a whole number of elements", x.Type, len(x.Data))
		}
		w.view(kind)
		w.buffer(x.Data)
		w.viewRange(0, uint64(len(x.Data))/size)
	case *JSError:
		if err := e.enter(x); err != nil {
			return err
		}
		defer delete(e.active, x)
		if x.DOMException {
			w.domException(x.Name, x.Message)
			return nil
		}
		var stack *string
		if x.Stack != "" {
			stack = &x.Stack
		}
		w.errorHead(x.Name, &x.Message, stack, x.Cause != nil)
		if x.Cause != nil {
			return e.value(x.Cause)
		}
	case *JSBlob:
		if x.File {
			w.file(x.Name, x.Type, x.LastModified, x.Data)
		} else {
			w.blob(x.Type, x.Data)
		}
	default:
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
	v, err := readWire[any](data, goSink{})
	if err != nil {
		return nil, fmt.Errorf("deserialize: %w", err)
	}
	return v, nil
}

// goSink builds Go values.
type goSink struct{}

var _ wireSink[any] = goSink{}

func (goSink) undefined() any         { return Undefined{} }
func (goSink) null() any              { return nil }
func (goSink) boolean(b bool) any     { return b }
func (goSink) number(f float64) any   { return f }
func (goSink) text(s string) any      { return s }
func (goSink) bigint(n *big.Int) any  { return n }
func (goSink) wrapper(p any) any      { return p }
func (goSink) date(ms float64) any    { return time.UnixMilli(int64(ms)).UTC() }
func (goSink) buffer(data []byte) any { return append([]byte{}, data...) }
func (goSink) object(n int) any       { return make(map[string]any, n) }
func (goSink) mapOf(n int) any        { return &JSMap{Keys: make([]any, 0, n), Values: make([]any, 0, n)} }
func (goSink) setOf(n int) any        { return &JSSet{Values: make([]any, 0, n)} }
func (goSink) domException(name, message string) any {
	return &JSError{Name: name, Message: message, DOMException: true}
}

func (goSink) regexp(source, flags string) (any, error) {
	return &JSRegExp{Source: source, Flags: flags}, nil
}

func (goSink) view(kind int, buf any, off, n uint64) (any, error) {
	b := buf.([]byte)
	return &JSTypedArray{Type: viewKinds[kind], Data: b[off : off+n*viewElementSize(kind)]}, nil
}

func (goSink) array(n int) any {
	arr := make([]any, n)
	for i := range arr {
		arr[i] = Undefined{}
	}
	return arr
}

func (goSink) arraySet(arr any, i int, el any) error { arr.([]any)[i] = el; return nil }

func (goSink) objectSet(obj any, k string, v any) error { obj.(map[string]any)[k] = v; return nil }

func (goSink) mapSet(m any, k, v any) error {
	jm := m.(*JSMap)
	jm.Keys, jm.Values = append(jm.Keys, k), append(jm.Values, v)
	return nil
}

func (goSink) setAdd(s any, v any) error {
	js := s.(*JSSet)
	js.Values = append(js.Values, v)
	return nil
}

func (goSink) jsError(name string, message, stack *string) (any, error) {
	e := &JSError{Name: name}
	if message != nil {
		e.Message = *message
	}
	if stack != nil {
		e.Stack = *stack
	}
	return e, nil
}

func (goSink) errorCause(e any, cause any) error { e.(*JSError).Cause = cause; return nil }

func (goSink) blob(typ string, data []byte) any {
	return &JSBlob{Type: typ, Data: append([]byte{}, data...)}
}

func (goSink) file(name, typ string, lastModified float64, data []byte) any {
	return &JSBlob{File: true, Name: name, Type: typ, LastModified: lastModified, Data: append([]byte{}, data...)}
}
