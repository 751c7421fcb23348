package kv

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Wrangler's bulk file formats (`wrangler kv bulk put|get|delete FILE`).

// MaxListedProblems is how many offending items a bulk file error names,
// as Wrangler does; more are summarized as "...".
const MaxListedProblems = 12

// BulkFileError is a bulk file that cannot be used. Nothing has been
// written when it is returned. Its text is Wrangler's: a header, then one
// line per offending item (at most MaxListedProblems, then "...").
type BulkFileError struct {
	File   string
	Header string   // what the file should have held
	Items  []string // "The item at index N ..." lines, all of them
}

func (e *BulkFileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Unexpected JSON input from %q.\n%s", e.File, e.Header)
	for i, it := range e.Items {
		if i == MaxListedProblems {
			b.WriteString("\n...")
			break
		}
		b.WriteString("\n" + it)
	}
	return b.String()
}

const keyValueShape = `Each item in the array should be an object that matches:

interface KeyValue {
  key: string;
  value: string;
  expiration?: number;
  expiration_ttl?: number;
  metadata?: object;
  base64?: boolean;
}
`

// ParseBulkPut reads a bulk put file: a JSON array of {key, value,
// expiration?, expiration_ttl?, metadata?, base64?}. Every item is checked
// before anything is returned — its types as Wrangler checks them, then
// what the namespace would refuse (key, value size, base64, metadata size,
// expiration against nowSec) — so a bad file is refused whole. Unknown
// properties are only warned about, as Wrangler does. A base64 value is
// decoded to its bytes.
func ParseBulkPut(file string, data []byte, nowSec int64) (pairs []Pair, warnings []string, err error) {
	items, err := topArray(file, data)
	if err != nil {
		return nil, nil, err
	}
	if items == nil {
		return nil, nil, &BulkFileError{File: file, Header: fmt.Sprintf("Expected an array of key-value objects but got type %q.", jsType(firstByte(data)))}
	}
	fe := &BulkFileError{File: file, Header: keyValueShape}
	pairs = make([]Pair, 0, len(items))
	for i, raw := range items {
		p, extra, problem := parseKeyValue(raw, nowSec)
		switch {
		case problem == "":
			pairs = append(pairs, p)
		case problem == badShape:
			fe.Items = append(fe.Items, fmt.Sprintf("The item at index %d is %s", i, compact(raw)))
		default:
			fe.Items = append(fe.Items, fmt.Sprintf("The item at index %d (key %q) %s", i, p.Key, problem))
		}
		if len(extra) > 0 && problem != badShape {
			names, _ := json.Marshal(extra)
			warnings = append(warnings, fmt.Sprintf("The item at index %d contains unexpected properties: %s.", i, names))
		}
	}
	if len(fe.Items) > 0 {
		return nil, warnings, fe
	}
	return pairs, warnings, nil
}

const badShape = "shape"

// parseKeyValue checks one bulk put item. problem is badShape when the
// types are wrong (Wrangler's isKVKeyValue), another text when the
// namespace would refuse the pair, "" when it is good.
func parseKeyValue(raw json.RawMessage, nowSec int64) (p Pair, extra []string, problem string) {
	fields, ok := objectFields(raw)
	if !ok {
		return p, nil, badShape
	}
	var value string
	var isBase64 bool
	var exp, ttl *float64
	seen := map[string]bool{}
	for _, f := range fields {
		seen[f.name] = true
		t := jsType(firstByte(f.value))
		switch f.name {
		case "key":
			if t != "string" || json.Unmarshal(f.value, &p.Key) != nil {
				return p, nil, badShape
			}
		case "value":
			if t != "string" || json.Unmarshal(f.value, &value) != nil {
				return p, nil, badShape
			}
		case "expiration", "expiration_ttl":
			var n float64
			if t != "number" || json.Unmarshal(f.value, &n) != nil {
				return p, nil, badShape
			}
			if f.name == "expiration" {
				exp = &n
			} else {
				ttl = &n
			}
		case "metadata":
			if t != "object" {
				return p, nil, badShape
			}
			m, err := canonicalJSON(f.value)
			if err != nil {
				return p, nil, badShape
			}
			p.Metadata = metadataOf(m)
		case "base64":
			if t != "boolean" {
				return p, nil, badShape
			}
			isBase64 = string(f.value) == "true"
		default:
			if !seen["#"+f.name] {
				extra = append(extra, f.name)
				seen["#"+f.name] = true
			}
		}
	}
	if !seen["key"] || !seen["value"] {
		return p, nil, badShape
	}
	if isBase64 {
		b, err := decodeBase64(value)
		if err != nil {
			return p, extra, "has a value that is not valid base64."
		}
		p.Value = b
	} else {
		p.Value = []byte(value)
	}
	for _, n := range []struct {
		name string
		v    *float64
		dst  **int64
	}{{"expiration", exp, &p.Expiration}, {"expiration_ttl", ttl, &p.ExpirationTTL}} {
		if n.v == nil {
			continue
		}
		if *n.v != math.Trunc(*n.v) || math.Abs(*n.v) > 1<<53 {
			return p, extra, fmt.Sprintf("has %s %v, which is not a whole number of seconds.", n.name, *n.v)
		}
		i := int64(*n.v)
		*n.dst = &i
	}
	var err error
	if err = checkKey("PUT", p.Key); err == nil {
		if err = checkValue("PUT", p.Value); err == nil {
			if _, err = resolveExpiration("PUT", p.Expiration, p.ExpirationTTL, nowSec); err == nil {
				err = checkMetadata("PUT", p.Metadata)
			}
		}
	}
	var ke *Error
	if errors.As(err, &ke) {
		return p, extra, "is refused: " + ke.Text
	}
	return p, extra, ""
}

// decodeBase64 accepts standard or URL-safe base64, padded or not, with
// whitespace ignored (as Wrangler's Buffer.from(value, "base64") does for
// well-formed input).
func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\n', '\r':
			return -1
		case '-':
			return '+'
		case '_':
			return '/'
		}
		return r
	}, s)
	return base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
}

// ParseBulkKeys reads a bulk get or delete file: a JSON array of key
// strings or of objects with a "name" string (so `kv key list` output can
// be fed back). Keys the namespace would refuse are reported too.
func ParseBulkKeys(file string, data []byte) ([]string, error) {
	items, err := topArray(file, data)
	if err != nil {
		return nil, err
	}
	if items == nil {
		return nil, &BulkFileError{File: file, Header: "Expected an array of strings but got:\n" + string(bytes.TrimSpace(data))}
	}
	fe := &BulkFileError{File: file, Header: `Expected an array of strings or objects with a "name" key.`}
	keys := make([]string, 0, len(items))
	for i, raw := range items {
		var key string
		ok := false
		switch jsType(firstByte(raw)) {
		case "string":
			ok = json.Unmarshal(raw, &key) == nil
		case "object":
			if fields, isObj := objectFields(raw); isObj {
				for _, f := range fields {
					if f.name == "name" {
						ok = firstByte(f.value) == '"' && json.Unmarshal(f.value, &key) == nil
					}
				}
			}
		}
		if !ok {
			fe.Items = append(fe.Items, fmt.Sprintf("The item at index %d is type: %q - %s", i, jsType(firstByte(raw)), compact(raw)))
			continue
		}
		if err := checkKey("DELETE", key); err != nil {
			var ke *Error
			errors.As(err, &ke)
			fe.Items = append(fe.Items, fmt.Sprintf("The item at index %d (key %q) is refused: %s", i, key, ke.Text))
			continue
		}
		keys = append(keys, key)
	}
	if len(fe.Items) > 0 {
		return nil, fe
	}
	return keys, nil
}

// topArray returns the items of a JSON array, nil if data is valid JSON
// but not an array, or an error if it is not JSON.
func topArray(file string, data []byte) ([]json.RawMessage, error) {
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	if firstByte(data) != '[' {
		return nil, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	return items, nil
}

type field struct {
	name  string
	value json.RawMessage
}

// objectFields lists a JSON object's members in order; ok is false when
// raw is not an object.
func objectFields(raw json.RawMessage) (fields []field, ok bool) {
	if firstByte(raw) != '{' {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		fields = append(fields, field{name, v})
	}
	return fields, true
}

func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// jsType is JavaScript's typeof of the JSON value starting with c.
func jsType(c byte) string {
	switch c {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case '{', '[', 'n':
		return "object"
	}
	return "number"
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// WriteBulkGet prints what `wrangler kv bulk get` prints for entries: a
// JSON object (two-space indent) mapping each key to {"value": text|null}.
// As in JavaScript, keys that are array indices come first in numeric
// order, then the others in file order; a repeated key keeps its first
// place.
func WriteBulkGet(w io.Writer, entries []Entry) error {
	type kv struct {
		key   string
		value *string
	}
	var order []kv
	at := map[string]int{}
	for _, e := range entries {
		var v *string
		if e.Found {
			s := string(bytes.ToValidUTF8(e.Value, []byte("\uFFFD")))
			v = &s
		}
		if i, ok := at[e.Key]; ok {
			order[i].value = v
			continue
		}
		at[e.Key] = len(order)
		order = append(order, kv{e.Key, v})
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, aok := arrayIndex(order[i].key)
		b, bok := arrayIndex(order[j].key)
		if aok && bok {
			return a < b
		}
		return aok && !bok
	})
	var b bytes.Buffer
	if len(order) == 0 {
		b.WriteString("{}")
	} else {
		b.WriteString("{\n")
		for i, o := range order {
			k, _ := encode(o.key)
			v, _ := encode(o.value)
			fmt.Fprintf(&b, "  %s: {\n    \"value\": %s\n  }", k, v)
			if i < len(order)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString("}")
	}
	b.WriteString("\n")
	_, err := w.Write(b.Bytes())
	return err
}

// arrayIndex reports whether s is a canonical array index (how JavaScript
// orders an object's integer-like keys before the others).
func arrayIndex(s string) (uint64, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

// WriteBulkPutFile prints entries in the format ParseBulkPut reads (and
// `wrangler kv bulk put` reads): a JSON array (two-space indent) of
// {key, value, base64?, expiration?, metadata?}. A value that is not valid
// UTF-8 is written base64 with "base64": true, so binary values come back
// byte for byte; metadata is written as stored; expiration is absolute
// epoch seconds. Keys that were not found are left out and returned, in
// order, for the caller to report; a repeated key is written once.
func WriteBulkPutFile(w io.Writer, entries []Entry) (missing []string, err error) {
	type item struct {
		Key        string          `json:"key"`
		Value      string          `json:"value"`
		Base64     bool            `json:"base64,omitempty"`
		Expiration int64           `json:"expiration,omitempty"`
		Metadata   json.RawMessage `json:"metadata,omitempty"`
	}
	items := make([]item, 0, len(entries))
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		if !e.Found {
			missing = append(missing, e.Key)
			continue
		}
		it := item{Key: e.Key, Expiration: e.Expiration, Metadata: metadataOf(e.Metadata)}
		if utf8.Valid(e.Value) {
			it.Value = string(e.Value)
		} else {
			it.Value, it.Base64 = base64.StdEncoding.EncodeToString(e.Value), true
		}
		items = append(items, it)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(items); err != nil {
		return nil, fmt.Errorf("encode bulk file: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return nil, fmt.Errorf("write bulk file: %w", err)
	}
	return missing, nil
}
