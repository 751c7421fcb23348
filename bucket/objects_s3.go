package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/minio/minio-go/v7"
)

var _ Objects = (*S3)(nil)

func (s *S3) beginObject(ctx context.Context, key string) error {
	if err := CheckObjectKey(key); err != nil {
		return err
	}
	return ctxErr(ctx)
}

// putOptions renders meta as minio-go's put options.
func putOptions(m Meta) minio.PutObjectOptions {
	o := minio.PutObjectOptions{
		ContentType:        m.ContentType,
		ContentLanguage:    m.ContentLanguage,
		ContentDisposition: m.ContentDisposition,
		ContentEncoding:    m.ContentEncoding,
		CacheControl:       m.CacheControl,
		UserMetadata:       m.User,
	}
	if o.ContentType == "" {
		// minio-go would send application/octet-stream, which a later read
		// could not tell from one the writer chose.
		o.ContentType = "binary/octet-stream"
	}
	if m.Expires != "" {
		if t, err := http.ParseTime(m.Expires); err == nil {
			o.Expires = t
		}
	}
	return o
}

// metaOf reads the headers and user metadata of a stored object.
func metaOf(info minio.ObjectInfo) Meta {
	h := info.Metadata
	m := Meta{
		ContentType:        info.ContentType,
		ContentLanguage:    h.Get("Content-Language"),
		ContentDisposition: h.Get("Content-Disposition"),
		ContentEncoding:    h.Get("Content-Encoding"),
		CacheControl:       h.Get("Cache-Control"),
		Expires:            h.Get("Expires"),
	}
	if m.ContentType == "binary/octet-stream" {
		m.ContentType = "" // our own placeholder (putOptions): none was given
	}
	if !info.Expires.IsZero() && m.Expires == "" {
		m.Expires = info.Expires.UTC().Format(http.TimeFormat)
	}
	for k, v := range info.UserMetadata {
		if m.User == nil {
			m.User = map[string]string{}
		}
		m.User[strings.ToLower(k)] = v
	}
	if m.User == nil {
		// minio-go leaves UserMetadata empty on a GET; the headers hold it.
		for k, vs := range h {
			if name, ok := strings.CutPrefix(strings.ToLower(k), "x-amz-meta-"); ok && len(vs) > 0 {
				if m.User == nil {
					m.User = map[string]string{}
				}
				m.User[name] = vs[0]
			}
		}
	}
	return m
}

func (s *S3) PutObject(ctx context.Context, key string, r io.Reader, size int64, o PutOptions) (ObjectInfo, error) {
	if err := s.beginObject(ctx, key); err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w", key, err)
	}
	if size < 0 || size > maxSinglePut {
		return ObjectInfo{}, fmt.Errorf("put %s: %w: %d bytes do not fit one PUT", key, errNotSent, size)
	}
	opts := putOptions(o.Meta)
	opts.DisableMultipart = true
	// The payload goes unsigned: signing it would read it twice (once to
	// hash it, once to send it). The ETag the store answers with is the
	// MD5 of what it received, for a caller that wants to check.
	opts.DisableContentSha256 = true
	switch o.Cond.Kind {
	case CondNone:
	case CondIfAbsent:
		opts.SetMatchETagExcept("*")
	case CondIfMatch:
		opts.SetMatchETag(o.Cond.ETag)
	}
	cs := new(callState)
	info, err := s.put.PutObject(context.WithValue(ctx, callKey{}, cs), s.bucket, s.prefix+key,
		bodyOf(r, size), size, opts)
	if err != nil {
		if !cs.sent.Load() {
			err = fmt.Errorf("%w: %w", errNotSent, err)
		}
		return ObjectInfo{}, fmt.Errorf("put %s: %w", key, s3err(OpWrite, o.Cond, err))
	}
	return ObjectInfo{
		Object: Object{Key: key, ETag: strings.Trim(info.ETag, `"`), Size: size, Modified: nowMillis()},
		Meta:   cloneMeta(o.Meta),
	}, nil
}

// bodyOf wraps a write's source so a short one fails. A seekable source
// stays seekable: minio-go then signs it with one hash of the payload
// instead of re-signing it chunk by chunk as it streams.
func bodyOf(r io.Reader, size int64) io.Reader {
	if rs, ok := r.(io.ReadSeeker); ok {
		if pos, err := rs.Seek(0, io.SeekCurrent); err == nil && pos == 0 {
			return &sizedReader{rs, size}
		}
	}
	return &exactReader{r: r, left: size}
}

// exactReader fails a source that ends before its promised size: a short
// body must not become a shorter object.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if err == io.EOF && e.left > 0 {
		err = io.ErrUnexpectedEOF
	} else if err == io.EOF {
		err = nil
	}
	if e.left == 0 && err == nil {
		return n, io.EOF
	}
	return n, err
}

func (s *S3) GetObject(ctx context.Context, key string, rng *Range) (io.ReadCloser, ObjectInfo, error) {
	if err := s.beginObject(ctx, key); err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("get %s: %w", key, err)
	}
	var opts minio.GetObjectOptions
	if rng != nil {
		if !rng.valid() {
			return nil, ObjectInfo{}, fmt.Errorf("get %s: %w: %s", key, ErrInvalidRange, rng.Header())
		}
		opts.Set("Range", rng.Header())
	}
	body, info, hdr, err := s.read.GetObject(ctx, s.bucket, s.prefix+key, opts)
	if err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("get %s: %w", key, s3err(OpRead, Cond{}, err))
	}
	info.Metadata = hdr
	oi := ObjectInfo{Object: s.object(key, info), Meta: metaOf(info)}
	if total, ok := contentRangeTotal(hdr.Get("Content-Range")); ok {
		oi.Size = total
	}
	return body, oi, nil
}

func (s *S3) HeadObject(ctx context.Context, key string) (ObjectInfo, error) {
	if err := s.beginObject(ctx, key); err != nil {
		return ObjectInfo{}, fmt.Errorf("head %s: %w", key, err)
	}
	info, err := s.read.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("head %s: %w", key, s3err(OpRead, Cond{}, err))
	}
	return ObjectInfo{Object: s.object(key, info), Meta: metaOf(info)}, nil
}

func (s *S3) DeleteObject(ctx context.Context, key string) error {
	if err := s.beginObject(ctx, key); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	err := s.read.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{})
	if err == nil {
		return nil
	}
	if err = s3err(OpDelete, Cond{}, err); errors.Is(err, ErrNotFound) {
		return nil
	}
	return fmt.Errorf("delete %s: %w", key, err)
}

func (s *S3) ListObjects(ctx context.Context, q ListQuery) (ObjectPage, error) {
	if err := ctxErr(ctx); err != nil {
		return ObjectPage{}, fmt.Errorf("list %s: %w", q.Prefix, err)
	}
	after := ""
	if q.StartAfter != "" {
		after = s.prefix + q.StartAfter
	}
	type answer struct {
		r   minio.ListBucketV2Result
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		r, err := s.read.ListObjectsV2(s.bucket, s.prefix+q.Prefix, after, q.Token, q.Delimiter, checkLimit(q.Limit))
		ch <- answer{r, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		return ObjectPage{}, fmt.Errorf("list %s: %w", q.Prefix, s3err(OpRead, Cond{}, ctx.Err()))
	}
	if a.err != nil {
		return ObjectPage{}, fmt.Errorf("list %s: %w", q.Prefix, s3err(OpRead, Cond{}, a.err))
	}
	var p ObjectPage
	for _, c := range a.r.Contents {
		k, ok := strings.CutPrefix(c.Key, s.prefix)
		if !ok {
			return ObjectPage{}, fmt.Errorf("list %s: store returned key %q outside prefix %q", q.Prefix, c.Key, s.prefix)
		}
		p.Objects = append(p.Objects, Object{Key: k, ETag: strings.Trim(c.ETag, `"`), Size: c.Size, Modified: c.LastModified})
	}
	for _, c := range a.r.CommonPrefixes {
		k, ok := strings.CutPrefix(c.Prefix, s.prefix)
		if !ok {
			return ObjectPage{}, fmt.Errorf("list %s: store returned prefix %q outside prefix %q", q.Prefix, c.Prefix, s.prefix)
		}
		p.Prefixes = append(p.Prefixes, k)
	}
	if a.r.IsTruncated {
		p.Next = a.r.NextContinuationToken
		if p.Next == "" {
			return ObjectPage{}, fmt.Errorf("list %s: the store said more keys follow but gave no continuation token", q.Prefix)
		}
	}
	return p, nil
}

// writer is a Core on the client that sends each write once.
func (s *S3) writer() minio.Core { return minio.Core{Client: s.put} }

func (s *S3) CreateMultipart(ctx context.Context, key string, meta Meta) (string, error) {
	if err := s.beginObject(ctx, key); err != nil {
		return "", fmt.Errorf("create upload %s: %w", key, err)
	}
	id, err := s.writer().NewMultipartUpload(ctx, s.bucket, s.prefix+key, putOptions(meta))
	if err != nil {
		return "", fmt.Errorf("create upload %s: %w", key, s3objErr(OpWrite, err))
	}
	return id, nil
}

func (s *S3) UploadPart(ctx context.Context, key, uploadID string, n int, r io.Reader, size int64) (string, error) {
	if err := s.beginObject(ctx, key); err != nil {
		return "", fmt.Errorf("upload part %d of %s: %w", n, key, err)
	}
	if n < 1 || n > MaxParts {
		return "", fmt.Errorf("upload part %d of %s: %w: part numbers run 1..%d", n, key, ErrInvalidPart, MaxParts)
	}
	p, err := s.writer().PutObjectPart(ctx, s.bucket, s.prefix+key, uploadID, n, bodyOf(r, size), size,
		minio.PutObjectPartOptions{DisableContentSha256: true}) // unsigned, as PutObject
	if err != nil {
		return "", fmt.Errorf("upload part %d of %s: %w", n, key, s3objErr(OpWrite, err))
	}
	return strings.Trim(p.ETag, `"`), nil
}

func (s *S3) CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) (ObjectInfo, error) {
	if err := s.beginObject(ctx, key); err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	if err := checkParts(parts); err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	cps := make([]minio.CompletePart, len(parts))
	for i, p := range parts {
		cps[i] = minio.CompletePart{PartNumber: p.N, ETag: p.ETag}
	}
	if _, err := s.writer().CompleteMultipartUpload(ctx, s.bucket, s.prefix+key, uploadID, cps, minio.PutObjectOptions{}); err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, s3objErr(OpWrite, err))
	}
	// The answer holds no size or metadata: read them back.
	oi, err := s.HeadObject(ctx, key)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w: %w", key, ErrAmbiguous, err)
	}
	return oi, nil
}

func (s *S3) AbortMultipart(ctx context.Context, key, uploadID string) error {
	if err := s.beginObject(ctx, key); err != nil {
		return fmt.Errorf("abort upload %s: %w", key, err)
	}
	if err := s.writer().AbortMultipartUpload(ctx, s.bucket, s.prefix+key, uploadID); err != nil {
		return fmt.Errorf("abort upload %s: %w", key, s3objErr(OpDelete, err))
	}
	return nil
}

// s3objErr adds the multipart codes to s3err's classes.
func s3objErr(op Op, err error) error {
	var er minio.ErrorResponse
	if errors.As(err, &er) {
		switch er.Code {
		case "NoSuchUpload":
			return fmt.Errorf("%w: %s", ErrNoSuchUpload, er.Message)
		case "InvalidPart", "InvalidPartOrder":
			return fmt.Errorf("%w: %s", ErrInvalidPart, er.Message)
		case "EntityTooSmall":
			return fmt.Errorf("%w: %s", ErrEntityTooSmall, er.Message)
		}
	}
	return s3err(op, Cond{}, err)
}
