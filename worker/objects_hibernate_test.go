package worker_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/celldgo/celld/cell"
	"github.com/celldgo/celld/worker"
)

// sleeperScript counts, for each object, what it keeps in memory and what
// it stores, and how many times its constructor ran (in storage, inside
// blockConcurrencyWhile).
const sleeperScript = `
const { DurableObject } = require("cloudflare:workers");
class Sleeper extends DurableObject {
	constructor(ctx, env) {
		super(ctx, env);
		this.memory = 0;
		ctx.blockConcurrencyWhile(async () => {
			await new Promise((r) => setTimeout(r, 5));
			this.boots = ((await ctx.storage.get("boots")) ?? 0) + 1;
			await ctx.storage.put("boots", this.boots);
		});
	}
	async bump() {
		this.memory++;
		const n = ((await this.ctx.storage.get("n")) ?? 0) + 1;
		await this.ctx.storage.put("n", n);
		return { memory: this.memory, stored: n, boots: this.boots, name: this.ctx.id.name ?? null };
	}
	later(ms) {
		setTimeout(() => { this.fired = true; this.ctx.storage.put("fired", true); }, ms);
		return true;
	}
	waitUntilLater(ms) {
		this.ctx.waitUntil(new Promise((r) => setTimeout(r, ms)).then(() => this.ctx.storage.put("waited", true)));
		return true;
	}
	async check(key) { return { memory: this[key] === true, stored: (await this.ctx.storage.get(key)) === true }; }
}
module.exports = { Sleeper, default: { fetch() { return new Response("ok"); } } };
`

func newSleeper(t *testing.T, hibernateAfter time.Duration) *worker.Object {
	t.Helper()
	host := newLocalObjects(t)
	rt := newRuntime(t, sleeperScript, worker.Config{Isolates: 1, Objects: host, HibernateAfter: hibernateAfter})
	host.use(rt)
	h, err := host.Object(context.Background(), "Sleeper", worker.ObjectIDFromName("Sleeper", "sleepy"))
	if err != nil {
		t.Fatal(err)
	}
	return h.(*worker.Object)
}

func callJS(t *testing.T, o *worker.Object, method string, args ...any) any {
	t.Helper()
	data, err := worker.Serialize(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(worker.WithObjectName(context.Background(), "sleepy"), 10*time.Second)
	defer cancel()
	res, err := o.Call(ctx, method, data)
	if err != nil {
		t.Fatalf("call %s: %v", method, err)
	}
	v, err := worker.Deserialize(res)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitHibernating waits (at most 5 s) until o has dropped its isolate.
func waitHibernating(t *testing.T, o *worker.Object) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !o.Hibernating() {
		if time.Now().After(deadline) {
			t.Fatal("object did not hibernate within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func bumped(memory, stored, boots float64) map[string]any {
	return map[string]any{"memory": memory, "stored": stored, "boots": boots, "name": "sleepy"}
}

func TestObject_HibernateRebuildsFromStorage(t *testing.T) {
	o := newSleeper(t, 30*time.Millisecond)
	for i, want := range []map[string]any{bumped(1, 1, 1), bumped(2, 2, 1)} {
		if got := callJS(t, o, "bump"); !reflect.DeepEqual(got, want) {
			t.Fatalf("bump %d = %v, want %v", i+1, got, want)
		}
	}
	waitHibernating(t, o)
	if got := o.Hibernations(); got != 1 {
		t.Errorf("Hibernations = %d, want 1", got)
	}
	// In-memory state is gone, storage is not, and the constructor (with
	// its blockConcurrencyWhile) ran again before the event.
	if got, want := callJS(t, o, "bump"), bumped(1, 3, 2); !reflect.DeepEqual(got, want) {
		t.Fatalf("bump after hibernation = %v, want %v", got, want)
	}
	if o.Hibernating() {
		t.Error("still hibernating after an event")
	}
	waitHibernating(t, o)
	if got, want := callJS(t, o, "bump"), bumped(1, 4, 3); !reflect.DeepEqual(got, want) {
		t.Fatalf("bump after the second hibernation = %v, want %v", got, want)
	}
	if got := o.Hibernations(); got != 2 {
		t.Errorf("Hibernations = %d, want 2", got)
	}
}

func TestObject_NoHibernationWhileWorkIsPending(t *testing.T) {
	for _, tc := range []struct{ method, key string }{
		{"later", "fired"},           // a timer
		{"waitUntilLater", "waited"}, // ctx.waitUntil
	} {
		t.Run(tc.method, func(t *testing.T) {
			o := newSleeper(t, 20*time.Millisecond)
			callJS(t, o, tc.method, 300)
			time.Sleep(150 * time.Millisecond)
			if o.Hibernating() {
				t.Fatalf("hibernated while %s was pending", tc.method)
			}
			waitHibernating(t, o)
			// The pending work finished before the isolate went: its write
			// is there, its memory is not.
			want := map[string]any{"memory": false, "stored": true}
			if got := callJS(t, o, "check", tc.key); !reflect.DeepEqual(got, want) {
				t.Errorf("check %s after hibernation = %v, want %v", tc.key, got, want)
			}
		})
	}
}

func TestObject_HibernationDisabled(t *testing.T) {
	o := newSleeper(t, -1)
	callJS(t, o, "bump")
	time.Sleep(100 * time.Millisecond)
	if o.Hibernating() || o.Hibernations() != 0 {
		t.Fatal("hibernated with HibernateAfter < 0")
	}
	if got, want := callJS(t, o, "bump"), bumped(2, 2, 1); !reflect.DeepEqual(got, want) {
		t.Errorf("bump = %v, want %v", got, want)
	}
}

func TestObject_CloseWhileHibernating(t *testing.T) {
	o := newSleeper(t, 10*time.Millisecond)
	callJS(t, o, "bump")
	waitHibernating(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.Close(ctx); err != nil {
		t.Fatalf("Close = %v", err)
	}
	select {
	case <-o.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	if o.Hibernations() != 1 {
		t.Errorf("Hibernations = %d, want 1 (Close must not wake the object)", o.Hibernations())
	}
}

// With a pool, hibernating also parks the object's database (its files
// closed, SQLite's memory given back). The next event opens it again and
// finds everything stored, the alarm included; an alarm run on a parked,
// hibernated object (the host's Alarm, no preparation) does the same.
func TestObject_HibernateParksTheDatabase(t *testing.T) {
	pool := cell.NewPool(4)
	p := newPrepObject(t, worker.Config{HibernateAfter: 30 * time.Millisecond}, pool)
	due := p.now() + 1000
	p.call("arm", float64(due))
	waitFor(t, "hibernation", p.obj.Hibernating)
	waitFor(t, "the park", func() bool { return pool.Stats().Parked == 1 })
	if st := pool.Stats(); st.Open != 0 || st.Parks != 1 || st.Reopens != 0 {
		t.Fatalf("hibernated: pool %+v; want the only database parked once", st)
	}

	if runs, alarm := p.state(); runs != 0 || alarm != float64(due) {
		t.Fatalf("after the park: %d runs, getAlarm %v; want 0 and %d", runs, alarm, due)
	}
	if st := pool.Stats(); st.Open != 1 || st.Parked != 0 || st.Reopens != 1 {
		t.Fatalf("after an event: pool %+v; want the database open again", st)
	}

	waitFor(t, "the second hibernation", func() bool { return p.obj.Hibernations() == 2 })
	waitFor(t, "the second park", func() bool { return pool.Stats().Parks == 2 })
	p.set(due)
	res, err := p.obj.Alarm(context.Background())
	if err != nil || !res.Ran || res.Err != nil || res.Due != due || res.State.Set {
		t.Fatalf("alarm on a parked, hibernated object: %+v, %v", res, err)
	}
	if st := pool.Stats(); st.Reopens != 2 {
		t.Fatalf("after the alarm: pool %+v; want a second reopen", st)
	}
	if runs, alarm := p.state(); runs != 1 || alarm != nil {
		t.Fatalf("after the alarm: %d runs, getAlarm %v; want 1 and none", runs, alarm)
	}
	if a, err := p.db.Alarm(); err != nil || a.Set {
		t.Fatalf("stored alarm after its run: %+v, %v", a, err)
	}
}

const cursorScript = `
const { DurableObject } = require("cloudflare:workers");
class Reader extends DurableObject {
  open() {
    const sql = this.ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS t (v)");
    if (sql.exec("SELECT count(*) AS c FROM t").one().c === 0) sql.exec("INSERT INTO t VALUES (1), (2), (3)");
    this.cur = sql.exec("SELECT v FROM t ORDER BY v");
    return this.cur.next().value.v;
  }
  count() { return this.ctx.storage.sql.exec("SELECT count(*) AS c FROM t").one().c; }
}
module.exports = { Reader, default: { fetch() { return new Response("x"); } } };
`

// A cursor left half read (its statement still open) dies with the
// isolate that could read on: hibernating closes it, so the database
// parks and nothing of the statement stays behind.
func TestObject_HibernateClosesLeftoverCursors(t *testing.T) {
	pool := cell.NewPool(4)
	rt := newRuntime(t, cursorScript, worker.Config{HibernateAfter: 30 * time.Millisecond})
	db, err := cell.Open(filepath.Join(t.TempDir(), "r.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	db.JoinPool(pool)
	obj, err := rt.NewObjectWith("Reader", worker.ObjectIDFromName("Reader", "r"), db, worker.ObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		obj.Close(context.Background())
		db.Close()
	})
	call := func(method string) any {
		t.Helper()
		in, _ := worker.Serialize([]any{})
		out, err := obj.Call(context.Background(), method, in)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		v, err := worker.Deserialize(out)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if got := call("open"); got != float64(1) {
		t.Fatalf("open = %v, want the first row's 1", got)
	}
	waitFor(t, "hibernation", obj.Hibernating)
	waitFor(t, "the park", func() bool { return pool.Stats().Parked == 1 })
	if got := call("count"); got != float64(3) {
		t.Fatalf("count after the park = %v, want 3", got)
	}
	if got := call("open"); got != float64(1) {
		t.Fatalf("open again = %v, want 1", got)
	}
}

// A database that refuses to park when its object hibernates (here
// pinned; in a node, a replicator still uploading) is parked by a later
// try, without an event waking the object.
func TestObject_HibernateParksOnceTheDatabaseAllows(t *testing.T) {
	pool := cell.NewPool(4)
	p := newPrepObject(t, worker.Config{HibernateAfter: 30 * time.Millisecond}, pool)
	p.db.Pin(true)
	p.call("state")
	waitFor(t, "hibernation", p.obj.Hibernating)
	if st := pool.Stats(); st.Parked != 0 || st.Parks != 0 {
		t.Fatalf("hibernated while pinned: pool %+v; want the database kept open", st)
	}
	p.db.Pin(false)
	waitFor(t, "the later park", func() bool { return pool.Stats().Parked == 1 })
	if !p.obj.Hibernating() || p.obj.Hibernations() != 1 {
		t.Fatalf("hibernating %v after %d hibernations; want the park to leave the object asleep", p.obj.Hibernating(), p.obj.Hibernations())
	}
	if runs, alarm := p.state(); runs != 0 || alarm != nil {
		t.Fatalf("after the park: %d runs, getAlarm %v", runs, alarm)
	}
	if st := pool.Stats(); st.Reopens != 1 {
		t.Fatalf("after an event: pool %+v; want one reopen", st)
	}
}
