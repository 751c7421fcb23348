package deploy_test

import (
	"strings"
	"testing"

	"github.com/celldgo/celld/deploy"
)

func TestNodeCompat(t *testing.T) {
	for _, tc := range []struct {
		date  string
		flags []string
		want  deploy.NodeMode
	}{
		{"2026-04-01", nil, deploy.NodeOff},
		{"2026-04-01", []string{"nodejs_als"}, deploy.NodeALS},
		{"2024-09-22", []string{"nodejs_compat"}, deploy.NodeV1},
		{"2024-09-23", []string{"nodejs_compat"}, deploy.NodeV2},
		{"2026-04-01", []string{"nodejs_compat", "no_nodejs_compat_v2"}, deploy.NodeV1},
		{"2023-01-01", []string{"nodejs_compat_v2"}, deploy.NodeV2},
	} {
		if got := deploy.NodeCompat(tc.date, tc.flags); got != tc.want {
			t.Errorf("NodeCompat(%s, %v) = %v, want %v", tc.date, tc.flags, got, tc.want)
		}
	}
}

func TestNodeProcessEnv(t *testing.T) {
	for _, tc := range []struct {
		date  string
		flags []string
		want  bool
	}{
		{"2026-04-01", []string{"nodejs_compat"}, true},
		{"2025-03-31", []string{"nodejs_compat"}, false},
		{"2024-01-01", []string{"nodejs_compat", "nodejs_compat_populate_process_env"}, true},
		{"2026-04-01", []string{"nodejs_compat", "nodejs_compat_do_not_populate_process_env"}, false},
		{"2026-04-01", []string{"nodejs_als"}, false},
	} {
		if got := deploy.NodeProcessEnv(tc.date, tc.flags); got != tc.want {
			t.Errorf("NodeProcessEnv(%s, %v) = %v, want %v", tc.date, tc.flags, got, tc.want)
		}
	}
}

func TestBundleNode(t *testing.T) {
	src := func(imp string) map[string]string {
		return map[string]string{
			"index.js": `import "./lib/a.js"; export default {};`,
			"lib/a.js": `import x from "` + imp + `"; export default x;`,
		}
	}
	for _, tc := range []struct {
		name string
		imp  string
		mode deploy.NodeMode
		want string // in the code, or the problem when it starts with "!"
	}{
		{"prefixed", "node:buffer", deploy.NodeV1, `require("node:buffer")`},
		{"bare in v2", "buffer", deploy.NodeV2, `require("node:buffer")`},
		{"subpath", "stream/promises", deploy.NodeV2, `require("node:stream/promises")`},
		{"bare in v1", "events", deploy.NodeV1, `!lib/a.js:1:15: Could not resolve "events" (Node built-ins are imported with the "node:" prefix`},
		{"without the flag", "node:events", deploy.NodeOff, `!lib/a.js:1:15: "node:events" (imported by lib/a.js) needs Node.js compatibility: add "nodejs_compat"`},
		{"als only", "node:buffer", deploy.NodeALS, `!"node:buffer" (imported by lib/a.js) needs Node.js compatibility: the nodejs_als flag provides only node:async_hooks`},
		{"als", "node:async_hooks", deploy.NodeALS, `require("node:async_hooks")`},
		{"sockets", "node:net", deploy.NodeV2, `!lib/a.js:1:15: "node:net" (imported by lib/a.js) is not available on celld: it needs raw sockets`},
		{"sockets bare", "http", deploy.NodeV2, `!"http" (imported by lib/a.js) is not available on celld`},
		{"not provided", "node:vm", deploy.NodeV2, `!"node:vm" (imported by lib/a.js) is not provided by celld's Node.js compatibility (available: assert,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := deploy.BundleNode(project(t, src(tc.imp)), "index.js", tc.mode)
			if want, ok := strings.CutPrefix(tc.want, "!"); ok {
				wantProblem(t, err, want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b.Code), tc.want) {
				t.Errorf("bundle lacks %s:\n%s", tc.want, b.Code)
			}
		})
	}
}

// A polyfill installed under a built-in's name is not bundled when the
// runtime provides the module.
func TestBundleNode_PolyfillPackageIgnored(t *testing.T) {
	dir := project(t, map[string]string{
		"index.js":                         `import { EventEmitter } from "events"; export default { e: EventEmitter };`,
		"node_modules/events/package.json": `{"name":"events","main":"events.js"}`,
		"node_modules/events/events.js":    `module.exports = { EventEmitter: "polyfill" };`,
	})
	b, err := deploy.BundleNode(dir, "index.js", deploy.NodeV2)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b.Code), "polyfill") || !strings.Contains(string(b.Code), `require("node:events")`) {
		t.Errorf("bundle:\n%s", b.Code)
	}
	b, err = deploy.BundleNode(dir, "index.js", deploy.NodeV1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b.Code), "polyfill") {
		t.Errorf("v1 bundle should use the package:\n%s", b.Code)
	}
}
