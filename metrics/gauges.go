package metrics

import "github.com/prometheus/client_golang/prometheus"

// Snapshot is what a node's gauges show, read once per scrape.
type Snapshot struct {
	// Cells by what is happening to them (the counters of GET /state).
	Resident, Hibernated, Activating, Restoring, Evicting, Releasing int
	// WebSockets: client connections the public listener upgraded, and
	// the sockets the node's Durable Objects hold.
	ClientWebSockets, ObjectWebSockets int
	// AlarmsArmed: resident cells with an alarm set.
	AlarmsArmed int
	// Drain progress: Draining while a drain runs, the cells resident when
	// it began and how many of them have been released since.
	Draining                  bool
	DrainCells, DrainReleased int
	// Serving: the node holds its lease and serves (0 once fenced).
	Serving bool
}

var (
	cellsDesc = prometheus.NewDesc("celld_cells", "Cells on this node by state: resident (owned here, including hibernated), hibernated (resident Durable Objects whose isolate is dropped), activating, restoring (the part of activating rebuilding from the bucket), evicting, releasing (during a drain).",
		[]string{"state"}, nil)
	socketsDesc = prometheus.NewDesc("celld_websockets", "Open WebSockets: client (connections the public listener upgraded) and object (sockets the node's Durable Objects hold).",
		[]string{"side"}, nil)
	alarmsArmedDesc   = prometheus.NewDesc("celld_alarms_armed", "Resident cells with a Durable Object alarm set.", nil, nil)
	drainingDesc      = prometheus.NewDesc("celld_draining", "1 while the node drains.", nil, nil)
	drainCellsDesc    = prometheus.NewDesc("celld_drain_cells", "Cells resident when the current drain began (0 when not draining).", nil, nil)
	drainReleasedDesc = prometheus.NewDesc("celld_drain_released_cells", "Cells released since the current drain began (0 when not draining).", nil, nil)
	servingDesc       = prometheus.NewDesc("celld_serving", "1 while the node holds its lease and serves; 0 once it fenced.", nil, nil)
)

// gauges reads a Snapshot at scrape time: the node's state is counted
// where it lives, not mirrored into gauges that could drift from it.
type gauges struct{ snapshot func() Snapshot }

func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cellsDesc, socketsDesc, alarmsArmedDesc, drainingDesc, drainCellsDesc, drainReleasedDesc, servingDesc} {
		ch <- d
	}
}

func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	s := g.snapshot()
	gauge := func(d *prometheus.Desc, v int, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	gauge(cellsDesc, s.Resident, "resident")
	gauge(cellsDesc, s.Hibernated, "hibernated")
	gauge(cellsDesc, s.Activating, "activating")
	gauge(cellsDesc, s.Restoring, "restoring")
	gauge(cellsDesc, s.Evicting, "evicting")
	gauge(cellsDesc, s.Releasing, "releasing")
	gauge(socketsDesc, s.ClientWebSockets, "client")
	gauge(socketsDesc, s.ObjectWebSockets, "object")
	gauge(alarmsArmedDesc, s.AlarmsArmed)
	gauge(drainingDesc, b2i(s.Draining))
	gauge(drainCellsDesc, s.DrainCells)
	gauge(drainReleasedDesc, s.DrainReleased)
	gauge(servingDesc, b2i(s.Serving))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
