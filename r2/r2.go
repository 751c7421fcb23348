// Package r2 is R2 on the fleet's own bucket: the objects of an R2 bucket
// named B live under r2/B/<key>, reached through bucket.Objects, so no
// second store or credential is needed. The Workers binding (r2/r2js) and
// `celld r2` both go through it.
//
// It decides R2's semantics — conditionals, ranges, checksums, listing
// with a delimiter, multipart uploads, the metadata envelope — and leaves
// storage to the store. It holds no JavaScript engine.
package r2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/celldgo/celld/bucket"
)

// Limits, as R2 (and workerd's local simulator) enforce them.
const (
	MaxKeyBytes      = 1024
	MaxListLimit     = 1000
	MaxMetadataBytes = 2048
	// PartSize is the size of each part a streamed put of unknown length
	// (or any put larger than one part) is uploaded in, and so the memory
	// one upload holds. R2 wants parts of one size but the last.
	PartSize = 8 << 20
	// MaxObjectBytes is the largest object one put accepts.
	MaxObjectBytes = 5<<40 - 5<<30
	// PartsInFlight is how many parts of one put go to the store at once.
	PartsInFlight = 2
)

// Error is an R2 failure with the code and text workerd reports, e.g.
// "put: The specified object name is not valid. (10020)".
type Error struct {
	Op      string // get, head, put, delete, list, createMultipartUpload, ...
	Code    int
	Message string
	Err     error // the cause, if any
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (%d)", e.Op, e.Message, e.Code) }
func (e *Error) Unwrap() error { return e.Err }

// R2 error codes.
const (
	CodeInternal          = 10001
	CodeEntityTooLarge    = 100100
	CodeEntityTooSmall    = 10011
	CodeMetadataTooLarge  = 10012
	CodeInvalidObjectName = 10020
	CodeInvalidMaxKeys    = 10022
	CodeNoSuchUpload      = 10024
	CodeInvalidPart       = 10025
	CodeInvalidArgument   = 10029
	CodePrecondition      = 10031
	CodeBadDigest         = 10037
	CodeInvalidRange      = 10039
	CodeBadUpload         = 10048
)

var messages = map[int]string{
	CodeInternal:          "We encountered an internal error. Please try again.",
	CodeEntityTooLarge:    "Your proposed upload exceeds the maximum allowed object size.",
	CodeEntityTooSmall:    "Your proposed upload is smaller than the minimum allowed object size.",
	CodeMetadataTooLarge:  "Your metadata headers exceed the maximum allowed metadata size.",
	CodeInvalidObjectName: "The specified object name is not valid.",
	CodeInvalidMaxKeys:    "MaxKeys params must be positive integer <= 1000.",
	CodeNoSuchUpload:      "The specified multipart upload does not exist.",
	CodeInvalidPart:       "One or more of the specified parts could not be found.",
	CodePrecondition:      "At least one of the pre-conditions you specified did not hold.",
	CodeInvalidRange:      "The requested range is not satisfiable",
	CodeBadUpload:         "There was a problem with the multipart upload.",
	CodeInvalidArgument:   "Invalid argument.",
}

func fail(op string, code int, cause error) *Error {
	return &Error{Op: op, Code: code, Message: messages[code], Err: cause}
}

// storeErr maps a store failure to R2's error.
func storeErr(op string, err error) error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.Is(err, bucket.ErrInvalidRange):
		return fail(op, CodeInvalidRange, err)
	case errors.Is(err, bucket.ErrInvalidKey):
		return fail(op, CodeInvalidObjectName, err)
	case errors.Is(err, bucket.ErrNoSuchUpload):
		return fail(op, CodeNoSuchUpload, err)
	case errors.Is(err, bucket.ErrInvalidPart):
		return fail(op, CodeInvalidPart, err)
	case errors.Is(err, bucket.ErrEntityTooSmall):
		return fail(op, CodeEntityTooSmall, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return fail(op, CodeInternal, err)
}

// ErrNoObjectStore: the fleet's store cannot hold R2 objects.
var ErrNoObjectStore = errors.New("R2 bindings need a fleet bucket that holds objects (S3, file:// or memory)")

// ErrBucketName: an R2 bucket name Cloudflare would refuse.
var ErrBucketName = errors.New("invalid R2 bucket name")

// ValidateName checks an R2 bucket name as Cloudflare does: 3 to 63
// characters of a-z, 0-9 and "-", starting and ending with a letter or
// digit.
func ValidateName(name string) error {
	ok := len(name) >= 3 && len(name) <= 63
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		ok = alnum || (c == '-' && i > 0 && i < len(name)-1)
	}
	if !ok {
		return fmt.Errorf("%w %q: use 3-63 characters of a-z, 0-9 and -, starting and ending with a letter or digit", ErrBucketName, name)
	}
	return nil
}

// Bucket is one R2 bucket in the fleet's store.
type Bucket struct {
	store  bucket.Objects
	name   string
	prefix string // "r2/<name>/"
	// Gate, when set, is awaited before every mutation: a Durable Object's
	// binding waits there until the object's earlier writes are durable.
	Gate func(ctx context.Context) error
}

// Open returns bucket name in s.
func Open(s bucket.Store, name string) (*Bucket, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	objs, ok := s.(bucket.Objects)
	if !ok {
		return nil, fmt.Errorf("open r2 bucket %s on %s: %w", name, s, ErrNoObjectStore)
	}
	return &Bucket{store: objs, name: name, prefix: "r2/" + name + "/"}, nil
}

// Name is the bucket's name.
func (b *Bucket) Name() string { return b.name }

// WithGate returns a copy of b whose mutations first await gate.
func (b *Bucket) WithGate(gate func(ctx context.Context) error) *Bucket {
	c := *b
	c.Gate = gate
	return &c
}

func (b *Bucket) gate(ctx context.Context, op string) error {
	if b.Gate == nil {
		return nil
	}
	if err := b.Gate(ctx); err != nil {
		return &Error{Op: op, Code: CodeInternal,
			Message: "celld withheld the write: the object's earlier writes could not be confirmed durable", Err: err}
	}
	return nil
}

func checkKey(op, key string) error {
	if len(key) > MaxKeyBytes {
		return fail(op, CodeInvalidObjectName, fmt.Errorf("key of %d bytes (at most %d)", len(key), MaxKeyBytes))
	}
	return nil
}

// HTTPMetadata are the five content headers and the cache expiry.
type HTTPMetadata struct {
	ContentType        string     `json:"contentType,omitempty"`
	ContentLanguage    string     `json:"contentLanguage,omitempty"`
	ContentDisposition string     `json:"contentDisposition,omitempty"`
	ContentEncoding    string     `json:"contentEncoding,omitempty"`
	CacheControl       string     `json:"cacheControl,omitempty"`
	CacheExpiry        *time.Time `json:"cacheExpiry,omitempty"`
}

// Range is the span of an object a get returned.
type Range struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}

// Object is an R2 object's record.
type Object struct {
	Key          string            `json:"key"`
	Version      string            `json:"version"`
	Size         int64             `json:"size"`
	ETag         string            `json:"etag"`
	Uploaded     time.Time         `json:"uploaded"`
	HTTP         HTTPMetadata      `json:"httpMetadata"`
	Custom       map[string]string `json:"customMetadata"`
	CustomKeys   []string          `json:"-"`         // Custom's keys in the order they were written
	Checksums    map[string]string `json:"checksums"` // algorithm (md5, sha1, ...) → lowercase hex
	StorageClass string            `json:"storageClass"`
	Range        *Range            `json:"range,omitempty"`
}

// HTTPETag is the ETag quoted, for a header.
func (o *Object) HTTPETag() string { return `"` + o.ETag + `"` }

// Conditional is R2Conditional (or the conditional headers).
type Conditional struct {
	ETagMatches        []ETagCond
	ETagDoesNotMatch   []ETagCond
	UploadedBefore     *time.Time
	UploadedAfter      *time.Time
	SecondsGranularity bool
}

// ETagCond is one ETag of a condition: "*" (Wildcard), or a value,
// strong or weak (W/"…").
type ETagCond struct {
	Value    string
	Weak     bool
	Wildcard bool
}

func includesETag(cs []ETagCond, etag string, weakOK bool) bool {
	for _, c := range cs {
		if c.Wildcard || (c.Value == etag && (!c.Weak || weakOK)) {
			return true
		}
	}
	return false
}

// Holds reports whether c holds for o (nil: the object is missing). The
// rules are HTTP's: If-Match overrides If-Unmodified-Since, If-None-Match
// overrides If-Modified-Since.
func (c *Conditional) Holds(o *Object) bool {
	if c == nil {
		return true
	}
	if o == nil {
		return c.ETagMatches == nil && c.UploadedAfter == nil
	}
	trunc := func(t time.Time) time.Time {
		if c.SecondsGranularity {
			return t.Truncate(time.Second)
		}
		return t.Truncate(time.Millisecond)
	}
	up := trunc(o.Uploaded)
	ifMatch := c.ETagMatches == nil || includesETag(c.ETagMatches, o.ETag, false)
	ifNoneMatch := c.ETagDoesNotMatch == nil || !includesETag(c.ETagDoesNotMatch, o.ETag, true)
	ifModifiedSince := c.UploadedAfter == nil || trunc(*c.UploadedAfter).Before(up) || (c.ETagDoesNotMatch != nil && ifNoneMatch)
	ifUnmodifiedSince := c.UploadedBefore == nil || up.Before(trunc(*c.UploadedBefore)) || (c.ETagMatches != nil && ifMatch)
	return ifMatch && ifNoneMatch && ifModifiedSince && ifUnmodifiedSince
}

// Head returns key's record, or nil if there is none.
func (b *Bucket) Head(ctx context.Context, key string) (*Object, error) {
	if err := checkKey("head", key); err != nil {
		return nil, err
	}
	oi, err := b.store.HeadObject(ctx, b.prefix+key)
	if errors.Is(err, bucket.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, storeErr("head", err)
	}
	o := b.record(key, oi)
	o.Range = &Range{Offset: 0, Length: o.Size}
	return o, nil
}

// GetRange is a get's range in one of R2's spellings; the zero value is
// the whole object.
type GetRange struct {
	Offset, Length, Suffix *int64
}

// GetOptions are a get's range and condition.
type GetOptions struct {
	Range  *GetRange
	OnlyIf *Conditional
}

// Get returns key's record and a reader of its bytes (or of the range's).
// A missing key is (nil, nil, nil); a condition that does not hold gives
// the record with a nil reader. The caller closes the reader.
func (b *Bucket) Get(ctx context.Context, key string, o GetOptions) (*Object, io.ReadCloser, error) {
	if err := checkKey("get", key); err != nil {
		return nil, nil, err
	}
	var rng *bucket.Range
	if r := o.Range; r != nil {
		var err error
		if rng, err = r.bucketRange(); err != nil {
			return nil, nil, err
		}
	}
	rc, oi, err := b.store.GetObject(ctx, b.prefix+key, rng)
	if errors.Is(err, bucket.ErrInvalidRange) && o.OnlyIf != nil {
		// The range is checked after the condition: a refused get of a
		// short object is still a refusal.
		if obj, herr := b.Head(ctx, key); herr == nil && obj != nil && !o.OnlyIf.Holds(obj) {
			return obj, nil, nil
		}
	}
	if errors.Is(err, bucket.ErrNotFound) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, storeErr("get", err)
	}
	obj := b.record(key, oi)
	lo, hi := int64(0), oi.Size
	if rng != nil {
		lo, hi, _ = rng.Resolve(oi.Size)
	}
	obj.Range = &Range{Offset: lo, Length: hi - lo}
	if !o.OnlyIf.Holds(obj) {
		rc.Close()
		return obj, nil, nil
	}
	return obj, rc, nil
}

// bucketRange turns R2's range spellings into a store range, with the
// simulator's checks: a suffix or length must be positive.
func (r *GetRange) bucketRange() (*bucket.Range, error) {
	bad := func() (*bucket.Range, error) {
		return nil, fail("get", CodeInvalidRange, nil)
	}
	switch {
	case r.Suffix != nil:
		if *r.Suffix <= 0 {
			return bad()
		}
		x := bucket.Last(*r.Suffix)
		return &x, nil
	case r.Offset == nil && r.Length == nil:
		return nil, nil
	}
	off := int64(0)
	if r.Offset != nil {
		off = *r.Offset
	}
	if off < 0 {
		return bad()
	}
	if r.Length == nil {
		x := bucket.From(off)
		return &x, nil
	}
	if *r.Length <= 0 {
		return bad()
	}
	x := bucket.Bytes(off, off+*r.Length-1)
	return &x, nil
}

// Delete removes keys; missing ones are not an error.
func (b *Bucket) Delete(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if err := checkKey("delete", k); err != nil {
			return err
		}
	}
	if err := b.gate(ctx, "delete"); err != nil {
		return err
	}
	errs := make(chan error, len(keys))
	sem := make(chan struct{}, 16)
	for _, k := range keys {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			errs <- b.store.DeleteObject(ctx, b.prefix+k)
		}()
	}
	var first error
	for range keys {
		if err := <-errs; err != nil && first == nil {
			first = storeErr("delete", err)
		}
	}
	return first
}
