package cell

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A node keeps thousands of cells resident, and each open cell holds two
// file descriptors (its database and its WAL). A Pool bounds how many
// databases of a process hold their files open at once, so that however
// many cells are resident the process stays within its descriptor limit
// (RLIMIT_NOFILE), with room left for connections and the bucket.
//
// Over the bound, the databases used least recently are asked to park:
// on the cell's goroutine, between events, an idle database (no
// transaction, no open cursor, everything its replicator captured in the
// bucket) checkpoints its WAL into the file and closes its connection.
// The cell stays resident — same epoch, same replicator (its history and
// checksums in memory), same output gate, same alarm timer — and its next
// storage call opens the local file again, with the settings the
// application gave the connection. No bucket request is involved either
// way. The bound is soft: a database opens when it must, and the pool
// asks others to make room.

// parkSlack is the share of Max the pool parks below Max when it is over
// (1/parkSlack), so one scan for victims serves many openings.
const parkSlack = 16

// parkRetry is how long the pool waits before asking a database that did
// not park (it was busy: an upload in flight, a transaction open) again;
// while the pool stays over its bound it asks again at this interval.
const parkRetry = 200 * time.Millisecond

// Pool bounds the open databases of a process.
type Pool struct {
	max int

	mu       sync.Mutex
	open     map[*DB]struct{}
	parked   int
	sweeping bool // a goroutine asks again while the pool is over its bound

	parks, reopens atomic.Int64
}

// NewPool returns a pool that keeps at most max databases open (max >= 1).
func NewPool(max int) *Pool {
	return &Pool{max: max, open: map[*DB]struct{}{}}
}

// PoolStats are a pool's counters.
type PoolStats struct {
	Max     int   // the bound
	Open    int   // databases holding their files open
	Parked  int   // databases of resident cells with their files closed
	Parks   int64 // parks since the start
	Reopens int64 // reopens of parked databases since the start
}

// Stats reports the pool's counters.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Max: p.max, Open: len(p.open), Parked: p.parked, Parks: p.parks.Load(), Reopens: p.reopens.Load()}
}

// JoinPool counts db against p from now on. Call it once, on the cell's
// goroutine, right after Open.
func (db *DB) JoinPool(p *Pool) {
	if p == nil || db.pool != nil || db.c == nil {
		return
	}
	db.pool = p
	db.touch()
	p.opened(db)
}

// OnParkRequest sets what the pool calls, from any goroutine, when it
// wants db to park: f must make db.Park run on the cell's goroutine soon
// (or ignore the request). nil stops the requests (the cell stops).
func (db *DB) OnParkRequest(f func()) {
	if f == nil {
		db.parker.Store(nil)
		return
	}
	db.parker.Store(&f)
}

// Pin keeps db open (on) or lets it park again (off): a cell about to
// serve an event it was prepared for (an alarm due in a moment) must not
// be parked in between. The pool does not ask a pinned database to park,
// and Park refuses while it is pinned. The caller bounds how many
// databases it pins (they count against the pool's bound like any open
// one).
func (db *DB) Pin(on bool) { db.pinned.Store(on) }

// Parked reports that db's files are closed until its next storage call.
func (db *DB) Parked() bool { return db.parked }

// Park closes db's connection if nothing needs it (see above) and reports
// whether it did; the next storage call opens it again. Call it on the
// cell's goroutine, between calls.
func (db *DB) Park() bool {
	if db.c == nil || db.pool == nil || db.pinned.Load() || db.txDepth > 0 || db.inHook || len(db.cursors) > 0 || db.auth.pinned || !db.c.autocommit() {
		return false
	}
	if db.beforePark != nil && !db.beforePark() {
		return false
	}
	db.saved = db.saved[:0]
	if db.auth.pragmas {
		for _, name := range connPragmas {
			v, err := db.c.queryInt("PRAGMA " + name)
			if err != nil {
				return false
			}
			db.saved = append(db.saved, v)
		}
	}
	db.closeStatements()
	db.kvExists, db.indexes, db.alarmKnown = false, nil, false
	unregister(db.c.handle)
	db.c.close()
	db.c, db.parked = nil, true
	db.parkAsked.Store(0) // once open again, it may be asked again
	db.pool.closed(db, true)
	return true
}

// unpark opens the connection of a parked db again.
func (db *DB) unpark() error {
	c, err := openConn(db.path)
	if err != nil {
		return fmt.Errorf("reopen cell database %s: %w", db.path, err)
	}
	db.c = c
	fail := func(err error) error {
		unregister(c.handle)
		db.closeStatements()
		c.close()
		db.c = nil
		return fmt.Errorf("reopen cell database %s: %w", db.path, err)
	}
	if err := db.setup(); err != nil {
		return fail(err)
	}
	for i, v := range db.saved {
		if err := c.exec(fmt.Sprintf("PRAGMA %s=%d", connPragmas[i], v)); err != nil {
			return fail(err)
		}
	}
	if db.afterUnpark != nil {
		if err := db.afterUnpark(); err != nil {
			return fail(err)
		}
	}
	db.parked = false
	db.pool.reopens.Add(1)
	db.pool.opened(db)
	return nil
}

// ready makes sure the connection is open: a parked db opens again.
func (db *DB) ready() error {
	if db.c != nil {
		return nil
	}
	if !db.parked {
		return ErrClosed
	}
	return db.unpark()
}

func (db *DB) touch() {
	if db.pool != nil {
		db.lastUse.Store(time.Now().UnixNano())
	}
}

// opened counts db open and, over the bound, asks the databases used
// least recently to park.
func (p *Pool) opened(db *DB) {
	p.mu.Lock()
	if db.parkedCounted {
		p.parked--
		db.parkedCounted = false
	}
	p.open[db] = struct{}{}
	var ask []func()
	if len(p.open) > p.max {
		ask = p.victimsLocked(db)
		if !p.sweeping {
			p.sweeping = true
			go p.sweep()
		}
	}
	p.mu.Unlock()
	for _, f := range ask {
		f()
	}
}

// sweep asks again, every parkRetry, while the pool is over its bound:
// the databases asked when it went over may have been busy then.
func (p *Pool) sweep() {
	for {
		time.Sleep(parkRetry)
		p.mu.Lock()
		if len(p.open) <= p.max {
			p.sweeping = false
			p.mu.Unlock()
			return
		}
		ask := p.victimsLocked(nil)
		p.mu.Unlock()
		for _, f := range ask {
			f()
		}
	}
}

// closed counts db closed: parked (still resident) or gone.
func (p *Pool) closed(db *DB, parked bool) {
	p.mu.Lock()
	delete(p.open, db)
	switch {
	case parked && !db.parkedCounted:
		p.parked++
		db.parkedCounted = true
		p.parks.Add(1)
	case !parked && db.parkedCounted:
		p.parked--
		db.parkedCounted = false
	}
	p.mu.Unlock()
}

// victimsLocked picks the databases to ask to park: the least recently
// used, not db, not asked within parkRetry, enough (with those asked
// already) to get 1/parkSlack under the bound.
func (p *Pool) victimsLocked(db *DB) []func() {
	target := p.max - max(1, p.max/parkSlack)
	excess := len(p.open) - target
	now := time.Now().UnixNano()
	type cand struct {
		used int64
		db   *DB
		f    func()
	}
	var cs []cand
	for d := range p.open {
		if d == db || d.pinned.Load() {
			continue
		}
		if now-d.parkAsked.Load() < int64(parkRetry) {
			excess-- // asked already, and parking soon unless busy
			continue
		}
		if f := d.parker.Load(); f != nil {
			cs = append(cs, cand{d.lastUse.Load(), d, *f})
		}
	}
	if excess <= 0 {
		return nil
	}
	slices.SortFunc(cs, func(a, b cand) int {
		switch {
		case a.used < b.used:
			return -1
		case a.used > b.used:
			return 1
		}
		return 0
	})
	var ask []func()
	for _, c := range cs[:max(0, min(excess, len(cs)))] {
		c.db.parkAsked.Store(now)
		ask = append(ask, c.f)
	}
	return ask
}
