package server

import (
	"context"
	"errors"

	"github.com/celldgo/celld/fleet"
	"github.com/celldgo/celld/metrics"
)

// metricsSnapshot is what the node's gauges show at a scrape (a nil node:
// still starting, all zero).
func (n *node) metricsSnapshot() metrics.Snapshot {
	if n == nil {
		return metrics.Snapshot{}
	}
	o := n.objects
	c := o.counts()
	s := metrics.Snapshot{Resident: c.Occupied, Hibernated: c.Hibernating, Activating: c.Activating, Restoring: c.Restoring,
		Evicting: c.Evicting, Releasing: c.Releasing, ClientWebSockets: c.ClientWebSockets, ObjectWebSockets: c.WebSockets,
		Serving: n.fleet.Serving()}
	var armed int
	o.mu.Lock()
	for _, r := range o.residents {
		if set, _ := r.armed(); set {
			armed++
		}
	}
	o.mu.Unlock()
	s.AlarmsArmed = armed
	if o.drain.active.Load() {
		s.Draining = true
		s.DrainCells = int(o.drain.cells.Load())
		s.DrainReleased = int(o.drain.released.Load())
	}
	return s
}

// activationOutcome is the outcome label of an activation that ended
// with err.
func activationOutcome(ctx context.Context, err error) string {
	var elsewhere *fleet.ElsewhereError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &elsewhere):
		return "elsewhere"
	case ctx.Err() != nil:
		return "canceled"
	}
	return "unavailable"
}
