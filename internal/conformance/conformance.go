// Package conformance replays Worker fixtures whose expected responses
// were recorded on workerd, and compares responses by the rules of the
// suite's README (testdata/README.md). Fixtures and expectations are never
// edited to pass.
//
// testdata/shared is a byte-for-byte copy of the team's shared suite
// (../shared/conformance/fixtures beside the checkout; a test keeps the two
// identical where the original exists), so a clone of this repository alone
// runs every fixture. testdata/celld holds the fixtures this project
// recorded on workerd itself, in the same format.
package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strings"
)

// Dir is the in-repository copy of the shared fixtures, as an absolute
// path (tests of any package may use it).
var Dir = filepath.Join(here(), "testdata", "shared")

// OwnDir holds the fixtures this project recorded on workerd itself.
var OwnDir = filepath.Join(here(), "testdata", "celld")

// Roots lists every fixture root: the shared suite, then our own.
func Roots() []string { return []string{Dir, OwnDir} }

// AllFixtures lists the fixture directories of every root, the shared
// suite first, each root sorted.
func AllFixtures() ([]string, error) {
	var all []string
	for _, r := range Roots() {
		dirs, err := Fixtures(r)
		if err != nil {
			return nil, err
		}
		all = append(all, dirs...)
	}
	return all, nil
}

func here() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("conformance: no caller information")
	}
	return filepath.Dir(file)
}

// Step is one request of cases.json with its recorded response.
type Step struct {
	Name          string            `json:"name"`
	Method        string            `json:"method"`
	Path          string            `json:"path"`
	Headers       map[string]string `json:"headers"`
	Body          *string           `json:"body"`
	BodyBase64    *string           `json:"body_base64"`
	SleepMsBefore int               `json:"sleep_ms_before"`
	Expect        Expect            `json:"expect"`
}

// Expect is a recorded response.
type Expect struct {
	Status     int                `json:"status"`
	Headers    map[string]*string `json:"headers"`
	Body       *string            `json:"body"`
	BodyJSON   json.RawMessage    `json:"body_json"`
	BodyRegex  *string            `json:"body_regex"`
	BodyBase64 *string            `json:"body_base64"`
}

// Fixtures lists the fixture directories under root, sorted.
func Fixtures(root string) ([]string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read fixtures %s: %w", root, err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, e.Name()))
		}
	}
	sort.Strings(dirs)
	return dirs, nil
}

// LoadSteps reads dir/cases.json.
func LoadSteps(dir string) ([]Step, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		return nil, err
	}
	var steps []Step
	if err := json.Unmarshal(raw, &steps); err != nil {
		return nil, fmt.Errorf("parse %s/cases.json: %w", dir, err)
	}
	return steps, nil
}

// RequestBody decodes the step's body (nil when it has none).
func (s Step) RequestBody() ([]byte, error) {
	switch {
	case s.Body != nil:
		return []byte(*s.Body), nil
	case s.BodyBase64 != nil:
		return base64.StdEncoding.DecodeString(*s.BodyBase64)
	}
	return nil, nil
}

// MethodOrGet is the step's method, GET by default.
func (s Step) MethodOrGet() string {
	if s.Method == "" {
		return http.MethodGet
	}
	return s.Method
}

// Compare applies the README's rules and returns every mismatch.
func Compare(s Step, status int, header http.Header, body []byte) []string {
	var out []string
	want := s.Expect
	if status != want.Status {
		out = append(out, fmt.Sprintf("status = %d, want %d (body %q)", status, want.Status, truncate(body)))
	}
	names := make([]string, 0, len(want.Headers))
	for k := range want.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		values := header.Values(name)
		wantV := want.Headers[name]
		got := strings.Join(values, ", ")
		switch {
		case wantV == nil && len(values) > 0:
			out = append(out, fmt.Sprintf("header %s = %q, want absent", name, got))
		case wantV != nil && len(values) == 0:
			out = append(out, fmt.Sprintf("header %s absent, want %q", name, *wantV))
		case wantV != nil && got != *wantV:
			out = append(out, fmt.Sprintf("header %s = %q, want %q", name, got, *wantV))
		}
	}
	switch {
	case want.Body != nil:
		if string(body) != *want.Body {
			out = append(out, fmt.Sprintf("body = %q, want %q", truncate(body), *want.Body))
		}
	case len(want.BodyJSON) > 0:
		var got, exp any
		if err := json.Unmarshal(body, &got); err != nil {
			out = append(out, fmt.Sprintf("body is not JSON (%v): %q", err, truncate(body)))
			break
		}
		if err := json.Unmarshal(want.BodyJSON, &exp); err != nil {
			out = append(out, fmt.Sprintf("expected body_json does not parse: %v", err))
			break
		}
		if !reflect.DeepEqual(got, exp) {
			var c bytes.Buffer
			json.Compact(&c, want.BodyJSON)
			out = append(out, fmt.Sprintf("body_json differs:\n got: %s\nwant: %s", truncate(body), c.String()))
		}
	case want.BodyRegex != nil:
		re, err := regexp.Compile("^(?:" + *want.BodyRegex + ")$")
		if err != nil {
			out = append(out, fmt.Sprintf("body_regex does not compile: %v", err))
		} else if !re.Match(body) {
			out = append(out, fmt.Sprintf("body %q does not match %q", truncate(body), *want.BodyRegex))
		}
	case want.BodyBase64 != nil:
		exp, err := base64.StdEncoding.DecodeString(*want.BodyBase64)
		if err != nil {
			out = append(out, fmt.Sprintf("expected body_base64 does not decode: %v", err))
		} else if !bytes.Equal(body, exp) {
			out = append(out, fmt.Sprintf("body = %x, want %x", body, exp))
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
