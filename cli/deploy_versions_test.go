package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cli"
	"github.com/celldgo/celld/deploy"
)

func TestDeploy_ListAndRollback(t *testing.T) {
	cleanEnv(t)
	bkt := t.TempDir()
	proj := deployProject(t, map[string]string{
		"wrangler.jsonc": `{"name":"w","main":"index.js","compatibility_date":"2026-04-01"}`,
		"index.js":       "export default { fetch() { return new Response('one') } };\n",
	})
	deployed := func() string {
		t.Helper()
		r := run(t, "--bucket", "file://"+bkt, "deploy", "--json", proj)
		wantCode(t, r, cli.ExitOK)
		var out struct{ Version string }
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatal(err)
		}
		return out.Version
	}
	v1 := deployed()
	time.Sleep(20 * time.Millisecond) // distinct upload times
	os.WriteFile(filepath.Join(proj, "index.js"), []byte("export default { fetch() { return new Response('two') } };\n"), 0o644)
	v2 := deployed()
	if v1 == v2 {
		t.Fatal("a changed project kept its version")
	}
	live := func() string {
		t.Helper()
		s, _ := bucket.NewFile(bkt)
		dep, err := deploy.Current(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return dep.Manifest.Version
	}

	r := run(t, "--bucket", "file://"+bkt, "deploy", "--list")
	wantCode(t, r, cli.ExitOK)
	got := lines(r.stdout)
	if len(got) != 2 || !strings.HasPrefix(got[0], "* "+v2) || !strings.HasPrefix(got[1], "  "+v1) {
		t.Fatalf("--list:\n%s", r.stdout)
	}

	// No VERSION: the one uploaded before the live one.
	r = run(t, "--bucket", "file://"+bkt, "deploy", "--rollback")
	wantCode(t, r, cli.ExitOK)
	if live() != v1 || !strings.Contains(r.stdout, v1) {
		t.Fatalf("after --rollback: live %s, stdout %q; want %s", live(), r.stdout, v1)
	}
	// Nothing older than v1.
	r = run(t, "--bucket", "file://"+bkt, "deploy", "--rollback")
	wantCode(t, r, cli.ExitUsage)
	// Forward again by name.
	r = run(t, "--bucket", "file://"+bkt, "deploy", "--rollback", v2)
	wantCode(t, r, cli.ExitOK)
	if live() != v2 {
		t.Fatalf("after --rollback %s: live %s", v2, live())
	}
	// An unknown version changes nothing.
	r = run(t, "--bucket", "file://"+bkt, "deploy", "--rollback", "0123456789abcdef")
	wantCode(t, r, cli.ExitUsage)
	if !strings.Contains(r.err.Error(), "no such version") || live() != v2 {
		t.Fatalf("unknown version: %v, live %s", r.err, live())
	}
}
