// Package buckettest holds the contract every bucket.Store must meet. The
// same suite runs on the in-memory, file:// and S3 stores, and against a
// real MinIO server, so a store that accepts a condition it must refuse is
// caught here before anything builds on it.
package buckettest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
)

// Options tune the suite for slow stores.
type Options struct {
	// ListKeys is how many keys the pagination test writes (> 1000).
	ListKeys int
}

// Run runs the contract against the store that open returns. open is
// called once per subtest and must return an empty store (or one scoped to
// a fresh prefix).
func Run(t *testing.T, open func(t *testing.T) bucket.Store, o Options) {
	if o.ListKeys == 0 {
		o.ListKeys = 1100
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s bucket.Store)
	}{
		{"CreateAndRejectCreate", testCreate},
		{"CASAndRejectStale", testCAS},
		{"CASOnMissingKeyIsRejected", testCASMissing},
		{"UnconditionalOverwrite", testOverwrite},
		{"ETagChangesOnIdenticalRewrite", testETagRewrite},
		{"ConcurrentCreatorsOneWinner", testConcurrentCreate},
		{"ConcurrentCASOneWinner", testConcurrentCAS},
		{"RangedReads", testRanges},
		{"GetMissing", testGetMissing},
		{"DeleteMissingKey", testDeleteMissing},
		{"DeleteThenCreate", testDeleteThenCreate},
		{"PrefixIsolation", testPrefixIsolation},
		{"EmptyObject", testEmpty},
		{"Streams", testStreams},
		{"ListPagination", func(t *testing.T, s bucket.Store) { testPagination(t, s, o.ListKeys) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func mustPut(t *testing.T, s bucket.Store, key string, data []byte, c bucket.Cond) bucket.Object {
	t.Helper()
	o, err := s.Put(ctx(t), key, data, c)
	if err != nil {
		t.Fatalf("put %s (%s): %v", key, c, err)
	}
	if o.ETag == "" {
		t.Fatalf("put %s returned no ETag", key)
	}
	return o
}

func wantRejected(t *testing.T, err error, what string) {
	t.Helper()
	if !errors.Is(err, bucket.ErrRejected) {
		t.Fatalf("%s: got %v, want ErrRejected", what, err)
	}
	if got := bucket.OutcomeOf(err); got != bucket.Rejected {
		t.Fatalf("%s: outcome %v, want rejected", what, got)
	}
}

func wantContent(t *testing.T, s bucket.Store, key string, want []byte) bucket.Object {
	t.Helper()
	got, o, err := s.Get(ctx(t), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("get %s = %q, want %q", key, got, want)
	}
	if o.Size != int64(len(want)) {
		t.Fatalf("get %s size = %d, want %d", key, o.Size, len(want))
	}
	return o
}

func testCreate(t *testing.T, s bucket.Store) {
	o := mustPut(t, s, "c/own.json", []byte("first"), bucket.IfAbsent())
	_, err := s.Put(ctx(t), "c/own.json", []byte("second"), bucket.IfAbsent())
	wantRejected(t, err, "second create")
	got := wantContent(t, s, "c/own.json", []byte("first"))
	if got.ETag != o.ETag {
		t.Fatalf("etag after rejected create = %q, want %q", got.ETag, o.ETag)
	}
	h, err := s.Head(ctx(t), "c/own.json")
	if err != nil || h.ETag != o.ETag || h.Size != 5 {
		t.Fatalf("head = %+v, %v; want etag %q size 5", h, err, o.ETag)
	}
}

func testCAS(t *testing.T, s bucket.Store) {
	o1 := mustPut(t, s, "k", []byte("v1"), bucket.IfAbsent())
	o2 := mustPut(t, s, "k", []byte("v2"), bucket.IfMatch(o1.ETag))
	if o2.ETag == o1.ETag {
		t.Fatalf("etag did not change on update: %q", o2.ETag)
	}
	_, err := s.Put(ctx(t), "k", []byte("stale"), bucket.IfMatch(o1.ETag))
	wantRejected(t, err, "CAS with a stale etag")
	got := wantContent(t, s, "k", []byte("v2"))
	if got.ETag != o2.ETag {
		t.Fatalf("etag = %q, want %q", got.ETag, o2.ETag)
	}
	mustPut(t, s, "k", []byte("v3"), bucket.IfMatch(o2.ETag))
	wantContent(t, s, "k", []byte("v3"))
}

func testCASMissing(t *testing.T, s bucket.Store) {
	o := mustPut(t, s, "gone", []byte("x"), bucket.IfAbsent())
	if err := s.Delete(ctx(t), "gone"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Put(ctx(t), "gone", []byte("y"), bucket.IfMatch(o.ETag))
	wantRejected(t, err, "CAS on a deleted key")
	_, err = s.Put(ctx(t), "never", []byte("y"), bucket.IfMatch("0123456789abcdef"))
	wantRejected(t, err, "CAS on a key never written")
	if _, _, err := s.Get(ctx(t), "never"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("rejected CAS created the key: get = %v", err)
	}
}

func testOverwrite(t *testing.T, s bucket.Store) {
	mustPut(t, s, "p", []byte("one"), bucket.Cond{})
	mustPut(t, s, "p", []byte("two"), bucket.Cond{})
	wantContent(t, s, "p", []byte("two"))
}

func testETagRewrite(t *testing.T, s bucket.Store) {
	o1 := mustPut(t, s, "same", []byte("same bytes"), bucket.IfAbsent())
	o2 := mustPut(t, s, "same", []byte("other bytes"), bucket.IfMatch(o1.ETag))
	_, err := s.Put(ctx(t), "same", []byte("late"), bucket.IfMatch(o1.ETag))
	wantRejected(t, err, "CAS with an etag two writes old")
	if o2.ETag == o1.ETag {
		t.Fatal("etag unchanged after a content change")
	}
}

func testConcurrentCreate(t *testing.T, s bucket.Store) {
	const n = 16
	var wins, rejects, others int
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := s.Put(ctx(t), "race/create", []byte(fmt.Sprintf("claimant %d", i)), bucket.IfAbsent())
			mu.Lock()
			defer mu.Unlock()
			switch bucket.OutcomeOf(err) {
			case bucket.Applied:
				wins++
			case bucket.Rejected:
				rejects++
			default:
				others++
				t.Errorf("claimant %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins != 1 || rejects != n-1 {
		t.Fatalf("%d concurrent creates: %d applied, %d rejected, %d other; want 1 and %d", n, wins, rejects, others, n-1)
	}
}

func testConcurrentCAS(t *testing.T, s bucket.Store) {
	const n = 16
	base := mustPut(t, s, "race/cas", []byte("base"), bucket.IfAbsent())
	var wins, rejects int
	var winner []byte
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			body := []byte(fmt.Sprintf("swapper %d", i))
			_, err := s.Put(ctx(t), "race/cas", body, bucket.IfMatch(base.ETag))
			mu.Lock()
			defer mu.Unlock()
			switch bucket.OutcomeOf(err) {
			case bucket.Applied:
				wins++
				winner = body
			case bucket.Rejected:
				rejects++
			default:
				t.Errorf("swapper %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins != 1 || rejects != n-1 {
		t.Fatalf("%d concurrent CAS: %d applied, %d rejected; want 1 and %d", n, wins, rejects, n-1)
	}
	wantContent(t, s, "race/cas", winner)
}

func testRanges(t *testing.T, s bucket.Store) {
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	mustPut(t, s, "r/obj", data, bucket.Cond{})
	cases := []struct {
		name string
		r    bucket.Range
		want []byte
	}{
		{"start-end", bucket.Bytes(10, 19), data[10:20]},
		{"single byte", bucket.Bytes(0, 0), data[0:1]},
		{"end past size", bucket.Bytes(990, 5000), data[990:]},
		{"suffix", bucket.Last(100), data[900:]},
		{"suffix longer than object", bucket.Last(5000), data},
		{"open end", bucket.From(123), data[123:]},
	}
	for _, c := range cases {
		got, o, err := s.GetRange(ctx(t), "r/obj", c.r)
		if err != nil {
			t.Fatalf("%s (%s): %v", c.name, c.r.Header(), err)
		}
		if !bytes.Equal(got, c.want) {
			t.Fatalf("%s (%s): got %d bytes, want %d (content differs: %v)", c.name, c.r.Header(), len(got), len(c.want), !bytes.Equal(got, c.want))
		}
		if o.ETag == "" {
			t.Fatalf("%s: no etag", c.name)
		}
	}
	if _, _, err := s.GetRange(ctx(t), "r/obj", bucket.From(1000)); !errors.Is(err, bucket.ErrInvalidRange) {
		t.Fatalf("range past end: got %v, want ErrInvalidRange", err)
	}
	if _, _, err := s.GetRange(ctx(t), "r/missing", bucket.Bytes(0, 1)); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("range of missing key: got %v, want ErrNotFound", err)
	}
}

func testGetMissing(t *testing.T, s bucket.Store) {
	if _, _, err := s.Get(ctx(t), "nope/x"); !errors.Is(err, bucket.ErrNotFound) || bucket.OutcomeOf(err) != bucket.NotFound {
		t.Fatalf("get missing: %v", err)
	}
	if _, err := s.Head(ctx(t), "nope/x"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("head missing: %v", err)
	}
}

func testDeleteMissing(t *testing.T, s bucket.Store) {
	if err := s.Delete(ctx(t), "never/written"); err != nil {
		t.Fatalf("delete of a missing key: %v", err)
	}
}

func testDeleteThenCreate(t *testing.T, s bucket.Store) {
	mustPut(t, s, "d/k", []byte("1"), bucket.IfAbsent())
	if err := s.Delete(ctx(t), "d/k"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(ctx(t), "d/k"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	mustPut(t, s, "d/k", []byte("2"), bucket.IfAbsent())
	wantContent(t, s, "d/k", []byte("2"))
}

func testPrefixIsolation(t *testing.T, s bucket.Store) {
	for _, k := range []string{"cells/a/own.json", "cells/ab/own.json", "cells/a-b/x", "cellsx/y", "nodes/n1.json"} {
		mustPut(t, s, k, []byte(k), bucket.Cond{})
	}
	check := func(prefix string, want ...string) {
		t.Helper()
		objs, err := bucket.ListAll(ctx(t), s, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range objs {
			got = append(got, o.Key)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("list %q = %v, want %v", prefix, got, want)
		}
	}
	check("cells/a/", "cells/a/own.json")
	check("cells/a", "cells/a-b/x", "cells/a/own.json", "cells/ab/own.json")
	check("cells/", "cells/a-b/x", "cells/a/own.json", "cells/ab/own.json")
	check("nodes/", "nodes/n1.json")
	check("zzz/")
}

func testEmpty(t *testing.T, s bucket.Store) {
	mustPut(t, s, "e", nil, bucket.IfAbsent())
	wantContent(t, s, "e", []byte{})
}

func testPagination(t *testing.T, s bucket.Store, n int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := s.Put(ctx(t), fmt.Sprintf("many/%05d", i), []byte{byte(i)}, bucket.Cond{}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	mustPut(t, s, "manz", []byte("outside"), bucket.Cond{})
	if t.Failed() {
		return
	}
	p, err := s.List(ctx(t), "many/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Objects) != bucket.MaxListLimit || !p.Truncated {
		t.Fatalf("first page: %d objects, truncated %v; want %d, true", len(p.Objects), p.Truncated, bucket.MaxListLimit)
	}
	p2, err := s.List(ctx(t), "many/", "many/00009", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Objects) != 5 || p2.Objects[0].Key != "many/00010" || !p2.Truncated {
		t.Fatalf("page after many/00009 limit 5: %+v", p2)
	}
	all, err := bucket.ListAll(ctx(t), s, "many/")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("list all: %d keys, want %d", len(all), n)
	}
	for i, o := range all {
		if want := fmt.Sprintf("many/%05d", i); o.Key != want || o.Size != 1 {
			t.Fatalf("key %d = %s (size %d), want %s (size 1)", i, o.Key, o.Size, want)
		}
	}
	last, err := s.List(ctx(t), "many/", all[n-2].Key, 0)
	if err != nil || len(last.Objects) != 1 || last.Truncated {
		t.Fatalf("last page: %+v, %v", last, err)
	}
}

// shortReader holds fewer bytes than a writer is told.
type shortReader struct{ data []byte }

func (r shortReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// testStreams: PutStream and OpenStream move the same bytes as Put and
// Get, honour conditions, and a source shorter than its size writes
// nothing.
func testStreams(t *testing.T, s bucket.Store) {
	c := ctx(t)
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	o, err := bucket.PutStream(c, s, "big", bytes.NewReader(data), int64(len(data)), bucket.IfAbsent())
	if err != nil {
		t.Fatalf("PutStream: %v", err)
	}
	if o.Size != int64(len(data)) {
		t.Fatalf("PutStream reported size %d, want %d", o.Size, len(data))
	}
	wantContent(t, s, "big", data)
	rc, info, err := bucket.OpenStream(c, s, "big")
	if err != nil {
		t.Fatalf("OpenStream: %v", err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) || info.Size != int64(len(data)) {
		t.Fatalf("OpenStream read %d bytes (size %d), err %v; want the %d written", len(got), info.Size, err, len(data))
	}
	_, err = bucket.PutStream(c, s, "big", bytes.NewReader(data[:10]), 10, bucket.IfAbsent())
	wantRejected(t, err, "PutStream if absent over an existing key")
	if _, err := bucket.PutStream(c, s, "big", bytes.NewReader(data[:10]), 10, bucket.IfMatch(o.ETag)); err != nil {
		t.Fatalf("PutStream if match: %v", err)
	}
	wantContent(t, s, "big", data[:10])
	if _, err := bucket.PutStream(c, s, "short", shortReader{data[:100]}, 200, bucket.Cond{}); err == nil {
		t.Fatal("PutStream of a source shorter than its size succeeded")
	}
	if _, _, err := s.Get(c, "short"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("after a short PutStream: Get = %v, want ErrNotFound", err)
	}
	if _, _, err := bucket.OpenStream(c, s, "missing"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("OpenStream of a missing key = %v, want ErrNotFound", err)
	}
}
