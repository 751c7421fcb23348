package cell

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestDB_GetPut(t *testing.T) {
	db := openTest(t)

	t.Run("missing key before the table exists", func(t *testing.T) {
		if _, ok := getString(t, db, "a"); ok {
			t.Fatal("found a key in an empty database")
		}
	})
	t.Run("put, get, overwrite", func(t *testing.T) {
		mustPut(t, db, "a", "1")
		if got, ok := getString(t, db, "a"); !ok || got != "1" {
			t.Fatalf("get a = %q, %v; want 1, true", got, ok)
		}
		mustPut(t, db, "a", "one")
		if got, _ := getString(t, db, "a"); got != "one" {
			t.Fatalf("after overwrite get a = %q, want one", got)
		}
		if _, ok := getString(t, db, "missing"); ok {
			t.Fatal("found missing key")
		}
	})
	t.Run("empty key and empty value", func(t *testing.T) {
		mustPut(t, db, "", "empty key ok")
		if got, ok := getString(t, db, ""); !ok || got != "empty key ok" {
			t.Fatalf("get empty key = %q, %v", got, ok)
		}
		if err := db.Put("e", nil); err != nil {
			t.Fatal(err)
		}
		v, ok, err := db.Get("e")
		if err != nil || !ok || v == nil || len(v) != 0 {
			t.Fatalf("get e = %v, %v, %v; want empty non-nil value", v, ok, err)
		}
	})
	t.Run("keys with NUL and non-ASCII bytes round-trip", func(t *testing.T) {
		for _, k := range []string{"a\x00b", "\x00", "éclair", "\xff\xfe"} {
			mustPut(t, db, k, "v:"+k)
			if got, ok := getString(t, db, k); !ok || got != "v:"+k {
				t.Errorf("get %q = %q, %v", k, got, ok)
			}
		}
	})
	t.Run("values are copies", func(t *testing.T) {
		buf := []byte("abc")
		if err := db.Put("copy", buf); err != nil {
			t.Fatal(err)
		}
		buf[0] = 'X'
		v, _, _ := db.Get("copy")
		v[1] = 'Y'
		if got, _ := getString(t, db, "copy"); got != "abc" {
			t.Fatalf("stored value changed to %q", got)
		}
	})
}

func TestDB_GetMulti(t *testing.T) {
	db := openTest(t)
	if err := db.PutMulti([]KV{{"b", []byte("2")}, {"c", []byte("3")}, {"d", []byte("4")}, {"a", []byte("one")}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		keys []string
		want []string
	}{
		{"sorted, missing left out", []string{"d", "a", "b", "c", "zz"}, []string{"a", "b", "c", "d"}},
		{"none found", []string{"x1", "x2"}, []string{}},
		{"empty list", nil, []string{}},
		{"duplicates once", []string{"b", "b", "a"}, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.GetMulti(tt.keys)
			if err != nil {
				t.Fatal(err)
			}
			if keys := kvKeys(got); !slices.Equal(keys, tt.want) {
				t.Fatalf("keys = %q, want %q", keys, tt.want)
			}
		})
	}
}

func TestDB_Delete(t *testing.T) {
	db := openTest(t)
	if ok, err := db.Delete("a"); err != nil || ok {
		t.Fatalf("delete before table exists = %v, %v", ok, err)
	}
	if err := db.PutMulti([]KV{{"a", nil}, {"b", nil}, {"c", nil}, {"d", nil}}); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.Delete("a"); !ok {
		t.Error("delete existing = false")
	}
	if ok, _ := db.Delete("a"); ok {
		t.Error("delete again = true")
	}
	if n, err := db.DeleteMulti([]string{"b", "c", "nope"}); err != nil || n != 2 {
		t.Errorf("delete many = %d, %v; want 2", n, err)
	}
	if n, _ := db.DeleteMulti([]string{"nope1", "nope2"}); n != 0 {
		t.Errorf("delete many none = %d", n)
	}
	rest, _ := db.List(ListOptions{})
	if keys := kvKeys(rest); !slices.Equal(keys, []string{"d"}) {
		t.Errorf("remaining = %q, want [d]", keys)
	}
}

func TestDB_PutMulti_atomic(t *testing.T) {
	lim := DefaultLimits
	lim.MaxRowSize = 1000
	db := openTestWith(t, lim)
	before := db.Commits()
	err := db.PutMulti([]KV{{"ok", []byte("small")}, {"big", make([]byte, 2000)}})
	wantErrText(t, err, "Error", "string or blob too big: SQLITE_TOOBIG")
	if _, ok := getString(t, db, "ok"); ok {
		t.Error("first pair of a failed PutMulti was stored")
	}
	if err := db.PutMulti([]KV{{"x", nil}, {"y", nil}}); err != nil {
		t.Fatal(err)
	}
	if got := db.Commits() - before; got != 1 {
		t.Errorf("a PutMulti made %d commits, want 1", got)
	}
}

func TestDB_limits(t *testing.T) {
	db := openTest(t)
	key2048, key2049 := strings.Repeat("k", 2048), strings.Repeat("k", 2049)
	keyErr := "Keys cannot be larger than 2048 bytes. A key of size 2049 was provided."

	if err := db.Put(key2048, nil); err != nil {
		t.Fatalf("2048-byte key: %v", err)
	}
	err := db.Put(key2049, nil)
	wantErrText(t, err, "RangeError", keyErr)
	if !errors.Is(err, ErrKeyTooLarge) {
		t.Error("errors.Is(err, ErrKeyTooLarge) = false")
	}
	_, _, err = db.Get(key2049)
	wantErrText(t, err, "RangeError", keyErr)
	_, err = db.Delete(key2049)
	wantErrText(t, err, "RangeError", keyErr)
	wantErrText(t, db.PutMulti([]KV{{"a", nil}, {key2049, nil}}), "RangeError", keyErr)

	keys := make([]string, 129)
	pairs := make([]KV, 129)
	for i := range keys {
		keys[i] = strings.Repeat("x", i)
		pairs[i] = KV{Key: keys[i]}
	}
	countErr := "Maximum number of key value pairs is 128. 129 pairs were provided."
	_, err = db.GetMulti(keys)
	wantErrText(t, err, "RangeError", countErr)
	wantErrText(t, db.PutMulti(pairs), "RangeError", countErr)
	_, err = db.DeleteMulti(keys)
	wantErrText(t, err, "RangeError", countErr)
	if !errors.Is(err, ErrTooManyKeys) {
		t.Error("errors.Is(err, ErrTooManyKeys) = false")
	}
	if err := db.PutMulti(pairs[:128]); err != nil {
		t.Errorf("128 pairs: %v", err)
	}

	t.Run("values bounded by the row size by default", func(t *testing.T) {
		if err := db.Put("v", make([]byte, 1_500_000)); err != nil {
			t.Fatalf("1.5 MB value: %v", err)
		}
		wantErrText(t, db.Put("v", make([]byte, 2_000_001)), "Error", "string or blob too big: SQLITE_TOOBIG")
	})
	t.Run("legacy KV-backed value limit", func(t *testing.T) {
		lim := DefaultLimits
		lim.MaxValueSize = 131072
		db := openTestWith(t, lim)
		if err := db.Put("v", make([]byte, 131072+34)); err != nil {
			t.Fatalf("value at the enforced limit: %v", err)
		}
		err := db.Put("v", make([]byte, 131072+35))
		wantErrText(t, err, "RangeError", "Values cannot be larger than 131072 bytes. A value of size 131107 was provided.")
		if !errors.Is(err, ErrValueTooLarge) {
			t.Error("errors.Is(err, ErrValueTooLarge) = false")
		}
	})
}

// The keys and queries of the do-storage-list conformance fixture, with
// the results recorded on workerd, plus edge cases of the range arithmetic.
func TestDB_List(t *testing.T) {
	db := openTest(t)
	fixture := []string{"apple", "apricot", "banana", "blueberry", "cherry", "item:1", "item:10", "item:2", "Zebra", "éclair", "a", ""}
	pairs := make([]KV, len(fixture))
	for i, k := range fixture {
		pairs[i] = KV{Key: k, Value: []byte{byte(i)}}
	}
	if err := db.PutMulti(pairs); err != nil {
		t.Fatal(err)
	}
	s := Ptr[string]
	tests := []struct {
		name string
		opts ListOptions
		want []string
	}{
		{"all", ListOptions{}, []string{"", "Zebra", "a", "apple", "apricot", "banana", "blueberry", "cherry", "item:1", "item:10", "item:2", "éclair"}},
		{"prefix_item", ListOptions{Prefix: "item:"}, []string{"item:1", "item:10", "item:2"}},
		{"prefix_a", ListOptions{Prefix: "a"}, []string{"a", "apple", "apricot"}},
		{"prefix_none", ListOptions{Prefix: "zzz"}, []string{}},
		{"start_end", ListOptions{Start: s("apricot"), End: s("cherry")}, []string{"apricot", "banana", "blueberry"}},
		{"start_after", ListOptions{StartAfter: s("banana"), Limit: Ptr(2)}, []string{"blueberry", "cherry"}},
		{"end_only", ListOptions{End: s("apricot")}, []string{"", "Zebra", "a", "apple"}},
		{"limit_2", ListOptions{Limit: Ptr(2)}, []string{"", "Zebra"}},
		{"reverse_limit_3", ListOptions{Reverse: true, Limit: Ptr(3)}, []string{"éclair", "item:2", "item:10"}},
		{"reverse_range", ListOptions{Start: s("b"), End: s("c"), Reverse: true}, []string{"blueberry", "banana"}},
		{"prefix_and_start", ListOptions{Prefix: "item:", Start: s("item:10")}, []string{"item:10", "item:2"}},
		{"startAfter empty key excludes it", ListOptions{StartAfter: s(""), Limit: Ptr(1)}, []string{"Zebra"}},
		{"empty end is an empty range", ListOptions{End: s("")}, []string{}},
		{"end before start", ListOptions{Start: s("c"), End: s("b")}, []string{}},
		{"start past the prefix", ListOptions{Prefix: "a", Start: s("b")}, []string{}},
		{"end inside the prefix", ListOptions{Prefix: "item:", End: s("item:2")}, []string{"item:1", "item:10"}},
		{"end before the prefix", ListOptions{Prefix: "item:", End: s("apple")}, []string{}},
		{"end after the prefix", ListOptions{Prefix: "a", End: s("zzz")}, []string{"a", "apple", "apricot"}},
		{"reverse with startAfter", ListOptions{StartAfter: s("item:2"), Reverse: true}, []string{"éclair"}},
		{"non-ASCII prefix", ListOptions{Prefix: "é"}, []string{"éclair"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.List(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if keys := kvKeys(got); !slices.Equal(keys, tt.want) {
				t.Fatalf("keys = %q, want %q", keys, tt.want)
			}
		})
	}
	t.Run("values match keys", func(t *testing.T) {
		got, _ := db.List(ListOptions{Prefix: "item:"})
		for _, kv := range got {
			if i := slices.Index(fixture, kv.Key); len(kv.Value) != 1 || int(kv.Value[0]) != i {
				t.Errorf("value of %q = %v, want [%d]", kv.Key, kv.Value, i)
			}
		}
	})
	t.Run("errors", func(t *testing.T) {
		_, err := db.List(ListOptions{Start: s("a"), StartAfter: s("a")})
		wantErrText(t, err, "TypeError", "list() cannot be called with both start and startAfter values.")
		_, err = db.List(ListOptions{Limit: Ptr(0)})
		wantErrText(t, err, "TypeError", "List limit must be positive.")
		_, err = db.List(ListOptions{Limit: Ptr(-1)})
		if !errors.Is(err, ErrListLimit) {
			t.Errorf("negative limit: %v", err)
		}
	})
	t.Run("0xff prefix runs to the end", func(t *testing.T) {
		for _, k := range []string{"\xff", "\xff\xff", "\xff\xffz", "\xfe"} {
			mustPut(t, db, k, "")
		}
		got, _ := db.List(ListOptions{Prefix: "\xff\xff"})
		if keys := kvKeys(got); !slices.Equal(keys, []string{"\xff\xff", "\xff\xffz"}) {
			t.Fatalf("keys = %q", keys)
		}
		got, _ = db.List(ListOptions{Prefix: "\xfe"})
		if keys := kvKeys(got); !slices.Equal(keys, []string{"\xfe"}) {
			t.Fatalf("keys = %q", keys)
		}
	})
}

func TestDB_List_beforeTableExists(t *testing.T) {
	db := openTest(t)
	got, err := db.List(ListOptions{})
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("list = %v, %v; want empty, nil", got, err)
	}
}

func kvKeys(kvs []KV) []string {
	keys := []string{}
	for _, kv := range kvs {
		keys = append(keys, kv.Key)
	}
	return keys
}
