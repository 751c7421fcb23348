package bucket

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strings"
)

var _ Objects = (*Mem)(nil)

// memUpload is a multipart upload in progress.
type memUpload struct {
	key   string
	meta  Meta
	parts map[int][]byte
}

func (m *Mem) PutObject(ctx context.Context, key string, r io.Reader, size int64, o PutOptions) (ObjectInfo, error) {
	if err := CheckObjectKey(key); err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w", key, err)
	}
	data, err := readExactly(r, size)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w: %w", key, errNotSent, err)
	}
	sum := md5.Sum(data)
	return m.store(ctx, key, data, MD5ETag(sum[:]), o)
}

// store writes an application object under cond, through the fault hook.
func (m *Mem) store(ctx context.Context, key string, data []byte, etag string, o PutOptions) (ObjectInfo, error) {
	c := Call{Method: "put", Key: key, Cond: o.Cond}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return ObjectInfo{}, err
	}
	m.mu.Lock()
	cur, exists := m.objs[key]
	switch {
	case o.Cond.Kind == CondIfAbsent && exists:
		err = fmt.Errorf("put %s: %w (%s, object exists)", key, ErrRejected, o.Cond)
	case o.Cond.Kind == CondIfMatch && !exists:
		err = fmt.Errorf("put %s: %w (%s, object missing)", key, ErrRejected, o.Cond)
	case o.Cond.Kind == CondIfMatch && cur.etag != o.Cond.ETag:
		err = fmt.Errorf("put %s: %w (%s, current %q)", key, ErrRejected, o.Cond, cur.etag)
	}
	meta := cloneMeta(o.Meta)
	var obj memObject
	if err == nil {
		m.gen++
		obj = memObject{data: data, etag: etag, modified: nowMillis(), meta: &meta}
		m.objs[key] = obj
	}
	m.mu.Unlock()
	if err := after(c, f, err); err != nil {
		return ObjectInfo{}, err
	}
	return obj.objectInfo(key), nil
}

func (o memObject) objectInfo(key string) ObjectInfo {
	oi := ObjectInfo{Object: o.info(key)}
	if o.meta != nil {
		oi.Meta = cloneMeta(*o.meta)
	}
	return oi
}

func (m *Mem) GetObject(ctx context.Context, key string, rng *Range) (io.ReadCloser, ObjectInfo, error) {
	c := Call{Method: "get", Key: key}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return nil, ObjectInfo{}, err
	}
	m.mu.Lock()
	o, ok := m.objs[key]
	m.mu.Unlock()
	if !ok {
		return nil, ObjectInfo{}, after(c, f, fmt.Errorf("get %s: %w", key, ErrNotFound))
	}
	data := o.data
	if rng != nil {
		lo, hi, err := rng.Resolve(int64(len(data)))
		if err != nil {
			return nil, ObjectInfo{}, fmt.Errorf("get %s: %w", key, err)
		}
		data = data[lo:hi]
	}
	if err := after(c, f, nil); err != nil {
		return nil, ObjectInfo{}, err
	}
	// Stored bytes are never modified in place, so the reader shares them.
	return io.NopCloser(bytes.NewReader(data)), o.objectInfo(key), nil
}

func (m *Mem) HeadObject(ctx context.Context, key string) (ObjectInfo, error) {
	c := Call{Method: "head", Key: key}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return ObjectInfo{}, err
	}
	m.mu.Lock()
	o, ok := m.objs[key]
	m.mu.Unlock()
	if !ok {
		return ObjectInfo{}, after(c, f, fmt.Errorf("head %s: %w", key, ErrNotFound))
	}
	return o.objectInfo(key), after(c, f, nil)
}

func (m *Mem) DeleteObject(ctx context.Context, key string) error { return m.Delete(ctx, key) }

func (m *Mem) ListObjects(ctx context.Context, q ListQuery) (ObjectPage, error) {
	c := Call{Method: "list", Key: q.Prefix}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return ObjectPage{}, err
	}
	m.mu.Lock()
	keys := make([]string, 0)
	for k := range m.objs {
		if strings.HasPrefix(k, q.Prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	p := listSorted(keys, func(k string) (Object, bool) { return m.objs[k].info(k), true }, q)
	m.mu.Unlock()
	return p, after(c, f, nil)
}

func newUploadID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (m *Mem) CreateMultipart(ctx context.Context, key string, meta Meta) (string, error) {
	if err := CheckObjectKey(key); err != nil {
		return "", fmt.Errorf("create upload %s: %w", key, err)
	}
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	id := newUploadID()
	m.mu.Lock()
	if m.uploads == nil {
		m.uploads = map[string]*memUpload{}
	}
	m.uploads[id] = &memUpload{key: key, meta: cloneMeta(meta), parts: map[int][]byte{}}
	m.mu.Unlock()
	return id, nil
}

func (m *Mem) upload(key, id string) (*memUpload, error) {
	u := m.uploads[id]
	if u == nil || u.key != key {
		return nil, fmt.Errorf("%w: %q for %s", ErrNoSuchUpload, id, key)
	}
	return u, nil
}

func (m *Mem) UploadPart(ctx context.Context, key, uploadID string, n int, r io.Reader, size int64) (string, error) {
	if n < 1 || n > MaxParts {
		return "", fmt.Errorf("upload part %d of %s: %w: part numbers run 1..%d", n, key, ErrInvalidPart, MaxParts)
	}
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	data, err := readExactly(r, size)
	if err != nil {
		return "", fmt.Errorf("upload part %d of %s: %w: %w", n, key, errNotSent, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	u, err := m.upload(key, uploadID)
	if err != nil {
		return "", fmt.Errorf("upload part %d of %s: %w", n, key, err)
	}
	u.parts[n] = data
	sum := md5.Sum(data)
	return MD5ETag(sum[:]), nil
}

func (m *Mem) CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) (ObjectInfo, error) {
	if err := checkParts(parts); err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	m.mu.Lock()
	u, err := m.upload(key, uploadID)
	var data []byte
	var etags []string
	for i, p := range parts {
		if err != nil {
			break
		}
		b, ok := u.parts[p.N]
		sum := md5.Sum(b)
		switch {
		case !ok || MD5ETag(sum[:]) != strings.Trim(p.ETag, `"`):
			err = fmt.Errorf("%w: part %d with etag %q was not uploaded", ErrInvalidPart, p.N, p.ETag)
		case i < len(parts)-1 && len(b) < MinPartSize:
			err = fmt.Errorf("%w: part %d holds %d bytes, under %d", ErrEntityTooSmall, p.N, len(b), MinPartSize)
		}
		data = append(data, b...)
		etags = append(etags, MD5ETag(sum[:]))
	}
	if err == nil {
		delete(m.uploads, uploadID)
	}
	m.mu.Unlock()
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	etag, err := MultipartETag(etags)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	return m.store(ctx, key, data, etag, PutOptions{Meta: u.meta})
}

func (m *Mem) AbortMultipart(ctx context.Context, key, uploadID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.upload(key, uploadID); err != nil {
		return fmt.Errorf("abort upload %s: %w", key, err)
	}
	delete(m.uploads, uploadID)
	return nil
}

// readExactly reads size bytes of r and fails if it holds fewer or more.
func readExactly(r io.Reader, size int64) ([]byte, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative size %d", size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("read %d bytes: %w", size, err)
	}
	return data, nil
}
