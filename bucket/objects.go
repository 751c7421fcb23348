package bucket

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Objects is implemented by stores that hold application objects — R2's
// objects, under r2/<bucket>/ — besides the fleet's own records. Unlike
// Store it takes keys of any bytes (empty segments, a trailing "/", "." and
// ".."), keeps the standard HTTP headers and user metadata of each object,
// streams both ways, lists with a delimiter and uploads in parts.
//
// An object's ETag is the MD5 of its bytes in hex, or for a multipart
// upload the MD5 of its parts' binary MD5s followed by "-<parts>", as S3
// computes them: the same bytes give the same ETag on every store.
type Objects interface {
	// PutObject writes the size bytes of r under key if cond holds, with
	// meta. A short r fails the write; nothing partial is stored.
	PutObject(ctx context.Context, key string, r io.Reader, size int64, o PutOptions) (ObjectInfo, error)
	// GetObject streams key's bytes, or those of rng when it is not nil.
	// The info's Size is the whole object's; Resolve(info.Size) gives the
	// span the reader holds. A missing key is ErrNotFound, a range that
	// selects nothing ErrInvalidRange.
	GetObject(ctx context.Context, key string, rng *Range) (io.ReadCloser, ObjectInfo, error)
	// HeadObject returns key's metadata. A missing key is ErrNotFound.
	HeadObject(ctx context.Context, key string) (ObjectInfo, error)
	// DeleteObject removes key; a missing key is not an error.
	DeleteObject(ctx context.Context, key string) error
	// ListObjects returns one page of the keys under q.Prefix in byte
	// order, folding keys that hold q.Delimiter after the prefix into
	// common prefixes. The returned objects carry no Meta.
	ListObjects(ctx context.Context, q ListQuery) (ObjectPage, error)
	// CreateMultipart starts a multipart upload of key and returns its id.
	CreateMultipart(ctx context.Context, key string, meta Meta) (string, error)
	// UploadPart stores part n (1..10000) of an upload and returns its
	// ETag. Uploading a part number again replaces it.
	UploadPart(ctx context.Context, key, uploadID string, n int, r io.Reader, size int64) (string, error)
	// CompleteMultipart joins parts, in ascending part number, into key.
	// Every part but the last must be at least MinPartSize bytes.
	CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) (ObjectInfo, error)
	// AbortMultipart drops an upload and its parts.
	AbortMultipart(ctx context.Context, key, uploadID string) error
}

// Errors of application objects.
var (
	// ErrNoSuchUpload: the multipart upload id is unknown, completed or
	// aborted.
	ErrNoSuchUpload = errors.New("no such multipart upload")
	// ErrInvalidPart: a part named at completion was never uploaded, or
	// its ETag does not match.
	ErrInvalidPart = errors.New("invalid part")
	// ErrEntityTooSmall: a part other than the last is under MinPartSize.
	ErrEntityTooSmall = errors.New("part too small")
)

// MinPartSize is the smallest part but the last of a multipart upload, as
// on S3.
const MinPartSize = 5 << 20

// MaxParts is the most parts one upload may have.
const MaxParts = 10000

// Meta is what an object carries besides its bytes: the standard HTTP
// headers, stored as the object's own headers, and user metadata (names
// lowercase), stored as x-amz-meta-<name> headers on S3.
type Meta struct {
	ContentType        string
	ContentLanguage    string
	ContentDisposition string
	ContentEncoding    string
	CacheControl       string
	Expires            string // an HTTP date, as the header holds it
	User               map[string]string
}

// PutOptions are a PutObject's condition and metadata.
type PutOptions struct {
	Cond Cond
	Meta Meta
}

// ObjectInfo is an object and its metadata.
type ObjectInfo struct {
	Object
	Meta Meta
}

// Part names one uploaded part at completion.
type Part struct {
	N    int
	ETag string
}

// ListQuery selects a page of a listing.
type ListQuery struct {
	Prefix     string
	Delimiter  string // "" lists every key under Prefix
	StartAfter string // only keys (and prefixes) after this one
	// Token continues a listing where the last page's Next left off.
	Token string
	Limit int // 1..MaxListLimit; 0 means MaxListLimit
}

// ObjectPage is one page of ListObjects. Objects and Prefixes are each in
// byte order, and together hold at most the query's limit entries.
type ObjectPage struct {
	Objects  []Object
	Prefixes []string
	// Next, when not empty, continues the listing (ListQuery.Token): more
	// entries follow.
	Next string
}

// CheckObjectKey rejects a key no store can hold as an application object:
// empty, longer than 2048 bytes, or not UTF-8.
func CheckObjectKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	case len(key) > 2048:
		return fmt.Errorf("%w: %d bytes (at most 2048)", ErrInvalidKey, len(key))
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: %q is not UTF-8", ErrInvalidKey, key)
	}
	return nil
}

// MD5ETag is the ETag of an object stored in one request.
func MD5ETag(sum []byte) string { return hex.EncodeToString(sum) }

// MultipartETag is the ETag of an object joined from parts whose ETags
// (hex MD5s) are given in order.
func MultipartETag(parts []string) (string, error) {
	h := md5.New()
	for _, p := range parts {
		b, err := hex.DecodeString(p)
		if err != nil || len(b) != md5.Size {
			return "", fmt.Errorf("%w: etag %q is not an MD5", ErrInvalidPart, p)
		}
		h.Write(b)
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil), len(parts)), nil
}

// listSorted pages a sorted key listing for stores that hold every key at
// hand (Mem, File): the token is "k"+key or "p"+prefix, the last entry
// of the previous page.
func listSorted(keys []string, info func(string) (Object, bool), q ListQuery) ObjectPage {
	limit := checkLimit(q.Limit)
	after, skip := q.StartAfter, ""
	if q.Token != "" {
		switch q.Token[0] {
		case 'k':
			after = max(after, q.Token[1:])
		case 'p':
			skip = q.Token[1:]
			after = max(after, skip)
		}
	}
	i := sort.SearchStrings(keys, q.Prefix)
	var p ObjectPage
	n, last := 0, ""
	for ; i < len(keys); i++ {
		k := keys[i]
		if !strings.HasPrefix(k, q.Prefix) {
			break
		}
		if k <= after || (skip != "" && strings.HasPrefix(k, skip)) {
			continue
		}
		if q.Delimiter != "" {
			if j := strings.Index(k[len(q.Prefix):], q.Delimiter); j >= 0 {
				cp := k[:len(q.Prefix)+j+len(q.Delimiter)]
				if len(p.Prefixes) > 0 && p.Prefixes[len(p.Prefixes)-1] == cp {
					continue
				}
				if n == limit {
					p.Next = last
					return p
				}
				p.Prefixes = append(p.Prefixes, cp)
				n, last, skip = n+1, "p"+cp, cp
				continue
			}
		}
		o, ok := info(k)
		if !ok {
			continue
		}
		if n == limit {
			p.Next = last
			return p
		}
		p.Objects = append(p.Objects, o)
		n, last = n+1, "k"+k
	}
	return p
}

// checkParts checks a completion's part list: ascending numbers in range.
func checkParts(parts []Part) error {
	if len(parts) == 0 {
		return fmt.Errorf("%w: no parts", ErrInvalidPart)
	}
	for i, p := range parts {
		if p.N < 1 || p.N > MaxParts || (i > 0 && p.N <= parts[i-1].N) {
			return fmt.Errorf("%w: part numbers must ascend within 1..%d (got %d)", ErrInvalidPart, MaxParts, p.N)
		}
	}
	return nil
}

// cloneMeta copies m's map so the caller's map is never shared.
func cloneMeta(m Meta) Meta {
	if m.User != nil {
		u := make(map[string]string, len(m.User))
		for k, v := range m.User {
			u[strings.ToLower(k)] = v
		}
		m.User = u
	}
	return m
}

// nowMillis is a store's clock for Modified, at S3's millisecond grain.
func nowMillis() time.Time { return time.Now().Truncate(time.Millisecond) }
