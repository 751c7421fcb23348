package assets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/celldgo/celld/bucket"
)

// Encode is the index's stored form and its SHA-256 (hex), which the
// manifest records so the version hash covers every asset.
func (x *Index) Encode() ([]byte, string, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, "", fmt.Errorf("encode asset index: %w", err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

// Uploaded says what Upload wrote.
type Uploaded struct {
	Stored, Present int   // bodies written, bodies already in the bucket
	Bytes           int64 // bytes written
}

// Upload stores every body of s not yet in the bucket under its digest
// (deploy-blobs/<sha256>, create-if-absent: a body is never rewritten),
// and then the index at key. Bodies go first, so a node that reads the
// index finds every body it names.
func Upload(ctx context.Context, st bucket.Store, s *Scanned, key string) (Uploaded, error) {
	var u Uploaded
	digests := make([]string, 0, len(s.Paths))
	for d := range s.Paths {
		digests = append(digests, d)
	}
	sort.Strings(digests)
	for _, d := range digests {
		_, err := st.Head(ctx, BlobKey(d))
		if err == nil {
			u.Present++
			continue
		}
		if !errors.Is(err, bucket.ErrNotFound) {
			return u, fmt.Errorf("check asset %s: %w", d, err)
		}
		n, err := putFile(ctx, st, BlobKey(d), s.Paths[d])
		switch {
		case errors.Is(err, bucket.ErrRejected):
			u.Present++ // another deploy stored the same body meanwhile
		case err != nil:
			return u, fmt.Errorf("upload asset %s: %w", s.Paths[d], err)
		default:
			u.Stored++
			u.Bytes += n
		}
	}
	b, _, err := s.Index.Encode()
	if err != nil {
		return u, err
	}
	if _, err := st.Put(ctx, key, b, bucket.Cond{}); err != nil {
		return u, fmt.Errorf("write asset index: %w", err)
	}
	return u, nil
}

func putFile(ctx context.Context, st bucket.Store, key, p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if _, err := bucket.PutStream(ctx, st, key, f, info.Size(), bucket.IfAbsent()); err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// LoadIndex reads a version's index and checks it against the digest the
// manifest recorded.
func LoadIndex(ctx context.Context, st bucket.Store, key, digest string) (*Index, error) {
	b, _, err := st.Get(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read asset index: %w", err)
	}
	if sum := sha256.Sum256(b); digest != "" && hex.EncodeToString(sum[:]) != digest {
		return nil, fmt.Errorf("read asset index %s: digest mismatch", key)
	}
	var x Index
	if err := json.Unmarshal(b, &x); err != nil {
		return nil, fmt.Errorf("decode asset index %s: %w", key, err)
	}
	if x.Format != IndexFormat {
		return nil, fmt.Errorf("asset index %s: format %d, this celld reads %d", key, x.Format, IndexFormat)
	}
	return &x, nil
}
