package kv

import (
	"fmt"
	"strconv"
)

// Limits of Workers KV (reference section 4; miniflare's and workerd's
// values where they enforce them).
const (
	MaxKeySize       = 512      // bytes of UTF-8
	MaxValueSize     = 25 << 20 // 26,214,400 bytes
	MaxMetadataSize  = 1024     // bytes of serialized JSON
	MinExpirationTTL = 60       // seconds
	MinCacheTTL      = 30       // seconds
	MaxListLimit     = 1000     // keys per list page (and the default)
	MaxBulkGetKeys   = 100      // keys per get(keys[])
	// MaxBatchPairs and MaxBatchBytes bound one bulk write or delete
	// request: the REST API's 10,000 pairs and 100 MB. Each such request is
	// one transaction on the namespace's cell.
	MaxBatchPairs = 10_000
	MaxBatchBytes = 100_000_000
)

// Error is a KV request refused by the namespace. Its text is exactly what
// workerd's binding throws (as a plain Error) when the KV service answers
// with an error status: "KV <Op> failed: <Status> <Text>", so the binding
// rethrows err.Error() verbatim, and a command prints the same line.
type Error struct {
	Op     string // GET, PUT, DELETE, GET_BULK, PUT_BULK, DELETE_BULK
	Status int    // the HTTP status the KV service gives this failure
	Text   string
}

func (e *Error) Error() string {
	return "KV " + e.Op + " failed: " + strconv.Itoa(e.Status) + " " + e.Text
}

func kvErr(op string, status int, format string, args ...any) *Error {
	return &Error{Op: op, Status: status, Text: fmt.Sprintf(format, args...)}
}

// checkKey applies the KV service's key rules (the messages miniflare's KV
// service gives: the binding checks keys itself first and throws workerd's
// own texts, so these reach only other clients).
func checkKey(op, key string) error {
	switch {
	case key == "":
		return kvErr(op, 400, "Key names must not be empty")
	case key == "." || key == "..":
		return kvErr(op, 400, "Illegal key name %q. Please use a different name.", key)
	case len(key) > MaxKeySize:
		return kvErr(op, 414, "UTF-8 encoded length of %d exceeds key length limit of %d.", len(key), MaxKeySize)
	}
	return nil
}

// resolveExpiration turns a put's expiration options into an absolute
// expiration in epoch seconds (0: never), checking them as the KV service
// does. A TTL wins over an absolute expiration when both are given.
func resolveExpiration(op string, expiration, ttl *int64, nowSec int64) (int64, error) {
	if ttl != nil {
		t := *ttl
		if t <= 0 {
			return 0, kvErr(op, 400, "Invalid expiration_ttl of %d. Please specify integer greater than 0.", t)
		}
		if t < MinExpirationTTL {
			return 0, kvErr(op, 400, "Invalid expiration_ttl of %d. Expiration TTL must be at least %d.", t, MinExpirationTTL)
		}
		return nowSec + t, nil
	}
	if expiration != nil {
		e := *expiration
		if e <= nowSec {
			return 0, kvErr(op, 400, "Invalid expiration of %d. Please specify integer greater than the current number of seconds since the UNIX epoch.", e)
		}
		if e < nowSec+MinExpirationTTL {
			return 0, kvErr(op, 400, "Invalid expiration of %d. Expiration times must be at least %d seconds in the future.", e, MinExpirationTTL)
		}
		return e, nil
	}
	return 0, nil
}

func checkMetadata(op string, metadata []byte) error {
	if len(metadata) > MaxMetadataSize {
		return kvErr(op, 413, "Metadata length of %d exceeds limit of %d.", len(metadata), MaxMetadataSize)
	}
	return nil
}

func checkValue(op string, value []byte) error {
	if len(value) > MaxValueSize {
		return kvErr(op, 413, "Value length of %d exceeds limit of %d.", len(value), MaxValueSize)
	}
	return nil
}
