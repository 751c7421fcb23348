package r2

import (
	"context"
	"errors"
	"io"

	"github.com/celldgo/celld/bucket"
)

// MultipartOptions are createMultipartUpload's.
type MultipartOptions struct {
	HTTP         HTTPMetadata
	Custom       map[string]string
	CustomKeys   []string // Custom's keys in the order written (else sorted)
	StorageClass string
}

// CreateMultipart starts an upload of key and returns its id. The id is
// the store's own, so any node (or the CLI) can resume the upload.
func (b *Bucket) CreateMultipart(ctx context.Context, key string, o MultipartOptions) (string, error) {
	const op = "createMultipartUpload"
	if err := checkKey(op, key); err != nil {
		return "", err
	}
	if MetadataSize(o.Custom) > MaxMetadataBytes {
		return "", fail(op, CodeMetadataTooLarge, nil)
	}
	if err := b.gate(ctx, op); err != nil {
		return "", err
	}
	id, err := b.store.CreateMultipart(ctx, b.prefix+key, storeMeta(o.HTTP, o.Custom, o.CustomKeys, nil, o.StorageClass, newVersion()))
	if err != nil {
		return "", storeErr(op, err)
	}
	return id, nil
}

// UploadPart stores part n of an upload and returns its ETag.
func (b *Bucket) UploadPart(ctx context.Context, key, id string, n int, body io.Reader, size int64) (string, error) {
	const op = "uploadPart"
	if err := checkKey(op, key); err != nil {
		return "", err
	}
	if n < 1 || n > bucket.MaxParts {
		return "", &Error{Op: op, Code: CodeInvalidPart, Message: "Part number must be between 1 and 10000 (inclusive)."}
	}
	if err := b.gate(ctx, op); err != nil {
		return "", err
	}
	etag, err := b.store.UploadPart(ctx, b.prefix+key, id, n, body, size)
	if err != nil {
		return "", storeErr(op, err)
	}
	return etag, nil
}

// CompleteMultipart joins parts into the object.
func (b *Bucket) CompleteMultipart(ctx context.Context, key, id string, parts []bucket.Part) (*Object, error) {
	const op = "completeMultipartUpload"
	if err := checkKey(op, key); err != nil {
		return nil, err
	}
	if err := b.gate(ctx, op); err != nil {
		return nil, err
	}
	sortParts(parts)
	oi, err := b.store.CompleteMultipart(ctx, b.prefix+key, id, parts)
	if errors.Is(err, bucket.ErrEntityTooSmall) {
		return nil, fail(op, CodeEntityTooSmall, err)
	}
	if err != nil {
		return nil, storeErr(op, err)
	}
	return b.record(key, oi), nil
}

// AbortMultipart drops an upload.
func (b *Bucket) AbortMultipart(ctx context.Context, key, id string) error {
	const op = "abortMultipartUpload"
	if err := checkKey(op, key); err != nil {
		return err
	}
	if err := b.gate(ctx, op); err != nil {
		return err
	}
	err := b.store.AbortMultipart(ctx, b.prefix+key, id)
	if errors.Is(err, bucket.ErrNoSuchUpload) {
		return nil // as R2: aborting an unknown upload is not an error
	}
	if err != nil {
		return storeErr(op, err)
	}
	return nil
}
