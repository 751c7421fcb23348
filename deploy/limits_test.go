package deploy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// configProblems parses src as wrangler.jsonc in a project with an
// index.js, and returns every problem reported ("" when it loads).
func configProblems(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.js"), []byte("export default {}"), 0o644)
	os.WriteFile(filepath.Join(dir, "wrangler.jsonc"), []byte(src), 0o644)
	_, err := LoadConfig(dir, Served())
	if err == nil {
		return ""
	}
	var pe *ProjectError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: %T %v, want a *ProjectError", src, err, err)
	}
	return strings.Join(pe.Problems, "\n")
}

func TestLimits_ConfigRefusals(t *testing.T) {
	bigVar := strings.Repeat("x", MaxVarBytes+1)
	var many strings.Builder
	for i := range MaxVars + 1 {
		if i > 0 {
			many.WriteString(",")
		}
		fmt.Fprintf(&many, `"V%d":"v"`, i)
	}
	for _, c := range []struct{ src, want string }{
		{`{"name":"a","main":"index.js","compatibility_date":"2026-13-45"}`, `Invalid compatibility date: "2026-13-45"`},
		{`{"name":"a","main":"index.js","compatibility_date":"2026-02-30"}`, `Invalid compatibility date: "2026-02-30"`},
		{`{"name":"a","main":"index.js","compatibility_date":"2099-01-01"}`, `compatibility_date "2099-01-01" is in the future`},
		{`{"name":"a","main":"index.js","durable_objects":null}`, `durable_objects: want an object, got null`},
		{`{"name":"a","main":"index.js","kv_namespaces":null}`, `kv_namespaces: want an array, got null`},
		{`{"name":"a","main":"index.js","durable_objects":{"bindings":[null]}}`, `durable_objects.bindings[0]: want an object, got null`},
		{`{"name":"a","main":"index.js","env":{"staging":{"vars":null}}}`, `env.staging.vars: want an object, got null`},
		{`{"name":"a","main":"index.js","kv_namespaces":[,]}`, `unexpected ','`},
		{`{"name":"a","main":"index.js","vars":{,"A":"b"}}`, `unexpected ','`},
		{`{"name":"a","main":"index.js","vars":{"A":"b",,}}`, `unexpected ','`},
		{`{"name":"a","main":"index.js","vars":{"BIG":"` + bigVar + `"}}`, `vars.BIG: 5121 bytes, more than the 5120 bytes`},
		{`{"name":"a","main":"index.js","vars":{"OBJ":{"k":"` + bigVar[:MaxVarBytes-7] + `"}}}`, `vars.OBJ: 5121 bytes`},
		{`{"name":"a","main":"index.js","vars":{` + many.String() + `}}`, `vars: 129 variables, more than the 128`},
	} {
		if got := configProblems(t, c.src); !strings.Contains(got, c.want) {
			t.Errorf("%.80s…:\n got  %q\n want %q", c.src, got, c.want)
		}
	}
	// Within the limits, all of it loads: a trailing comma, null var
	// values, the runtime's own date, vars of exactly 5 KB.
	for _, src := range []string{
		`{"name":"a","main":"index.js","compatibility_date":"` + RuntimeCompatibilityDate + `","kv_namespaces":[],}`,
		`{"name":"a","main":"index.js","vars":{"N":null,"S":"` + bigVar[:MaxVarBytes] + `"}}`,
		`{"name":"a","main":"index.js","compatibility_date":"2024-02-29"}`,
	} {
		if got := configProblems(t, src); got != "" {
			t.Errorf("%.80s…: refused: %s", src, got)
		}
	}
}

// TestLimits_DateAfterTheRuntime: a project dated after the runtime's own
// date but not in the future deploys unchanged, with a note saying which
// date's behaviour it gets; tomorrow in UTC is still today in UTC+14.
func TestLimits_DateAfterTheRuntime(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.js"), []byte("export default {}"), 0o644)
	later := "2026-06-01"
	os.WriteFile(filepath.Join(dir, "wrangler.jsonc"), []byte(`{"name":"a","main":"index.js","compatibility_date":"`+later+`"}`), 0o644)
	cfg, err := LoadConfig(dir, Served())
	if err != nil {
		t.Fatalf("a date after the runtime's was refused: %v", err)
	}
	if len(cfg.Notes) != 1 || !strings.Contains(cfg.Notes[0], `runs with the behaviour of "`+RuntimeCompatibilityDate+`"`) {
		t.Errorf("notes %q, want one naming the runtime's date", cfg.Notes)
	}
	now := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	if got := latestAllowedDate(now); got != "2026-12-02" {
		t.Errorf("latest date at %v: %s, want 2026-12-02 (UTC+14)", now, got)
	}
	if got := latestAllowedDate(now.Add(-12 * time.Hour)); got != "2026-12-01" {
		t.Errorf("latest date at 08:00 UTC: %s, want 2026-12-01", got)
	}
}
