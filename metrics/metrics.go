// Package metrics is a node's Prometheus metrics: every series it exports
// is declared here, on a registry of the node's own (tests run several
// nodes in one process; the global default registry would merge them),
// and the bucket client is instrumented here once for every backend
// (Wrap). It decides names, labels and buckets; it does not decide what
// happens on a node — the server, the cell host and the fleet lease report
// events to it through plain methods and functions, and a scrape reads
// the node's gauges through one Snapshot function.
//
// Labels are low-cardinality by rule: kinds, operations, outcomes and
// status classes, never a cell, a key or a path.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Request kinds (the kind label of celld_requests_total).
const (
	KindFetch       = "fetch"        // a public request to the Worker (or its static assets)
	KindWebSocket   = "websocket"    // a public request the Worker upgraded (101)
	KindObjectFetch = "object_fetch" // a fetch delivered to a Durable Object resident here
	KindRPC         = "rpc"          // an RPC call delivered to a Durable Object resident here
	KindAlarm       = "alarm"        // a Durable Object alarm fired here
	KindPeer        = "peer"         // a signed peer request on the internal listener
	KindOperator    = "operator"     // /state, /shutdown on the internal listener
)

// latency buckets, in seconds: 1 ms to 10 s.
var latency = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Metrics is one node's series. The zero value is not usable; a nil
// *Metrics is (every method is a no-op), so code paths without a node
// (the CLI's tool leases) need no checks.
type Metrics struct {
	reg *prometheus.Registry

	requests       *prometheus.CounterVec
	requestSeconds *prometheus.HistogramVec
	activations    *prometheus.CounterVec
	activationSecs prometheus.Histogram
	gateWaits      *prometheus.CounterVec
	gateSeconds    prometheus.Histogram
	bucketRequests *prometheus.CounterVec
	bucketSeconds  *prometheus.HistogramVec
	ltxBytes       prometheus.Counter
	leaseRenewals  *prometheus.CounterVec
	leaseRenewSecs prometheus.Histogram
	selfFences     *prometheus.CounterVec
	cellsLost      prometheus.Counter
	alarmsFired    prometheus.Counter
	alarmRetries   prometheus.Counter
	drainsStarted  prometheus.Counter
}

// New returns a node's metrics on a fresh registry, with the Go runtime
// and process collectors. snapshot is read at every scrape for the
// node's gauges (nil: none).
func New(snapshot func() Snapshot) *Metrics {
	reg := prometheus.NewRegistry()
	register := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{reg: reg}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "celld_requests_total",
		Help: "Requests handled, by kind (fetch, websocket, object_fetch, rpc, alarm, peer, operator) and status class (1xx..5xx for HTTP; ok or error otherwise)."},
		[]string{"kind", "status"})
	m.requestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "celld_request_duration_seconds",
		Help: "Time from a request's arrival to its response head (a WebSocket: to the upgrade; an RPC or alarm: to its result), by kind.", Buckets: latency},
		[]string{"kind"})
	m.activations = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "celld_activations_total",
		Help: "Cell activations tried on this node, by outcome (ok; elsewhere: a live peer owns it; unavailable: the cell could not be served; full: CELLD_MAX_RESIDENT_CELLS; canceled)."},
		[]string{"outcome"})
	m.activationSecs = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "celld_activation_duration_seconds",
		Help: "Time to activate a cell (acquire at epoch+1, restore, open, start its object), successful activations only.", Buckets: latency})
	m.gateWaits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "celld_output_gate_waits_total",
		Help: "Outputs that waited in the output gate for a write to become durable, by outcome (passed; withheld: the caller went away; refused: the write or the ownership could not be confirmed)."},
		[]string{"outcome"})
	m.gateSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "celld_output_gate_wait_seconds",
		Help: "Time an output waited in the output gate.", Buckets: latency})
	m.bucketRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "celld_bucket_requests_total",
		Help: "Object-store calls, by operation and outcome (applied, rejected, not_found, ambiguous, failed)."},
		[]string{"op", "outcome"})
	m.bucketSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "celld_bucket_request_duration_seconds",
		Help: "Object-store call latency, by operation.", Buckets: latency},
		[]string{"op"})
	m.ltxBytes = prometheus.NewCounter(prometheus.CounterOpts{Name: "celld_ltx_uploaded_bytes_total",
		Help: "Bytes of LTX objects (replicated cell changes, merges and snapshots) written to the bucket."})
	m.leaseRenewals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "celld_lease_renewals_total",
		Help: "Node lease renewal writes, by outcome (applied, rejected, ambiguous, failed)."},
		[]string{"outcome"})
	m.leaseRenewSecs = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "celld_lease_renewal_duration_seconds",
		Help: "Node lease renewal write latency.", Buckets: latency})
	m.selfFences = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "celld_self_fences_total",
		Help: "Times this node fenced itself (it exits 3 right after), by reason."},
		[]string{"reason"})
	m.cellsLost = prometheus.NewCounter(prometheus.CounterOpts{Name: "celld_cell_fences_total",
		Help: "Cells stopped because this node no longer owned them (ownership lost, or the output gate refused)."})
	m.alarmsFired = prometheus.NewCounter(prometheus.CounterOpts{Name: "celld_alarms_fired_total",
		Help: "Durable Object alarms run on this node."})
	m.alarmRetries = prometheus.NewCounter(prometheus.CounterOpts{Name: "celld_alarm_retries_total",
		Help: "Durable Object alarm handlers that threw and were scheduled to run again."})
	m.drainsStarted = prometheus.NewCounter(prometheus.CounterOpts{Name: "celld_drains_started_total",
		Help: "Drains begun (SIGTERM, SIGINT, POST /shutdown); at most one per process."})
	for _, c := range []prometheus.Collector{m.requests, m.requestSeconds, m.activations, m.activationSecs, m.gateWaits, m.gateSeconds,
		m.bucketRequests, m.bucketSeconds, m.ltxBytes, m.leaseRenewals, m.leaseRenewSecs, m.selfFences, m.cellsLost,
		m.alarmsFired, m.alarmRetries, m.drainsStarted} {
		register(c)
	}
	register(collectors.NewGoCollector())
	register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if snapshot != nil {
		register(&gauges{snapshot: snapshot})
	}
	return m
}

// Handler serves the registry in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Registry is the node's registry (tests gather it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// StatusClass is the status label of an HTTP status: "2xx" for 204.
func StatusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

// Outcome is the status label of a call that has no HTTP status.
func Outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// Request counts one finished request of kind.
func (m *Metrics) Request(kind, status string, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(kind, status).Inc()
	m.requestSeconds.WithLabelValues(kind).Observe(took.Seconds())
}

// Activation counts one activation; took is observed for outcome "ok".
func (m *Metrics) Activation(outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.activations.WithLabelValues(outcome).Inc()
	if outcome == "ok" {
		m.activationSecs.Observe(took.Seconds())
	}
}

// GateWait counts one output that waited in the output gate.
func (m *Metrics) GateWait(outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.gateWaits.WithLabelValues(outcome).Inc()
	m.gateSeconds.Observe(took.Seconds())
}

// LeaseRenewal counts one lease renewal write.
func (m *Metrics) LeaseRenewal(outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.leaseRenewals.WithLabelValues(outcome).Inc()
	m.leaseRenewSecs.Observe(took.Seconds())
}

// SelfFence counts the node fencing itself for reason.
func (m *Metrics) SelfFence(reason string) {
	if m == nil {
		return
	}
	m.selfFences.WithLabelValues(reason).Inc()
}

// CellFenced counts a cell stopped because it was no longer ours.
func (m *Metrics) CellFenced() {
	if m != nil {
		m.cellsLost.Inc()
	}
}

// AlarmFired counts an alarm run; retry that its handler threw and it
// runs again.
func (m *Metrics) AlarmFired(retry bool) {
	if m == nil {
		return
	}
	m.alarmsFired.Inc()
	if retry {
		m.alarmRetries.Inc()
	}
}

// DrainStarted counts a drain begun.
func (m *Metrics) DrainStarted() {
	if m != nil {
		m.drainsStarted.Inc()
	}
}
