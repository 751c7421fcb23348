package r2

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/celldgo/celld/bucket"
)

// ListOptions are R2ListOptions.
type ListOptions struct {
	Prefix     string
	Delimiter  string
	Cursor     string
	StartAfter string
	Limit      int  // 0 means MaxListLimit
	HTTP       bool // include httpMetadata
	Custom     bool // include customMetadata
}

// Listing is R2Objects.
type Listing struct {
	Objects           []*Object `json:"objects"`
	DelimitedPrefixes []string  `json:"delimitedPrefixes"`
	Truncated         bool      `json:"truncated"`
	Cursor            string    `json:"cursor,omitempty"`
}

// listHeads is how many objects' metadata one list with include reads at
// once.
const listHeads = 16

// List returns one page of the bucket's keys in byte order.
func (b *Bucket) List(ctx context.Context, o ListOptions) (*Listing, error) {
	if o.Limit < 0 || o.Limit > MaxListLimit {
		return nil, fail("list", CodeInvalidMaxKeys, nil)
	}
	q := bucket.ListQuery{Prefix: b.prefix + o.Prefix, Delimiter: o.Delimiter, Limit: o.Limit}
	if o.StartAfter != "" {
		q.StartAfter = b.prefix + o.StartAfter
	}
	if o.Cursor != "" {
		tok, err := base64.RawURLEncoding.DecodeString(o.Cursor)
		if err != nil {
			return nil, &Error{Op: "list", Code: CodeInvalidArgument, Message: "Invalid cursor.", Err: err}
		}
		q.Token = string(tok)
	}
	p, err := b.store.ListObjects(ctx, q)
	if err != nil {
		return nil, storeErr("list", err)
	}
	out := &Listing{Objects: make([]*Object, 0, len(p.Objects)), DelimitedPrefixes: make([]string, 0, len(p.Prefixes))}
	for _, so := range p.Objects {
		k, ok := strings.CutPrefix(so.Key, b.prefix)
		if !ok {
			return nil, fail("list", CodeInternal, fmt.Errorf("store listed %q outside %q", so.Key, b.prefix))
		}
		out.Objects = append(out.Objects, b.record(k, bucket.ObjectInfo{Object: so}))
	}
	for _, cp := range p.Prefixes {
		out.DelimitedPrefixes = append(out.DelimitedPrefixes, strings.TrimPrefix(cp, b.prefix))
	}
	if p.Next != "" {
		out.Truncated = true
		out.Cursor = base64.RawURLEncoding.EncodeToString([]byte(p.Next))
	}
	if o.HTTP || o.Custom {
		if err := b.fillMeta(ctx, out.Objects, o); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fillMeta reads each listed object's metadata (a listing carries none).
func (b *Bucket) fillMeta(ctx context.Context, objs []*Object, o ListOptions) error {
	type res struct {
		i   int
		obj *Object
		err error
	}
	ch := make(chan res, len(objs))
	sem := make(chan struct{}, listHeads)
	for i, obj := range objs {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			full, err := b.Head(ctx, obj.Key)
			ch <- res{i, full, err}
		}()
	}
	for range objs {
		r := <-ch
		if r.err != nil {
			return relabel("list", r.err)
		}
		if r.obj == nil {
			continue // deleted since the listing
		}
		dst := objs[r.i]
		dst.Version, dst.Checksums, dst.StorageClass = r.obj.Version, r.obj.Checksums, r.obj.StorageClass
		if o.HTTP {
			dst.HTTP = r.obj.HTTP
		}
		if o.Custom {
			dst.Custom, dst.CustomKeys = r.obj.Custom, r.obj.CustomKeys
		}
	}
	return nil
}
