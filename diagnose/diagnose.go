// Package diagnose tells an operator whether a bucket can be trusted with
// celld before anything else runs: the storage test (conditional writes that
// must be refused are refused, ranged reads return the right bytes) and an
// enumeration of the fleet's node leases. It returns results and never
// prints; the cli package renders them, and every node runs the same test
// before serving.
package diagnose

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet"
)

// Status of one check.
type Status string

const (
	StatusOK   Status = "ok"
	StatusWarn Status = "warn" // inconclusive (ambiguous failures); a node starts with a warning
	StatusFail Status = "fail" // the store is broken: it must not be used
	StatusSkip Status = "skip"
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`             // e.g. "bucket conditional write"
	Status Status `json:"status"`           //
	Detail string `json:"detail,omitempty"` // what was checked, e.g. "create, reject-create, update, reject-stale"
	Fault  string `json:"fault,omitempty"`  // for fail and warn: what the store did wrong
}

// Report is the result of Run.
type Report struct {
	Bucket string  `json:"bucket"`
	Checks []Check `json:"checks"`
	Leases []Lease `json:"leases"`
}

// Lease is a node lease record found under nodes/.
type Lease struct {
	Key       string `json:"key"`
	Node      string `json:"node"`
	Session   string `json:"session"`
	Kind      string `json:"kind"`
	Advertise string `json:"advertise"`
	Version   string `json:"version"`
	Expires   int64  `json:"expires"`    // unix ms, the published expiry
	ExpiresIn int64  `json:"expires_in"` // ms from now; negative: expired that long ago
	Live      bool   `json:"live"`
	Error     string `json:"error,omitempty"` // an unreadable record
}

// OK reports whether no check failed.
func (r Report) OK() bool {
	for _, c := range r.Checks {
		if c.Status == StatusFail {
			return false
		}
	}
	return true
}

// Options control Run.
type Options struct {
	// ReadOnly skips every write: for credentials without write access.
	ReadOnly bool
	// Attempts is how many times the storage test runs, with fresh objects,
	// while its failures are ambiguous. Default 3.
	Attempts int
	// OpTimeout bounds each store call. Default 15s.
	OpTimeout time.Duration
	// Now is the clock for judging lease expiry; default time.Now.
	Now func() time.Time
}

// EnvError says the test could not run at all: the store is unreachable,
// the credentials are refused, or the bucket is missing. It carries a hint.
type EnvError struct {
	Err  error
	Hint string
}

func (e *EnvError) Error() string { return e.Err.Error() }
func (e *EnvError) Unwrap() error { return e.Err }

const probePrefix = "probe/"

// Run runs the storage test and lists node leases. A non-nil error is an
// *EnvError (the test could not run); store faults are failed checks in
// the report.
func Run(ctx context.Context, s bucket.Store, o Options) (Report, error) {
	if o.Attempts <= 0 {
		o.Attempts = 3
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = 15 * time.Second
	}
	r := Report{Bucket: s.String(), Leases: []Lease{}}
	p := prober{s: s, timeout: o.OpTimeout}
	if o.ReadOnly {
		if _, err := p.list(ctx, probePrefix); err != nil {
			return r, envError(s, err)
		}
		r.Checks = append(r.Checks,
			Check{Name: "bucket read access", Status: StatusOK, Detail: "list"},
			Check{Name: "bucket conditional write", Status: StatusSkip, Detail: "--read-only"},
			Check{Name: "bucket range read", Status: StatusSkip, Detail: "--read-only"},
		)
	} else {
		c, err := p.retry(ctx, o.Attempts, p.conditionalWrites)
		if err != nil {
			return r, envError(s, err)
		}
		r.Checks = append(r.Checks, c)
		c, err = p.retry(ctx, o.Attempts, p.rangeRead)
		if err != nil {
			return r, envError(s, err)
		}
		r.Checks = append(r.Checks, c)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	lc, cancel := p.call(ctx)
	leases, err := fleet.ListLeases(lc, s)
	cancel()
	if err != nil {
		return r, envError(s, err)
	}
	now := o.Now().UnixMilli()
	for _, li := range leases {
		l := li.Lease
		r.Leases = append(r.Leases, Lease{
			Key: li.Key, Node: l.Node, Session: l.Session, Kind: l.Kind, Advertise: l.Advertise, Version: l.Version,
			Expires: l.Expires, ExpiresIn: l.Expires - now, Live: li.Err == "" && l.Expires > now, Error: li.Err,
		})
	}
	r.Checks = append(r.Checks, Check{Name: "fleet", Status: StatusOK, Detail: fmt.Sprintf("%d node lease(s)", len(r.Leases))})
	return r, nil
}

// envError turns an error that stopped the test into an *EnvError with a
// hint, or returns it unchanged when it is not about the environment.
func envError(s bucket.Store, err error) error {
	var hint string
	switch {
	case errors.Is(err, bucket.ErrDenied):
		hint = "check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE or the instance role); for read-only credentials use --read-only"
	case errors.Is(err, bucket.ErrNoBucket):
		hint = "create the bucket first, or fix the name in --bucket / CELLD_BUCKET"
	case errors.Is(err, bucket.ErrUnavailable):
		hint = "check --endpoint / S3_ENDPOINT and that the store is running and reachable from here"
	default:
		hint = "check the store's logs; run with --json for the full report"
	}
	return &EnvError{Err: fmt.Errorf("diagnose %s: %w", s, err), Hint: hint}
}

type prober struct {
	s       bucket.Store
	timeout time.Duration
}

// errInconclusive marks an attempt spoiled by an ambiguous answer: it is
// repeated with fresh objects.
var errInconclusive = errors.New("inconclusive")

// retry runs f up to n times while it is inconclusive. A definite answer
// (a check, or an environment error) ends it.
func (p prober) retry(ctx context.Context, n int, f func(context.Context) (Check, error)) (Check, error) {
	var last Check
	for i := 0; i < n; i++ {
		c, err := f(ctx)
		if !errors.Is(err, errInconclusive) {
			return c, err
		}
		last = c
		last.Status = StatusWarn
		last.Fault = fmt.Sprintf("inconclusive after %d attempt(s): %v", i+1, err)
	}
	return last, nil
}

func (p prober) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, p.timeout)
}

func (p prober) list(ctx context.Context, prefix string) ([]bucket.Object, error) {
	c, cancel := p.call(ctx)
	defer cancel()
	return bucket.ListAll(c, p.s, prefix)
}

func (p prober) put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	c, cancel := p.call(ctx)
	defer cancel()
	return p.s.Put(c, key, data, cond)
}

func (p prober) cleanup(keys ...string) {
	// Best effort on a fresh context: a probe left behind is harmless, as
	// nothing reads probe/.
	c, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	for _, k := range keys {
		_ = p.s.Delete(c, k)
	}
}

func probeKey(what string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return probePrefix + hex.EncodeToString(b[:]) + "-" + what
}

// step classifies the answer to one write of the storage test: want is
// the outcome a correct store gives. A wrong definite answer is a fault;
// an ambiguous one spoils the attempt; an environment error ends the test.
func step(err error, want bucket.Outcome, fault string) (string, error) {
	got := bucket.OutcomeOf(err)
	switch {
	case got == want:
		return "", nil
	case got == bucket.Ambiguous:
		return "", fmt.Errorf("%w: %v", errInconclusive, err)
	case got == bucket.Applied || got == bucket.Rejected:
		return fault, nil
	default:
		return "", err
	}
}

func (p prober) conditionalWrites(ctx context.Context) (Check, error) {
	c := Check{Name: "bucket conditional write", Detail: "create, reject-create, update, reject-stale"}
	key := probeKey("cas")
	defer p.cleanup(key)

	o1, err := p.put(ctx, key, []byte("probe v1"), bucket.IfAbsent())
	if f, err := step(err, bucket.Applied, "store refused to create a fresh object with If-None-Match: *"); f != "" || err != nil {
		return fail(c, f), err
	}
	_, err = p.put(ctx, key, []byte("probe v1 again"), bucket.IfAbsent())
	if f, err := step(err, bucket.Rejected, "store accepted a create of an existing object: it ignores If-None-Match: *"); f != "" || err != nil {
		return fail(c, f), err
	}
	o2, err := p.put(ctx, key, []byte("probe v2"), bucket.IfMatch(o1.ETag))
	if f, err := step(err, bucket.Applied, "store refused a compare-and-swap with the current ETag"); f != "" || err != nil {
		return fail(c, f), err
	}
	if o2.ETag == o1.ETag {
		return fail(c, "store kept the same ETag after a content change"), nil
	}
	_, err = p.put(ctx, key, []byte("probe stale"), bucket.IfMatch(o1.ETag))
	if f, err := step(err, bucket.Rejected, "store accepted a write with a stale ETag: it ignores If-Match"); f != "" || err != nil {
		return fail(c, f), err
	}
	gc, cancel := p.call(ctx)
	defer cancel()
	got, _, err := p.s.Get(gc, key)
	if err != nil {
		if bucket.OutcomeOf(err) == bucket.NotFound {
			return fail(c, "store lost an acknowledged write: read-after-write returned not found"), nil
		}
		return c, err
	}
	if !bytes.Equal(got, []byte("probe v2")) {
		return fail(c, fmt.Sprintf("read-after-write returned %q, want %q", got, "probe v2")), nil
	}
	c.Status = StatusOK
	return c, nil
}

func (p prober) rangeRead(ctx context.Context) (Check, error) {
	const size, lo, hi = 4096, 1000, 1999
	c := Check{Name: "bucket range read", Detail: fmt.Sprintf("bytes=%d-%d of a %d-byte object, byte for byte", lo, hi, size)}
	key := probeKey("range")
	defer p.cleanup(key)
	data := make([]byte, size)
	_, _ = rand.Read(data)
	_, err := p.put(ctx, key, data, bucket.Cond{})
	if f, err := step(err, bucket.Applied, "store refused an unconditional write"); f != "" || err != nil {
		return fail(c, f), err
	}
	gc, cancel := p.call(ctx)
	defer cancel()
	got, _, err := p.s.GetRange(gc, key, bucket.Bytes(lo, hi))
	switch {
	case err != nil && bucket.OutcomeOf(err) == bucket.NotFound:
		return fail(c, "store lost an acknowledged write: ranged read returned not found"), nil
	case err != nil:
		return c, err
	case len(got) == size:
		return fail(c, "store ignores the Range header: it returned the whole object"), nil
	case len(got) != hi-lo+1:
		return fail(c, fmt.Sprintf("store returned %d bytes for a %d-byte range", len(got), hi-lo+1)), nil
	case !bytes.Equal(got, data[lo:hi+1]):
		return fail(c, "store returned the wrong bytes for a range"), nil
	}
	c.Status = StatusOK
	return c, nil
}

func fail(c Check, fault string) Check {
	if fault != "" {
		c.Status, c.Fault = StatusFail, fault
	}
	return c
}
