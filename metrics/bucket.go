package metrics

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/celldgo/celld/bucket"
)

// Wrap returns s with every call counted in celld_bucket_requests_total
// and timed in celld_bucket_request_duration_seconds, and the LTX bytes
// it writes counted. The result implements bucket.Streamer and
// bucket.Objects exactly when s does, so callers that look for them
// (bucket.PutStream, R2) see the same store. A nil m returns s.
func (m *Metrics) Wrap(s bucket.Store) bucket.Store {
	if m == nil {
		return s
	}
	base := &store{s: s, m: m}
	st, streams := s.(bucket.Streamer)
	obj, objects := s.(bucket.Objects)
	switch {
	case streams && objects:
		return &fullStore{store: base, streamer: streamer{base, st}, objectStore: objectStore{base, obj}}
	case streams:
		return &streamStore{store: base, streamer: streamer{base, st}}
	case objects:
		return &objStore{store: base, objectStore: objectStore{base, obj}}
	}
	return base
}

type store struct {
	s bucket.Store
	m *Metrics
}

type streamStore struct {
	*store
	streamer
}

type objStore struct {
	*store
	objectStore
}

type fullStore struct {
	*store
	streamer
	objectStore
}

var (
	_ bucket.Store    = (*store)(nil)
	_ bucket.Streamer = (*streamStore)(nil)
	_ bucket.Objects  = (*objStore)(nil)
	_ bucket.Streamer = (*fullStore)(nil)
	_ bucket.Objects  = (*fullStore)(nil)
)

// observe records one call of op that started at start.
func (s *store) observe(op string, start time.Time, err error) {
	s.m.bucketRequests.WithLabelValues(op, bucket.OutcomeOf(err).String()).Inc()
	s.m.bucketSeconds.WithLabelValues(op).Observe(time.Since(start).Seconds())
}

// ltx counts the bytes of an LTX object written: a cell's replicated
// changes (cells/<cell>/ltx/e<epoch>/<min>-<max>.ltx, see
// docs/bucket-layout.md).
func (s *store) ltx(key string, size int64, err error) {
	if err == nil && strings.HasPrefix(key, "cells/") && strings.Contains(key, "/ltx/") && strings.HasSuffix(key, ".ltx") {
		s.m.ltxBytes.Add(float64(size))
	}
}

func (s *store) Get(ctx context.Context, key string) ([]byte, bucket.Object, error) {
	t := time.Now()
	b, o, err := s.s.Get(ctx, key)
	s.observe("get", t, err)
	return b, o, err
}

func (s *store) GetRange(ctx context.Context, key string, r bucket.Range) ([]byte, bucket.Object, error) {
	t := time.Now()
	b, o, err := s.s.GetRange(ctx, key, r)
	s.observe("get_range", t, err)
	return b, o, err
}

func (s *store) Head(ctx context.Context, key string) (bucket.Object, error) {
	t := time.Now()
	o, err := s.s.Head(ctx, key)
	s.observe("head", t, err)
	return o, err
}

func (s *store) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	t := time.Now()
	o, err := s.s.Put(ctx, key, data, cond)
	s.observe("put", t, err)
	s.ltx(key, int64(len(data)), err)
	return o, err
}

func (s *store) Delete(ctx context.Context, key string) error {
	t := time.Now()
	err := s.s.Delete(ctx, key)
	s.observe("delete", t, err)
	return err
}

func (s *store) List(ctx context.Context, prefix, startAfter string, limit int) (bucket.Page, error) {
	t := time.Now()
	p, err := s.s.List(ctx, prefix, startAfter, limit)
	s.observe("list", t, err)
	return p, err
}

func (s *store) String() string { return s.s.String() }

// Unwrap is the store underneath.
func (s *store) Unwrap() bucket.Store { return s.s }

type streamer struct {
	s  *store
	st bucket.Streamer
}

func (w streamer) PutFrom(ctx context.Context, key string, r io.ReaderAt, size int64, cond bucket.Cond) (bucket.Object, error) {
	t := time.Now()
	o, err := w.st.PutFrom(ctx, key, r, size, cond)
	w.s.observe("put", t, err)
	w.s.ltx(key, size, err)
	return o, err
}

// Open is timed until the reader is returned, not until it is drained.
func (w streamer) Open(ctx context.Context, key string) (io.ReadCloser, bucket.Object, error) {
	t := time.Now()
	rc, o, err := w.st.Open(ctx, key)
	w.s.observe("get", t, err)
	return rc, o, err
}

type objectStore struct {
	s *store
	o bucket.Objects
}

func (w objectStore) PutObject(ctx context.Context, key string, r io.Reader, size int64, o bucket.PutOptions) (bucket.ObjectInfo, error) {
	t := time.Now()
	info, err := w.o.PutObject(ctx, key, r, size, o)
	w.s.observe("object_put", t, err)
	return info, err
}

func (w objectStore) GetObject(ctx context.Context, key string, rng *bucket.Range) (io.ReadCloser, bucket.ObjectInfo, error) {
	t := time.Now()
	rc, info, err := w.o.GetObject(ctx, key, rng)
	w.s.observe("object_get", t, err)
	return rc, info, err
}

func (w objectStore) HeadObject(ctx context.Context, key string) (bucket.ObjectInfo, error) {
	t := time.Now()
	info, err := w.o.HeadObject(ctx, key)
	w.s.observe("object_head", t, err)
	return info, err
}

func (w objectStore) DeleteObject(ctx context.Context, key string) error {
	t := time.Now()
	err := w.o.DeleteObject(ctx, key)
	w.s.observe("object_delete", t, err)
	return err
}

func (w objectStore) ListObjects(ctx context.Context, q bucket.ListQuery) (bucket.ObjectPage, error) {
	t := time.Now()
	p, err := w.o.ListObjects(ctx, q)
	w.s.observe("object_list", t, err)
	return p, err
}

func (w objectStore) CreateMultipart(ctx context.Context, key string, meta bucket.Meta) (string, error) {
	t := time.Now()
	id, err := w.o.CreateMultipart(ctx, key, meta)
	w.s.observe("multipart_create", t, err)
	return id, err
}

func (w objectStore) UploadPart(ctx context.Context, key, uploadID string, n int, r io.Reader, size int64) (string, error) {
	t := time.Now()
	etag, err := w.o.UploadPart(ctx, key, uploadID, n, r, size)
	w.s.observe("multipart_upload_part", t, err)
	return etag, err
}

func (w objectStore) CompleteMultipart(ctx context.Context, key, uploadID string, parts []bucket.Part) (bucket.ObjectInfo, error) {
	t := time.Now()
	info, err := w.o.CompleteMultipart(ctx, key, uploadID, parts)
	w.s.observe("multipart_complete", t, err)
	return info, err
}

func (w objectStore) AbortMultipart(ctx context.Context, key, uploadID string) error {
	t := time.Now()
	err := w.o.AbortMultipart(ctx, key, uploadID)
	w.s.observe("multipart_abort", t, err)
	return err
}
