package cli_test

import (
	"bytes"
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

// runIn is run with stdin.
func runIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := cli.New("vX")
	cmd.Writer, cmd.ErrWriter, cmd.Reader = &stdout, &stderr, strings.NewReader(stdin)
	err := cmd.Run(ctx, append([]string{"celld"}, args...))
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err, code: cli.ExitCode(err)}
}

func TestSecret_PutListDeleteAndDeploy(t *testing.T) {
	proj := t.TempDir()
	os.WriteFile(filepath.Join(proj, "wrangler.toml"), []byte("name = \"app\"\nmain = \"index.js\"\n[env.staging]\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "index.js"), []byte("export default { fetch(r, env) { return new Response(env.API_KEY) } }"), 0o644)
	bdir := t.TempDir()
	b := "file://" + bdir

	if r := runIn(t, "", "--bucket", b, "deploy", proj, "--env", "staging"); r.code != 0 {
		t.Fatalf("deploy: %d %v %s", r.code, r.err, r.stderr)
	}
	r := runIn(t, "hunter2\n", "--bucket", b, "secret", "put", "API_KEY", "--cwd", proj, "--env", "staging")
	wantLines(t, r, `Creating the secret for the Worker "app-staging"`, "Success! Uploaded secret API_KEY")
	if strings.Contains(r.stdout+r.stderr, "hunter2") {
		t.Fatal("the value was printed")
	}
	store, _ := bucket.NewFile(bdir)
	ctx := context.Background()
	sec, _, err := deploy.ReadSecrets(ctx, store, "app-staging")
	if err != nil || sec.Values["API_KEY"] != "hunter2" {
		t.Fatalf("stored secrets %v %v: want the value without its newline", sec, err)
	}
	// secret put deployed a new version whose manifest names the secret
	// and never holds its value.
	dep, err := deploy.Current(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	if len(dep.Manifest.Secrets) != 1 || dep.Manifest.Secrets[0] != "API_KEY" {
		t.Errorf("live manifest secrets %q", dep.Manifest.Secrets)
	}
	m, _, _ := store.Get(ctx, dep.Prefix+"manifest.json")
	if strings.Contains(string(m), "hunter2") {
		t.Fatal("the manifest holds the secret's value")
	}

	r = runIn(t, "", "--bucket", b, "secret", "list", "--cwd", proj, "--env", "staging")
	var list []map[string]string
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0]["name"] != "API_KEY" || list[0]["type"] != "secret_text" {
		t.Errorf("list: %q %v", r.stdout, err)
	}
	r = runIn(t, "", "--bucket", b, "deploy", proj, "--env", "staging", "--dry-run", "--json")
	var dry struct {
		Secrets []string `json:"secrets"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &dry); err != nil || len(dry.Secrets) != 1 || dry.Secrets[0] != "API_KEY" || strings.Contains(r.stdout, "hunter2") {
		t.Errorf("dry run json %q: want the secret's name only", r.stdout)
	}
	// The top-level Worker ("app") has no secrets.
	if r := runIn(t, "", "--bucket", b, "secret", "list", "--cwd", proj); strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("top-level list %q", r.stdout)
	}

	r = runIn(t, "", "--bucket", b, "secret", "delete", "API_KEY", "--cwd", proj, "--env", "staging")
	wantLines(t, r, "Success! Deleted secret API_KEY")
	if r := runIn(t, "", "--bucket", b, "secret", "delete", "API_KEY", "--name", "app-staging"); r.code != 2 {
		t.Errorf("deleting a missing secret: exit %d, want 2", r.code)
	}
	if r := runIn(t, "x", "--bucket", b, "secret", "put", "9BAD", "--name", "app"); r.code != 2 {
		t.Errorf("a bad name: exit %d, want 2", r.code)
	}
	if dep, _ := deploy.Current(ctx, store); len(dep.Manifest.Secrets) != 0 {
		t.Errorf("after delete the live manifest names %q", dep.Manifest.Secrets)
	}
}
