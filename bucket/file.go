package bucket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// File is a Store on a local directory, safe across goroutines and across
// processes on one machine. Each object is a plain file at root/<key>, so
// `cat root/cells/x/own.json` shows the record.
//
// Writes are atomic: the data goes to a temporary file (".celld-tmp-*") in
// the target's directory, is fsynced, and is renamed over the target; the
// directory is then fsynced. Objects are never modified in place. Every Put
// and Delete holds an exclusive lock on one of fileStripes lock files under
// root/.celld-store/locks (chosen by a hash of the key) around checking the
// condition and renaming, plus an in-process lock for the same stripe, so
// conditional writes are atomic across processes that share root.
//
// An ETag is a hash of the content plus the file's inode and change time,
// so rewriting identical bytes changes it. Within a key's history of
// overwrites the change time strictly increases; across a Delete and
// re-create of identical bytes the ETag may repeat, as on S3.
//
// Limitations, as a file system imposes them:
//   - A key cannot be both an object and a "directory" of other keys: with
//     object "a" stored, Put "a/b" fails (and the reverse), with an error
//     wrapping ErrInvalidKey that names both keys. S3 allows both.
//   - The first segment ".celld-store" is reserved, and no segment may start
//     with ".celld-tmp-"; both are ErrInvalidKey.
//   - Keys are subject to the file system's name rules: a segment longer
//     than 255 bytes is ErrInvalidKey, and on a case- or
//     normalization-insensitive file system (macOS by default) keys that
//     differ only in case or Unicode normalization are the same object.
//   - Locking uses flock, so root must be on a local file system, not NFS.
//   - Every read hashes the whole object, including GetRange, Head and each
//     object a List returns.
//
// The zero File is not usable; call NewFile.
type File struct {
	root    string
	stripes [fileStripes]chan struct{} // in-process lock per stripe
}

var _ Store = (*File)(nil)

const (
	fileStripes  = 64
	fileReserved = ".celld-store"
	fileTmp      = ".celld-tmp-"
)

// NewFile opens (creating if missing) the store rooted at the absolute
// directory root.
func NewFile(root string) (*File, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("file store root %q is not an absolute path", root)
	}
	s := &File{root: filepath.Clean(root)}
	if err := os.MkdirAll(s.lockDir(), 0o755); err != nil {
		return nil, fmt.Errorf("file store %s: %w", s.root, err)
	}
	for i := range s.stripes {
		s.stripes[i] = make(chan struct{}, 1)
	}
	return s, nil
}

func (s *File) String() string { return "file://" + s.root }

func (s *File) lockDir() string { return filepath.Join(s.root, fileReserved, "locks") }

func (s *File) path(key string) string { return filepath.Join(s.root, filepath.FromSlash(key)) }

// checkFileKey is CheckKey plus the names this store keeps for itself.
func checkFileKey(key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if key == fileReserved || strings.HasPrefix(key, fileReserved+"/") {
		return fmt.Errorf("%w: %q: the first segment %q is reserved by the file store", ErrInvalidKey, key, fileReserved)
	}
	if strings.HasPrefix(key, fileTmp) || strings.Contains(key, "/"+fileTmp) {
		return fmt.Errorf("%w: %q: segments starting %q are reserved by the file store", ErrInvalidKey, key, fileTmp)
	}
	return nil
}

func (s *File) Get(ctx context.Context, key string) ([]byte, Object, error) {
	return s.load(ctx, "get", key, true)
}

func (s *File) GetRange(ctx context.Context, key string, r Range) ([]byte, Object, error) {
	data, o, err := s.load(ctx, "get", key, true)
	if err != nil {
		return nil, Object{}, err
	}
	lo, hi, err := r.Resolve(int64(len(data)))
	if err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	return data[lo:hi:hi], o, nil
}

func (s *File) Head(ctx context.Context, key string) (Object, error) {
	_, o, err := s.load(ctx, "head", key, false)
	return o, err
}

func (s *File) load(ctx context.Context, verb, key string, keep bool) ([]byte, Object, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, Object{}, err
	}
	data, o, err := s.read(key, keep)
	if err != nil {
		return nil, Object{}, fmt.Errorf("%s %s: %w", verb, key, err)
	}
	return data, o, nil
}

// read opens key and hashes (and, if keep, returns) exactly the bytes it
// reads from that descriptor; the ETag comes from fstat of the same one.
func (s *File) read(key string, keep bool) ([]byte, Object, error) {
	if err := checkFileKey(key); err != nil {
		return nil, Object{}, err
	}
	f, err := os.Open(s.path(key))
	if missing(err) {
		return nil, Object{}, ErrNotFound
	} else if err != nil {
		return nil, Object{}, fsErr(err)
	}
	defer f.Close()
	st, err := statFile(f)
	if err != nil {
		return nil, Object{}, fsErr(err)
	}
	if !st.regular {
		return nil, Object{}, ErrNotFound // a directory of other keys
	}
	h := sha256.New()
	var data []byte
	var n int64
	if keep {
		data, err = io.ReadAll(f)
		h.Write(data)
		n = int64(len(data))
	} else {
		n, err = io.Copy(h, f)
	}
	if err != nil {
		return nil, Object{}, fsErr(err)
	}
	return data, Object{Key: key, ETag: fileETag(h.Sum(nil), st), Size: n, Modified: st.mtime}, nil
}

func fileETag(sum []byte, st fileStat) string {
	return fmt.Sprintf("%s-%x.%x", hex.EncodeToString(sum[:8]), st.ino, st.ctime)
}

func (s *File) Put(ctx context.Context, key string, data []byte, cond Cond) (Object, error) {
	return s.put(ctx, key, bytes.NewReader(data), int64(len(data)), cond)
}

// PutFrom is Put from a reader (Streamer).
func (s *File) PutFrom(ctx context.Context, key string, r io.ReaderAt, size int64, cond Cond) (Object, error) {
	return s.put(ctx, key, io.NewSectionReader(r, 0, size), size, cond)
}

// Open streams key's bytes (Streamer).
func (s *File) Open(ctx context.Context, key string) (io.ReadCloser, Object, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, Object{}, err
	}
	if err := checkFileKey(key); err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	f, err := os.Open(s.path(key))
	if missing(err) {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
	} else if err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, fsErr(err))
	}
	st, err := statFile(f)
	if err == nil && !st.regular {
		err = ErrNotFound // a directory of other keys
	}
	if err != nil {
		f.Close()
		return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	return f, Object{Key: key, Size: st.size, Modified: st.mtime}, nil
}

func (s *File) put(ctx context.Context, key string, src io.Reader, size int64, cond Cond) (Object, error) {
	if err := ctxErr(ctx); err != nil {
		return Object{}, err
	}
	if err := checkFileKey(key); err != nil {
		return Object{}, fmt.Errorf("put %s: %w", key, err)
	}
	unlock, err := s.lock(ctx, key)
	if err != nil {
		return Object{}, fmt.Errorf("put %s: %w", key, err)
	}
	defer unlock()
	p := s.path(key)
	if cond.Kind == CondIfMatch {
		_, cur, err := s.read(key, false)
		switch {
		case errors.Is(err, ErrNotFound):
			return Object{}, fmt.Errorf("put %s: %w (%s, object missing)", key, ErrRejected, cond)
		case err != nil:
			return Object{}, fmt.Errorf("put %s: %w", key, err)
		case cur.ETag != cond.ETag:
			return Object{}, fmt.Errorf("put %s: %w (%s, current %q)", key, ErrRejected, cond, cur.ETag)
		}
	}
	var prev *fileStat
	st, err := statPath(p)
	switch {
	case err == nil && st.regular:
		if cond.Kind == CondIfAbsent {
			return Object{}, fmt.Errorf("put %s: %w (%s, object exists)", key, ErrRejected, cond)
		}
		prev = &st
	case err == nil: // a directory: it goes only if empty
		if err := os.Remove(p); err != nil {
			return Object{}, fmt.Errorf("put %s: %w", key, s.conflict(key, err))
		}
	case !missing(err):
		return Object{}, fmt.Errorf("put %s: %w", key, fsErr(err))
	}
	o, err := s.write(key, p, src, size, prev)
	if err != nil {
		return Object{}, fmt.Errorf("put %s: %w", key, err)
	}
	return o, nil
}

// write replaces p with data by rename. prev, when the key exists, is the
// current file: the new file's change time is made to exceed it, so an
// ETag never recurs along a key's history even if an inode is reused.
func (s *File) write(key, p string, src io.Reader, size int64, prev *fileStat) (Object, error) {
	dir := filepath.Dir(p)
	var tmp *os.File
	for attempt := 0; ; attempt++ { // a concurrent Delete may prune dir
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			tmp, err = os.CreateTemp(dir, fileTmp+"*")
		}
		if err == nil {
			break
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return Object{}, s.conflict(key, err)
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			return Object{}, fsErr(err)
		}
	}
	renamed := false
	defer func() {
		tmp.Close()
		if !renamed {
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), src)
	if err == nil && n != size {
		err = fmt.Errorf("%w: the source held %d bytes, not %d", io.ErrUnexpectedEOF, n, size)
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil && prev != nil {
		err = changedAfter(tmp, prev.ctime)
	}
	if err != nil {
		return Object{}, fsErr(err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		if errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTDIR) ||
			errors.Is(err, syscall.EEXIST) || errors.Is(err, syscall.ENOTEMPTY) {
			return Object{}, s.conflict(key, err)
		}
		return Object{}, fsErr(err)
	}
	renamed = true
	// From here the new object is visible; a failure leaves it unknown
	// whether it survives a crash.
	if err := syncDir(dir); err != nil {
		return Object{}, fmt.Errorf("%w: %w", ErrAmbiguous, err)
	}
	st, err := statFile(tmp)
	if err != nil {
		return Object{}, fmt.Errorf("%w: %w", ErrAmbiguous, err)
	}
	return Object{Key: key, ETag: fileETag(h.Sum(nil), st), Size: size, Modified: st.mtime}, nil
}

// conflict explains a Put that the file system refused because key's path
// is, or runs through, another object's. It names the other key when it
// finds one, and otherwise reports cause.
func (s *File) conflict(key string, cause error) error {
	segs := strings.Split(key, "/")
	for i := 1; i < len(segs); i++ {
		other := strings.Join(segs[:i], "/")
		if st, err := statPath(s.path(other)); err == nil && st.regular {
			return fmt.Errorf("%w: object %q exists, and a file store cannot also hold keys under it such as %q",
				ErrInvalidKey, other, key)
		}
	}
	other := ""
	filepath.WalkDir(s.path(key), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasPrefix(d.Name(), fileTmp) {
			other = key + filepath.ToSlash(strings.TrimPrefix(p, s.path(key)))
			return fs.SkipAll
		}
		return nil
	})
	if other != "" {
		return fmt.Errorf("%w: object %q exists, and a file store cannot also hold %q, a key it lies under",
			ErrInvalidKey, other, key)
	}
	return fsErr(cause)
}

func (s *File) Delete(ctx context.Context, key string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := checkFileKey(key); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	unlock, err := s.lock(ctx, key)
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	defer unlock()
	p := s.path(key)
	if st, err := statPath(p); missing(err) || (err == nil && !st.regular) {
		return nil
	} else if err != nil {
		return fmt.Errorf("delete %s: %w", key, fsErr(err))
	}
	if err := os.Remove(p); err != nil && !missing(err) {
		return fmt.Errorf("delete %s: %w", key, fsErr(err))
	}
	dir := filepath.Dir(p)
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("delete %s: %w", key, fsErr(err))
	}
	for ; dir != s.root && strings.HasPrefix(dir, s.root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty (or gone): stop pruning
			break
		}
	}
	return nil
}

func (s *File) List(ctx context.Context, prefix, startAfter string, limit int) (Page, error) {
	if err := ctxErr(ctx); err != nil {
		return Page{}, err
	}
	limit = checkLimit(limit)
	// Start at the deepest directory the prefix names in full. If that is
	// not a valid key, no valid key can start with the prefix.
	base, start := "", s.root
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		base = prefix[:i]
		if checkFileKey(base) != nil {
			return Page{}, nil
		}
		start = s.path(base)
	}
	var keys []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if missing(err) {
				return nil // gone, or pruned by a concurrent Delete
			}
			return err
		}
		if p == start {
			return ctx.Err()
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, start+string(filepath.Separator)))
		k := rel
		if base != "" {
			k = base + "/" + rel
		}
		switch {
		case strings.HasPrefix(d.Name(), fileTmp), base == "" && rel == fileReserved:
			if d.IsDir() {
				return fs.SkipDir
			}
		case d.IsDir():
			if !strings.HasPrefix(k+"/", prefix) && !strings.HasPrefix(prefix, k+"/") {
				return fs.SkipDir
			}
			return ctx.Err()
		case d.Type().IsRegular() && strings.HasPrefix(k, prefix) && k > startAfter && checkFileKey(k) == nil:
			keys = append(keys, k)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return Page{}, fmt.Errorf("list %s: %w: %w", prefix, ErrUnavailable, err)
		}
		return Page{}, fmt.Errorf("list %s: %w", prefix, fsErr(err))
	}
	sort.Strings(keys) // byte order; a walk's order differs ("a-b/x" < "a/x")
	var p Page
	for i, k := range keys {
		if len(p.Objects) == limit {
			for _, rest := range keys[i:] {
				if st, err := statPath(s.path(rest)); err == nil && st.regular {
					p.Truncated = true
					break
				}
			}
			break
		}
		_, o, err := s.read(k, false)
		if errors.Is(err, ErrNotFound) {
			continue // deleted since the walk
		} else if err != nil {
			return Page{}, fmt.Errorf("list %s: %w", prefix, err)
		}
		p.Objects = append(p.Objects, o)
	}
	return p, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// missing reports errors that mean no object is there.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ENAMETOOLONG)
}

// fsErr maps a file system error that is not "missing" to a sentinel.
func fsErr(err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: %w", ErrDenied, err)
	case errors.Is(err, syscall.ENAMETOOLONG):
		return fmt.Errorf("%w: %w", ErrInvalidKey, err)
	default:
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
}
