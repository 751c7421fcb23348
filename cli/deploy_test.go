package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/cli"
)

// deployProject writes a Wrangler project into a fresh directory.
func deployProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func okDeployProject(t *testing.T) string {
	return deployProject(t, map[string]string{
		"wrangler.jsonc": `{
  "name": "hello", // the script
  "main": "src/index.ts",
  "durable_objects": { "bindings": [{ "name": "ROOM", "class_name": "Room" },] },
  "migrations": [{ "tag": "v1", "new_sqlite_classes": ["Room"] }],
}`,
		"src/index.ts": `import { DurableObject } from "cloudflare:workers";
export class Room extends DurableObject {}
export default { fetch(): Response { return new Response("hi"); } };
`,
	})
}

// bucketKeys lists every key of the file bucket at dir.
func bucketKeys(t *testing.T, dir string) []string {
	t.Helper()
	s, err := bucket.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := bucket.ListAll(context.Background(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	slices.Sort(ks)
	return ks
}

var deployedLine = regexp.MustCompile(`^deployed hello version ([0-9a-f]{16}) to file://(.+)/deploy/hello/([0-9a-f]{16})/$`)

func TestDeploy(t *testing.T) {
	cleanEnv(t)
	bkt := t.TempDir()
	proj := okDeployProject(t)

	r := run(t, "--bucket", "file://"+bkt, "deploy", proj)
	wantCode(t, r, cli.ExitOK)
	m := deployedLine.FindStringSubmatch(strings.TrimSuffix(r.stdout, "\n"))
	if m == nil || m[1] != m[3] || m[2] != bkt {
		t.Fatalf("stdout %q does not match %s", r.stdout, deployedLine)
	}
	version := m[1]
	prefix := "deploy/hello/" + version + "/"
	want := []string{"deploy/current.json", prefix + "index.js", prefix + "manifest.json"}
	if got := bucketKeys(t, bkt); !slices.Equal(got, want) {
		t.Fatalf("keys\n got %q\nwant %q", got, want)
	}

	// Again, unchanged: same version, nothing new written.
	cur, _ := os.ReadFile(filepath.Join(bkt, "deploy/current.json"))
	r = run(t, "--bucket", "file://"+bkt, "deploy", proj)
	wantCode(t, r, cli.ExitOK)
	wantLines(t, r, "deployed hello version "+version+" to file://"+bkt+"/"+prefix+" (unchanged: already live)")
	if got := bucketKeys(t, bkt); !slices.Equal(got, want) {
		t.Errorf("keys after redeploy %q, want %q", got, want)
	}
	if again, _ := os.ReadFile(filepath.Join(bkt, "deploy/current.json")); string(again) != string(cur) {
		t.Errorf("current.json changed on redeploy: %s → %s", cur, again)
	}
}

func TestDeployDefaultDir(t *testing.T) {
	cleanEnv(t)
	bkt := t.TempDir()
	t.Chdir(okDeployProject(t))
	r := run(t, "--bucket", "file://"+bkt, "deploy")
	wantCode(t, r, cli.ExitOK)
	if !deployedLine.MatchString(strings.TrimSuffix(r.stdout, "\n")) {
		t.Errorf("stdout %q", r.stdout)
	}
}

func TestDeployJSON(t *testing.T) {
	cleanEnv(t)
	bkt := t.TempDir()
	proj := okDeployProject(t)
	for _, dry := range []bool{false, true} {
		args := []string{"--bucket", "file://" + bkt, "deploy", "--json", proj}
		if dry {
			args = append(args, "--dry-run")
		}
		r := run(t, args...)
		wantCode(t, r, cli.ExitOK)
		var out map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("--json output %q: %v", r.stdout, err)
		}
		var ks []string
		for k := range out {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		if want := []string{"assets", "dry_run", "location", "secrets", "version", "worker"}; !slices.Equal(ks, want) {
			t.Errorf("keys %q, want %q", ks, want)
		}
		v, _ := out["version"].(string)
		if out["worker"] != "hello" || out["dry_run"] != dry || len(v) != 16 ||
			out["location"] != "file://"+bkt+"/deploy/hello/"+v+"/" {
			t.Errorf("--json (dry run %v) = %v", dry, out)
		}
	}
}

func TestDeployDryRun(t *testing.T) {
	cleanEnv(t)
	proj := okDeployProject(t)

	// No bucket needed.
	r := run(t, "deploy", "--dry-run", proj)
	wantCode(t, r, cli.ExitOK)
	if !regexp.MustCompile(`^dry run: hello version [0-9a-f]{16} \(nothing written\)\n$`).MatchString(r.stdout) {
		t.Errorf("stdout %q", r.stdout)
	}

	// With one, nothing is written to it.
	bkt := t.TempDir()
	r = run(t, "--bucket", "file://"+bkt, "deploy", "--dry-run", proj)
	wantCode(t, r, cli.ExitOK)
	if got := bucketKeys(t, bkt); len(got) != 0 {
		t.Errorf("dry run wrote %q", got)
	}
}

func TestDeployBadProject(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"unknown key", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","ai":{"binding":"AI"}}`, "index.js": "export default {}"},
			`wrangler.jsonc: unknown key "ai"`},
		{"service binding to another Worker", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","services":[{"binding":"AUTH","service":"auth"}]}`, "index.js": "export default {}"},
			`wrangler.jsonc: services[0] (binding AUTH): service "auth" is another Worker`},
		{"service entrypoint not exported", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","services":[{"binding":"API","service":"w","entrypoint":"Api"}]}`, "index.js": "export default {}"},
			`service entrypoint Api is named in the config but not exported by the main module`},
		{"syntax error", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js"}`, "index.js": "export default {\n  fetch() { return ) }\n};\n"},
			`index.js:2:20: Unexpected ")"`},
		{"missing main", map[string]string{"wrangler.jsonc": `{"name":"w","main":"src/index.ts"}`},
			`wrangler.jsonc: main "src/index.ts" does not exist`},
		{"unserved binding", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","queues":{"consumers":[{"queue":"jobs","type":"http_pull"}]}}`, "index.js": "export default {}"},
			`"type": "http_pull" (pull consumers) is not served by celld`},
		{"no config", map[string]string{"index.js": "export default {}"}, "no wrangler.jsonc, wrangler.json or wrangler.toml in"},
		// A Worker that bundles but cannot start is refused as a node would
		// refuse to load it, with nothing written.
		{"throws at top level", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","compatibility_date":"2026-04-01"}`,
			"index.js":       "const cfg = JSON.parse('{not json');\nexport default { fetch() { return new Response(cfg) } };\n"},
			"index.js does not start: evaluate script"},
		{"Durable Object class not exported", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","compatibility_date":"2026-04-01","durable_objects":{"bindings":[{"name":"ROOM","class_name":"Room"}]},"migrations":[{"tag":"v1","new_sqlite_classes":["Room"]}]}`,
			"index.js":       "class Room {}\nexport default { fetch() { return new Response('x') } };\n"},
			"Durable Object class Room is named in the config but not exported"},
		{"Durable Object class not a class", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","compatibility_date":"2026-04-01","durable_objects":{"bindings":[{"name":"ROOM","class_name":"Room"}]},"migrations":[{"tag":"v1","new_sqlite_classes":["Room"]}]}`,
			"index.js":       "export const Room = () => 1;\nexport default { fetch() { return new Response('x') } };\n"},
			"Durable Object class Room is exported as"},
		{"default export is not a handler", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","compatibility_date":"2026-04-01"}`,
			"index.js":       "export default 42;\n"},
			"the default export is 42"},
		{"no default export", map[string]string{
			"wrangler.jsonc": `{"name":"w","main":"index.js","compatibility_date":"2026-04-01"}`,
			"index.js":       "export const x = 1;\n"},
			"no default export"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bkt := t.TempDir()
			r := run(t, "--bucket", "file://"+bkt, "deploy", deployProject(t, tc.files))
			wantCode(t, r, cli.ExitUsage)
			if !strings.Contains(r.err.Error(), tc.want) {
				t.Errorf("error %q\ndoes not contain %q", r.err, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			if got := bucketKeys(t, bkt); len(got) != 0 {
				t.Errorf("a failed deploy wrote %q", got)
			}
		})
	}
}

func TestDeployBadInput(t *testing.T) {
	cleanEnv(t)
	proj := okDeployProject(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"two directories", []string{"--bucket", "file://" + t.TempDir(), "deploy", proj, proj}, "deploy takes at most one project directory"},
		{"no bucket", []string{"deploy", proj}, "no bucket given"},
		{"unknown flag", []string{"deploy", "--dryrun", proj}, "dryrun"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.args...)
			wantCode(t, r, cli.ExitUsage)
			if !strings.Contains(r.err.Error(), tc.want) {
				t.Errorf("error %q\ndoes not contain %q", r.err, tc.want)
			}
		})
	}
}
