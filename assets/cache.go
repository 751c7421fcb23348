package assets

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/celldgo/celld/bucket"
)

// DefaultCacheBytes bounds a node's asset cache unless told otherwise.
const DefaultCacheBytes = 512 << 20

// Cache keeps asset bodies on a node's disk, named by digest, evicting the
// least recently used past a byte bound. A body is fetched from the
// bucket once however many requests miss it at the same time, and its
// digest is checked before it is served: a damaged or wrong object is
// never served.
type Cache struct {
	store bucket.Store
	dir   string
	max   int64

	mu       sync.Mutex
	lru      *list.List // of *cached, most recent first
	byDigest map[string]*list.Element
	size     int64
	inflight map[string]*fill

	// hot keeps small bodies in memory as well (bounded by hotMax), so a
	// popular small asset costs no file system calls.
	hot     map[string][]byte
	hotSize int64
}

// Small bodies (≤ hotBody) are also held in memory, up to hotMax bytes.
const (
	hotBody = 64 << 10
	hotMax  = 32 << 20
)

// Reader returns a reader of the body with digest, from memory when it is
// small and hot, else from the disk cache (Open). The caller calls done.
func (c *Cache) Reader(ctx context.Context, digest string) (r io.ReadSeeker, done func(), err error) {
	c.mu.Lock()
	b, ok := c.hot[digest]
	c.mu.Unlock()
	if ok {
		return bytes.NewReader(b), func() {}, nil
	}
	f, err := c.Open(ctx, digest)
	if err != nil {
		return nil, nil, err
	}
	if st, err := f.Stat(); err == nil && st.Size() <= hotBody {
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("read asset %s: %w", digest, err)
		}
		c.mu.Lock()
		if _, ok := c.hot[digest]; !ok && c.hotSize+int64(len(b)) <= hotMax {
			c.hot[digest] = b
			c.hotSize += int64(len(b))
		}
		c.mu.Unlock()
		return bytes.NewReader(b), func() {}, nil
	}
	return f, func() { f.Close() }, nil
}

type cached struct {
	digest string
	size   int64
}

type fill struct {
	done chan struct{}
	err  error
}

// NewCache makes a cache in dir (created if need be) holding at most
// maxBytes (≤ 0: DefaultCacheBytes). Bodies an earlier run left there are
// removed — only files named as the cache names them (a 64-digit hex
// digest, or a fill in progress): the directory may hold other things.
func NewCache(store bucket.Store, dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultCacheBytes
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create asset cache: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read asset cache: %w", err)
	}
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && (isDigest(n) || strings.HasPrefix(n, "fill-")) {
			os.Remove(filepath.Join(dir, n))
		}
	}
	return &Cache{store: store, dir: dir, max: maxBytes, lru: list.New(),
		byDigest: map[string]*list.Element{}, inflight: map[string]*fill{}, hot: map[string][]byte{}}, nil
}

// Size is the bytes the cache holds.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// Open returns the body with digest, fetching it into the cache first if
// it is not there. The caller closes the file; an evicted file stays
// readable while open.
func (c *Cache) Open(ctx context.Context, digest string) (*os.File, error) {
	for {
		c.mu.Lock()
		if el, ok := c.byDigest[digest]; ok {
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			f, err := os.Open(c.path(digest))
			if err == nil {
				return f, nil
			}
			c.mu.Lock()
			c.dropLocked(digest) // removed behind our back: fetch it again
			c.mu.Unlock()
			continue
		}
		if fl, ok := c.inflight[digest]; ok {
			c.mu.Unlock()
			select {
			case <-fl.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if fl.err != nil {
				return nil, fl.err
			}
			continue
		}
		fl := &fill{done: make(chan struct{})}
		c.inflight[digest] = fl
		c.mu.Unlock()
		size, err := c.fetch(ctx, digest)
		c.mu.Lock()
		delete(c.inflight, digest)
		if err == nil {
			c.byDigest[digest] = c.lru.PushFront(&cached{digest: digest, size: size})
			c.size += size
			c.evictLocked(digest)
		}
		c.mu.Unlock()
		fl.err = err
		close(fl.done)
		if err != nil {
			return nil, err
		}
	}
}

func (c *Cache) path(digest string) string { return filepath.Join(c.dir, digest) }

// fetch copies the body from the bucket to a temporary file, checks its
// digest and renames it into place.
func (c *Cache) fetch(ctx context.Context, digest string) (int64, error) {
	rc, _, err := bucket.OpenStream(ctx, c.store, BlobKey(digest))
	if err != nil {
		return 0, fmt.Errorf("fetch asset %s: %w", digest, err)
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(c.dir, "fill-*")
	if err != nil {
		return 0, fmt.Errorf("fetch asset %s: %w", digest, err)
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), rc)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("fetch asset %s: %w", digest, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != digest {
		return 0, fmt.Errorf("fetch asset %s: the stored body hashes to %s", digest, got)
	}
	if err := os.Rename(tmp.Name(), c.path(digest)); err != nil {
		return 0, fmt.Errorf("fetch asset %s: %w", digest, err)
	}
	return n, nil
}

// evictLocked removes least recently used bodies until the cache fits,
// never the one just added.
func (c *Cache) evictLocked(keep string) {
	for c.size > c.max {
		el := c.lru.Back()
		if el == nil {
			return
		}
		e := el.Value.(*cached)
		if e.digest == keep {
			return
		}
		c.dropLocked(e.digest)
	}
}

func (c *Cache) dropLocked(digest string) {
	el, ok := c.byDigest[digest]
	if !ok {
		return
	}
	e := el.Value.(*cached)
	if b, ok := c.hot[digest]; ok {
		delete(c.hot, digest)
		c.hotSize -= int64(len(b))
	}
	c.lru.Remove(el)
	delete(c.byDigest, digest)
	c.size -= e.size
	os.Remove(c.path(digest))
}
