package worker_test

import (
	"bytes"
	"math"
	"math/big"
	"reflect"
	"testing"
	"time"

	"github.com/celldgo/celld/worker"
)

func TestWire_RoundTrip(t *testing.T) {
	huge, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	when := time.Date(2025, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	cases := []struct {
		name string
		in   any
		want any // nil: same as in
	}{
		{"null", nil, nil},
		{"undefined", worker.Undefined{}, nil},
		{"true", true, nil},
		{"false", false, nil},
		{"int", 42, 42.0},
		{"negative int", int64(-7), -7.0},
		{"big int", int64(1) << 40, float64(int64(1) << 40)},
		{"float", -1.5, nil},
		{"nan", math.NaN(), nil},
		{"inf", math.Inf(-1), nil},
		{"negative zero", math.Copysign(0, -1), nil},
		{"string", "text ✓", nil},
		{"empty string", "", nil},
		{"bigint", huge, nil},
		{"date", when, nil},
		{"bytes", []byte{0, 1, 254, 255}, nil},
		{"array", []any{1.0, "two", nil, []any{3.0}}, nil},
		{"object", map[string]any{"a": 1.0, "nested": map[string]any{"b": []any{true, "x"}}}, nil},
		{"map", &worker.JSMap{Keys: []any{"k", 2.0}, Values: []any{1.0, map[string]any{"v": "two"}}}, nil},
		{"set", &worker.JSSet{Values: []any{"x", 1.0}}, nil},
		{"regexp", &worker.JSRegExp{Source: "a.b", Flags: "gi"}, nil},
		{"typed array", &worker.JSTypedArray{Type: "Int32Array", Data: []byte{255, 255, 255, 255, 2, 0, 0, 0}}, nil},
		{"error", &worker.JSError{Name: "TypeError", Message: "stored error", Stack: "TypeError: stored error\n\tat x", Cause: "why"}, nil},
		{"custom error name", &worker.JSError{Name: "MyError", Message: "m"}, &worker.JSError{Name: "Error", Message: "m"}},
		{"dom exception", &worker.JSError{Name: "DataCloneError", Message: "nope", DOMException: true}, nil},
		{"blob", &worker.JSBlob{Type: "text/plain", Data: []byte("hi")}, nil},
		{"file", &worker.JSBlob{File: true, Name: "a.txt", Type: "text/plain", Data: []byte("hi"), LastModified: 1700000000000}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := worker.Serialize(c.in)
			if err != nil {
				t.Fatalf("Serialize: %v", err)
			}
			got, err := worker.Deserialize(b)
			if err != nil {
				t.Fatalf("Deserialize: %v", err)
			}
			want := c.want
			if want == nil && c.name != "undefined" {
				want = c.in
			}
			if c.name == "undefined" {
				want = worker.Undefined{}
			}
			if f, ok := want.(float64); ok && math.IsNaN(f) {
				if g, ok := got.(float64); !ok || !math.IsNaN(g) {
					t.Fatalf("got %#v, want NaN", got)
				}
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %#v, want %#v", got, want)
			}
			if f, ok := want.(float64); ok && math.Signbit(f) != math.Signbit(got.(float64)) {
				t.Fatalf("sign of zero lost")
			}
		})
	}
}

func TestWire_Errors(t *testing.T) {
	if _, err := worker.Serialize(struct{}{}); err == nil {
		t.Error("Serialize(struct{}{}) succeeded")
	}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	if _, err := worker.Serialize(cyclic); err == nil {
		t.Error("Serialize of a cyclic map succeeded")
	}
	good, _ := worker.Serialize(map[string]any{"k": []any{"v", 1.0}})
	for i := 0; i < len(good); i++ {
		if _, err := worker.Deserialize(good[:i]); err == nil {
			t.Errorf("Deserialize of %d of %d bytes succeeded", i, len(good))
		}
	}
	if _, err := worker.Deserialize(append(bytes.Clone(good), 'n')); err == nil {
		t.Error("Deserialize with trailing bytes succeeded")
	}
	if _, err := worker.Deserialize([]byte{2, 'n'}); err == nil {
		t.Error("Deserialize of an unknown version succeeded")
	}
}
