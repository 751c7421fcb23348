package kv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

const testNS = "0123456789abcdef0123456789abcdef"

func TestHandle_PutGet(t *testing.T) {
	ctx := context.Background()
	lc := newLocalCaller(t)
	c := NewClient(lc, testNS)

	t.Run("missing key on a fresh namespace writes nothing", func(t *testing.T) {
		e, err := c.Get(ctx, "nope")
		if err != nil || e.Found {
			t.Fatalf("got %+v, %v; want not found", e, err)
		}
		if _, err := c.List(ctx, ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := lc.db(CellName(testNS)).Commits(); got != 0 {
			t.Errorf("reads committed %d transactions, want 0", got)
		}
	})
	t.Run("put, overwrite, get", func(t *testing.T) {
		if err := c.Put(ctx, Pair{Key: "greeting", Value: []byte("hello ✓")}); err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, Pair{Key: "greeting", Value: []byte("hi"), Metadata: json.RawMessage(`{"v": 2}`)}); err != nil {
			t.Fatal(err)
		}
		e, err := c.Get(ctx, "greeting")
		if err != nil {
			t.Fatal(err)
		}
		if !e.Found || string(e.Value) != "hi" || string(e.Metadata) != `{"v":2}` || e.Expiration != 0 {
			t.Errorf("got %+v (value %q, metadata %s)", e, e.Value, e.Metadata)
		}
	})
	t.Run("empty and binary values", func(t *testing.T) {
		bin := []byte{0, 1, 2, 255}
		if err := c.PutBatch(ctx, []Pair{{Key: "empty"}, {Key: "bin", Value: bin}, {Key: "nul\x00key", Value: []byte("x")}}); err != nil {
			t.Fatal(err)
		}
		es, err := c.GetBulk(ctx, []string{"empty", "bin", "nul\x00key", "absent"})
		if err != nil {
			t.Fatal(err)
		}
		if !es[0].Found || len(es[0].Value) != 0 || !bytes.Equal(es[1].Value, bin) || string(es[2].Value) != "x" || es[3].Found {
			t.Errorf("got %+v", es)
		}
	})
	t.Run("delete, and delete of a missing key", func(t *testing.T) {
		if err := c.Delete(ctx, "greeting"); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, "greeting"); err != nil {
			t.Fatal(err)
		}
		if e, _ := c.Get(ctx, "greeting"); e.Found {
			t.Errorf("deleted key still found: %+v", e)
		}
	})
}

func TestHandle_LargeValues(t *testing.T) {
	ctx := context.Background()
	lc := newLocalCaller(t)
	c := NewClient(lc, testNS)
	big := bytes.Repeat([]byte("0123456789abcdef"), (3*chunkSize+12345)/16)
	if err := c.Put(ctx, Pair{Key: "big", Value: big}); err != nil {
		t.Fatal(err)
	}
	e, err := c.Get(ctx, "big")
	if err != nil || !bytes.Equal(e.Value, big) {
		t.Fatalf("got %d bytes, %v; want %d", len(e.Value), err, len(big))
	}
	if err := c.Put(ctx, Pair{Key: "big", Value: []byte("small")}); err != nil {
		t.Fatal(err)
	}
	if e, _ := c.Get(ctx, "big"); string(e.Value) != "small" {
		t.Errorf("after overwrite got %d bytes", len(e.Value))
	}
	chunks := func() int64 {
		cur, err := lc.db(CellName(testNS)).Exec("SELECT count(*) FROM kv_chunks")
		if err != nil {
			t.Fatal(err)
		}
		row, err := cur.One()
		if err != nil {
			t.Fatal(err)
		}
		return row[0].(int64)
	}
	if n := chunks(); n != 0 {
		t.Errorf("%d chunks left after overwrite with a small value", n)
	}
	// Large and small values mixed in one batch, a key repeated: the last
	// write of a key wins, and a deleted large value leaves no chunks.
	mid := bytes.Repeat([]byte("m"), groupValueMax+1)
	err = c.PutBatch(ctx, []Pair{{Key: "dup", Value: []byte("1")}, {Key: "big", Value: big}, {Key: "dup", Value: mid},
		{Key: "x", Value: []byte("x")}, {Key: "dup", Value: []byte("3")}, {Key: "mid", Value: mid}})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string][]byte{"dup": []byte("3"), "big": big, "mid": mid, "x": []byte("x")} {
		if e, _ := c.Get(ctx, k); !bytes.Equal(e.Value, want) {
			t.Errorf("%s: got %d bytes, want %d", k, len(e.Value), len(want))
		}
	}
	if n := chunks(); n != 3 {
		t.Errorf("%d chunks, want 3 (big's)", n)
	}
	if err := c.DeleteBatch(ctx, []string{"big", "mid"}); err != nil {
		t.Fatal(err)
	}
	if n := chunks(); n != 0 {
		t.Errorf("%d chunks left after deleting the large values", n)
	}
	err = c.Put(ctx, Pair{Key: "huge", Value: make([]byte, MaxValueSize+1)})
	if got, want := fmt.Sprint(err), "KV PUT failed: 413 Value length of 26214401 exceeds limit of 26214400."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestHandle_Expiration(t *testing.T) {
	ctx := context.Background()
	start := time.Unix(1_800_000_000, 500e6)
	clock := setClock(t, start)
	lc := newLocalCaller(t)
	c := NewClient(lc, testNS)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Put(ctx, Pair{Key: "ttl", Value: []byte("a"), ExpirationTTL: i64(60)}))
	must(c.Put(ctx, Pair{Key: "abs", Value: []byte("b"), Expiration: i64(start.Unix() + 120)}))
	// Both: the TTL wins.
	must(c.Put(ctx, Pair{Key: "both", Value: []byte("c"), Expiration: i64(start.Unix() + 1000), ExpirationTTL: i64(90)}))
	must(c.Put(ctx, Pair{Key: "forever", Value: []byte("d")}))

	keys, err := c.ListAll(ctx, "")
	must(err)
	got := map[string]int64{}
	for _, k := range keys {
		got[k.Name] = k.Expiration
	}
	want := map[string]int64{"abs": start.Unix() + 120, "both": start.Unix() + 90, "forever": 0, "ttl": start.Unix() + 60}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("expirations %v, want %v", got, want)
	}

	*clock = start.Add(59 * time.Second)
	if e, _ := c.Get(ctx, "ttl"); !e.Found {
		t.Error("ttl key gone a second before its expiration")
	}
	*clock = time.Unix(start.Unix()+60, 0)
	if e, _ := c.Get(ctx, "ttl"); e.Found {
		t.Error("ttl key readable at its expiration second")
	}
	keys, _ = c.ListAll(ctx, "")
	if len(keys) != 3 || keys[0].Name != "abs" {
		t.Errorf("list after ttl expiry: %+v", keys)
	}
	*clock = start.Add(200 * time.Second)
	if e, _ := c.Get(ctx, "abs"); e.Found {
		t.Error("abs key readable after expiry")
	}
	// A write purges what has expired.
	must(c.Put(ctx, Pair{Key: "other", Value: []byte("x")}))
	cur, err := lc.db(CellName(testNS)).Exec("SELECT count(*) FROM kv_entries")
	must(err)
	row, err := cur.One()
	must(err)
	if row[0].(int64) != 2 {
		t.Errorf("%v rows left after purge, want 2 (forever, other)", row[0])
	}
}

func TestHandle_Errors(t *testing.T) {
	ctx := context.Background()
	start := time.Unix(1_800_000_000, 0)
	setClock(t, start)
	c := NewClient(newLocalCaller(t), testNS)
	meta := json.RawMessage(`{"m":"` + strings.Repeat("x", 1100) + `"}`)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"ttl below 60", c.Put(ctx, Pair{Key: "k", ExpirationTTL: i64(30)}), "KV PUT failed: 400 Invalid expiration_ttl of 30. Expiration TTL must be at least 60."},
		{"ttl zero", c.Put(ctx, Pair{Key: "k", ExpirationTTL: i64(0)}), "KV PUT failed: 400 Invalid expiration_ttl of 0. Please specify integer greater than 0."},
		{"expiration in the past", c.Put(ctx, Pair{Key: "k", Expiration: i64(1000)}), "KV PUT failed: 400 Invalid expiration of 1000. Please specify integer greater than the current number of seconds since the UNIX epoch."},
		{"expiration too soon", c.Put(ctx, Pair{Key: "k", Expiration: i64(start.Unix() + 30)}), fmt.Sprintf("KV PUT failed: 400 Invalid expiration of %d. Expiration times must be at least 60 seconds in the future.", start.Unix()+30)},
		{"key too long", c.Put(ctx, Pair{Key: strings.Repeat("k", 513)}), "KV PUT failed: 414 UTF-8 encoded length of 513 exceeds key length limit of 512."},
		{"metadata too large", c.Put(ctx, Pair{Key: "k", Metadata: meta}), "KV PUT failed: 413 Metadata length of 1108 exceeds limit of 1024."},
		{"empty key", c.Delete(ctx, ""), "KV DELETE failed: 400 Key names must not be empty"},
		{"dot key", c.Put(ctx, Pair{Key: "."}), `KV PUT failed: 400 Illegal key name ".". Please use a different name.`},
		{"list limit", func() error { _, err := c.List(ctx, ListOptions{Limit: 1001}); return err }(), "KV GET failed: 400 Invalid key_count_limit of 1001. Please specify an integer less than 1000."},
		{"bulk get too many", func() error { _, err := c.GetBulk(ctx, make([]string, 101)); return err }(), "KV GET_BULK failed: 400 You can request a maximum of 100 keys"},
		{"bulk get none", func() error { _, err := c.GetBulk(ctx, []string{}); return err }(), "KV GET_BULK failed: 400 You must request a minimum of 1 key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ke *Error
			if !errors.As(tc.err, &ke) {
				t.Fatalf("got %v, want a *kv.Error", tc.err)
			}
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestHandle_BatchIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	lc := newLocalCaller(t)
	c := NewClient(lc, testNS)
	pairs := []Pair{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}, {Key: "c", ExpirationTTL: i64(5)}}
	err := c.PutBatch(ctx, pairs)
	want := `KV PUT_BULK failed: 400 Invalid expiration_ttl of 5. Expiration TTL must be at least 60 (item 2, key "c")`
	if fmt.Sprint(err) != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if keys, _ := c.ListAll(ctx, ""); len(keys) != 0 {
		t.Errorf("a refused batch wrote %+v", keys)
	}
	pairs[2].ExpirationTTL = nil
	if err := c.PutBatch(ctx, pairs); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteBatch(ctx, []string{"a", "c", "zz"}); err != nil {
		t.Fatal(err)
	}
	keys, _ := c.ListAll(ctx, "")
	if len(keys) != 1 || keys[0].Name != "b" {
		t.Errorf("after delete batch: %+v", keys)
	}
	if err := c.PutBatch(ctx, make([]Pair, MaxBatchPairs+1)); err == nil || !strings.Contains(err.Error(), "at most 10000 pairs") {
		t.Errorf("oversized batch: %v", err)
	}
}

func TestHandle_List(t *testing.T) {
	ctx := context.Background()
	c := NewClient(newLocalCaller(t), testNS)
	names := []string{"user:1", "user:2", "user:10", "admin:1", "user-x", "é", "z", "user;", "ÿx"}
	var pairs []Pair
	for _, n := range names {
		pairs = append(pairs, Pair{Key: n, Value: []byte("v")})
	}
	pairs[0].Metadata = json.RawMessage(`{"a":1}`)
	if err := c.PutBatch(ctx, pairs); err != nil {
		t.Fatal(err)
	}
	t.Run("prefix, in byte order", func(t *testing.T) {
		res, err := c.List(ctx, ListOptions{Prefix: "user:"})
		if err != nil {
			t.Fatal(err)
		}
		if got := keyNames(res.Keys); got != "user:1 user:10 user:2" || !res.ListComplete || res.Cursor != "" {
			t.Errorf("got %s complete=%v cursor=%q", got, res.ListComplete, res.Cursor)
		}
		if string(res.Keys[0].Metadata) != `{"a":1}` || res.Keys[1].Metadata != nil {
			t.Errorf("metadata: %+v", res.Keys)
		}
	})
	t.Run("pages of two follow the cursor", func(t *testing.T) {
		var all []string
		o := ListOptions{Limit: 2}
		pages := 0
		for {
			res, err := c.List(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			all = append(all, keyNames(res.Keys))
			if res.ListComplete {
				break
			}
			o.Cursor = res.Cursor
		}
		want := "admin:1 user-x|user:1 user:10|user:2 user;|z é|ÿx"
		if got := strings.Join(all, "|"); got != want || pages != 5 {
			t.Errorf("got %q in %d pages, want %q", got, pages, want)
		}
	})
	t.Run("prefix with a cursor", func(t *testing.T) {
		res, _ := c.List(ctx, ListOptions{Prefix: "user", Limit: 2})
		res, err := c.List(ctx, ListOptions{Prefix: "user", Limit: 2, Cursor: res.Cursor})
		if err != nil {
			t.Fatal(err)
		}
		if got := keyNames(res.Keys); got != "user:10 user:2" || res.ListComplete {
			t.Errorf("got %s complete=%v", got, res.ListComplete)
		}
	})
}

func keyNames(ks []ListedKey) string {
	var s []string
	for _, k := range ks {
		s = append(s, k.Name)
	}
	return strings.Join(s, " ")
}

// BenchmarkHandle_PutBatch is the handler alone: one 10,000-pair batch
// (small values, some metadata and TTLs) per op on a local database.
func BenchmarkHandle_PutBatch(b *testing.B) {
	lc := newLocalCaller(b)
	c := NewClient(lc, testNS)
	pairs := make([]Pair, MaxBatchPairs)
	for i := range pairs {
		pairs[i] = Pair{Key: fmt.Sprintf("key:%06d", i), Value: []byte(fmt.Sprintf("value %d", i))}
		if i%5 == 0 {
			pairs[i].Metadata = json.RawMessage(`{"i":1}`)
		}
		if i%7 == 0 {
			pairs[i].ExpirationTTL = i64(3600)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		if err := c.PutBatch(ctx, pairs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(MaxBatchPairs*b.N)/b.Elapsed().Seconds(), "pairs/s")
}
