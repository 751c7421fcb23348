package bucket

import (
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Application objects in a File store (Objects) live apart from the
// fleet's records, because their keys may hold what a file system cannot:
// empty segments, "." and "..", a trailing "/", and both "a" and "a/b".
// Each segment of the key is escaped ("%" and "!" and a leading "." as
// %XX, an empty segment as "%"), and the last one gets the suffix "!", so
// object "a" is the file a! and object "a/b" the file a/b!. The file holds
// the object's bytes followed by a trailer: its metadata as JSON, the
// JSON's length (4 bytes, big-endian) and fileObjMagic. Multipart uploads
// keep their parts under .celld-store/uploads/<id>/ until completed.

var _ Objects = (*File)(nil)

const fileObjMagic = "celld-object-1\n"

// fileTrailer is the metadata a File store keeps after an object's bytes.
type fileTrailer struct {
	ETag string `json:"etag"`
	Size int64  `json:"size"`
	Meta struct {
		ContentType        string            `json:"content_type,omitempty"`
		ContentLanguage    string            `json:"content_language,omitempty"`
		ContentDisposition string            `json:"content_disposition,omitempty"`
		ContentEncoding    string            `json:"content_encoding,omitempty"`
		CacheControl       string            `json:"cache_control,omitempty"`
		Expires            string            `json:"expires,omitempty"`
		User               map[string]string `json:"user,omitempty"`
	} `json:"meta"`
}

func trailerOf(etag string, size int64, m Meta) []byte {
	var t fileTrailer
	t.ETag, t.Size = etag, size
	t.Meta.ContentType, t.Meta.ContentLanguage, t.Meta.ContentDisposition = m.ContentType, m.ContentLanguage, m.ContentDisposition
	t.Meta.ContentEncoding, t.Meta.CacheControl, t.Meta.Expires, t.Meta.User = m.ContentEncoding, m.CacheControl, m.Expires, m.User
	js, _ := json.Marshal(t)
	out := append(js, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(out[len(js):], uint32(len(js)))
	return append(out, fileObjMagic...)
}

func (t fileTrailer) meta() Meta {
	return Meta{ContentType: t.Meta.ContentType, ContentLanguage: t.Meta.ContentLanguage,
		ContentDisposition: t.Meta.ContentDisposition, ContentEncoding: t.Meta.ContentEncoding,
		CacheControl: t.Meta.CacheControl, Expires: t.Meta.Expires, User: t.Meta.User}
}

func escapeSegment(seg string) string {
	if seg == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		if c == '%' || c == '!' || (i == 0 && c == '.') {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func unescapeSegment(s string) (string, bool) {
	if s == "%" {
		return "", true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", false
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), true
}

// objPath is the file of application object key.
func (s *File) objPath(key string) (string, error) {
	if err := CheckObjectKey(key); err != nil {
		return "", err
	}
	segs := strings.Split(key, "/")
	parts := make([]string, len(segs))
	for i, seg := range segs {
		e := escapeSegment(seg)
		if i == len(segs)-1 {
			e += "!"
		}
		if len(e) > 255 {
			return "", fmt.Errorf("%w: %q: a file store holds segments of at most 255 bytes once escaped", ErrInvalidKey, key)
		}
		parts[i] = e
	}
	return filepath.Join(s.root, filepath.Join(parts...)), nil
}

// keyOfPath inverts objPath for a path relative to the root.
func keyOfPath(rel string) (string, bool) {
	rel, ok := strings.CutSuffix(filepath.ToSlash(rel), "!")
	if !ok {
		return "", false
	}
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		k, ok := unescapeSegment(seg)
		if !ok {
			return "", false
		}
		segs[i] = k
	}
	return strings.Join(segs, "/"), true
}

// openObj opens an object file and reads its trailer.
func openObj(p string) (*os.File, fileTrailer, fileStat, error) {
	f, err := os.Open(p)
	if missing(err) {
		return nil, fileTrailer{}, fileStat{}, ErrNotFound
	} else if err != nil {
		return nil, fileTrailer{}, fileStat{}, fsErr(err)
	}
	st, err := statFile(f)
	if err == nil && !st.regular {
		err = ErrNotFound
	}
	var t fileTrailer
	if err == nil {
		t, err = readTrailer(f, st.size)
	}
	if err != nil {
		f.Close()
		return nil, fileTrailer{}, fileStat{}, err
	}
	return f, t, st, nil
}

func readTrailer(f *os.File, size int64) (fileTrailer, error) {
	var t fileTrailer
	tail := int64(4 + len(fileObjMagic))
	bad := fmt.Errorf("%w: %s is not a celld object file", ErrUnavailable, f.Name())
	if size < tail {
		return t, bad
	}
	buf := make([]byte, tail)
	if _, err := f.ReadAt(buf, size-tail); err != nil {
		return t, fsErr(err)
	}
	if string(buf[4:]) != fileObjMagic {
		return t, bad
	}
	n := int64(binary.BigEndian.Uint32(buf[:4]))
	if n > size-tail {
		return t, bad
	}
	js := make([]byte, n)
	if _, err := f.ReadAt(js, size-tail-n); err != nil {
		return t, fsErr(err)
	}
	if err := json.Unmarshal(js, &t); err != nil || t.Size != size-tail-n {
		return t, bad
	}
	return t, nil
}

func (s *File) objInfo(key string, t fileTrailer, st fileStat) ObjectInfo {
	return ObjectInfo{Object: Object{Key: key, ETag: t.ETag, Size: t.Size, Modified: st.mtime}, Meta: t.meta()}
}

func (s *File) PutObject(ctx context.Context, key string, r io.Reader, size int64, o PutOptions) (ObjectInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return ObjectInfo{}, err
	}
	p, err := s.objPath(key)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w", key, err)
	}
	// The bytes go to a temporary file first, outside the key's lock: a
	// slow writer holds no one else up.
	tmp, err := s.objTemp(p)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w", key, err)
	}
	defer removeTemp(tmp)
	h := md5.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, size))
	if err == nil && n != size {
		err = fmt.Errorf("%w: the source held %d bytes, not %d", io.ErrUnexpectedEOF, n, size)
	}
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w: %w", key, errNotSent, err)
	}
	return s.commitObj(ctx, key, p, tmp, MD5ETag(h.Sum(nil)), size, o)
}

// objTemp creates a temporary file in p's directory.
func (s *File) objTemp(p string) (*os.File, error) {
	dir := filepath.Dir(p)
	for attempt := 0; ; attempt++ { // a concurrent Delete may prune dir
		err := os.MkdirAll(dir, 0o755)
		var tmp *os.File
		if err == nil {
			tmp, err = os.CreateTemp(dir, fileTmp+"*")
		}
		if err == nil {
			return tmp, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || attempt == 10 {
			return nil, fsErr(err)
		}
	}
}

func removeTemp(f *os.File) {
	f.Close()
	os.Remove(f.Name()) // gone already once renamed
}

// commitObj appends the trailer to tmp and renames it over p if cond
// holds.
func (s *File) commitObj(ctx context.Context, key, p string, tmp *os.File, etag string, size int64, o PutOptions) (ObjectInfo, error) {
	meta := cloneMeta(o.Meta)
	if _, err := tmp.Write(trailerOf(etag, size, meta)); err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w: %w", key, errNotSent, fsErr(err))
	}
	if err := tmp.Chmod(0o644); err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w: %w", key, errNotSent, fsErr(err))
	}
	if err := tmp.Sync(); err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w: %w", key, errNotSent, fsErr(err))
	}
	unlock, err := s.lock(ctx, key)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w", key, err)
	}
	defer unlock()
	if o.Cond.Kind != CondNone {
		f, cur, _, err := openObj(p)
		exists := err == nil
		if f != nil {
			f.Close()
		}
		switch {
		case err != nil && !errors.Is(err, ErrNotFound):
			return ObjectInfo{}, fmt.Errorf("put %s: %w", key, err)
		case o.Cond.Kind == CondIfAbsent && exists:
			return ObjectInfo{}, fmt.Errorf("put %s: %w (%s, object exists)", key, ErrRejected, o.Cond)
		case o.Cond.Kind == CondIfMatch && !exists:
			return ObjectInfo{}, fmt.Errorf("put %s: %w (%s, object missing)", key, ErrRejected, o.Cond)
		case o.Cond.Kind == CondIfMatch && cur.ETag != o.Cond.ETag:
			return ObjectInfo{}, fmt.Errorf("put %s: %w (%s, current %q)", key, ErrRejected, o.Cond, cur.ETag)
		}
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w", key, fsErr(err))
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w: %w", key, ErrAmbiguous, err)
	}
	st, err := statFile(tmp)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("put %s: %w: %w", key, ErrAmbiguous, err)
	}
	return ObjectInfo{Object: Object{Key: key, ETag: etag, Size: size, Modified: st.mtime}, Meta: meta}, nil
}

// sectionCloser reads a span of an object file and closes it.
type sectionCloser struct {
	*io.SectionReader
	f *os.File
}

func (c sectionCloser) Close() error { return c.f.Close() }

func (s *File) GetObject(ctx context.Context, key string, rng *Range) (io.ReadCloser, ObjectInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, ObjectInfo{}, err
	}
	p, err := s.objPath(key)
	if err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("get %s: %w", key, err)
	}
	f, t, st, err := openObj(p)
	if err != nil {
		return nil, ObjectInfo{}, fmt.Errorf("get %s: %w", key, err)
	}
	lo, hi := int64(0), t.Size
	if rng != nil {
		if lo, hi, err = rng.Resolve(t.Size); err != nil {
			f.Close()
			return nil, ObjectInfo{}, fmt.Errorf("get %s: %w", key, err)
		}
	}
	return sectionCloser{io.NewSectionReader(f, lo, hi-lo), f}, s.objInfo(key, t, st), nil
}

func (s *File) HeadObject(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ctxErr(ctx); err != nil {
		return ObjectInfo{}, err
	}
	p, err := s.objPath(key)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("head %s: %w", key, err)
	}
	f, t, st, err := openObj(p)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("head %s: %w", key, err)
	}
	f.Close()
	return s.objInfo(key, t, st), nil
}

func (s *File) DeleteObject(ctx context.Context, key string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	p, err := s.objPath(key)
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	unlock, err := s.lock(ctx, key)
	if err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	defer unlock()
	if err := os.Remove(p); err != nil {
		if missing(err) {
			return nil
		}
		return fmt.Errorf("delete %s: %w", key, fsErr(err))
	}
	dir := filepath.Dir(p)
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("delete %s: %w", key, fsErr(err))
	}
	for ; dir != s.root && strings.HasPrefix(dir, s.root+string(filepath.Separator)); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil {
			break
		}
	}
	return nil
}

// ListObjects walks the directory the prefix names in full and sorts what
// it finds: every page costs a walk of everything under it, which suits a
// development store.
func (s *File) ListObjects(ctx context.Context, q ListQuery) (ObjectPage, error) {
	if err := ctxErr(ctx); err != nil {
		return ObjectPage{}, err
	}
	start := s.root
	if i := strings.LastIndexByte(q.Prefix, '/'); i >= 0 {
		segs := strings.Split(q.Prefix[:i], "/")
		for j, seg := range segs {
			segs[j] = escapeSegment(seg)
		}
		start = filepath.Join(s.root, filepath.Join(segs...))
	}
	var keys []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if missing(err) {
				return nil
			}
			return err
		}
		if p == start {
			return ctx.Err()
		}
		if strings.HasPrefix(d.Name(), ".") { // temporaries, .celld-store
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return nil
		}
		k, ok := keyOfPath(rel)
		if !ok || !strings.HasPrefix(k, q.Prefix) {
			return nil
		}
		keys = append(keys, k)
		return nil
	})
	if err != nil {
		return ObjectPage{}, fmt.Errorf("list %s: %w", q.Prefix, fsErr(err))
	}
	sort.Strings(keys)
	info := func(k string) (Object, bool) {
		p, err := s.objPath(k)
		if err != nil {
			return Object{}, false
		}
		f, t, st, err := openObj(p)
		if err != nil {
			return Object{}, false // deleted since the walk
		}
		f.Close()
		return Object{Key: k, ETag: t.ETag, Size: t.Size, Modified: st.mtime}, true
	}
	return listSorted(keys, info, q), nil
}

func (s *File) uploadDir(id string) (string, error) {
	if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%w: %q", ErrNoSuchUpload, id)
	}
	return filepath.Join(s.root, fileReserved, "uploads", id), nil
}

// fileUpload is an upload's record, uploads/<id>/upload.json.
type fileUpload struct {
	Key  string `json:"key"`
	Meta []byte `json:"meta"` // a trailer of the metadata (trailerOf)
}

func (s *File) CreateMultipart(ctx context.Context, key string, meta Meta) (string, error) {
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	if _, err := s.objPath(key); err != nil {
		return "", fmt.Errorf("create upload %s: %w", key, err)
	}
	id := newUploadID()
	dir, _ := s.uploadDir(id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create upload %s: %w", key, fsErr(err))
	}
	rec, _ := json.Marshal(fileUpload{Key: key, Meta: trailerOf("", 0, cloneMeta(meta))})
	if err := os.WriteFile(filepath.Join(dir, "upload.json"), rec, 0o644); err != nil {
		return "", fmt.Errorf("create upload %s: %w", key, fsErr(err))
	}
	return id, nil
}

// openUpload checks that id is an upload of key and returns its directory
// and metadata.
func (s *File) openUpload(key, id string) (string, Meta, error) {
	dir, err := s.uploadDir(id)
	if err != nil {
		return "", Meta{}, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "upload.json"))
	if missing(err) {
		return "", Meta{}, fmt.Errorf("%w: %q for %s", ErrNoSuchUpload, id, key)
	} else if err != nil {
		return "", Meta{}, fsErr(err)
	}
	var u fileUpload
	if err := json.Unmarshal(b, &u); err != nil || u.Key != key {
		return "", Meta{}, fmt.Errorf("%w: %q for %s", ErrNoSuchUpload, id, key)
	}
	var t fileTrailer
	n := len(u.Meta) - 4 - len(fileObjMagic)
	if n < 0 || json.Unmarshal(u.Meta[:n], &t) != nil {
		return "", Meta{}, fmt.Errorf("%w: upload %s has a damaged record", ErrUnavailable, id)
	}
	return dir, t.meta(), nil
}

func (s *File) UploadPart(ctx context.Context, key, uploadID string, n int, r io.Reader, size int64) (string, error) {
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	if n < 1 || n > MaxParts {
		return "", fmt.Errorf("upload part %d of %s: %w: part numbers run 1..%d", n, key, ErrInvalidPart, MaxParts)
	}
	dir, _, err := s.openUpload(key, uploadID)
	if err != nil {
		return "", fmt.Errorf("upload part %d of %s: %w", n, key, err)
	}
	tmp, err := os.CreateTemp(dir, fileTmp+"*")
	if err != nil {
		return "", fmt.Errorf("upload part %d of %s: %w", n, key, fsErr(err))
	}
	defer removeTemp(tmp)
	h := md5.New()
	got, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, size))
	if err == nil && got != size {
		err = fmt.Errorf("%w: the source held %d bytes, not %d", io.ErrUnexpectedEOF, got, size)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, fmt.Sprintf("part-%05d", n)))
	}
	if err != nil {
		return "", fmt.Errorf("upload part %d of %s: %w", n, key, fsErr(err))
	}
	return MD5ETag(h.Sum(nil)), nil
}

func (s *File) CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) (ObjectInfo, error) {
	if err := checkParts(parts); err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	dir, meta, err := s.openUpload(key, uploadID)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	p, err := s.objPath(key)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	tmp, err := s.objTemp(p)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	defer removeTemp(tmp)
	var size int64
	etags := make([]string, len(parts))
	for i, part := range parts {
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("part-%05d", part.N)))
		if err != nil {
			return ObjectInfo{}, fmt.Errorf("complete upload %s: %w: part %d was not uploaded", key, ErrInvalidPart, part.N)
		}
		h := md5.New()
		n, err := io.Copy(io.MultiWriter(tmp, h), f)
		f.Close()
		if err != nil {
			return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, fsErr(err))
		}
		etags[i] = MD5ETag(h.Sum(nil))
		if etags[i] != strings.Trim(part.ETag, `"`) {
			return ObjectInfo{}, fmt.Errorf("complete upload %s: %w: part %d has etag %q, not %q", key, ErrInvalidPart, part.N, etags[i], part.ETag)
		}
		if i < len(parts)-1 && n < MinPartSize {
			return ObjectInfo{}, fmt.Errorf("complete upload %s: %w: part %d holds %d bytes, under %d", key, ErrEntityTooSmall, part.N, n, MinPartSize)
		}
		size += n
	}
	etag, err := MultipartETag(etags)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("complete upload %s: %w", key, err)
	}
	oi, err := s.commitObj(ctx, key, p, tmp, etag, size, PutOptions{Meta: meta})
	if err != nil {
		return ObjectInfo{}, err
	}
	os.RemoveAll(dir)
	return oi, nil
}

func (s *File) AbortMultipart(ctx context.Context, key, uploadID string) error {
	dir, _, err := s.openUpload(key, uploadID)
	if err != nil {
		return fmt.Errorf("abort upload %s: %w", key, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("abort upload %s: %w", key, fsErr(err))
	}
	return nil
}
