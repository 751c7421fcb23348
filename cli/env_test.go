package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func TestCheckEnv(t *testing.T) {
	tests := []struct {
		env  []string
		want string // "" = ok
	}{
		{[]string{"CELLD_TTL_MS=10000", "HOME=/root"}, ""},
		{[]string{"CELLD_TTL_MS=abc"}, `CELLD_TTL_MS="abc": want an integer from 1000 to 600000`},
		{[]string{"CELLD_TTL_MS=0"}, `CELLD_TTL_MS="0"`},
		{[]string{"CELLD_TTL_M=5000"}, "unknown variable CELLD_TTL_M: did you mean CELLD_TTL_MS?"},
		{[]string{"CELLD_BUCKT=s3://x"}, "did you mean CELLD_BUCKET?"},
		{[]string{"CELLD_SOMETHING_ELSE_ENTIRELY=1"}, ""},
		{[]string{"CELLD_RELEASES=4"}, ""},
		{[]string{"CELLD_RELEASES=0"}, `CELLD_RELEASES="0": want an integer from 1 to 100000 (default 128)`},
		{[]string{"CELLD_RELEASES=abc"}, `CELLD_RELEASES="abc": want an integer from 1 to 100000`},
		{[]string{"CELLD_RELEASE=4"}, "unknown variable CELLD_RELEASE: did you mean CELLD_RELEASES?"},
		{[]string{"CELLD_SHUTDOWN_DRAIN_MS=-5"}, `CELLD_SHUTDOWN_DRAIN_MS="-5": want an integer from 1 to 3600000`},
		{[]string{"CELLD_SHUTDOWN_DRAN_MS=5"}, "did you mean CELLD_SHUTDOWN_DRAIN_MS?"},
	}
	for _, tc := range tests {
		t.Setenv("CELLD_TTL_MS", "")
		for _, kv := range tc.env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
		err := checkEnv(tc.env)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: unexpected %v", tc.env, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: got %v, want %q", tc.env, err, tc.want)
		case tc.want != "" && ExitCode(err) != ExitUsage:
			t.Errorf("%v: exit code %d, want 2", tc.env, ExitCode(err))
		}
	}
}

func TestCheckAdvertise(t *testing.T) {
	tests := []struct {
		o           serveOptions
		internalSet bool
		want        string
	}{
		{serveOptions{}, false, ""},
		{serveOptions{Advertise: "10.0.0.5:8081"}, true, ""},
		{serveOptions{Advertise: "node-a.internal:8081"}, true, ""},
		{serveOptions{Advertise: "10.0.0.5:8081"}, false, "needs an explicit --internal-listen"},
		{serveOptions{Advertise: "203.0.113.7:8081"}, true, "public IP address"},
		{serveOptions{Advertise: "203.0.113.7:8081", UnsafePublicAdvertise: true}, true, ""},
		{serveOptions{Advertise: "no-port"}, true, "want HOST:PORT"},
	}
	for _, tc := range tests {
		err := checkAdvertise(&tc.o, tc.internalSet)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: unexpected %v", tc.o, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || ExitCode(err) != ExitUsage):
			t.Errorf("%+v: got %v, want exit 2 mentioning %q", tc.o, err, tc.want)
		}
	}
}

// celld serve --help lists every variable the node reads, with its default.
func TestServeHelpListsEveryVariable(t *testing.T) {
	root := New("test")
	var out strings.Builder
	root.Writer = &out
	if err := root.Run(t.Context(), []string{"celld", "serve", "--help"}); err != nil {
		t.Fatal(err)
	}
	for _, v := range envVars {
		if !strings.Contains(out.String(), v.Name) {
			t.Errorf("serve --help does not mention %s", v.Name)
		}
		if v.Default != "" && !regexp.MustCompile(regexp.QuoteMeta(v.Name)+` +default `+regexp.QuoteMeta(v.Default)+` `).MatchString(out.String()) {
			t.Errorf("serve --help does not give the default of %s (%s)", v.Name, v.Default)
		}
	}
}

// The README's table lists every variable the node reads.
func TestReadmeListsEveryVariable(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range envVars {
		if !strings.Contains(string(readme), "| `"+v.Name+"` |") {
			t.Errorf("README.md has no table row for %s", v.Name)
		}
	}
}
