package server

import (
	"sync"
	"time"
)

// unavailableLog remembers the last reason each cell could not be served,
// so that a cell failing the same way for every request (a failover, a
// broken history, a store answering SlowDown) is logged once, not once per
// request with a stack: again only when the reason changes or after
// unavailableRelog.
type unavailableLog struct {
	mu   sync.Mutex
	last map[string]unavailableEntry
}

type unavailableEntry struct {
	reason string
	at     time.Time
}

const (
	unavailableRelog   = time.Minute
	unavailableMaxKeys = 4096
)

// logUnavailable logs that cell cannot be served because of err, unless
// the same reason was logged for it within unavailableRelog.
func (o *objects) logUnavailable(cell string, err error) {
	reason := err.Error()
	now := time.Now()
	u := &o.unavailable
	u.mu.Lock()
	if u.last == nil || len(u.last) >= unavailableMaxKeys {
		u.last = map[string]unavailableEntry{}
	}
	prev, seen := u.last[cell]
	fresh := !seen || prev.reason != reason || now.Sub(prev.at) >= unavailableRelog
	if fresh {
		u.last[cell] = unavailableEntry{reason: reason, at: now}
	}
	u.mu.Unlock()
	if fresh {
		o.log.Warn("cell unavailable; its requests are answered 503 until it can be served", "cell", cell, "err", err)
	}
}

// served forgets cell's unavailability once it serves again, so that the
// next failure is logged at once.
func (o *objects) served(cell string, epoch uint64) {
	u := &o.unavailable
	u.mu.Lock()
	if _, ok := u.last[cell]; ok {
		delete(u.last, cell)
		u.mu.Unlock()
		o.log.Info("cell available again", "cell", cell, "epoch", epoch)
		return
	}
	u.mu.Unlock()
}
