package server

import (
	"fmt"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/celldgo/celld/metrics"
)

// ListenError is a listener address that cannot be bound or parsed; the
// CLI reports it as bad input (exit 2) naming the setting.
type ListenError struct {
	Addr    string
	Setting string
	Err     error
}

func (e *ListenError) Error() string {
	return fmt.Sprintf("listen %s (%s): %v", e.Addr, e.Setting, e.Err)
}

func (e *ListenError) Unwrap() error { return e.Err }

// Listen binds addr for setting, as Run does: the CLI calls it before the
// bucket is touched.
func Listen(addr, setting string) (net.Listener, error) { return listen(nil, addr, setting) }

func listen(given net.Listener, addr, setting string) (net.Listener, error) {
	if given != nil {
		return given, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, &ListenError{Addr: addr, Setting: setting, Err: err}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, &ListenError{Addr: addr, Setting: setting, Err: err}
	}
	return l, nil
}

// switchHandler serves whatever handler was set last: the node answers on
// its listeners from the moment they are bound ("starting"), and switches
// to its real routes when it is ready.
type switchHandler struct{ h atomic.Pointer[http.Handler] }

func (s *switchHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

// startingHandler answers while the node runs its storage test and waits
// for its lease: health and /state say "starting", anything else is a 503
// to retry.
// /metrics (m, on the internal listener) answers already: the storage
// test's bucket calls and the lease wait are worth watching.
func startingHandler(node string, m *metrics.Metrics) http.Handler {
	var scrape http.Handler
	if m != nil {
		scrape = m.Handler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if scrape != nil && r.URL.Path == "/metrics" {
			scrape.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", "1")
		switch r.URL.Path {
		case "/__celld/health":
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "phase": "starting"})
		case "/state":
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"node": node, "phase": "starting"})
		default:
			http.Error(w, "celld node "+node+" is starting", http.StatusServiceUnavailable)
		}
	})
}
