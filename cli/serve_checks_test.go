package cli_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/celldgo/celld/cli"
)

// Bad names, state directories and listen addresses are refused with exit
// 2, naming the setting, before anything is written to the bucket.
func TestServe_RefusesBadSetupBeforeTouchingTheBucket(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, []byte("x"), 0o644)
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"name with a slash", []string{"--node", "a/b"}, nil, `node name "a/b"`},
		{"name ..", []string{"--node", ".."}, nil, `node name ".."`},
		{"name too long", []string{"--node", strings.Repeat("n", 64)}, nil, "1 to 63 letters"},
		{"state dir is a file", []string{"--node", "n1"}, map[string]string{"CELLD_WATCH": file}, "CELLD_WATCH " + file + " is a file"},
		{"public port in use", []string{"--node", "n1", "--listen", taken.Addr().String()}, nil, "CELLD_ADDR / --listen"},
		{"bad internal address", []string{"--node", "n1", "--internal-listen", "nonsense"}, nil, "CELLD_INTERNAL_ADDR / --internal-listen"},
		{"log format", []string{"--node", "n1"}, map[string]string{"CELLD_LOG_FORMAT": "yaml"}, `CELLD_LOG_FORMAT="yaml": want one of text, json`},
		{"log level", []string{"--node", "n1"}, map[string]string{"CELLD_LOG_LEVEL": "verbose"}, `CELLD_LOG_LEVEL="verbose": want one of debug, info, warn, error`},
		{"access log", []string{"--node", "n1"}, map[string]string{"CELLD_ACCESS_LOG": "yes"}, `CELLD_ACCESS_LOG="yes": want one of 0, 1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bkt := t.TempDir()
			t.Chdir(t.TempDir())
			t.Setenv("CELLD_WATCH", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			r := run(t, append([]string{"--bucket", "file://" + bkt, "serve"}, tc.args...)...)
			if r.code != cli.ExitUsage || r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("exit %d, err %v; want exit 2 naming %q", r.code, r.err, tc.want)
			}
			if entries, _ := os.ReadDir(bkt); len(entries) != 0 {
				t.Errorf("the bucket was written: %d entries", len(entries))
			}
		})
	}
}

// Two processes never share a state directory.
func TestServe_StateDirIsLocked(t *testing.T) {
	dir := t.TempDir()
	unlock, err := cli.LockStateDirForTest(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	t.Setenv("CELLD_WATCH", dir)
	r := run(t, "--bucket", "file://"+t.TempDir(), "serve", "--node", "n2")
	if r.code != cli.ExitUsage || r.err == nil || !strings.Contains(r.err.Error(), "in use by another celld process") {
		t.Fatalf("exit %d, err %v; want exit 2: the directory is in use", r.code, r.err)
	}
}
