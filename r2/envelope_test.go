package r2_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/internal/miniotest"
	"github.com/celldgo/celld/r2"
)

// Custom metadata reads back in the order it was written, on every kind
// of store, through get, head and list; an envelope written before the
// order was kept (its custom object in sorted order, as Go's encoder
// writes maps) reads back sorted, as it always did.
func TestBucket_CustomMetadataKeepsItsOrder(t *testing.T) {
	stores := map[string]func(t *testing.T) bucket.Store{
		"mem": func(t *testing.T) bucket.Store { return bucket.NewMem() },
		"file": func(t *testing.T) bucket.Store {
			s, err := bucket.NewFile(filepath.Join(t.TempDir(), "b"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"minio": func(t *testing.T) bucket.Store {
			srv := miniotest.Shared(t)
			s, err := bucket.NewS3(bucket.S3Config{Bucket: srv.NewBucket(t), Endpoint: srv.Endpoint,
				Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			store := open(t)
			b, err := r2.Open(store, "order")
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			custom := map[string]string{"zeta": "1", "alpha": "2", "mid": "3", "é": "4"}
			keys := []string{"zeta", "alpha", "é", "mid"}
			if _, err := b.Put(ctx, "k", strings.NewReader("v"), 1, r2.PutOptions{Custom: custom, CustomKeys: keys}); err != nil {
				t.Fatal(err)
			}
			o, err := b.Head(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.CustomKeys, keys) || fmt.Sprint(o.Custom) != fmt.Sprint(custom) {
				t.Errorf("head: keys %q, custom %v; want %q, %v", o.CustomKeys, o.Custom, keys, custom)
			}
			page, err := b.List(ctx, r2.ListOptions{Custom: true})
			if err != nil || len(page.Objects) != 1 {
				t.Fatalf("list: %v %v", page, err)
			}
			if got := page.Objects[0].CustomKeys; !slices.Equal(got, keys) {
				t.Errorf("list: keys %q, want %q", got, keys)
			}
			// An envelope from before: custom as a sorted object, no order.
			old := `{"v":1,"version":"00112233445566778899aabbccddeeff","custom":{"b":"2","a":"1"}}`
			objs, ok := store.(bucket.Objects)
			if !ok {
				t.Fatalf("%T stores no objects", store)
			}
			if _, err := objs.PutObject(ctx, "r2/order/old", strings.NewReader("x"), 1,
				bucket.PutOptions{Meta: bucket.Meta{User: map[string]string{r2.EnvelopeKey: old}}}); err != nil {
				t.Fatal(err)
			}
			o, err = b.Head(ctx, "old")
			if err != nil || o == nil {
				t.Fatalf("head old: %v %v", o, err)
			}
			if o.Custom["a"] != "1" || o.Custom["b"] != "2" || o.Version != "00112233445566778899aabbccddeeff" {
				t.Errorf("old envelope read as %+v", o)
			}
		})
	}
}
