package bucket

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
)

// Sentinels. Every error a Store returns wraps at most one of these;
// compare with errors.Is. Outcome maps them to the four answers the fleet
// core understands.
var (
	// ErrNotFound: the key does not exist (a read of a missing object).
	ErrNotFound = errors.New("object not found")
	// ErrRejected: the store refused the write's precondition. Nothing was
	// written; another writer won the race.
	ErrRejected = errors.New("precondition rejected")
	// ErrAmbiguous: the write was sent and its outcome is unknown (timeout,
	// 5xx, lost response). It may have been applied; re-read to settle it.
	ErrAmbiguous = errors.New("outcome unknown")
	// ErrUnavailable: the store could not be reached, or a read failed in a
	// way worth retrying. A write with this error was not applied.
	ErrUnavailable = errors.New("store unavailable")
	// ErrDenied: the credentials were refused or lack permission.
	ErrDenied = errors.New("access denied")
	// ErrNoBucket: the bucket does not exist.
	ErrNoBucket = errors.New("bucket does not exist")
	// ErrInvalidRange: a ranged read selected no bytes.
	ErrInvalidRange = errors.New("invalid range")
	// ErrInvalidKey: the key cannot be stored.
	ErrInvalidKey = errors.New("invalid key")
)

// Outcome is what a storage call's result means to a decision maker.
type Outcome uint8

const (
	Applied   Outcome = iota // the call did what it asked
	Rejected                 // a precondition was refused: a clean lost race
	NotFound                 // the key does not exist
	Ambiguous                // a write may or may not have been applied
	Failed                   // definitely not applied (unreachable, denied, bad request)
)

var outcomeNames = [...]string{"applied", "rejected", "not_found", "ambiguous", "failed"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("outcome(%d)", o)
}

// OutcomeOf maps a Store error to its Outcome.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return Applied
	case errors.Is(err, ErrRejected):
		return Rejected
	case errors.Is(err, ErrNotFound):
		return NotFound
	case errors.Is(err, ErrAmbiguous):
		return Ambiguous
	default:
		return Failed
	}
}

// Op is the kind of call being classified.
type Op uint8

const (
	OpRead   Op = iota // get, ranged get, head, list
	OpWrite            // put
	OpDelete           // delete (idempotent: a lost response is harmless)
)

// Reply is everything a store told us about one call: the HTTP status and
// S3 error code if a response arrived, and the transport error if not.
type Reply struct {
	Status int    // 0 when no response arrived
	Code   string // S3 error code, e.g. "PreconditionFailed"
	Err    error  // transport or client error when Status == 0
}

// Classify is the single place where a store's answer becomes one of our
// sentinels. The rules, pinned by a table test:
//
//   - 412, or 409 ConditionalRequestConflict, on a conditional write: rejected.
//   - 404 on an If-Match write: rejected (MinIO answers a CAS of a missing key
//     with 404 NoSuchKey; other stores with 412 — both are a lost race).
//   - 404 NoSuchBucket: no bucket; other 404 on a read: not found.
//   - 401/403: denied.
//   - 5xx, 408, 429, a timeout or a broken connection after sending: for a
//     write, ambiguous; for a read or delete, unavailable (retry is safe).
//   - a refused connection, DNS failure or other error before sending:
//     unavailable (nothing was applied).
//
// It returns nil only for 2xx and 206 replies.
func Classify(op Op, cond Cond, r Reply) error {
	if r.Status == 0 {
		return classifyTransport(op, r.Err)
	}
	detail := fmt.Sprintf("HTTP %d", r.Status)
	if r.Code != "" {
		detail += " " + r.Code
	}
	switch s := r.Status; {
	case s >= 200 && s < 300:
		return nil
	case op == OpWrite && cond.Kind != CondNone && s == 412:
		return fmt.Errorf("%w (%s, %s)", ErrRejected, cond, detail)
	case op == OpWrite && cond.Kind != CondNone && s == 409 && r.Code == "ConditionalRequestConflict":
		return fmt.Errorf("%w (%s, %s)", ErrRejected, cond, detail)
	case s == 404 && r.Code == "NoSuchBucket":
		return fmt.Errorf("%w (%s)", ErrNoBucket, detail)
	case op == OpWrite && cond.Kind == CondIfMatch && s == 404:
		return fmt.Errorf("%w (%s on a missing key, %s)", ErrRejected, cond, detail)
	case s == 404:
		return fmt.Errorf("%w (%s)", ErrNotFound, detail)
	case s == 416:
		return fmt.Errorf("%w (%s)", ErrInvalidRange, detail)
	case s == 401 || s == 403:
		return fmt.Errorf("%w (%s)", ErrDenied, detail)
	case s >= 500 || s == 408 || s == 429:
		if op == OpWrite {
			return fmt.Errorf("%w (%s)", ErrAmbiguous, detail)
		}
		return fmt.Errorf("%w (%s)", ErrUnavailable, detail)
	default:
		return fmt.Errorf("store answered %s", detail)
	}
}

func classifyTransport(op Op, err error) error {
	if err == nil {
		return errors.New("store call failed with no reply and no error")
	}
	if notSent(err) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	if op == OpWrite {
		return fmt.Errorf("%w: %w", ErrAmbiguous, err)
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// notSent reports errors that prove the request never reached the store:
// a dial that failed (refused, unreachable, DNS) or a context that ended
// before the connection was made.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Op == "parse" {
		return true
	}
	return errors.Is(err, errNotSent)
}

// errNotSent marks errors our own stores raise before doing anything.
var errNotSent = errors.New("request not sent")

// ctxErr wraps a context error seen before any I/O began.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w: %w", ErrUnavailable, errNotSent, err)
	}
	return nil
}
