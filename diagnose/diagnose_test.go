package diagnose

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
)

// ignoresConditions is a broken store: it accepts If-None-Match and
// If-Match and ignores them, as some S3 clones do.
type ignoresConditions struct{ bucket.Store }

func (s ignoresConditions) Put(ctx context.Context, key string, data []byte, _ bucket.Cond) (bucket.Object, error) {
	return s.Store.Put(ctx, key, data, bucket.Cond{})
}

// ignoresIfMatch honours create-if-absent but not compare-and-swap.
type ignoresIfMatch struct{ bucket.Store }

func (s ignoresIfMatch) Put(ctx context.Context, key string, data []byte, c bucket.Cond) (bucket.Object, error) {
	if c.Kind == bucket.CondIfMatch {
		c = bucket.Cond{}
	}
	return s.Store.Put(ctx, key, data, c)
}

// ignoresRange answers a ranged read with the whole object.
type ignoresRange struct{ bucket.Store }

func (s ignoresRange) GetRange(ctx context.Context, key string, _ bucket.Range) ([]byte, bucket.Object, error) {
	return s.Store.Get(ctx, key)
}

// shiftsRange answers a ranged read with the right length but wrong bytes.
type shiftsRange struct{ bucket.Store }

func (s shiftsRange) GetRange(ctx context.Context, key string, r bucket.Range) ([]byte, bucket.Object, error) {
	b, o, err := s.Store.Get(ctx, key)
	if err != nil {
		return nil, o, err
	}
	return b[1001:2001], o, nil
}

func check(t *testing.T, r Report, name string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return Check{}
}

func TestRun_HealthyStore(t *testing.T) {
	m := bucket.NewMem()
	m.Put(context.Background(), "nodes/n1.json", []byte(`{}`), bucket.Cond{})
	r, err := Run(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("healthy store failed: %+v", r.Checks)
	}
	for _, name := range []string{"bucket conditional write", "bucket range read", "fleet"} {
		if c := check(t, r, name); c.Status != StatusOK {
			t.Errorf("%s: %+v", name, c)
		}
	}
	if got := check(t, r, "fleet").Detail; got != "1 node lease(s)" {
		t.Errorf("fleet detail = %q", got)
	}
	// The probes are cleaned up.
	if left, _ := bucket.ListAll(context.Background(), m, "probe/"); len(left) != 0 {
		t.Errorf("probe objects left behind: %v", left)
	}
}

func TestRun_BrokenStores(t *testing.T) {
	tests := []struct {
		name, check, fault string
		store              func(bucket.Store) bucket.Store
	}{
		{"ignores all conditions", "bucket conditional write", "ignores If-None-Match", func(s bucket.Store) bucket.Store { return ignoresConditions{s} }},
		{"ignores If-Match", "bucket conditional write", "stale ETag: it ignores If-Match", func(s bucket.Store) bucket.Store { return ignoresIfMatch{s} }},
		{"ignores Range", "bucket range read", "ignores the Range header", func(s bucket.Store) bucket.Store { return ignoresRange{s} }},
		{"wrong range bytes", "bucket range read", "wrong bytes", func(s bucket.Store) bucket.Store { return shiftsRange{s} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Run(context.Background(), tc.store(bucket.NewMem()), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() {
				t.Fatal("report OK for a broken store")
			}
			c := check(t, r, tc.check)
			if c.Status != StatusFail || !strings.Contains(c.Fault, tc.fault) {
				t.Fatalf("check = %+v, want fail naming %q", c, tc.fault)
			}
		})
	}
}

func TestRun_AmbiguousIsRetriedWithFreshObjects(t *testing.T) {
	m := bucket.NewMem()
	var puts atomic.Int32
	keys := map[string]bool{}
	m.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method != "put" {
			return bucket.Fault{}
		}
		keys[c.Key] = true
		if puts.Add(1) <= 2 { // the first two attempts each lose a response
			return bucket.Fault{LoseResponse: true}
		}
		return bucket.Fault{}
	})
	r, err := Run(context.Background(), m, Options{})
	if err != nil || !r.OK() || check(t, r, "bucket conditional write").Status != StatusOK {
		t.Fatalf("report %+v, err %v", r.Checks, err)
	}
	if len(keys) < 4 { // three cas probes and a range probe
		t.Fatalf("probe keys used: %d, want fresh objects per attempt", len(keys))
	}
}

func TestRun_AlwaysAmbiguousWarns(t *testing.T) {
	m := bucket.NewMem()
	var calls atomic.Int32
	m.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" {
			calls.Add(1)
			return bucket.Fault{Status: 503}
		}
		return bucket.Fault{}
	})
	r, err := Run(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := check(t, r, "bucket conditional write")
	if c.Status != StatusWarn || !strings.Contains(c.Fault, "after 3 attempt(s)") {
		t.Fatalf("check = %+v, want warn after 3 attempts", c)
	}
	if n := calls.Load(); n != 6 { // 3 conditional + 3 range attempts, each stopped at its first put
		t.Fatalf("puts = %d, want 6", n)
	}
}

func TestRun_Unreachable(t *testing.T) {
	m := bucket.NewMem()
	m.SetFaults(func(c bucket.Call) bucket.Fault {
		return bucket.Fault{Status: 403}
	})
	_, err := Run(context.Background(), m, Options{})
	var env *EnvError
	if !errors.As(err, &env) || !errors.Is(err, bucket.ErrDenied) || !strings.Contains(env.Hint, "credentials") {
		t.Fatalf("err = %v, want an EnvError about credentials", err)
	}
}

func TestRun_ReadOnlyWritesNothing(t *testing.T) {
	m := bucket.NewMem()
	m.SetFaults(func(c bucket.Call) bucket.Fault {
		if c.Method == "put" || c.Method == "delete" {
			t.Errorf("read-only run called %s %s", c.Method, c.Key)
		}
		return bucket.Fault{}
	})
	r, err := Run(context.Background(), m, Options{ReadOnly: true})
	if err != nil || !r.OK() {
		t.Fatalf("%+v %v", r, err)
	}
	if c := check(t, r, "bucket conditional write"); c.Status != StatusSkip {
		t.Fatalf("conditional write = %+v, want skip", c)
	}
}

func TestRun_ListsLeases(t *testing.T) {
	ctx := context.Background()
	m := bucket.NewMem()
	now := time.UnixMilli(1_800_000_000_000)
	m.Put(ctx, "nodes/a.json", core.Encode(core.Lease{Node: "a", Session: "s1", Kind: "node", Advertise: "10.0.0.5:8081", Expires: now.UnixMilli() + 6200, Version: "v1"}), bucket.Cond{})
	m.Put(ctx, "nodes/b.json", core.Encode(core.Lease{Node: "b", Session: "s2", Kind: "tool", Expires: now.UnixMilli() - 192000, Version: "v1"}), bucket.Cond{})
	m.Put(ctx, "nodes/c.json", []byte("not json"), bucket.Cond{})
	r, err := Run(ctx, m, Options{ReadOnly: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Leases) != 3 {
		t.Fatalf("leases = %+v", r.Leases)
	}
	a, b, c := r.Leases[0], r.Leases[1], r.Leases[2]
	if a.Node != "a" || !a.Live || a.ExpiresIn != 6200 || a.Advertise != "10.0.0.5:8081" || a.Kind != "node" {
		t.Errorf("a = %+v", a)
	}
	if b.Node != "b" || b.Live || b.ExpiresIn != -192000 || b.Kind != "tool" {
		t.Errorf("b = %+v", b)
	}
	if c.Error == "" || c.Live {
		t.Errorf("c = %+v, want an unreadable record", c)
	}
	if got := check(t, r, "fleet").Detail; got != "3 node lease(s)" {
		t.Errorf("fleet = %q", got)
	}
}
