package worker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/worker"
)

// localObjects is a real, single-node ObjectHost for tests: one resident
// *worker.Object per (class, id), each on its own SQLite file under a test
// directory, activated on first use as the server does (without the
// fleet). Objects that stopped are replaced on the next call; evict stops
// one on purpose (its file stays, so the next call restores its state).
type localObjects struct {
	t   testing.TB
	dir string

	mu   sync.Mutex
	rt   *worker.Runtime
	live map[string]*resident
}

type resident struct {
	obj   *worker.Object
	db    *cell.DB
	timer *time.Timer // the armed alarm, if any
}

var _ worker.ObjectHost = (*localObjects)(nil)

// newLocalObjects makes a host whose objects are closed, and databases
// closed, when the test ends (after the runtime registered later closes).
func newLocalObjects(t testing.TB) *localObjects {
	h := &localObjects{t: t, dir: t.TempDir(), live: map[string]*resident{}}
	t.Cleanup(h.closeAll)
	return h
}

// use sets the runtime new objects run on.
func (h *localObjects) use(rt *worker.Runtime) {
	h.mu.Lock()
	h.rt = rt
	h.mu.Unlock()
}

func (h *localObjects) Object(ctx context.Context, class, id string) (worker.ObjectHandle, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	name := class + ":" + id
	if r := h.live[name]; r != nil {
		select {
		case <-r.obj.Done():
			_ = r.db.Close()
			delete(h.live, name)
		default:
			return r.obj, nil
		}
	}
	if h.rt == nil {
		return nil, errors.New("local objects: no runtime yet")
	}
	db, err := cell.Open(filepath.Join(h.dir, name+".sqlite"))
	if err != nil {
		return nil, err
	}
	r := &resident{db: db}
	// Alarms fire as a host fires them: a timer per object at its
	// deadline, then Alarm (whose outcome re-arms it through OnAlarm).
	var tmu sync.Mutex
	onAlarm := func(a cell.Alarm) {
		tmu.Lock()
		defer tmu.Unlock()
		if r.timer != nil {
			r.timer.Stop()
			r.timer = nil
		}
		if !a.Set {
			return
		}
		r.timer = time.AfterFunc(time.Until(time.UnixMilli(a.Deadline)), func() {
			h.mu.Lock()
			obj := r.obj
			h.mu.Unlock()
			if obj == nil {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, _ = obj.Alarm(ctx)
		})
	}
	obj, err := h.rt.NewObjectWith(class, id, db, worker.ObjectOptions{OnAlarm: onAlarm})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	r.obj = obj
	h.live[name] = r
	return obj, nil
}

// resident returns the live object class:id, if any.
func (h *localObjects) resident(class, id string) *worker.Object {
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.live[class+":"+id]; r != nil {
		return r.obj
	}
	return nil
}

// evict stops class:id and closes its database, as idle eviction does.
// It returns the error of closing the database; Close's own error (work
// cut off) is only logged.
func (h *localObjects) evict(class, id string) error {
	h.mu.Lock()
	r := h.live[class+":"+id]
	delete(h.live, class+":"+id)
	h.mu.Unlock()
	if r == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.obj.Close(ctx); err != nil {
		h.t.Logf("evict %s:%s: %v", class, id, err)
	}
	return r.db.Close()
}

// files lists the database files the host made.
func (h *localObjects) files() []string {
	entries, _ := os.ReadDir(h.dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func (h *localObjects) closeAll() {
	h.mu.Lock()
	live := h.live
	h.live = map[string]*resident{}
	h.mu.Unlock()
	for name, r := range live {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := r.obj.Close(ctx); err != nil {
			h.t.Logf("close object %s: %v", name, err)
		}
		cancel()
		if err := r.db.Close(); err != nil {
			h.t.Errorf("close database of %s: %v", name, err)
		}
	}
}
