package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	dto "github.com/prometheus/client_model/go"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/fleet/core"
	"github.com/celldgo/celld/worker"
)

// counterProject: /hit/NAME calls a Durable Object's RPC method that
// writes, /obj/NAME its fetch handler; both log to the console. /arm/NAME
// sets an alarm due now whose handler throws.
var counterProject = map[string]string{
	"wrangler.jsonc": `{"name":"counter","main":"index.js","durable_objects":{"bindings":[{"name":"C","class_name":"Counter"}]},
		"migrations":[{"tag":"v1","new_sqlite_classes":["Counter"]}]}`,
	"index.js": `import { DurableObject } from "cloudflare:workers";
export class Counter extends DurableObject {
  async incr() {
    const n = (this.ctx.storage.kv.get("n") || 0) + 1;
    this.ctx.storage.kv.put("n", n);
    console.log("counted", n);
    return n;
  }
  async arm() {
    await this.ctx.storage.setAlarm(Date.now());
    return "armed";
  }
  async alarm() {
    throw new Error("this alarm always fails");
  }
  async fetch(req) {
    console.warn("object fetch");
    return new Response(String(this.ctx.storage.kv.get("n") || 0));
  }
}
export default {
  async fetch(req, env) {
    const [, what, name] = new URL(req.url).pathname.split("/");
    console.log("worker", what);
    if (what === "hit") return new Response(String(await env.C.getByName(name).incr()));
    if (what === "obj") return env.C.getByName(name).fetch(req);
    if (what === "arm") return new Response(await env.C.getByName(name).arm());
    return new Response("no", { status: 404 });
  },
};`,
}

// scrape reads the node's /metrics and parses it as the Prometheus text
// format, with the legacy (strict) metric name rules.
func scrape(t testing.TB, internal string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(internal + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse as Prometheus text: %v", err)
	}
	return fams
}

// sample is the value of name{labels} in fams (a histogram: its sample
// count), 0 when absent.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			ok := false
			for _, l := range m.GetLabel() {
				ok = ok || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
			}
			if !ok {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			return m.Untyped.GetValue()
		}
	}
	return 0
}

// TestMetrics_MoveWithRequestsActivationsAndBucketCalls: /metrics on the
// internal listener parses, follows the naming rules, carries no cell
// names, and its counters move by what requests, activations and bucket
// calls happened.
func TestMetrics_MoveWithRequestsActivationsAndBucketCalls(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, counterProject)
	n := startNodeWith(t, store, "metrics-node", func(o *Options) { o.TTL = 3 * time.Second })
	before := scrape(t, n.internal)

	if code, body := fetchText(t, n.public+"/hit/a"); code != 200 || body != "1" {
		t.Fatalf("GET /hit/a: %d %q", code, body)
	}
	if code, body := fetchText(t, n.public+"/hit/a"); code != 200 || body != "2" {
		t.Fatalf("GET /hit/a again: %d %q", code, body)
	}
	if code, body := fetchText(t, n.public+"/obj/a"); code != 200 || body != "2" {
		t.Fatalf("GET /obj/a: %d %q", code, body)
	}
	if code, _ := fetchText(t, n.public+"/nothing"); code != 404 {
		t.Fatalf("GET /nothing: %d", code)
	}
	// The lease renews at a third of its TTL (1s): wait for one.
	deadline := time.Now().Add(10 * time.Second)
	var after map[string]*dto.MetricFamily
	for {
		after = scrape(t, n.internal)
		if sample(after, "celld_lease_renewals_total", "outcome", "applied") > sample(before, "celld_lease_renewals_total", "outcome", "applied") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no lease renewal counted in 10s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	delta := func(name string, labels ...string) float64 {
		return sample(after, name, labels...) - sample(before, name, labels...)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"celld_requests_total", []string{"kind", "fetch", "status", "2xx"}, 3},
		{"celld_requests_total", []string{"kind", "fetch", "status", "4xx"}, 1},
		{"celld_request_duration_seconds", []string{"kind", "fetch"}, 4},
		{"celld_requests_total", []string{"kind", "rpc", "status", "ok"}, 2},
		{"celld_requests_total", []string{"kind", "object_fetch", "status", "2xx"}, 1},
		{"celld_activations_total", []string{"outcome", "ok"}, 1},
		{"celld_activation_duration_seconds", nil, 1},
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Two writes: each response waited in the gate for its LTX upload.
	if got := delta("celld_output_gate_waits_total", "outcome", "passed"); got < 2 {
		t.Errorf("output gate waits passed moved by %v, want at least 2", got)
	}
	if got := delta("celld_bucket_requests_total", "op", "put", "outcome", "applied"); got < 3 {
		t.Errorf("bucket puts applied moved by %v, want at least 3 (ownership, two LTX segments)", got)
	}
	if got := delta("celld_bucket_request_duration_seconds", "op", "put"); got < 3 {
		t.Errorf("bucket put latency samples moved by %v, want at least 3", got)
	}
	if got := delta("celld_ltx_uploaded_bytes_total"); got <= 0 {
		t.Errorf("LTX bytes moved by %v, want > 0", got)
	}
	if got := sample(after, "celld_cells", "state", "resident"); got != 1 {
		t.Errorf("celld_cells{state=resident} = %v, want 1", got)
	}
	if got := sample(after, "celld_serving"); got != 1 {
		t.Errorf("celld_serving = %v, want 1", got)
	}
	if sample(after, "go_goroutines") <= 0 || after["process_resident_memory_bytes"] == nil {
		t.Error("no Go runtime or process metrics")
	}
	for name, f := range after {
		if !strings.HasPrefix(name, "celld_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") && !strings.HasPrefix(name, "promhttp_") {
			t.Errorf("metric %s outside the celld_, go_, process_ namespaces", name)
		}
		if f.GetType() == dto.MetricType_COUNTER && !strings.HasSuffix(name, "_total") {
			t.Errorf("counter %s does not end in _total", name)
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cell" || strings.Contains(l.GetValue(), "Counter:") {
					t.Errorf("%s has a cell label or value: %s=%q", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
}

// TestMetrics_CountTheCellFencedByALostOwnership: a cell whose ownership
// record moves to another node refuses its next output at the gate and is
// stopped; both are counted, and the write's response is a 503.
func TestMetrics_CountTheCellFencedByALostOwnership(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, counterProject)
	n := startNodeWith(t, store, "fenced-node", nil)
	if code, body := fetchText(t, n.public+"/hit/z"); code != 200 || body != "1" {
		t.Fatalf("GET /hit/z: %d %q", code, body)
	}
	before := scrape(t, n.internal)
	// Another node takes the cell (as after judging this one dead).
	cellName := "Counter:" + worker.ObjectIDFromName("Counter", "z")
	ctx := context.Background()
	if _, err := store.Put(ctx, core.OwnKey(cellName), core.Encode(core.Own{Node: "thief", Session: "s", Epoch: 9}), bucket.Cond{}); err != nil {
		t.Fatal(err)
	}
	if code, _ := fetchText(t, n.public+"/hit/z"); code == 200 {
		t.Fatalf("a write acknowledged after the ownership moved")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		after := scrape(t, n.internal)
		refused := sample(after, "celld_output_gate_waits_total", "outcome", "refused") - sample(before, "celld_output_gate_waits_total", "outcome", "refused")
		fenced := sample(after, "celld_cell_fences_total") - sample(before, "celld_cell_fences_total")
		if refused == 1 && fenced == 1 && sample(after, "celld_cells", "state", "resident") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gate refusals moved by %v, cell fences by %v, resident %v; want 1, 1, 0", refused, fenced, sample(after, "celld_cells", "state", "resident"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMetrics_CountAlarmsAndTheirRetries: an alarm that throws is counted
// as fired, as an alarm event with status error, and as retried.
func TestMetrics_CountAlarmsAndTheirRetries(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, counterProject)
	n := startNodeWith(t, store, "alarm-node", nil)
	before := scrape(t, n.internal)
	if code, body := fetchText(t, n.public+"/arm/q"); code != 200 || body != "armed" {
		t.Fatalf("GET /arm/q: %d %q", code, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		after := scrape(t, n.internal)
		d := func(name string, labels ...string) float64 {
			return sample(after, name, labels...) - sample(before, name, labels...)
		}
		fired, retried, events := d("celld_alarms_fired_total"), d("celld_alarm_retries_total"), d("celld_requests_total", "kind", "alarm", "status", "error")
		// The retry runs 2 s later: by then the first run is counted.
		if fired >= 1 && retried >= 1 && events >= 1 {
			if fired != events || retried > fired {
				t.Errorf("fired %v, alarm events with error %v, retried %v", fired, events, retried)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fired %v, retried %v, alarm error events %v; want each at least 1", fired, retried, events)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMetrics_ShowADrain: once a drain begins, the drain gauges show it
// and the cells it has to release.
func TestMetrics_ShowADrain(t *testing.T) {
	store, err := bucket.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	deployProject(t, store, counterProject)
	var nd *node
	testNodeHook = func(x *node) { nd = x }
	defer func() { testNodeHook = nil }()
	n := startNodeWith(t, store, "drain-node", nil)
	if code, _ := fetchText(t, n.public+"/hit/d"); code != 200 {
		t.Fatalf("GET /hit/d: %d", code)
	}
	before := scrape(t, n.internal)
	if sample(before, "celld_draining") != 0 || sample(before, "celld_drain_cells") != 0 {
		t.Fatal("drain gauges set before a drain")
	}
	// The drain is begun as POST /shutdown begins it; the node's own
	// drain loop runs when the test ends.
	nd.objects.beginDrain(false, time.Minute, 128)
	after := scrape(t, n.internal)
	for _, c := range []struct {
		name string
		want float64
	}{{"celld_draining", 1}, {"celld_drain_cells", 1}, {"celld_drain_released_cells", 0}} {
		if got := sample(after, c.name); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	if got := sample(after, "celld_drains_started_total") - sample(before, "celld_drains_started_total"); got != 1 {
		t.Errorf("drains started moved by %v, want 1", got)
	}
}
