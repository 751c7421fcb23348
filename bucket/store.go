// Package bucket is the one seam between celld and object storage.
//
// Every node and every CLI command reaches the fleet's bucket through the
// Store interface. It decides what a storage outcome means — applied,
// rejected (a clean lost race), not found, or ambiguous (the write may have
// happened) — and it decides that in exactly one place (classify.go). It does
// not decide what to do about an outcome: callers above (fleet, cell,
// diagnose) settle an ambiguous write by re-reading, never by retrying blind.
package bucket

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Store is an object store with conditional writes. Implementations: S3
// (minio-go), File (a local directory, safe across processes), Mem (in
// memory, with fault injection).
type Store interface {
	// Get returns the whole object. A missing key is ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, Object, error)
	// GetRange returns the bytes of r. A missing key is ErrNotFound; a
	// range that starts past the end is ErrInvalidRange.
	GetRange(ctx context.Context, key string, r Range) ([]byte, Object, error)
	// Head returns the object's metadata. A missing key is ErrNotFound.
	Head(ctx context.Context, key string) (Object, error)
	// Put writes data under key if cond holds and returns the new object.
	// A condition that does not hold is ErrRejected; an outcome the store
	// did not report is ErrAmbiguous (re-read to settle it).
	Put(ctx context.Context, key string, data []byte, cond Cond) (Object, error)
	// Delete removes key. Deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// List returns up to limit objects whose keys start with prefix and sort
	// after startAfter, in byte order. Page.Truncated reports that more
	// keys follow the last one returned.
	List(ctx context.Context, prefix, startAfter string, limit int) (Page, error)
	// String names the store for messages, e.g. "s3://b/p at http://h:9000".
	String() string
}

// Object describes a stored object.
type Object struct {
	Key      string
	ETag     string // opaque, without quotes
	Size     int64
	Modified time.Time
}

// Page is one page of a listing.
type Page struct {
	Objects   []Object
	Truncated bool // more keys follow Objects[len-1]
}

// MaxListLimit is the largest page a List call returns, as on S3.
const MaxListLimit = 1000

// CondKind says which precondition a Put carries.
type CondKind uint8

const (
	CondNone     CondKind = iota // unconditional write
	CondIfAbsent                 // If-None-Match: *
	CondIfMatch                  // If-Match: <etag>
)

// Cond is a Put precondition. The zero value is unconditional.
type Cond struct {
	Kind CondKind
	ETag string // for CondIfMatch
}

// IfAbsent is create-if-absent.
func IfAbsent() Cond { return Cond{Kind: CondIfAbsent} }

// IfMatch is compare-and-swap on etag.
func IfMatch(etag string) Cond { return Cond{Kind: CondIfMatch, ETag: etag} }

func (c Cond) String() string {
	switch c.Kind {
	case CondIfAbsent:
		return "If-None-Match: *"
	case CondIfMatch:
		return fmt.Sprintf("If-Match: %q", c.ETag)
	default:
		return "unconditional"
	}
}

// Range selects bytes of an object, as an HTTP Range header does. Build it
// with Bytes, From or Last.
type Range struct {
	start, end int64 // inclusive; end < 0 means open
	suffix     int64 // > 0: the last suffix bytes
}

// Bytes is the inclusive range [start, end].
func Bytes(start, end int64) Range { return Range{start: start, end: end} }

// From is everything from start to the end of the object.
func From(start int64) Range { return Range{start: start, end: -1} }

// Last is the final n bytes (fewer if the object is shorter).
func Last(n int64) Range { return Range{suffix: n} }

func (r Range) valid() bool {
	switch {
	case r.suffix > 0:
		return r.start == 0 && r.end == 0
	case r.suffix < 0 || r.start < 0:
		return false
	case r.end >= 0:
		return r.end >= r.start
	default:
		return true
	}
}

// Header renders r as an HTTP Range header value.
func (r Range) Header() string {
	switch {
	case r.suffix > 0:
		return fmt.Sprintf("bytes=-%d", r.suffix)
	case r.end < 0:
		return fmt.Sprintf("bytes=%d-", r.start)
	default:
		return fmt.Sprintf("bytes=%d-%d", r.start, r.end)
	}
}

// Resolve returns the half-open byte span [lo, hi) that r selects in an
// object of size n, or ErrInvalidRange when it selects nothing.
func (r Range) Resolve(n int64) (lo, hi int64, err error) {
	if !r.valid() {
		return 0, 0, fmt.Errorf("%w: %s", ErrInvalidRange, r.Header())
	}
	if r.suffix > 0 {
		if n == 0 {
			return 0, 0, fmt.Errorf("%w: %s of an empty object", ErrInvalidRange, r.Header())
		}
		return max(0, n-r.suffix), n, nil
	}
	if r.start >= n {
		return 0, 0, fmt.Errorf("%w: %s of a %d-byte object", ErrInvalidRange, r.Header(), n)
	}
	hi = n
	if r.end >= 0 && r.end+1 < n {
		hi = r.end + 1
	}
	return r.start, hi, nil
}

// ListAll returns every object under prefix, following pages.
func ListAll(ctx context.Context, s Store, prefix string) ([]Object, error) {
	var all []Object
	after := ""
	for {
		p, err := s.List(ctx, prefix, after, MaxListLimit)
		if err != nil {
			return all, err
		}
		all = append(all, p.Objects...)
		if !p.Truncated || len(p.Objects) == 0 {
			return all, nil
		}
		after = p.Objects[len(p.Objects)-1].Key
	}
}

// CheckKey rejects keys that no store can hold the same way: empty, with a
// leading slash, empty, "." or ".." segments, or control characters.
func CheckKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if len(key) > 1024 {
		return fmt.Errorf("%w: %d bytes (at most 1024)", ErrInvalidKey, len(key))
	}
	for _, c := range key {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: %q holds a control character", ErrInvalidKey, key)
		}
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: %q has an empty, \".\" or \"..\" segment", ErrInvalidKey, key)
		}
	}
	return nil
}

func checkLimit(limit int) int {
	if limit <= 0 || limit > MaxListLimit {
		return MaxListLimit
	}
	return limit
}
