package bucket

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Mem is an in-memory Store with fault injection, for tests and the
// simulator. Its semantics match S3 with strong consistency; faults make it
// misbehave the ways real stores do.
type Mem struct {
	mu     sync.Mutex
	objs   map[string]memObject
	gen    uint64
	faults FaultFunc
	now    func() time.Time

	uploads map[string]*memUpload // multipart uploads in progress (Objects)
}

type memObject struct {
	data     []byte
	etag     string
	modified time.Time
	meta     *Meta // headers and user metadata of an application object
}

var _ Store = (*Mem)(nil)

// Call describes one Store call, as seen by a FaultFunc.
type Call struct {
	Method string // "get", "get_range", "head", "put", "delete", "list"
	Key    string // the key, or the prefix for list
	Cond   Cond   // for put
}

// Op classifies the call for error mapping.
func (c Call) Op() Op {
	switch c.Method {
	case "put":
		return OpWrite
	case "delete":
		return OpDelete
	default:
		return OpRead
	}
}

// Fault is what happens to one call. The zero Fault is a healthy call.
type Fault struct {
	// Latency delays the answer (the call honours its context meanwhile).
	Latency time.Duration
	// Status answers with this HTTP status instead of performing the call
	// (e.g. 503), classified as a real store's answer would be.
	Status int
	// Apply, with Status, performs the write before answering Status: a
	// 5xx that arrives after the store applied the write.
	Apply bool
	// LoseResponse performs the call, then reports a timeout: the caller
	// sees ErrAmbiguous for a write although it was applied.
	LoseResponse bool
	// Race runs just before the call is performed: a racing writer.
	Race func(s Store)
}

// FaultFunc decides the fault for each call; nil means no faults.
type FaultFunc func(Call) Fault

// NewMem returns an empty in-memory store.
func NewMem() *Mem {
	return &Mem{objs: make(map[string]memObject), now: time.Now}
}

// SetFaults installs f (nil to heal). Safe to call concurrently.
func (m *Mem) SetFaults(f FaultFunc) {
	m.mu.Lock()
	m.faults = f
	m.mu.Unlock()
}

func (m *Mem) String() string { return "mem://" }

// errLostResponse is the transport error a lost response looks like.
var errLostResponse = errors.New("response lost after the store applied the call (injected)")

// after turns the result of a performed call into what the caller sees.
func after(c Call, f Fault, err error) error {
	if err != nil {
		return err
	}
	if f.LoseResponse {
		return Classify(c.Op(), c.Cond, Reply{Err: errLostResponse})
	}
	if f.Status != 0 {
		return Classify(c.Op(), c.Cond, Reply{Status: f.Status, Code: "InjectedFault"})
	}
	return nil
}

func (m *Mem) Get(ctx context.Context, key string) ([]byte, Object, error) {
	c := Call{Method: "get", Key: key}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return nil, Object{}, err
	}
	m.mu.Lock()
	o, ok := m.objs[key]
	m.mu.Unlock()
	if !ok {
		return nil, Object{}, after(c, f, fmt.Errorf("get %s: %w", key, ErrNotFound))
	}
	if err := after(c, f, nil); err != nil {
		return nil, Object{}, err
	}
	return append([]byte(nil), o.data...), o.info(key), nil
}

func (m *Mem) GetRange(ctx context.Context, key string, r Range) ([]byte, Object, error) {
	c := Call{Method: "get_range", Key: key}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return nil, Object{}, err
	}
	m.mu.Lock()
	o, ok := m.objs[key]
	m.mu.Unlock()
	if !ok {
		return nil, Object{}, after(c, f, fmt.Errorf("get %s: %w", key, ErrNotFound))
	}
	lo, hi, err := r.Resolve(int64(len(o.data)))
	if err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	if err := after(c, f, nil); err != nil {
		return nil, Object{}, err
	}
	return append([]byte(nil), o.data[lo:hi]...), o.info(key), nil
}

func (m *Mem) Head(ctx context.Context, key string) (Object, error) {
	c := Call{Method: "head", Key: key}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return Object{}, err
	}
	m.mu.Lock()
	o, ok := m.objs[key]
	m.mu.Unlock()
	if !ok {
		return Object{}, after(c, f, fmt.Errorf("head %s: %w", key, ErrNotFound))
	}
	return o.info(key), after(c, f, nil)
}

func (m *Mem) Put(ctx context.Context, key string, data []byte, cond Cond) (Object, error) {
	if err := CheckKey(key); err != nil {
		return Object{}, fmt.Errorf("put %s: %w", key, err)
	}
	c := Call{Method: "put", Key: key, Cond: cond}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return Object{}, err
	}
	m.mu.Lock()
	cur, exists := m.objs[key]
	switch {
	case cond.Kind == CondIfAbsent && exists:
		err = fmt.Errorf("put %s: %w (%s, object exists)", key, ErrRejected, cond)
	case cond.Kind == CondIfMatch && !exists:
		err = fmt.Errorf("put %s: %w (%s, object missing)", key, ErrRejected, cond)
	case cond.Kind == CondIfMatch && cur.etag != cond.ETag:
		err = fmt.Errorf("put %s: %w (%s, current %q)", key, ErrRejected, cond, cur.etag)
	}
	var o memObject
	if err == nil {
		m.gen++
		o = memObject{data: append([]byte(nil), data...), etag: contentETag(data, m.gen), modified: m.now()}
		m.objs[key] = o
	}
	m.mu.Unlock()
	if err := after(c, f, err); err != nil {
		return Object{}, err
	}
	return o.info(key), nil
}

func (m *Mem) Delete(ctx context.Context, key string) error {
	c := Call{Method: "delete", Key: key}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return err
	}
	m.mu.Lock()
	delete(m.objs, key)
	m.mu.Unlock()
	return after(c, f, nil)
}

func (m *Mem) List(ctx context.Context, prefix, startAfter string, limit int) (Page, error) {
	c := Call{Method: "list", Key: prefix}
	f, stop, err := m.begin(ctx, c)
	if stop {
		return Page{}, err
	}
	limit = checkLimit(limit)
	m.mu.Lock()
	keys := make([]string, 0)
	for k := range m.objs {
		if strings.HasPrefix(k, prefix) && k > startAfter {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var p Page
	if len(keys) > limit {
		keys, p.Truncated = keys[:limit], true
	}
	for _, k := range keys {
		p.Objects = append(p.Objects, m.objs[k].info(k))
	}
	m.mu.Unlock()
	return p, after(c, f, nil)
}

// begin runs the fault for c: latency, a racing writer, or an answer that
// replaces the call.
func (m *Mem) begin(ctx context.Context, c Call) (Fault, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return Fault{}, true, err
	}
	m.mu.Lock()
	ff := m.faults
	m.mu.Unlock()
	if ff == nil {
		return Fault{}, false, nil
	}
	f := ff(c)
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return f, true, Classify(c.Op(), c.Cond, Reply{Err: ctx.Err()})
		}
	}
	if f.Race != nil {
		f.Race(m)
	}
	if f.Status != 0 && !f.Apply {
		return f, true, Classify(c.Op(), c.Cond, Reply{Status: f.Status, Code: "InjectedFault"})
	}
	return f, false, nil
}

func (o memObject) info(key string) Object {
	return Object{Key: key, ETag: o.etag, Size: int64(len(o.data)), Modified: o.modified}
}

// contentETag derives an ETag from the content and a generation, so that
// rewriting identical bytes still changes the ETag (no ABA on CAS).
func contentETag(data []byte, gen uint64) string {
	h := sha256.Sum256(data)
	return fmt.Sprintf("%s-%x", hex.EncodeToString(h[:8]), gen)
}
