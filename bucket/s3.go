package bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// S3Config says where an S3 store lives and how to reach it.
type S3Config struct {
	Bucket string
	// Prefix scopes every key: "p/q" stores key k as "p/q/k". Empty means
	// the bucket root.
	Prefix string
	// Endpoint is a URL such as "http://127.0.0.1:9000"; its scheme decides
	// TLS and it is addressed path-style. Empty means AWS S3 in Region,
	// virtual-host style.
	Endpoint string
	// Region is sent with every request (default "us-east-1"), so the
	// client never asks the store for the bucket's location.
	Region string
	// Creds, when nil, is the standard AWS chain: AWS_* environment
	// variables, ~/.aws/credentials, then IAM (web identity, ECS, EC2).
	Creds *credentials.Credentials
	// HTTPTimeout bounds the wait for a response's headers (default 30s).
	HTTPTimeout time.Duration
}

// readAttempts is how many times minio-go may send an idempotent request
// (get, head, list, delete) before giving up. Writes are sent exactly once:
// see NewS3.
const readAttempts = 3

// S3 is a Store on an S3-compatible object store, through minio-go.
type S3 struct {
	bucket   string
	prefix   string // "" or ends in "/"
	endpoint string
	// put sends each request once; read, used for every idempotent call
	// (get, head, list, delete), lets minio-go retry.
	put  *minio.Client
	read minio.Core
}

var _ Store = (*S3)(nil)

// NewS3 returns a store on cfg's bucket. It does not contact the store.
//
// minio-go (v7.4.1) retries a request inside executeMethod up to
// Options.MaxRetries times (default MaxRetry = 10) on any transport error,
// on 5xx/408/429 and on codes such as InternalError or SlowDown, re-sending
// the same body. For a conditional PUT that would lie: a first attempt that
// applied and lost its response, retried, meets its own object and comes
// back 412 — "rejected" for a write that won. So Puts go through a client
// with MaxRetries 1 (one attempt; net/http itself re-sends a PUT only when
// nothing of it was written), and their failures are classified, not
// retried: a caller settles ErrAmbiguous by re-reading.
func NewS3(cfg S3Config) (*S3, error) {
	if err := s3utils.CheckValidBucketName(cfg.Bucket); err != nil {
		return nil, fmt.Errorf("s3 bucket %q: %w", cfg.Bucket, err)
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	endpoint := cfg.Endpoint
	lookup := minio.BucketLookupPath
	if endpoint == "" {
		endpoint = "https://s3." + region + ".amazonaws.com"
		lookup = minio.BucketLookupDNS
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("s3 endpoint %q: %w", endpoint, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("s3 endpoint %q: want http(s)://host[:port]", endpoint)
	}
	creds := cfg.Creds
	if creds == nil {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{},
			&credentials.FileAWSCredentials{},
			&credentials.IAM{},
		})
	}
	timeout := cfg.HTTPTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
		// Bodies are objects: never let net/http gunzip them.
		DisableCompression: true,
	}
	opts := func(retries int) *minio.Options {
		return &minio.Options{
			Creds:        creds,
			Secure:       u.Scheme == "https",
			Transport:    sentTracker{tr},
			Region:       region,
			BucketLookup: lookup,
			MaxRetries:   retries,
		}
	}
	put, err := minio.New(u.Host, opts(1))
	if err != nil {
		return nil, fmt.Errorf("s3 client for %s: %w", endpoint, err)
	}
	read, err := minio.New(u.Host, opts(readAttempts))
	if err != nil {
		return nil, fmt.Errorf("s3 client for %s: %w", endpoint, err)
	}
	prefix := strings.Trim(cfg.Prefix, "/")
	if prefix != "" {
		if err := CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("s3 prefix: %w", err)
		}
		prefix += "/"
	}
	return &S3{
		bucket:   cfg.Bucket,
		prefix:   prefix,
		endpoint: u.Scheme + "://" + u.Host,
		put:      put,
		read:     minio.Core{Client: read},
	}, nil
}

func (s *S3) String() string {
	return fmt.Sprintf("s3://%s at %s", strings.TrimSuffix(s.bucket+"/"+s.prefix, "/"), s.endpoint)
}

func (s *S3) Get(ctx context.Context, key string) ([]byte, Object, error) {
	return s.get(ctx, key, nil)
}

func (s *S3) GetRange(ctx context.Context, key string, r Range) ([]byte, Object, error) {
	if !r.valid() {
		return nil, Object{}, fmt.Errorf("get %s: %w: %s", key, ErrInvalidRange, r.Header())
	}
	return s.get(ctx, key, &r)
}

// get reads key, or the bytes of r. The Range header is r.Header() verbatim,
// so From(0) asks for "bytes=0-" and an empty object answers 416, as Resolve
// says it must. The bytes returned are exactly those the store sent.
func (s *S3) get(ctx context.Context, key string, r *Range) ([]byte, Object, error) {
	if err := s.begin(ctx, key); err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	var opts minio.GetObjectOptions
	if r != nil {
		opts.Set("Range", r.Header())
	}
	body, info, hdr, err := s.read.GetObject(ctx, s.bucket, s.prefix+key, opts)
	if err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, s3err(OpRead, Cond{}, err))
	}
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, Object{}, fmt.Errorf("get %s: reading body: %w", key, s3err(OpRead, Cond{}, err))
	}
	o := s.object(key, info)
	if total, ok := contentRangeTotal(hdr.Get("Content-Range")); ok {
		o.Size = total // the object's size, not the span's
	}
	return data, o, nil
}

// contentRangeTotal parses the size out of "bytes 0-9/1000".
func contentRangeTotal(v string) (int64, bool) {
	i := strings.LastIndexByte(v, '/')
	if i < 0 || !strings.HasPrefix(v, "bytes ") {
		return 0, false
	}
	n, err := strconv.ParseInt(v[i+1:], 10, 64)
	return n, err == nil && n >= 0
}

func (s *S3) Head(ctx context.Context, key string) (Object, error) {
	if err := s.begin(ctx, key); err != nil {
		return Object{}, fmt.Errorf("head %s: %w", key, err)
	}
	info, err := s.read.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return Object{}, fmt.Errorf("head %s: %w", key, s3err(OpRead, Cond{}, err))
	}
	return s.object(key, info), nil
}

func (s *S3) Put(ctx context.Context, key string, data []byte, cond Cond) (Object, error) {
	return s.putReader(ctx, key, bytes.NewReader(data), int64(len(data)), cond)
}

// maxSinglePut is the largest object S3 takes in one PUT.
const maxSinglePut = 5 << 30

// PutFrom is Put from a reader (Streamer). A conditional write must fit
// one PUT; an unconditional one larger than that goes in parts.
func (s *S3) PutFrom(ctx context.Context, key string, r io.ReaderAt, size int64, cond Cond) (Object, error) {
	if size > maxSinglePut && cond.Kind != CondNone {
		return Object{}, fmt.Errorf("put %s: %w: a conditional write of %d bytes exceeds one PUT", key, errNotSent, size)
	}
	return s.putReader(ctx, key, &sizedReader{io.NewSectionReader(r, 0, size), size}, size, cond)
}

// sizedReader fails a read that ends before size bytes: a source shorter
// than promised must not become a shorter object.
type sizedReader struct {
	io.ReadSeeker
	size int64
}

func (r *sizedReader) Read(p []byte) (int, error) {
	n, err := r.ReadSeeker.Read(p)
	if err == io.EOF {
		if pos, serr := r.Seek(0, io.SeekCurrent); serr == nil && pos < r.size {
			err = io.ErrUnexpectedEOF
		}
	}
	return n, err
}

// Open streams key's bytes (Streamer).
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, Object, error) {
	if err := s.begin(ctx, key); err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	body, info, _, err := s.read.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, s3err(OpRead, Cond{}, err))
	}
	return body, s.object(key, info), nil
}

func (s *S3) putReader(ctx context.Context, key string, body io.ReadSeeker, size int64, cond Cond) (Object, error) {
	if err := s.begin(ctx, key); err != nil {
		return Object{}, fmt.Errorf("put %s: %w", key, err)
	}
	opts := minio.PutObjectOptions{DisableMultipart: size <= maxSinglePut}
	switch cond.Kind {
	case CondNone:
	case CondIfAbsent:
		opts.SetMatchETagExcept("*")
	case CondIfMatch:
		if cond.ETag == "" || cond.ETag == "*" {
			return Object{}, fmt.Errorf("put %s: %w: %s is not an etag", key, errNotSent, cond)
		}
		opts.SetMatchETag(cond.ETag)
	default:
		return Object{}, fmt.Errorf("put %s: %w: unknown condition %d", key, errNotSent, cond.Kind)
	}
	cs := new(callState)
	info, err := s.put.PutObject(context.WithValue(ctx, callKey{}, cs), s.bucket, s.prefix+key,
		body, size, opts)
	if err != nil {
		if !cs.sent.Load() {
			// minio-go failed before handing the request to net/http
			// (credentials, validation): nothing can have been applied.
			err = fmt.Errorf("%w: %w", errNotSent, err)
		}
		return Object{}, fmt.Errorf("put %s: %w", key, s3err(OpWrite, cond, err))
	}
	// A PUT response carries no Last-Modified; the local clock at the
	// answer is the nearest we have without a second request.
	return Object{Key: key, ETag: strings.Trim(info.ETag, `"`), Size: size, Modified: time.Now()}, nil
}

func (s *S3) Delete(ctx context.Context, key string) error {
	if err := s.begin(ctx, key); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	err := s.read.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{})
	if err == nil {
		return nil
	}
	if err = s3err(OpDelete, Cond{}, err); errors.Is(err, ErrNotFound) {
		return nil // S3 answers 204 for a missing key; some stores 404
	}
	return fmt.Errorf("delete %s: %w", key, err)
}

func (s *S3) List(ctx context.Context, prefix, startAfter string, limit int) (Page, error) {
	if err := ctxErr(ctx); err != nil {
		return Page{}, fmt.Errorf("list %s: %w", prefix, err)
	}
	limit = checkLimit(limit)
	after := ""
	if startAfter != "" {
		after = s.prefix + startAfter
	}
	// Core.ListObjectsV2 is the call that reports IsTruncated exactly, but
	// it takes no context; wait for it or for ctx, whichever ends first. An
	// abandoned listing is a read, bounded by the transport's timeouts.
	type answer struct {
		r   minio.ListBucketV2Result
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		r, err := s.read.ListObjectsV2(s.bucket, s.prefix+prefix, after, "", "", limit)
		ch <- answer{r, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		return Page{}, fmt.Errorf("list %s: %w", prefix, s3err(OpRead, Cond{}, ctx.Err()))
	}
	if a.err != nil {
		return Page{}, fmt.Errorf("list %s: %w", prefix, s3err(OpRead, Cond{}, a.err))
	}
	p := Page{Truncated: a.r.IsTruncated, Objects: make([]Object, 0, len(a.r.Contents))}
	for _, c := range a.r.Contents {
		k, ok := strings.CutPrefix(c.Key, s.prefix)
		if !ok {
			return Page{}, fmt.Errorf("list %s: store returned key %q outside prefix %q", prefix, c.Key, s.prefix)
		}
		p.Objects = append(p.Objects, Object{Key: k, ETag: strings.Trim(c.ETag, `"`), Size: c.Size, Modified: c.LastModified})
	}
	return p, nil
}

// begin checks what must hold before any call: a usable key and a live
// context.
func (s *S3) begin(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	return ctxErr(ctx)
}

func (s *S3) object(key string, info minio.ObjectInfo) Object {
	return Object{Key: key, ETag: strings.Trim(info.ETag, `"`), Size: info.Size, Modified: info.LastModified}
}

// s3err turns a minio-go error into one of our sentinels, through Classify:
// the HTTP status and S3 code when the store answered, the transport error
// when it did not.
func s3err(op Op, cond Cond, err error) error {
	var er minio.ErrorResponse
	if !errors.As(err, &er) || er.StatusCode == 0 {
		return Classify(op, cond, Reply{Err: err})
	}
	c := Classify(op, cond, Reply{Status: er.StatusCode, Code: er.Code})
	if c == nil {
		// An error inside a 2xx reply: we cannot tell what happened.
		return Classify(op, cond, Reply{Err: err})
	}
	if er.Message != "" {
		return fmt.Errorf("%w: %s", c, er.Message)
	}
	return c
}

// callKey marks a Put's context so sentTracker can record that the request
// reached net/http: a write that failed before that was never sent.
type callKey struct{}

type callState struct{ sent atomic.Bool }

type sentTracker struct{ next http.RoundTripper }

func (t sentTracker) RoundTrip(r *http.Request) (*http.Response, error) {
	if cs, ok := r.Context().Value(callKey{}).(*callState); ok {
		cs.sent.Store(true)
	}
	return t.next.RoundTrip(r)
}
