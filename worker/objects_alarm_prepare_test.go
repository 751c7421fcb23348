package worker_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/worker"
)

const prepScript = `
const { DurableObject } = require("cloudflare:workers");
class Later extends DurableObject {
  async arm(at) { await this.ctx.storage.setAlarm(at); }
  async disarm() { await this.ctx.storage.deleteAlarm(); }
  async alarm(info) {
    const runs = (await this.ctx.storage.get("runs")) ?? [];
    runs.push(info.retryCount);
    await this.ctx.storage.put("runs", runs);
  }
  async state() {
    return { alarm: await this.ctx.storage.getAlarm(), runs: (await this.ctx.storage.get("runs")) ?? [] };
  }
}
module.exports = { Later, default: { fetch() { return new Response("x"); } } };
`

// prepObject is an object of prepScript on a fresh database, with a clock
// the test moves.
type prepObject struct {
	t     *testing.T
	obj   *worker.Object
	db    *cell.DB
	mu    sync.Mutex
	clock time.Time
}

func newPrepObject(t *testing.T, cfg worker.Config, pool *cell.Pool) *prepObject {
	t.Helper()
	rt := newRuntime(t, prepScript, cfg)
	db, err := cell.Open(filepath.Join(t.TempDir(), "p.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	db.JoinPool(pool)
	p := &prepObject{t: t, db: db, clock: time.UnixMilli(1_800_000_000_000)}
	p.obj, err = rt.NewObjectWith("Later", worker.ObjectIDFromName("Later", "l"), db, worker.ObjectOptions{
		Now: func() time.Time { p.mu.Lock(); defer p.mu.Unlock(); return p.clock },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.obj.Close(context.Background())
		db.Close()
	})
	return p
}

func (p *prepObject) now() int64 { p.mu.Lock(); defer p.mu.Unlock(); return p.clock.UnixMilli() }

func (p *prepObject) set(ms int64) { p.mu.Lock(); p.clock = time.UnixMilli(ms); p.mu.Unlock() }

func (p *prepObject) call(method string, args ...any) map[string]any {
	p.t.Helper()
	in, _ := worker.Serialize(args)
	out, err := p.obj.Call(context.Background(), method, in)
	if err != nil {
		p.t.Fatalf("%s: %v", method, err)
	}
	v, err := worker.Deserialize(out)
	if err != nil {
		p.t.Fatal(err)
	}
	m, _ := v.(map[string]any)
	return m
}

// runs is how many times alarm() ran, and the alarm getAlarm reports.
func (p *prepObject) state() (int, any) {
	p.t.Helper()
	st := p.call("state")
	runs, _ := st["runs"].([]any)
	return len(runs), st["alarm"]
}

type prepResult struct {
	res worker.AlarmResult
	err error
}

// prepare calls PrepareAlarm in the background; ready is closed when the
// object reports itself prepared.
func (p *prepObject) prepare(ctx context.Context, within time.Duration) (ready chan struct{}, done chan prepResult) {
	ready, done = make(chan struct{}), make(chan prepResult, 1)
	var once sync.Once
	go func() {
		res, err := p.obj.PrepareAlarm(ctx, within, func() { once.Do(func() { close(ready) }) })
		done <- prepResult{res, err}
	}()
	return ready, done
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// A prepared alarm on a parked, hibernated object: PrepareAlarm reopens
// the database and rebuilds the isolate ahead, other events run while it
// waits (getAlarm still reports the alarm), the database stays open
// however the pool asks, and alarm() starts only once the object's clock
// reaches the alarm — never before, however much real time passes.
func TestPrepareAlarm_parkedHibernatedNeverEarly(t *testing.T) {
	pool := cell.NewPool(1)
	p := newPrepObject(t, worker.Config{HibernateAfter: 30 * time.Millisecond}, pool)
	due := p.now() + 500
	p.call("arm", float64(due))
	waitFor(t, "hibernation", p.obj.Hibernating)
	// Hibernating parked the database; another one holds the pool's bound
	// of 1, so that the pool keeps asking for parks while the object waits.
	waitFor(t, "the park", func() bool { return pool.Stats().Parked == 1 })
	other, err := cell.Open(filepath.Join(t.TempDir(), "other.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.JoinPool(pool)
	if !p.obj.Hibernating() {
		t.Fatal("a park woke the object") // parking runs no JavaScript
	}

	ready, done := p.prepare(context.Background(), time.Second)
	recv(t, "prepared", ready)
	st := pool.Stats()
	if st.Reopens != 1 || p.obj.Hibernating() {
		t.Fatalf("prepared: pool %+v, hibernating %v; want the database reopened and the isolate rebuilt", st, p.obj.Hibernating())
	}
	// Waiting is not running: an event runs meanwhile and sees the alarm.
	if runs, alarm := p.state(); runs != 0 || alarm != float64(due) {
		t.Fatalf("while prepared: %d runs, getAlarm %v; want 0 and %d", runs, alarm, due)
	}
	// Real time passes (the object's own timer goes off and finds its
	// clock short of the alarm; the pool, over its bound, keeps asking
	// for a park): nothing runs, nothing parks, nothing hibernates.
	time.Sleep(700 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("ran before the object's clock reached the alarm: %+v, %v", r.res, r.err)
	default:
	}
	if st := pool.Stats(); st.Parks != 1 || p.obj.Hibernating() {
		t.Fatalf("while prepared: pool %+v, hibernating %v; want the database kept open, the isolate kept", st, p.obj.Hibernating())
	}
	if runs, _ := p.state(); runs != 0 {
		t.Fatalf("alarm() ran %d times before its time", runs)
	}
	p.set(due)
	moved := time.Now()
	r := recv(t, "the alarm's run", done)
	if r.err != nil || !r.res.Ran || r.res.Err != nil || r.res.Due != due || r.res.State.Set {
		t.Fatalf("run: %+v, %v", r.res, r.err)
	}
	if r.res.Started.Before(moved) {
		t.Fatalf("alarm() started %v before the clock reached its time", moved.Sub(r.res.Started))
	}
	if runs, alarm := p.state(); runs != 1 || alarm != nil {
		t.Fatalf("after the run: %d runs, getAlarm %v", runs, alarm)
	}
	// Once run, the database may park again.
	waitFor(t, "a park after the run", func() bool { return pool.Stats().Parks >= 2 })
}

// A prepared run is cancelled by what changes the alarm meanwhile (a
// deleteAlarm, a setAlarm to another time, the caller giving up) and it
// does not wait for an alarm further away than asked.
func TestPrepareAlarm_cancelledByChanges(t *testing.T) {
	p := newPrepObject(t, worker.Config{}, nil)
	ctx := context.Background()

	// Deleted while prepared: no run, ever.
	due := p.now() + 500
	p.call("arm", float64(due))
	ready, done := p.prepare(ctx, time.Second)
	recv(t, "prepared", ready)
	p.call("disarm")
	r := recv(t, "the cancelled wait", done)
	if r.err != nil || r.res.Ran || !r.res.Superseded || r.res.State.Set {
		t.Fatalf("after deleteAlarm: %+v, %v; want superseded, no alarm", r.res, r.err)
	}

	// Moved while prepared: superseded, reporting the new time.
	p.set(due + 1000)
	due = p.now() + 300
	p.call("arm", float64(due))
	ready, done = p.prepare(ctx, time.Second)
	recv(t, "prepared", ready)
	p.call("arm", float64(due+200))
	r = recv(t, "the superseded wait", done)
	if r.err != nil || r.res.Ran || !r.res.Superseded || !r.res.State.Set || r.res.State.Deadline != due+200 {
		t.Fatalf("after setAlarm: %+v, %v; want superseded at %d", r.res, r.err, due+200)
	}

	// Further away than asked: not waited for.
	ready, done = p.prepare(ctx, 100*time.Millisecond)
	r = recv(t, "the refusal", done)
	recv(t, "prepared (reported even when refused)", ready)
	if r.err != nil || r.res.Ran || r.res.Superseded || !r.res.State.Set {
		t.Fatalf("an alarm 500 ms away prepared within 100 ms: %+v, %v", r.res, r.err)
	}

	// The caller gives up: the prepared run never happens.
	cctx, cancel := context.WithCancel(ctx)
	ready, done = p.prepare(cctx, time.Second)
	recv(t, "prepared", ready)
	cancel()
	if r := recv(t, "the cancelled call", done); !errors.Is(r.err, context.Canceled) || r.res.Ran {
		t.Fatalf("cancelled: %+v, %v", r.res, r.err)
	}
	p.set(due + 200)
	time.Sleep(700 * time.Millisecond) // the object's timer, if still set, goes off and must do nothing
	if runs, alarm := p.state(); runs != 0 || alarm != float64(due+200) {
		t.Fatalf("after a cancelled preparation: %d runs, getAlarm %v", runs, alarm)
	}
	// The alarm is still there for the next call, which runs it.
	res, err := p.obj.Alarm(ctx)
	if err != nil || !res.Ran || res.Due != due+200 {
		t.Fatalf("Alarm after the cancelled preparation: %+v, %v", res, err)
	}
	if runs, _ := p.state(); runs != 1 {
		t.Fatalf("%d runs, want 1", runs)
	}
}

// A prepared run due already runs at once; a plain Alarm call while one
// waits takes it over (the waiting one reports superseded, the alarm runs
// once).
func TestPrepareAlarm_dueAndTakeover(t *testing.T) {
	p := newPrepObject(t, worker.Config{}, nil)
	ctx := context.Background()
	due := p.now() + 400
	p.call("arm", float64(due))
	ready, done := p.prepare(ctx, time.Second)
	recv(t, "prepared", ready)
	p.set(due)
	res, err := p.obj.Alarm(ctx)
	if err != nil || !res.Ran {
		t.Fatalf("plain Alarm while prepared: %+v, %v", res, err)
	}
	if r := recv(t, "the taken-over wait", done); r.err != nil || r.res.Ran || !r.res.Superseded {
		t.Fatalf("prepared run after a plain one: %+v, %v", r.res, r.err)
	}
	if runs, _ := p.state(); runs != 1 {
		t.Fatalf("%d runs, want 1", runs)
	}
	// Due when prepared: runs without waiting.
	p.call("arm", float64(due))
	_, done = p.prepare(ctx, time.Second)
	if r := recv(t, "the run", done); r.err != nil || !r.res.Ran || r.res.Due != due {
		t.Fatalf("prepared when due: %+v, %v", r.res, r.err)
	}
	if runs, _ := p.state(); runs != 2 {
		t.Fatalf("%d runs, want 2", runs)
	}
}

// Closing an object (eviction, drain, a new deployment) does not wait for
// a prepared alarm's time: the wait ends, alarm() does not run, and the
// alarm stays stored for the object's next run.
func TestPrepareAlarm_closeAbandonsTheWait(t *testing.T) {
	p := newPrepObject(t, worker.Config{}, nil)
	due := p.now() + 500
	p.call("arm", float64(due))
	ready, done := p.prepare(context.Background(), time.Second)
	recv(t, "prepared", ready)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.obj.Close(ctx); err != nil {
		t.Fatalf("close with a prepared alarm: %v", err)
	}
	if r := recv(t, "the abandoned wait", done); !errors.Is(r.err, worker.ErrObjectClosed) || r.res.Ran {
		t.Fatalf("prepared run after close: %+v, %v", r.res, r.err)
	}
	a, err := p.db.Alarm()
	if err != nil || !a.Set || a.Deadline != due || a.Retry != 0 {
		t.Fatalf("stored alarm after close: %+v, %v", a, err)
	}
}
