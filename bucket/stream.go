package bucket

import (
	"bytes"
	"context"
	"fmt"
	"io"
)

// Streamer is implemented by stores that move an object's bytes without
// holding them all in memory (S3, File). PutStream and OpenStream use it,
// and fall back to Put and Get for any other Store — Mem, and wrappers
// that embed a Store, whose own Put and Get then see the call as usual.
type Streamer interface {
	// PutFrom writes the size bytes of r, from offset 0, under key if cond
	// holds: Put without the bytes in memory. r is read again from the
	// start if the store needs to (signing, a retry).
	PutFrom(ctx context.Context, key string, r io.ReaderAt, size int64, cond Cond) (Object, error)
	// Open returns a reader of key's bytes; the caller closes it. A missing
	// key is ErrNotFound. The Object has Key and Size; ETag may be empty.
	Open(ctx context.Context, key string) (io.ReadCloser, Object, error)
}

// PutStream writes size bytes of r under key through s, streaming them if
// s is a Streamer.
func PutStream(ctx context.Context, s Store, key string, r io.ReaderAt, size int64, cond Cond) (Object, error) {
	if st, ok := s.(Streamer); ok {
		return st.PutFrom(ctx, key, r, size, cond)
	}
	data, err := readAllAt(r, size)
	if err != nil {
		return Object{}, fmt.Errorf("put %s: %w: %w", key, errNotSent, err)
	}
	return s.Put(ctx, key, data, cond)
}

// OpenStream opens key through s, streaming it if s is a Streamer.
func OpenStream(ctx context.Context, s Store, key string) (io.ReadCloser, Object, error) {
	if st, ok := s.(Streamer); ok {
		return st.Open(ctx, key)
	}
	data, o, err := s.Get(ctx, key)
	if err != nil {
		return nil, Object{}, err
	}
	return io.NopCloser(bytes.NewReader(data)), o, nil
}

// readAllAt reads exactly size bytes of r from offset 0.
func readAllAt(r io.ReaderAt, size int64) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative size %d", size)
	}
	data := make([]byte, size)
	n, err := r.ReadAt(data, 0)
	if int64(n) == size {
		return data, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("read %d of %d bytes: %w", n, size, err)
}
