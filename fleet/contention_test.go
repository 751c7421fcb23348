package fleet

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/internal/miniotest"
)

// contentionFor is how long TestContention_MinIO lets its claimants fight.
var contentionFor = flag.Duration("fleet.contention", 30*time.Second, "duration of TestContention_MinIO")

// newMinIOStore returns an S3 store on a fresh bucket of the shared MinIO.
func newMinIOStore(t testing.TB) *bucket.S3 {
	t.Helper()
	srv := miniotest.Shared(t)
	s, err := bucket.NewS3(bucket.S3Config{
		Bucket:   srv.NewBucket(t),
		Endpoint: srv.Endpoint,
		Region:   miniotest.Region,
		Creds:    credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ownWrite is one applied Put of a cells/*/own.json key.
type ownWrite struct {
	key  string
	data []byte
}

// recordingStore logs every applied write of an ownership record.
type recordingStore struct {
	bucket.Store
	mu        sync.Mutex
	writes    []ownWrite
	maybe     []ownWrite   // ownership Puts whose outcome is unknown (they may have landed)
	ambiguous atomic.Int64 // how many of those
}

func isOwnKey(key string) bool {
	return strings.HasPrefix(key, core.CellsPrefix) && strings.HasSuffix(key, "/own.json")
}

func (r *recordingStore) Put(ctx context.Context, key string, data []byte, cond bucket.Cond) (bucket.Object, error) {
	o, err := r.Store.Put(ctx, key, data, cond)
	if isOwnKey(key) {
		switch bucket.OutcomeOf(err) {
		case bucket.Applied:
			r.mu.Lock()
			r.writes = append(r.writes, ownWrite{key: key, data: append([]byte(nil), data...)})
			r.mu.Unlock()
		case bucket.Ambiguous:
			r.ambiguous.Add(1)
			r.mu.Lock()
			r.maybe = append(r.maybe, ownWrite{key: key, data: append([]byte(nil), data...)})
			r.mu.Unlock()
		}
	}
	return o, err
}

func (r *recordingStore) applied() []ownWrite {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ownWrite(nil), r.writes...)
}

// lockedBuffer collects node logs; it outlives the test safely, unlike t.Log.
type lockedBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (b *lockedBuffer) snapshot() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.lines...)
}

type cellEpoch struct {
	cell  string
	epoch uint64
}

type acquisition struct {
	cell    string
	epoch   uint64
	session string
}

// TestContention_MinIO has 50 nodes race for 100 cells on a real MinIO and
// checks, from every applied ownership write, that no epoch of a cell was
// ever claimed by two sessions.
func TestContention_MinIO(t *testing.T) {
	const (
		claimants = 50
		cells     = 100
		ttl       = 10 * time.Second
	)
	dur := *contentionFor
	if testing.Short() {
		dur = min(dur, 3*time.Second)
	}
	rec := &recordingStore{Store: newMinIOStore(t)}
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))

	// Start every claimant.
	nodes := make([]*Node, claimants)
	{
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		var wg sync.WaitGroup
		errs := make([]error, claimants)
		for i := range claimants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				name := fmt.Sprintf("claimant-%02d", i)
				nodes[i], errs[i] = Start(ctx, rec, Config{Node: name, Advertise: name + ":8081", TTL: ttl, Logger: logger})
			}()
		}
		wg.Wait()
		cancel()
		for i, err := range errs {
			if err != nil {
				t.Errorf("start claimant-%02d: %v", i, err)
			}
		}
	}
	closeAll := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for _, n := range nodes {
			if n == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := n.Close(ctx); err != nil {
					t.Errorf("close %s: %v", n.Name(), err)
				}
			}()
		}
		wg.Wait()
	}
	if t.Failed() {
		closeAll()
		t.FailNow()
	}

	var (
		attempts, successes, elsewhere, unavailable, fenced, timeouts, other atomic.Int64
		mu                                                                   sync.Mutex
		acquired                                                             []acquisition
		otherErrs                                                            []string
	)
	runCtx, stopRun := context.WithTimeout(context.Background(), dur)
	defer stopRun()
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for runCtx.Err() == nil {
				cell := fmt.Sprintf("Counter:%03d", rand.IntN(cells))
				attempts.Add(1)
				actx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
				o, err := n.Acquire(actx, cell)
				cancel()
				var else_ *ElsewhereError
				switch {
				case err == nil:
					successes.Add(1)
					mu.Lock()
					acquired = append(acquired, acquisition{cell: cell, epoch: o.Epoch, session: n.Session()})
					mu.Unlock()
					select {
					case <-time.After(time.Duration(rand.IntN(21)) * time.Millisecond):
					case <-runCtx.Done():
					}
					rctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
					if err := n.Release(rctx, cell); err != nil {
						mu.Lock()
						otherErrs = append(otherErrs, fmt.Sprintf("%s: %v", n.Name(), err))
						mu.Unlock()
					}
					cancel()
				case errors.As(err, &else_):
					elsewhere.Add(1)
				case errors.Is(err, ErrUnavailable):
					unavailable.Add(1)
				case errors.Is(err, ErrFenced):
					fenced.Add(1)
					return // a fenced node never serves again
				case errors.Is(err, context.DeadlineExceeded):
					timeouts.Add(1)
				default:
					other.Add(1)
					mu.Lock()
					otherErrs = append(otherErrs, fmt.Sprintf("%s: %v", n.Name(), err))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	closeAll()

	// Every epoch of every cell was claimed (released=false) by one session,
	// and released, if at all, by that same session.
	violations := 0
	writes := rec.applied()
	claimedBy := map[cellEpoch]map[string]bool{}
	releasedBy := map[cellEpoch]map[string]bool{}
	for _, w := range writes {
		own, err := core.DecodeOwn(w.data)
		if err != nil {
			t.Errorf("applied write of %s is not an ownership record: %v", w.key, err)
			continue
		}
		cell := strings.TrimSuffix(strings.TrimPrefix(w.key, core.CellsPrefix), "/own.json")
		k := cellEpoch{cell, own.Epoch}
		m := claimedBy
		if own.Released {
			m = releasedBy
		}
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][own.Session] = true
	}
	for _, k := range sortedKeys(claimedBy) {
		if ss := claimedBy[k]; len(ss) != 1 {
			violations++
			t.Errorf("%s epoch %d claimed by %d sessions: %v", k.cell, k.epoch, len(ss), setKeys(ss))
		}
	}
	// A claim whose write timed out may have landed (the node settled it
	// by re-reading and then owned the cell): it may explain a release.
	maybeClaimed := map[cellEpoch]map[string]bool{}
	rec.mu.Lock()
	for _, w := range rec.maybe {
		if own, err := core.DecodeOwn(w.data); err == nil && !own.Released {
			k := cellEpoch{strings.TrimSuffix(strings.TrimPrefix(w.key, core.CellsPrefix), "/own.json"), own.Epoch}
			if maybeClaimed[k] == nil {
				maybeClaimed[k] = map[string]bool{}
			}
			maybeClaimed[k][own.Session] = true
		}
	}
	rec.mu.Unlock()
	for _, k := range sortedKeys(releasedBy) {
		ss := releasedBy[k]
		claim := claimedBy[k]
		for s := range ss {
			if !(claim[s] || maybeClaimed[k][s] && len(claim) == 0) || len(ss) != 1 {
				violations++
				t.Errorf("%s epoch %d released by %v, claimed by %v", k.cell, k.epoch, setKeys(ss), setKeys(claim))
				break
			}
		}
	}

	// Every acquisition a node reported names one session per epoch, and
	// (when no ownership write was ambiguous) matches an applied claim.
	acqBy := map[cellEpoch]map[string]bool{}
	for _, a := range acquired {
		k := cellEpoch{a.cell, a.epoch}
		if acqBy[k] == nil {
			acqBy[k] = map[string]bool{}
		}
		acqBy[k][a.session] = true
	}
	for _, k := range sortedKeys(acqBy) {
		ss := acqBy[k]
		if len(ss) != 1 {
			violations++
			t.Errorf("%s epoch %d acquired by %d sessions: %v", k.cell, k.epoch, len(ss), setKeys(ss))
			continue
		}
		if rec.ambiguous.Load() == 0 {
			for s := range ss {
				if !claimedBy[k][s] {
					violations++
					t.Errorf("%s epoch %d acquired by session %s without an applied claim", k.cell, k.epoch, s)
				}
			}
		}
	}

	if successes.Load() == 0 {
		t.Errorf("no acquisition succeeded in %v", dur)
	}
	if fenced.Load() > 0 {
		t.Logf("warning: %d acquisitions met a fenced node", fenced.Load())
	}
	if len(otherErrs) > 0 {
		t.Errorf("%d unexpected errors, e.g. %s", len(otherErrs), otherErrs[0])
	}
	if lines := logs.snapshot(); len(lines) > 0 {
		t.Logf("%d node log lines at warn or above, first: %s", len(lines), lines[0])
	}
	t.Logf("%d claimants, %d cells, %v: elsewhere %d, unavailable %d, fenced %d, timed out %d, ambiguous ownership writes %d",
		claimants, cells, dur, elsewhere.Load(), unavailable.Load(), fenced.Load(), timeouts.Load(), rec.ambiguous.Load())
	t.Logf("%d attempts, %d acquisitions, %d applied ownership writes, %d epoch violations",
		attempts.Load(), successes.Load(), len(writes), violations)
}

func sortedKeys[V any](m map[cellEpoch]V) []cellEpoch {
	ks := make([]cellEpoch, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].cell != ks[j].cell {
			return ks[i].cell < ks[j].cell
		}
		return ks[i].epoch < ks[j].epoch
	})
	return ks
}

func setKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
