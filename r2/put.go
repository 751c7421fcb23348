package r2

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
	"sync"

	"github.com/celldgo/celld/bucket"
)

// Algorithms are the checksum algorithms a put may assert, with the names
// R2's errors use.
var Algorithms = []struct{ Field, Name string }{
	{"md5", "MD5"}, {"sha1", "SHA-1"}, {"sha256", "SHA-256"}, {"sha384", "SHA-384"}, {"sha512", "SHA-512"},
}

func newHash(field string) hash.Hash {
	switch field {
	case "md5":
		return md5.New()
	case "sha1":
		return sha1.New()
	case "sha256":
		return sha256.New()
	case "sha384":
		return sha512.New384()
	default:
		return sha512.New()
	}
}

// PutOptions are a put's metadata, asserted checksums and condition.
type PutOptions struct {
	HTTP         HTTPMetadata
	Custom       map[string]string
	CustomKeys   []string          // Custom's keys in the order written (else sorted)
	Checksums    map[string][]byte // field (md5, sha1, ...) → the digest the caller asserts
	StorageClass string
	OnlyIf       *Conditional
}

// MetadataSize is the custom metadata's size as R2 counts it.
func MetadataSize(m map[string]string) int {
	n := 0
	for k, v := range m {
		n += serialisedLength(k) + serialisedLength(v)
	}
	return n
}

func serialisedLength(s string) int {
	units := 0
	wide := false
	for _, r := range s {
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
		if r >= 256 {
			wide = true
		}
	}
	if wide {
		return units * 2
	}
	return units
}

func (o *PutOptions) check(op string) error {
	if MetadataSize(o.Custom) > MaxMetadataBytes {
		return fail(op, CodeMetadataTooLarge, nil)
	}
	return nil
}

// digester computes the checksums a put stores and checks.
type digester struct {
	fields []string
	hashes []hash.Hash
}

func newDigester(o PutOptions, withMD5 bool) *digester {
	d := &digester{}
	for _, a := range Algorithms {
		if _, asserted := o.Checksums[a.Field]; asserted || (withMD5 && a.Field == "md5") {
			d.fields = append(d.fields, a.Field)
			d.hashes = append(d.hashes, newHash(a.Field))
		}
	}
	return d
}

func (d *digester) Write(p []byte) (int, error) {
	for _, h := range d.hashes {
		h.Write(p)
	}
	return len(p), nil
}

// verify compares the digests with the asserted ones and returns them all
// as hex.
func (d *digester) verify(op string, asserted map[string][]byte) (map[string]string, error) {
	out := map[string]string{}
	for i, f := range d.fields {
		sum := d.hashes[i].Sum(nil)
		if want, ok := asserted[f]; ok && !bytes.Equal(want, sum) {
			name := f
			for _, a := range Algorithms {
				if a.Field == f {
					name = a.Name
				}
			}
			msg := strings.Join([]string{
				fmt.Sprintf("The %s checksum you specified did not match what we received.", name),
				fmt.Sprintf("You provided a %s checksum with value: %s", name, hex.EncodeToString(want)),
				fmt.Sprintf("Actual %s was: %s", name, hex.EncodeToString(sum)),
			}, "\n")
			return nil, &Error{Op: op, Code: CodeBadDigest, Message: msg}
		}
		out[f] = hex.EncodeToString(sum)
	}
	return out, nil
}

// Put stores body under key: size bytes, or, when size < 0, whatever body
// holds. A body of known length with no checksum to check streams in one
// request; else a body of at most PartSize bytes is read and written in
// one request, a larger one in PartSize parts, at most PartsInFlight at a time, so one
// put holds at most (PartsInFlight+1)·PartSize bytes. A condition that
// does not hold stores nothing and returns (nil, nil).
func (b *Bucket) Put(ctx context.Context, key string, body io.Reader, size int64, o PutOptions) (*Object, error) {
	if err := checkKey("put", key); err != nil {
		return nil, err
	}
	if err := o.check("put"); err != nil {
		return nil, err
	}
	if size > MaxObjectBytes {
		return nil, fail("put", CodeEntityTooLarge, nil)
	}
	if size >= 0 && size <= maxSinglePut && len(o.Checksums) == 0 && (size > PartSize || o.OnlyIf == nil) {
		// A body of known length goes in one streamed request: a plain
		// MD5 ETag, as R2 gives, and nothing to check before it lands, so
		// nothing is held in memory (a small conditional one is, so that a
		// race lost to another writer can be judged and sent again).
		return b.putKnown(ctx, key, body, size, o)
	}
	// Read up to one part and a byte: a body that ends within it goes in
	// one request. The buffer grows with what arrives, so a small body of
	// unknown length does not cost a whole part.
	var first []byte
	if size >= 0 && size <= PartSize {
		first = make([]byte, size+1)
	}
	n, err := readPart(body, &first)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if size >= 0 && int64(n) != size {
			return nil, &Error{Op: "put", Code: 10013, Message: "The body holds fewer bytes than its length says.",
				Err: fmt.Errorf("read %d of %d bytes", n, size)}
		}
		return b.putSmall(ctx, key, first[:n], o)
	case err != nil:
		return nil, fmt.Errorf("read put body: %w", err)
	}
	if size >= 0 && size <= PartSize {
		return nil, &Error{Op: "put", Code: 10013, Message: "The body holds more bytes than its length says."}
	}
	return b.putParts(ctx, key, first, body, o)
}

// readPart fills *buf (allocated as needed, up to PartSize+1 bytes) from
// r. It returns io.EOF or io.ErrUnexpectedEOF when r ended first, nil when
// the buffer filled.
func readPart(r io.Reader, buf *[]byte) (int, error) {
	if *buf != nil {
		return io.ReadFull(r, *buf)
	}
	b := make([]byte, 0, 64<<10)
	for {
		if len(b) == cap(b) {
			if len(b) == PartSize+1 {
				*buf = b
				return len(b), nil
			}
			nb := make([]byte, len(b), min(2*cap(b), PartSize+1))
			copy(nb, b)
			b = nb
		}
		m, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+m]
		if err == io.EOF {
			*buf = b
			if len(b) == 0 {
				return 0, io.EOF
			}
			return len(b), io.ErrUnexpectedEOF
		}
		if err != nil {
			return len(b), err
		}
	}
}

// putSmall writes one request's worth, checked and conditional.
func (b *Bucket) putSmall(ctx context.Context, key string, data []byte, o PutOptions) (*Object, error) {
	// The MD5 is not computed here: a single PUT's ETag is the MD5, and
	// record reports it as checksums.md5.
	d := newDigester(o, false)
	d.Write(data)
	sums, err := d.verify("put", o.Checksums)
	if err != nil {
		return nil, err
	}
	if err := b.gate(ctx, "put"); err != nil {
		return nil, err
	}
	version := newVersion()
	meta := storeMeta(o.HTTP, o.Custom, o.CustomKeys, sums, o.StorageClass, version)
	for attempt := 0; ; attempt++ {
		var cond bucket.Cond
		if o.OnlyIf != nil {
			cur, err := b.Head(ctx, key)
			if err != nil {
				return nil, relabel("put", err)
			}
			if !o.OnlyIf.Holds(cur) {
				return nil, nil
			}
			// The write lands only on the object the condition was judged on.
			cond = bucket.IfAbsent()
			if cur != nil {
				cond = bucket.IfMatch(cur.ETag)
			}
		}
		oi, err := b.store.PutObject(ctx, b.prefix+key, bytes.NewReader(data), int64(len(data)), bucket.PutOptions{Cond: cond, Meta: meta})
		if errors.Is(err, bucket.ErrRejected) && attempt < 5 {
			continue // it changed under us: judge the condition again
		}
		if err != nil {
			return nil, storeErr("put", err)
		}
		return b.record(key, oi), nil
	}
}

// maxSinglePut is the largest body one request carries.
const maxSinglePut = 5 << 30

// putKnown streams size bytes of body in one conditional request.
func (b *Bucket) putKnown(ctx context.Context, key string, body io.Reader, size int64, o PutOptions) (*Object, error) {
	if err := b.gate(ctx, "put"); err != nil {
		return nil, err
	}
	meta := storeMeta(o.HTTP, o.Custom, o.CustomKeys, nil, o.StorageClass, newVersion())
	for attempt := 0; ; attempt++ {
		var cond bucket.Cond
		if o.OnlyIf != nil {
			cur, err := b.Head(ctx, key)
			if err != nil {
				return nil, relabel("put", err)
			}
			if !o.OnlyIf.Holds(cur) {
				return nil, nil
			}
			cond = bucket.IfAbsent()
			if cur != nil {
				cond = bucket.IfMatch(cur.ETag)
			}
		}
		oi, err := b.store.PutObject(ctx, b.prefix+key, body, size, bucket.PutOptions{Cond: cond, Meta: meta})
		if errors.Is(err, bucket.ErrRejected) && attempt < 5 {
			// It changed under us: judge again, if the body can be read again.
			if rs, ok := body.(io.Seeker); ok {
				if _, serr := rs.Seek(0, io.SeekStart); serr == nil {
					continue
				}
			}
		}
		if err != nil {
			return nil, storeErr("put", err)
		}
		return b.record(key, oi), nil
	}
}

// relabel gives an *Error the operation op.
func relabel(op string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		c := *e
		c.Op = op
		return &c
	}
	return err
}

// putParts uploads first and the rest of body as a multipart upload.
func (b *Bucket) putParts(ctx context.Context, key string, first []byte, body io.Reader, o PutOptions) (*Object, error) {
	if o.OnlyIf != nil {
		cur, err := b.Head(ctx, key)
		if err != nil {
			return nil, relabel("put", err)
		}
		if !o.OnlyIf.Holds(cur) {
			return nil, nil
		}
	}
	if err := b.gate(ctx, "put"); err != nil {
		return nil, err
	}
	d := newDigester(o, false)
	// The checksums are not known before the last part: they cannot go in
	// the upload's metadata, which is fixed at its start. So an asserted
	// checksum is checked but not stored for a multipart put.
	meta := storeMeta(o.HTTP, o.Custom, o.CustomKeys, nil, o.StorageClass, newVersion())
	id, err := b.store.CreateMultipart(ctx, b.prefix+key, meta)
	if err != nil {
		return nil, storeErr("put", err)
	}
	parts, err := b.uploadAll(ctx, key, id, first, body, d)
	if err == nil {
		_, err = d.verify("put", o.Checksums)
	}
	if err == nil && o.OnlyIf != nil {
		// Completion takes no condition: judge it again just before.
		cur, herr := b.Head(ctx, key)
		if herr != nil {
			err = relabel("put", herr)
		} else if !o.OnlyIf.Holds(cur) {
			b.store.AbortMultipart(context.WithoutCancel(ctx), b.prefix+key, id)
			return nil, nil
		}
	}
	if err != nil {
		b.store.AbortMultipart(context.WithoutCancel(ctx), b.prefix+key, id)
		return nil, err
	}
	oi, err := b.store.CompleteMultipart(ctx, b.prefix+key, id, parts)
	if err != nil {
		b.store.AbortMultipart(context.WithoutCancel(ctx), b.prefix+key, id)
		return nil, storeErr("put", err)
	}
	return b.record(key, oi), nil
}

// uploadAll reads body in PartSize parts (first holds PartSize+1 bytes
// already read) and uploads them, PartsInFlight at a time.
func (b *Bucket) uploadAll(ctx context.Context, key, id string, first []byte, body io.Reader, d *digester) ([]bucket.Part, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	free := make(chan []byte, PartsInFlight+1)
	for range PartsInFlight {
		free <- make([]byte, PartSize)
	}
	var (
		mu       sync.Mutex
		parts    []bucket.Part
		firstErr error
		wg       sync.WaitGroup
	)
	setErr := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
		mu.Unlock()
	}
	// The part read ahead beyond PartSize is the first byte of part 2.
	carry := first[PartSize:]
	buf := first[:PartSize]
	n := PartSize
	for num := 1; ; num++ {
		if num > 1 {
			select {
			case buf = <-free:
				buf = buf[:PartSize] // the first buffer held one byte more
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				break
			}
			c := copy(buf, carry)
			carry = nil
			m, err := io.ReadFull(body, buf[c:])
			n = c + m
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				setErr(fmt.Errorf("read put body: %w", err))
				break
			}
			if n == 0 {
				free <- buf
				break
			}
		}
		if num > bucket.MaxParts {
			setErr(fail("put", CodeEntityTooLarge, nil))
			break
		}
		d.Write(buf[:n])
		part := buf[:n]
		wg.Add(1)
		go func(num int, part []byte) {
			defer wg.Done()
			etag, err := b.store.UploadPart(ctx, b.prefix+key, id, num, bytes.NewReader(part), int64(len(part)))
			if err != nil {
				setErr(storeErr("put", err))
			} else {
				mu.Lock()
				parts = append(parts, bucket.Part{N: num, ETag: etag})
				mu.Unlock()
			}
			free <- part[:cap(part)]
		}(num, part)
		if n < PartSize {
			break
		}
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	sortParts(parts)
	return parts, nil
}

func sortParts(ps []bucket.Part) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].N < ps[j-1].N; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}
