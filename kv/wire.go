package kv

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// The cell's wire format: one JSON request in, one JSON answer out. Values
// travel as base64 (encoding/json's []byte), metadata as the JSON text the
// client serialized.

// Ops of a request.
const (
	opGet         = "get"          // key -> found, value, metadata, expiration
	opGetBulk     = "get_bulk"     // keys -> entries (one per key, in order)
	opPut         = "put"          // pair
	opPutBatch    = "put_batch"    // pairs, one transaction
	opDelete      = "delete"       // key
	opDeleteBatch = "delete_batch" // keys, one transaction
	opList        = "list"         // prefix, cursor, limit -> keys, list_complete, cursor
)

type request struct {
	Op   string   `json:"op"`
	Pair          // put: the pair (key alone for get and delete)
	Keys []string `json:"keys,omitempty"`
	// Pairs is a put_batch's pairs.
	Pairs []Pair `json:"pairs,omitempty"`
	// List options.
	Prefix string `json:"prefix,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// Pair is one key and value to write. Expiration is absolute epoch seconds
// and ExpirationTTL seconds from the time the namespace applies the write;
// with both, the TTL wins (as in the REST API); with neither the pair never
// expires. Metadata is JSON text (nil: none).
type Pair struct {
	Key           string          `json:"key"`
	Value         []byte          `json:"value,omitempty"`
	Expiration    *int64          `json:"expiration,omitempty"`
	ExpirationTTL *int64          `json:"expiration_ttl,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
}

// Entry is a stored pair as a read returns it.
type Entry struct {
	Key        string          `json:"key"`
	Found      bool            `json:"found"`
	Value      []byte          `json:"value,omitempty"`
	Expiration int64           `json:"expiration,omitempty"` // epoch seconds; 0: never
	Metadata   json.RawMessage `json:"metadata,omitempty"`   // nil: none
}

// ListedKey is one key of a list page, shaped as workerd and Wrangler
// print it: expiration and metadata only when present.
type ListedKey struct {
	Name       string          `json:"name"`
	Expiration int64           `json:"expiration,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
}

// ListResult is one page of keys in UTF-8 byte order. When ListComplete is
// false, Cursor continues the listing (pass the same prefix with it).
type ListResult struct {
	Keys         []ListedKey `json:"keys"`
	ListComplete bool        `json:"list_complete"`
	Cursor       string      `json:"cursor,omitempty"`
}

type answer struct {
	Entry   *Entry      `json:"entry,omitempty"`   // get
	Entries []Entry     `json:"entries,omitempty"` // get_bulk
	List    *ListResult `json:"list,omitempty"`    // list
	Written int         `json:"written,omitempty"` // put, put_batch, delete, delete_batch
}

// encode is json.Marshal without HTML escaping: metadata is measured and
// stored as the client serialized it, and "<" must not grow into "\u003c".
func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// metadataOf is m without a JSON null (which means "no metadata").
func metadataOf(m json.RawMessage) json.RawMessage {
	if len(m) == 0 || string(m) == "null" {
		return nil
	}
	return m
}

// canonicalJSON re-serializes a JSON value the way JavaScript's
// JSON.stringify(JSON.parse(text)) would for the cases that matter here:
// no insignificant whitespace, and strings with only the escapes JSON
// needs ("t\u003c0\u003e" becomes "t<0>"), so metadata is measured and
// stored as a Worker would have written it. Numbers keep their text.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	// Per open container: whether the next token is an object key, and
	// whether a separator is due before it.
	type level struct{ object, key, first bool }
	var stack []level
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(stack) > 0 || out.Len() == 0 {
				return nil, io.ErrUnexpectedEOF
			}
			break
		}
		if len(stack) == 0 && out.Len() > 0 {
			return nil, errors.New("unexpected data after the JSON value")
		}
		if err != nil {
			return nil, err
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out.WriteByte(byte(d))
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].key = true
			}
			continue
		}
		if n := len(stack); n > 0 {
			l := &stack[n-1]
			switch {
			case l.object && l.key:
				if !l.first {
					out.WriteByte(',')
				}
			case l.object:
				out.WriteByte(':')
			default:
				if !l.first {
					out.WriteByte(',')
				}
			}
			l.first = false
		}
		switch t := tok.(type) {
		case json.Delim:
			out.WriteByte(byte(t))
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].key = true // a container value ends the pair
			}
			stack = append(stack, level{object: t == '{', key: t == '{', first: true})
			continue
		case json.Number:
			out.WriteString(t.String())
		default:
			b, err := encode(t)
			if err != nil {
				return nil, err
			}
			out.Write(b)
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].key = !stack[n-1].key
		}
	}
	return out.Bytes(), nil
}

// JSON is the page as the binding's list() resolves it (JSON text,
// HTML characters unescaped).
func (r ListResult) JSON() ([]byte, error) { return encode(r) }
