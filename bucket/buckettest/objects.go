package buckettest

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"errors"

	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/celldgo/celld/bucket"
)

// ObjectOptions say what a store cannot do.
type ObjectOptions struct {
	// MinIOKeys: the store refuses keys with "//", and lists no key under
	// one that is also an object ("a/b" beside "a"), as MinIO does.
	MinIOKeys bool
}

// RunObjects runs the application-object contract (bucket.Objects) against
// the store open returns, empty for each subtest.
func RunObjects(t *testing.T, open func(t *testing.T) bucket.Objects, o ObjectOptions) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s bucket.Objects)
	}{
		{"MetadataRoundTrip", testObjMeta},
		{"RangesAndMissing", testObjRanges},
		{"Conditions", testObjConds},
		{"OddKeys", func(t *testing.T, s bucket.Objects) { testObjOddKeys(t, s, o) }},
		{"ListDelimiterAndPages", testObjList},
		{"Multipart", testObjMultipart},
		{"MultipartRefusals", testObjMultipartRefusals},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func putObj(t *testing.T, s bucket.Objects, key string, data []byte, o bucket.PutOptions) bucket.ObjectInfo {
	t.Helper()
	oi, err := s.PutObject(ctx(t), key, bytes.NewReader(data), int64(len(data)), o)
	if err != nil {
		t.Fatalf("PutObject %q: %v", key, err)
	}
	return oi
}

func readObj(t *testing.T, s bucket.Objects, key string, rng *bucket.Range) ([]byte, bucket.ObjectInfo) {
	t.Helper()
	rc, oi, err := s.GetObject(ctx(t), key, rng)
	if err != nil {
		t.Fatalf("GetObject %q: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return b, oi
}

func md5hex(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

func testObjMeta(t *testing.T, s bucket.Objects) {
	meta := bucket.Meta{
		ContentType: "text/plain; charset=utf-8", ContentLanguage: "en", ContentDisposition: `attachment; filename="a.txt"`,
		ContentEncoding: "identity", CacheControl: "max-age=60", Expires: "Wed, 21 Oct 2037 07:28:00 GMT",
		User: map[string]string{"celld-r2": `{"a":"b"}`, "author": "ann"},
	}
	data := []byte("hello, objects")
	oi := putObj(t, s, "r2/b/doc.txt", data, bucket.PutOptions{Meta: meta})
	if got, want := oi.ETag, md5hex(data); got != want {
		t.Errorf("put etag = %q, want the MD5 %q", got, want)
	}
	for _, get := range []func() bucket.ObjectInfo{
		func() bucket.ObjectInfo { oi, err := s.HeadObject(ctx(t), "r2/b/doc.txt"); must(t, err); return oi },
		func() bucket.ObjectInfo {
			b, oi := readObj(t, s, "r2/b/doc.txt", nil)
			wantBytes(t, b, data)
			return oi
		},
	} {
		got := get()
		if !reflect.DeepEqual(got.Meta, meta) {
			t.Errorf("meta = %+v, want %+v", got.Meta, meta)
		}
		if got.Size != int64(len(data)) || got.ETag != md5hex(data) || got.Modified.IsZero() {
			t.Errorf("object = %+v, want size %d etag %s and a time", got.Object, len(data), md5hex(data))
		}
	}
	// No metadata stays none: no content type invented.
	putObj(t, s, "r2/b/bare", []byte("x"), bucket.PutOptions{})
	oi, err := s.HeadObject(ctx(t), "r2/b/bare")
	must(t, err)
	if oi.Meta.ContentType != "" || len(oi.Meta.User) != 0 {
		t.Errorf("bare object meta = %+v, want none", oi.Meta)
	}
	// A short source fails the write and stores nothing.
	_, err = s.PutObject(ctx(t), "r2/b/short", strings.NewReader("abc"), 10, bucket.PutOptions{})
	if err == nil {
		t.Fatal("PutObject of 3 bytes promised as 10 succeeded")
	}
	if _, err := s.HeadObject(ctx(t), "r2/b/short"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("head after a short put = %v, want ErrNotFound", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantBytes(t *testing.T, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("bytes = %q, want %q", got, want)
	}
}

func testObjRanges(t *testing.T, s bucket.Objects) {
	data := []byte("0123456789")
	putObj(t, s, "r2/b/r", data, bucket.PutOptions{})
	for _, c := range []struct {
		r    bucket.Range
		want string
	}{
		{bucket.Bytes(2, 4), "234"}, {bucket.From(7), "789"}, {bucket.Last(3), "789"},
		{bucket.Last(50), "0123456789"}, {bucket.Bytes(8, 100), "89"},
	} {
		got, oi := readObj(t, s, "r2/b/r", &c.r)
		if string(got) != c.want || oi.Size != 10 {
			t.Errorf("range %s = %q (size %d), want %q (size 10)", c.r.Header(), got, oi.Size, c.want)
		}
	}
	r := bucket.From(10)
	if _, _, err := s.GetObject(ctx(t), "r2/b/r", &r); !errors.Is(err, bucket.ErrInvalidRange) {
		t.Errorf("range past the end: %v, want ErrInvalidRange", err)
	}
	if _, _, err := s.GetObject(ctx(t), "r2/b/missing", nil); !errors.Is(err, bucket.ErrNotFound) {
		t.Errorf("get missing: %v, want ErrNotFound", err)
	}
	if _, err := s.HeadObject(ctx(t), "r2/b/missing"); !errors.Is(err, bucket.ErrNotFound) {
		t.Errorf("head missing: %v, want ErrNotFound", err)
	}
	must(t, s.DeleteObject(ctx(t), "r2/b/missing"))
	must(t, s.DeleteObject(ctx(t), "r2/b/r"))
	if _, err := s.HeadObject(ctx(t), "r2/b/r"); !errors.Is(err, bucket.ErrNotFound) {
		t.Errorf("head after delete: %v, want ErrNotFound", err)
	}
}

func testObjConds(t *testing.T, s bucket.Objects) {
	a := putObj(t, s, "r2/b/c", []byte("a"), bucket.PutOptions{Cond: bucket.IfAbsent()})
	_, err := s.PutObject(ctx(t), "r2/b/c", strings.NewReader("b"), 1, bucket.PutOptions{Cond: bucket.IfAbsent()})
	wantRejected(t, err, "second create")
	_, err = s.PutObject(ctx(t), "r2/b/c", strings.NewReader("b"), 1, bucket.PutOptions{Cond: bucket.IfMatch(md5hex([]byte("zz")))})
	wantRejected(t, err, "stale CAS")
	putObj(t, s, "r2/b/c", []byte("b"), bucket.PutOptions{Cond: bucket.IfMatch(a.ETag)})
	got, _ := readObj(t, s, "r2/b/c", nil)
	wantBytes(t, got, []byte("b"))
}

// oddKeys are keys a file system cannot hold as paths but S3 and R2 can.
// MinIO refuses some of them (see the store's docs); the rest must work
// everywhere.
var oddKeys = []string{"r2/b/k/a", "r2/b/k/a/b", "r2/b/k/a/b/", "r2/b/k/a//b", "r2/b/k/λ/%", "r2/b/k/a/%2F", "r2/b/k/x!y", "r2/b/k/.hidden"}

func testObjOddKeys(t *testing.T, s bucket.Objects, opt ObjectOptions) {
	want := []string{"r2/b/k/.hidden", "r2/b/k/a", "r2/b/k/a/%2F", "r2/b/k/a//b", "r2/b/k/a/b", "r2/b/k/a/b/", "r2/b/k/x!y", "r2/b/k/λ/%"}
	keys := oddKeys
	if opt.MinIOKeys {
		drop := func(k string) bool { return strings.Contains(k, "//") || k == "r2/b/k/a" }
		keys, want = slices.DeleteFunc(slices.Clone(keys), drop), slices.DeleteFunc(want, drop)
	}
	for _, k := range keys {
		putObj(t, s, k, []byte("v:"+k), bucket.PutOptions{})
	}
	for _, k := range keys {
		got, _ := readObj(t, s, k, nil)
		wantBytes(t, got, []byte("v:"+k))
	}
	p, err := s.ListObjects(ctx(t), bucket.ListQuery{Prefix: "r2/b/k/"})
	must(t, err)
	var listed []string
	for _, o := range p.Objects {
		listed = append(listed, o.Key)
	}
	if !reflect.DeepEqual(listed, want) {
		t.Errorf("list = %q, want %q", listed, want)
	}
}

func testObjList(t *testing.T, s bucket.Objects) {
	for _, k := range []string{"a/1", "a/2", "b", "c/x/1", "c/y", "d", "e/"} {
		putObj(t, s, "r2/b/"+k, []byte(k), bucket.PutOptions{})
	}
	putObj(t, s, "r2/other/z", []byte("z"), bucket.PutOptions{})
	// Walk the root with a delimiter one entry at a time.
	var entries []string
	q := bucket.ListQuery{Prefix: "r2/b/", Delimiter: "/", Limit: 1}
	for pages := 0; ; pages++ {
		if pages > 20 {
			t.Fatal("listing does not end")
		}
		p, err := s.ListObjects(ctx(t), q)
		must(t, err)
		for _, o := range p.Objects {
			entries = append(entries, strings.TrimPrefix(o.Key, "r2/b/"))
		}
		for _, cp := range p.Prefixes {
			entries = append(entries, strings.TrimPrefix(cp, "r2/b/")+"(prefix)")
		}
		if len(p.Objects)+len(p.Prefixes) > 1 {
			t.Fatalf("page of limit 1 held %d entries", len(p.Objects)+len(p.Prefixes))
		}
		if p.Next == "" {
			break
		}
		q.Token = p.Next
	}
	want := []string{"a/(prefix)", "b", "c/(prefix)", "d", "e/(prefix)"}
	if !reflect.DeepEqual(entries, want) {
		t.Errorf("delimited walk = %q, want %q", entries, want)
	}
	p, err := s.ListObjects(ctx(t), bucket.ListQuery{Prefix: "r2/b/c/", Delimiter: "/"})
	must(t, err)
	if len(p.Objects) != 1 || p.Objects[0].Key != "r2/b/c/y" || !reflect.DeepEqual(p.Prefixes, []string{"r2/b/c/x/"}) || p.Next != "" {
		t.Errorf("list c/ = %+v", p)
	}
	p, err = s.ListObjects(ctx(t), bucket.ListQuery{Prefix: "r2/b/", StartAfter: "r2/b/b"})
	must(t, err)
	var keys []string
	for _, o := range p.Objects {
		keys = append(keys, o.Key)
	}
	if want := []string{"r2/b/c/x/1", "r2/b/c/y", "r2/b/d", "r2/b/e/"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("list after b = %q, want %q", keys, want)
	}
}

func testObjMultipart(t *testing.T, s bucket.Objects) {
	meta := bucket.Meta{ContentType: "application/x-test", User: map[string]string{"k": "v"}}
	id, err := s.CreateMultipart(ctx(t), "r2/b/big", meta)
	must(t, err)
	p1 := bytes.Repeat([]byte("a"), bucket.MinPartSize)
	p2 := []byte("tail")
	// Parts may arrive out of order; a part sent again replaces the first.
	e2, err := s.UploadPart(ctx(t), "r2/b/big", id, 2, bytes.NewReader([]byte("old")), 3)
	must(t, err)
	e2, err = s.UploadPart(ctx(t), "r2/b/big", id, 2, bytes.NewReader(p2), int64(len(p2)))
	must(t, err)
	e1, err := s.UploadPart(ctx(t), "r2/b/big", id, 1, bytes.NewReader(p1), int64(len(p1)))
	must(t, err)
	if e1 != md5hex(p1) || e2 != md5hex(p2) {
		t.Errorf("part etags %q %q, want their MD5s", e1, e2)
	}
	oi, err := s.CompleteMultipart(ctx(t), "r2/b/big", id, []bucket.Part{{N: 1, ETag: e1}, {N: 2, ETag: e2}})
	must(t, err)
	wantETag, _ := bucket.MultipartETag([]string{e1, e2})
	if oi.ETag != wantETag || oi.Size != int64(len(p1)+len(p2)) {
		t.Errorf("completed = %+v, want etag %s size %d", oi.Object, wantETag, len(p1)+len(p2))
	}
	got, gi := readObj(t, s, "r2/b/big", nil)
	wantBytes(t, got[len(p1):], p2)
	if !bytes.Equal(got[:len(p1)], p1) || gi.Meta.ContentType != meta.ContentType || gi.Meta.User["k"] != "v" {
		t.Errorf("read back %d bytes, meta %+v", len(got), gi.Meta)
	}
	if _, err := s.UploadPart(ctx(t), "r2/b/big", id, 3, strings.NewReader("x"), 1); !errors.Is(err, bucket.ErrNoSuchUpload) {
		t.Errorf("part after completion: %v, want ErrNoSuchUpload", err)
	}
}

func testObjMultipartRefusals(t *testing.T, s bucket.Objects) {
	id, err := s.CreateMultipart(ctx(t), "r2/b/m", bucket.Meta{})
	must(t, err)
	e1, err := s.UploadPart(ctx(t), "r2/b/m", id, 1, strings.NewReader("small"), 5)
	must(t, err)
	e2, err := s.UploadPart(ctx(t), "r2/b/m", id, 2, strings.NewReader("last"), 4)
	must(t, err)
	_, err = s.CompleteMultipart(ctx(t), "r2/b/m", id, []bucket.Part{{N: 1, ETag: e1}, {N: 2, ETag: e2}})
	if !errors.Is(err, bucket.ErrEntityTooSmall) {
		t.Errorf("complete with a small first part: %v, want ErrEntityTooSmall", err)
	}
	_, err = s.CompleteMultipart(ctx(t), "r2/b/m", id, []bucket.Part{{N: 1, ETag: md5hex([]byte("other"))}})
	if !errors.Is(err, bucket.ErrInvalidPart) {
		t.Errorf("complete with a wrong etag: %v, want ErrInvalidPart", err)
	}
	must(t, s.AbortMultipart(ctx(t), "r2/b/m", id))
	if _, err := s.UploadPart(ctx(t), "r2/b/m", id, 3, strings.NewReader("x"), 1); !errors.Is(err, bucket.ErrNoSuchUpload) {
		t.Errorf("part after abort: %v, want ErrNoSuchUpload", err)
	}
	if _, err := s.HeadObject(ctx(t), "r2/b/m"); !errors.Is(err, bucket.ErrNotFound) {
		t.Errorf("head of an aborted upload: %v, want ErrNotFound", err)
	}
	_, err = s.UploadPart(ctx(t), "r2/b/m", "0123456789abcdef0123456789abcdef", 1, strings.NewReader("x"), 1)
	if !errors.Is(err, bucket.ErrNoSuchUpload) {
		t.Errorf("part of an unknown upload: %v, want ErrNoSuchUpload", err)
	}
}
