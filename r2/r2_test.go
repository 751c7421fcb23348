package r2_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/internal/miniotest"
	"github.com/celldgo/celld/r2"
)

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{"assets": true, "a-b-9": true, "ab": false, "-ab": false, "ab-": false, "Ab1": false, "a_b": false, strings.Repeat("a", 64): false} {
		if err := r2.ValidateName(name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}

// An object another S3 client wrote (no envelope) reads: its user metadata
// is customMetadata, its headers httpMetadata, its version its ETag.
func TestBucket_ReadsForeignObject(t *testing.T) {
	srv := miniotest.Shared(t)
	name := srv.NewBucket(t)
	raw, err := srv.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = raw.PutObject(ctx, name, "r2/assets/foreign.txt", strings.NewReader("from aws s3 cp"), 14,
		minio.PutObjectOptions{ContentType: "text/plain", CacheControl: "no-cache", UserMetadata: map[string]string{"owner": "ops"}})
	if err != nil {
		t.Fatal(err)
	}
	store, err := bucket.NewS3(bucket.S3Config{Bucket: name, Endpoint: srv.Endpoint, Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r2.Open(store, "assets")
	if err != nil {
		t.Fatal(err)
	}
	o, rc, err := b.Get(ctx, "foreign.txt", r2.GetOptions{})
	if err != nil || o == nil {
		t.Fatalf("get: %v %v", o, err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if string(data) != "from aws s3 cp" || o.HTTP.ContentType != "text/plain" || o.HTTP.CacheControl != "no-cache" ||
		o.Custom["owner"] != "ops" || o.Version != o.ETag || o.Checksums["md5"] != o.ETag {
		t.Errorf("foreign object = %+v, body %q", o, data)
	}
	// And ours carries its custom metadata in the envelope, headers as headers.
	exp := time.UnixMilli(2000000000000).UTC()
	put, err := b.Put(ctx, "ours.txt", strings.NewReader("ours"), 4, r2.PutOptions{
		HTTP: r2.HTTPMetadata{ContentType: "text/x-ours", CacheExpiry: &exp}, Custom: map[string]string{"λ": "ü"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := raw.StatObject(ctx, name, "r2/assets/ours.txt", minio.StatObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	env := st.Metadata.Get("X-Amz-Meta-Celld-R2")
	if st.ContentType != "text/x-ours" || !strings.Contains(env, `"custom":{"\u03bb":"\u00fc"}`) || !strings.Contains(env, put.Version) {
		t.Errorf("stored content type %q, envelope %q", st.ContentType, env)
	}
	got, err := b.Head(ctx, "ours.txt")
	if err != nil || got.Custom["λ"] != "ü" || got.HTTP.CacheExpiry == nil || !got.HTTP.CacheExpiry.Equal(exp) || got.Version != put.Version {
		t.Errorf("head = %+v, %v", got, err)
	}
}

// A streamed put larger than a part becomes a multipart upload; a wrong
// checksum on it stores nothing; a refused condition returns nil.
func TestBucket_StreamedPutAndRefusals(t *testing.T) {
	b, err := r2.Open(bucket.NewMem(), "mem")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), (r2.PartSize*2+100)/16)
	o, err := b.Put(ctx, "big", io.MultiReader(bytes.NewReader(data)), -1, r2.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Size != int64(len(data)) || !strings.HasSuffix(o.ETag, "-3") {
		t.Errorf("streamed put: size %d etag %q, want %d bytes in 3 parts", o.Size, o.ETag, len(data))
	}
	_, rc, err := b.Get(ctx, "big", r2.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	back, _ := io.ReadAll(rc)
	if !bytes.Equal(back, data) {
		t.Fatal("streamed put read back differs")
	}
	_, err = b.Put(ctx, "bad", bytes.NewReader(data), -1, r2.PutOptions{Checksums: map[string][]byte{"sha256": make([]byte, 32)}})
	var re *r2.Error
	if !errors.As(err, &re) || re.Code != r2.CodeBadDigest {
		t.Fatalf("bad checksum: %v, want code %d", err, r2.CodeBadDigest)
	}
	if h, _ := b.Head(ctx, "bad"); h != nil {
		t.Error("a put with a wrong checksum stored an object")
	}
	refused, err := b.Put(ctx, "big", strings.NewReader("x"), 1, r2.PutOptions{OnlyIf: &r2.Conditional{ETagMatches: []r2.ETagCond{{Value: "nope"}}}})
	if err != nil || refused != nil {
		t.Errorf("refused put = %v, %v; want nil, nil", refused, err)
	}
	gated := b.WithGate(func(context.Context) error { return errors.New("lost the cell") })
	if _, err := gated.Put(ctx, "g", strings.NewReader("x"), 1, r2.PutOptions{}); err == nil {
		t.Error("a put whose output gate failed went through")
	}
	if h, _ := b.Head(ctx, "g"); h != nil {
		t.Error("a gated put reached the store")
	}
}
