package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/metrics"
)

// families touches every series once and returns the names of the celld_
// families the registry then exports.
func families(t *testing.T) map[string]bool {
	t.Helper()
	m := metrics.New(func() metrics.Snapshot { return metrics.Snapshot{Resident: 1, Serving: true} })
	m.Request(metrics.KindFetch, "2xx", time.Millisecond)
	m.Activation("ok", time.Millisecond)
	m.GateWait("passed", time.Millisecond)
	m.LeaseRenewal("applied", time.Millisecond)
	m.SelfFence("node_lease_watchdog_fence")
	m.CellFenced()
	m.AlarmFired(true)
	m.DrainStarted()
	m.Wrap(bucket.NewMem()).Put(context.Background(), "cells/a/ltx/e1/1-1.ltx", []byte("x"), bucket.Cond{})
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "celld_") {
			out[f.GetName()] = true
		}
	}
	return out
}

var seriesName = regexp.MustCompile(`celld_[a-z_]+`)

// TestDocs_ListEveryMetric: docs/observability.md names every series, and
// names none that does not exist.
func TestDocs_ListEveryMetric(t *testing.T) {
	have := families(t)
	doc, err := os.ReadFile("../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range have {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/observability.md does not list %s", name)
		}
	}
	for _, name := range seriesName.FindAllString(string(doc), -1) {
		if !have[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")] {
			t.Errorf("docs/observability.md names %s, which no node exports", name)
		}
	}
}

// TestDashboard_UsesExistingSeries: the sample Grafana dashboard is JSON
// and queries only series a node exports.
func TestDashboard_UsesExistingSeries(t *testing.T) {
	have := families(t)
	raw, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(errors.Join(errors.New("docs/grafana-dashboard.json"), err))
	}
	queries := 0
	for _, p := range dash.Panels {
		for _, q := range p.Targets {
			queries++
			for _, name := range seriesName.FindAllString(q.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")
				if !have[base] {
					t.Errorf("panel %q queries %s, which no node exports", p.Title, name)
				}
			}
		}
	}
	if queries < 10 {
		t.Errorf("%d queries in the dashboard", queries)
	}
}
