package cli

import (
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
