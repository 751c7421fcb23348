package deploy_test

import (
	"testing"

	"github.com/celldgo/celld/deploy"
)

func TestLoadConfig_Services(t *testing.T) {
	for _, tc := range []struct {
		name, services, want string
	}{
		{"own default export", `[{"binding":"SELF","service":"w"}]`, ""},
		{"own entrypoint with props", `[{"binding":"API","service":"w","entrypoint":"Api","props":{"tenant":"acme","n":[1,2]}}]`, ""},
		{"another Worker", `[{"binding":"AUTH","service":"auth-worker","entrypoint":"AuthRpc"}]`,
			`services[0] (binding AUTH): service "auth-worker" is another Worker; a celld fleet runs one Worker, so a service binding can only name this one ("w")`},
		{"service missing", `[{"binding":"S"}]`, `services[0] (binding S): "service" is required`},
		{"environment", `[{"binding":"S","service":"w","environment":"production"}]`, `services[0] (binding S): "environment" names another deployment`},
		{"entrypoint not an identifier", `[{"binding":"S","service":"w","entrypoint":"my-api"}]`, `entrypoint "my-api" is not a JavaScript identifier`},
		{"binding clashes with a var", `[{"binding":"GREETING","service":"w"}]`, `services[0]: binding name "GREETING" is already used by vars.GREETING`},
		{"unknown key in an entry", `[{"binding":"S","service":"w","entrypiont":"Api"}]`, `unknown key "services[0].entrypiont"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := `{"name":"w","main":"src/index.js","vars":{"GREETING":"hi"},"services":` + tc.services + `}`
			dir := project(t, map[string]string{"wrangler.jsonc": cfg, "src/index.js": `export default {}`})
			c, err := deploy.LoadConfig(dir, deploy.Served())
			if tc.want != "" {
				wantProblem(t, err, tc.want)
				return
			}
			if err != nil {
				t.Fatalf("valid config refused: %v", err)
			}
			m := deploy.NewManifest(c)
			if len(m.Services) != 1 || m.Services[0].Service != "w" {
				t.Fatalf("manifest services = %+v", m.Services)
			}
		})
	}
}

// In an environment the Worker is <name>-<env>; its service bindings
// (not inherited) must name that.
func TestLoadConfigEnv_Services(t *testing.T) {
	cfg := `{"name":"w","main":"src/index.js","services":[{"binding":"S","service":"w"}],
	  "env":{"staging":{"services":[{"binding":"S","service":"w-staging","entrypoint":"Api"}]}}}`
	dir := project(t, map[string]string{"wrangler.jsonc": cfg, "src/index.js": `export default {}`})
	c, err := deploy.LoadConfigEnv(dir, "staging", deploy.Served())
	if err != nil {
		t.Fatal(err)
	}
	if got := deploy.NewManifest(c).Entrypoints(); len(got) != 1 || got[0] != "Api" {
		t.Fatalf("entrypoints = %q, want [Api]", got)
	}
}
