package worker_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/worker"
)

// fixturesDir holds the conformance fixtures recorded on workerd
// (../shared beside the repository).
const fixturesDir = "../../shared/conformance/fixtures"

type step struct {
	Name          string            `json:"name"`
	Method        string            `json:"method"`
	Path          string            `json:"path"`
	Headers       map[string]string `json:"headers"`
	Body          *string           `json:"body"`
	BodyBase64    *string           `json:"body_base64"`
	SleepMsBefore int               `json:"sleep_ms_before"`
	Expect        struct {
		Status     int                `json:"status"`
		Headers    map[string]*string `json:"headers"`
		Body       *string            `json:"body"`
		BodyJSON   json.RawMessage    `json:"body_json"`
		BodyRegex  *string            `json:"body_regex"`
		BodyBase64 *string            `json:"body_base64"`
	} `json:"expect"`
}

// TestConformance replays every fixture this runtime can serve on its own
// and compares the responses with the ones recorded on workerd, using the
// rules of shared/conformance/README.md.
func TestConformance(t *testing.T) {
	entries, err := os.ReadDir(fixturesDir)
	if err != nil {
		t.Fatalf("read fixtures: %v (the conformance fixtures live in ../shared beside the repository)", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(fixturesDir, e.Name())
		t.Run(e.Name(), func(t *testing.T) { runFixture(t, dir) })
	}
}

func runFixture(t *testing.T, dir string) {
	src, err := os.ReadFile(filepath.Join(dir, "wrangler.jsonc"))
	if err != nil {
		t.Fatalf("read config: %v", err)
	}
	cfg, err := deploy.ParseConfig("wrangler.jsonc", src)
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	bindings := map[string]worker.Binding{}
	var missing []string
	if len(cfg.D1Databases) > 0 {
		missing = append(missing, "d1_databases")
	}
	if len(cfg.R2Buckets) > 0 {
		missing = append(missing, "r2_buckets")
	}
	if len(cfg.Queues.Producers) > 0 || len(cfg.Queues.Consumers) > 0 {
		missing = append(missing, "queues")
	}
	if len(cfg.KVNamespaces) > 0 {
		missing = append(missing, "kv_namespaces")
	}
	if len(missing) > 0 {
		t.Skipf("needs bindings the worker runtime does not serve yet: %s", strings.Join(missing, ", "))
	}
	var namespaces map[string]string
	var objects *localObjects
	if len(cfg.DurableObjects.Bindings) > 0 {
		if src, err := os.ReadFile(filepath.Join(dir, cfg.Main)); err == nil && usesAlarms(src) {
			t.Skip("needs Durable Object alarms, which the worker runtime does not serve yet")
		}
		namespaces = map[string]string{}
		for _, b := range cfg.DurableObjects.Bindings {
			namespaces[b.Name] = b.ClassName
		}
		objects = newLocalObjects(t)
	}

	bundle, err := deploy.Bundle(dir, cfg.Main)
	if err != nil {
		t.Fatalf("bundle: %v", err)
	}
	script, err := worker.Compile(cfg.Name, bundle.Code)
	if err != nil {
		t.Fatal(err)
	}
	wcfg := worker.Config{Vars: cfg.Vars, Bindings: bindings, DurableObjects: namespaces, Logger: testLogger(t)}
	if objects != nil {
		wcfg.Objects = objects
	}
	rt, err := worker.New(script, wcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	if objects != nil {
		objects.use(rt)
	}

	raw, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatalf("read cases: %v", err)
	}
	var steps []step
	if err := json.Unmarshal(raw, &steps); err != nil {
		t.Fatalf("parse cases: %v", err)
	}
	for i, s := range steps {
		if s.SleepMsBefore > 0 {
			time.Sleep(time.Duration(s.SleepMsBefore) * time.Millisecond)
		}
		req := &worker.Request{Method: s.Method, URL: "http://localhost" + s.Path, Header: http.Header{}}
		if req.Method == "" {
			req.Method = http.MethodGet
		}
		for k, v := range s.Headers {
			req.Header.Set(k, v)
		}
		switch {
		case s.Body != nil:
			req.Body = []byte(*s.Body)
		case s.BodyBase64 != nil:
			if req.Body, err = base64.StdEncoding.DecodeString(*s.BodyBase64); err != nil {
				t.Fatalf("step %d %q: decode body_base64: %v", i, s.Name, err)
			}
		}
		if req.Body != nil {
			// As an HTTP client would send it (the README's replay rule).
			req.Header.Set("Content-Length", strconv.Itoa(len(req.Body)))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		resp, err := rt.Fetch(ctx, req)
		cancel()
		if err != nil {
			t.Errorf("step %d %q: fetch: %v", i, s.Name, err)
			continue
		}
		for _, problem := range compare(s, resp) {
			t.Errorf("step %d %q: %s", i, s.Name, problem)
		}
	}
}

// usesAlarms reports whether a Worker's source uses Durable Object
// alarms, which this runtime does not serve yet.
func usesAlarms(src []byte) bool {
	return bytes.Contains(src, []byte("setAlarm(")) || bytes.Contains(src, []byte("getAlarm("))
}

// compare applies the README's comparison rules and returns every mismatch.
func compare(s step, resp *worker.Response) []string {
	var out []string
	want := s.Expect
	if resp.Status != want.Status {
		out = append(out, fmt.Sprintf("status = %d, want %d (body %q)", resp.Status, want.Status, truncate(resp.Body)))
	}
	names := make([]string, 0, len(want.Headers))
	for k := range want.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		values := resp.Header.Values(name)
		wantV := want.Headers[name]
		switch {
		case wantV == nil && len(values) > 0:
			out = append(out, fmt.Sprintf("header %s = %q, want absent", name, strings.Join(values, ", ")))
		case wantV != nil && len(values) == 0:
			out = append(out, fmt.Sprintf("header %s absent, want %q", name, *wantV))
		case wantV != nil && strings.Join(values, ", ") != *wantV:
			out = append(out, fmt.Sprintf("header %s = %q, want %q", name, strings.Join(values, ", "), *wantV))
		}
	}
	switch {
	case want.Body != nil:
		if string(resp.Body) != *want.Body {
			out = append(out, fmt.Sprintf("body = %q, want %q", truncate(resp.Body), *want.Body))
		}
	case len(want.BodyJSON) > 0:
		var got, exp any
		if err := json.Unmarshal(resp.Body, &got); err != nil {
			out = append(out, fmt.Sprintf("body is not JSON (%v): %q", err, truncate(resp.Body)))
			break
		}
		if err := json.Unmarshal(want.BodyJSON, &exp); err != nil {
			out = append(out, fmt.Sprintf("expected body_json does not parse: %v", err))
			break
		}
		if !reflect.DeepEqual(got, exp) {
			out = append(out, fmt.Sprintf("body_json differs:\n got: %s\nwant: %s", resp.Body, compact(want.BodyJSON)))
		}
	case want.BodyRegex != nil:
		re, err := regexp.Compile("^(?:" + *want.BodyRegex + ")$")
		if err != nil {
			out = append(out, fmt.Sprintf("body_regex does not compile: %v", err))
		} else if !re.Match(resp.Body) {
			out = append(out, fmt.Sprintf("body %q does not match %q", truncate(resp.Body), *want.BodyRegex))
		}
	case want.BodyBase64 != nil:
		exp, err := base64.StdEncoding.DecodeString(*want.BodyBase64)
		if err != nil {
			out = append(out, fmt.Sprintf("expected body_base64 does not decode: %v", err))
		} else if !bytes.Equal(resp.Body, exp) {
			out = append(out, fmt.Sprintf("body = %x, want %x", resp.Body, exp))
		}
	}
	return out
}

func truncate(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

func compact(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// testLogger sends the runtime's log lines (console output, uncaught
// exceptions) to the test log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
