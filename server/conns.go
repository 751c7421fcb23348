package server

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Connection hygiene. Each listener holds at most a set number of
// connections (CELLD_MAX_CONNS). At the cap, a new connection displaces
// the one that has waited longest without a request in progress (idle
// keep-alive, or connected and silent); when every connection is busy, a
// few more are let in as "overflow" connections that answer only the
// operator endpoints (health, /state) — so health and /state answer
// however many connections a client piles up — and anything else 503. A
// body that sends nothing for bodyIdle is cut (the read fails); an idle
// keep-alive connection is closed after idleTimeout; a request head must
// arrive within headerTimeout.
const (
	// idleTimeout closes a keep-alive connection that has sent nothing for
	// this long.
	idleTimeout = 2 * time.Minute
	// headerTimeout bounds the wait for a request's head.
	headerTimeout = 10 * time.Second
	// overflowConns is how many connections past the cap are let in, for
	// the operator endpoints, when none can be displaced.
	overflowConns = 64
)

// bodyIdle cuts a request body that sends nothing for this long (a
// variable for tests).
var bodyIdle = 30 * time.Second

// DefaultMaxConns is the per-listener cap when CELLD_MAX_CONNS is 0: a
// quarter of the process's file-descriptor limit (the rest is left to
// the other listener, cells' files and outbound connections), at least
// 64.
func DefaultMaxConns() int {
	limit := fdLimit()
	if limit == 0 {
		return 1024
	}
	return int(max(min(limit/4, 1<<20), 64))
}

// fdLimit is the process's file-descriptor limit (the soft RLIMIT_NOFILE,
// which the Go runtime raises to the hard limit at start), 0 if unknown.
func fdLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}

// FilesPerOpenCell is what a cell with its database open holds: the
// SQLite file and its WAL (the WAL index is in memory).
const FilesPerOpenCell = 2

// DefaultMaxOpenCells is the bound on cells with their database open when
// CELLD_MAX_OPEN_CELLS is 0, given each listener's connection cap
// (CELLD_MAX_CONNS; 0: DefaultMaxConns): what is left of the
// file-descriptor limit once both listeners are full (with their
// overflow), less a reserve (256 and 1/16 of the limit: the bucket's and
// peers' connections, outbound fetches, temporary files, the node's own
// files), at FilesPerOpenCell each; at least 16. Beyond it, idle cells
// close their files until their next event, and none of the node's other
// descriptors is ever short.
func DefaultMaxOpenCells(maxConns int) int {
	limit := int64(fdLimit())
	if limit == 0 {
		limit = 1024
	}
	if maxConns <= 0 {
		maxConns = DefaultMaxConns()
	}
	left := limit - 2*int64(maxConns+overflowConns) - 256 - limit/16
	return int(max(left/FilesPerOpenCell, 16))
}

// connCap is a listener holding at most max connections (see above).
type connCap struct {
	net.Listener
	max int

	mu       sync.Mutex
	conns    map[net.Conn]*trackedConn
	regular  int // counted against max
	overflow int
	reaped   int64 // displaced at the cap, for /state and tests
}

type trackedConn struct {
	state    http.ConnState
	since    time.Time // of the last state change
	overflow bool
	gone     bool // displaced or closed: no longer counted
}

func newConnCap(l net.Listener, max int) *connCap {
	if max <= 0 {
		max = DefaultMaxConns()
	}
	return &connCap{Listener: l, max: max, conns: map[net.Conn]*trackedConn{}}
}

func (l *connCap) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		t := &trackedConn{state: http.StateNew, since: time.Now()}
		if l.regular >= l.max && !l.displaceLocked() {
			if l.overflow >= overflowConns {
				l.mu.Unlock()
				c.Close()
				continue
			}
			t.overflow = true
			l.overflow++
		} else {
			l.regular++
		}
		l.conns[c] = t
		l.mu.Unlock()
		return c, nil
	}
}

// displaceLocked closes the connection waiting longest without a request
// in progress, if any.
func (l *connCap) displaceLocked() bool {
	var oldest net.Conn
	var ot *trackedConn
	for c, t := range l.conns {
		if t.gone || t.overflow || (t.state != http.StateIdle && t.state != http.StateNew) {
			continue
		}
		if ot == nil || t.since.Before(ot.since) {
			oldest, ot = c, t
		}
	}
	if ot == nil {
		return false
	}
	l.dropLocked(oldest, ot)
	l.reaped++
	oldest.Close()
	return true
}

func (l *connCap) dropLocked(c net.Conn, t *trackedConn) {
	if t.gone {
		return
	}
	t.gone = true
	if t.overflow {
		l.overflow--
	} else {
		l.regular--
	}
	delete(l.conns, c)
}

// connState is the server's ConnState hook.
func (l *connCap) connState(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.conns[c]
	if t == nil {
		return
	}
	if st == http.StateClosed || st == http.StateHijacked {
		// A hijacked connection (a WebSocket) leaves the server; sockets
		// have their own cap (CELLD_MAX_WEBSOCKETS).
		l.dropLocked(c, t)
		return
	}
	t.state, t.since = st, time.Now()
}

type overflowKey struct{}

// connContext marks the requests of an overflow connection.
func (l *connCap) connContext(ctx context.Context, c net.Conn) context.Context {
	l.mu.Lock()
	t := l.conns[c]
	l.mu.Unlock()
	if t != nil && t.overflow {
		return context.WithValue(ctx, overflowKey{}, true)
	}
	return ctx
}

// counts reports the connections held (regular and overflow) and how many
// were displaced so far.
func (l *connCap) counts() (regular, overflow int, reaped int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.regular, l.overflow, l.reaped
}

// operatorPath is what an overflow connection may still reach.
func operatorPath(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	p := r.URL.Path
	return p == "/state" || p == "/metrics" || strings.HasPrefix(p, "/__celld/")
}

// capped answers an overflow connection's non-operator requests 503.
func capped(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(overflowKey{}) == nil {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		if !operatorPath(r) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "celld: node is at its connection limit (CELLD_MAX_CONNS); retry", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// newHTTPServer is a listener's server: the timeouts above, the cap's
// hooks, h behind capped.
func newHTTPServer(h http.Handler, l *connCap) *http.Server {
	return &http.Server{
		Handler: capped(h), ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout,
		ConnState: l.connState, ConnContext: l.connContext,
	}
}
