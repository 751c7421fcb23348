package r2

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/celldgo/celld/bucket"
)

// EnvelopeKey is the user metadata entry (x-amz-meta-celld-r2 on S3) that
// holds everything of an R2 object that is not an HTTP header: custom
// metadata, checksums, version, storage class and cache expiry, as one
// ASCII-only JSON object (see docs/bucket-layout.md). An object without it
// — written by another S3 client — still reads: its user metadata becomes
// customMetadata and its version is its ETag.
const EnvelopeKey = "celld-r2"

// envelope is the JSON in EnvelopeKey.
type envelope struct {
	V            int               `json:"v"`
	Version      string            `json:"version,omitempty"`
	Custom       *ordered          `json:"custom,omitempty"`
	Checksums    map[string]string `json:"checksums,omitempty"`
	StorageClass string            `json:"storage_class,omitempty"`
	CacheExpiry  *int64            `json:"cache_expiry,omitempty"` // unix ms
}

// ordered is a JSON object of strings whose key order is kept: custom
// metadata reads back in the order it was written, as on R2.
type ordered struct {
	m    map[string]string
	keys []string // the order; keys of m not in it follow, sorted
}

func (o *ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range orderOf(o.m, o.keys) {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(o.m[k])
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func (o *ordered) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("custom metadata: not an object")
	}
	o.m = map[string]string{}
	o.keys = nil
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("custom metadata: %w", err)
		}
		k, _ := t.(string)
		var v string
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("custom metadata %q: %w", k, err)
		}
		if _, dup := o.m[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.m[k] = v
	}
	return nil
}

// orderOf is m's keys in the order of keys, then any others sorted.
func orderOf(m map[string]string, keys []string) []string {
	out := make([]string, 0, len(m))
	seen := make(map[string]bool, len(m))
	for _, k := range keys {
		if _, ok := m[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	if len(out) == len(m) {
		return out
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// asciiJSON encodes v as JSON with every non-ASCII character escaped, so
// it survives as an HTTP header value on any store.
func asciiJSON(v any) string {
	b, _ := json.Marshal(v)
	var sb strings.Builder
	for _, r := range string(b) {
		if r < 0x80 {
			sb.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			a, c := utf16.EncodeRune(r)
			fmt.Fprintf(&sb, `\u%04x\u%04x`, a, c)
			continue
		}
		fmt.Fprintf(&sb, `\u%04x`, r)
	}
	return sb.String()
}

func newVersion() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// storeMeta is what a put stores: the headers as headers, the rest in the
// envelope.
func storeMeta(h HTTPMetadata, custom map[string]string, keys []string, sums map[string]string, class, version string) bucket.Meta {
	e := envelope{V: 1, Version: version, Checksums: sums, StorageClass: class}
	if len(custom) > 0 {
		e.Custom = &ordered{m: custom, keys: keys}
	}
	m := bucket.Meta{
		ContentType: h.ContentType, ContentLanguage: h.ContentLanguage, ContentDisposition: h.ContentDisposition,
		ContentEncoding: h.ContentEncoding, CacheControl: h.CacheControl,
	}
	if h.CacheExpiry != nil {
		ms := h.CacheExpiry.UnixMilli()
		e.CacheExpiry = &ms
		m.Expires = h.CacheExpiry.UTC().Format(http.TimeFormat)
	}
	m.User = map[string]string{EnvelopeKey: asciiJSON(e)}
	return m
}

// record is the R2 object a stored one is.
func (b *Bucket) record(key string, oi bucket.ObjectInfo) *Object {
	o := &Object{
		Key: key, Size: oi.Size, ETag: oi.ETag, Uploaded: oi.Modified, Version: oi.ETag,
		HTTP: HTTPMetadata{
			ContentType: oi.Meta.ContentType, ContentLanguage: oi.Meta.ContentLanguage,
			ContentDisposition: oi.Meta.ContentDisposition, ContentEncoding: oi.Meta.ContentEncoding,
			CacheControl: oi.Meta.CacheControl,
		},
		Custom: map[string]string{}, Checksums: map[string]string{},
	}
	var e envelope
	if raw, ok := oi.Meta.User[EnvelopeKey]; ok && json.Unmarshal([]byte(raw), &e) == nil && e.V == 1 {
		if e.Version != "" {
			o.Version = e.Version
		}
		if e.Custom != nil {
			maps.Copy(o.Custom, e.Custom.m)
			o.CustomKeys = e.Custom.keys
		}
		for k, v := range e.Checksums {
			o.Checksums[k] = v
		}
		if e.StorageClass != "" {
			o.StorageClass = e.StorageClass
		}
		if e.CacheExpiry != nil {
			t := time.UnixMilli(*e.CacheExpiry).UTC()
			o.HTTP.CacheExpiry = &t
		}
	} else {
		for k, v := range oi.Meta.User {
			o.Custom[k] = v
		}
		if oi.Meta.Expires != "" {
			if t, err := http.ParseTime(oi.Meta.Expires); err == nil {
				o.HTTP.CacheExpiry = &t
			}
		}
	}
	if len(o.ETag) == 32 && isHex(o.ETag) {
		o.Checksums["md5"] = o.ETag // one request's ETag is its MD5
	}
	return o
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}
