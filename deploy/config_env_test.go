package deploy_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/celldgo/celld/deploy"
)

const tomlConfig = `# a TOML project with two environments
name = "shop"
main = "src/index.js"
compatibility_date = 2025-01-01
account_id = "abc"
workers_dev = true

[observability]
enabled = true

[vars]
STAGE = "production"
LIMIT = 10

[[d1_databases]]
binding = "DB"
database_name = "shop"
migrations_table = "schema_history"

[[kv_namespaces]]
binding = "KV"
id = "prod-ns"
preview_id = "dev-ns"

[[durable_objects.bindings]]
name = "CART"
class_name = "Cart"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["Cart"]

[env.staging]
routes = [{ pattern = "staging.example.com/*", zone_name = "example.com" }]
vars = { STAGE = "staging" }
kv_namespaces = [{ binding = "KV", id = "staging-ns" }]

[env.production]
name = "shop-live"
compatibility_date = "2025-06-01"
`

func TestParseConfig_TOML(t *testing.T) {
	cfg, err := deploy.ParseConfig("wrangler.toml", []byte(tomlConfig))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "shop" || cfg.Main != "src/index.js" || cfg.CompatibilityDate != "2025-01-01" {
		t.Errorf("name %q main %q date %q", cfg.Name, cfg.Main, cfg.CompatibilityDate)
	}
	if want := map[string]any{"STAGE": "production", "LIMIT": json.Number("10")}; !reflect.DeepEqual(cfg.Vars, want) {
		t.Errorf("vars %#v, want %#v", cfg.Vars, want)
	}
	if len(cfg.D1Databases) != 1 || cfg.D1Databases[0].MigrationsTable != "schema_history" {
		t.Errorf("d1_databases %+v", cfg.D1Databases)
	}
	if len(cfg.KVNamespaces) != 1 || cfg.KVNamespaces[0].PreviewID != "dev-ns" {
		t.Errorf("kv_namespaces %+v", cfg.KVNamespaces)
	}
	if got, want := cfg.Ignored, []string{"account_id", "observability", "workers_dev"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ignored %q, want %q", got, want)
	}
	w := cfg.IgnoredWarning()
	if strings.Count(w, "\n") != 0 || !strings.Contains(w, "account_id, observability, workers_dev") {
		t.Errorf("warning %q: want one line naming the ignored keys", w)
	}
	if got := cfg.EnvNames(); !reflect.DeepEqual(got, []string{"production", "staging"}) {
		t.Errorf("envs %q", got)
	}
}

func TestParseConfig_EnvInheritance(t *testing.T) {
	for _, file := range []string{"wrangler.toml", "wrangler.jsonc"} {
		src := []byte(tomlConfig)
		if file == "wrangler.jsonc" {
			src = tomlAsJSON(t)
		}
		t.Run(file, func(t *testing.T) {
			st, err := deploy.ParseConfigEnv(file, src, "staging")
			if err != nil {
				t.Fatal(err)
			}
			if st.Name != "shop-staging" {
				t.Errorf("name %q, want shop-staging (Wrangler's <name>-<env>)", st.Name)
			}
			if st.Main != "src/index.js" || st.CompatibilityDate != "2025-01-01" || len(st.Migrations) != 1 {
				t.Errorf("inheritable keys not inherited: main %q date %q migrations %d", st.Main, st.CompatibilityDate, len(st.Migrations))
			}
			if st.Vars["STAGE"] != "staging" || len(st.Vars) != 1 {
				t.Errorf("vars %v: want only the section's", st.Vars)
			}
			if len(st.KVNamespaces) != 1 || st.KVNamespaces[0].ID != "staging-ns" {
				t.Errorf("kv_namespaces %+v: want the section's", st.KVNamespaces)
			}
			if len(st.D1Databases) != 0 || len(st.DurableObjects.Bindings) != 0 {
				t.Errorf("bindings inherited: d1 %+v do %+v", st.D1Databases, st.DurableObjects.Bindings)
			}
			if got, want := st.Ignored, []string{"account_id", "observability", "workers_dev", "env.staging.routes"}; !reflect.DeepEqual(got, want) {
				t.Errorf("ignored %q, want %q", got, want)
			}
			if st.EnvName != "staging" || st.Env != nil {
				t.Errorf("env name %q, envs %v", st.EnvName, st.Env)
			}

			pr, err := deploy.ParseConfigEnv(file, src, "production")
			if err != nil {
				t.Fatal(err)
			}
			if pr.Name != "shop-live" || pr.CompatibilityDate != "2025-06-01" {
				t.Errorf("production: name %q date %q", pr.Name, pr.CompatibilityDate)
			}
			if pr.Vars != nil {
				t.Errorf("production vars %v: an env without vars has none", pr.Vars)
			}

			_, err = deploy.ParseConfigEnv(file, src, "qa")
			wantProblem(t, err, `No environment found in configuration with name "qa" (it has production, staging)`)
		})
	}
}

// tomlAsJSON is tomlConfig written as JSONC.
func tomlAsJSON(testing.TB) []byte {
	return []byte(`{
  "name": "shop", "main": "src/index.js", "compatibility_date": "2025-01-01",
  "account_id": "abc", "workers_dev": true, "observability": {"enabled": true},
  "vars": {"STAGE": "production", "LIMIT": 10},
  "d1_databases": [{"binding": "DB", "database_name": "shop", "migrations_table": "schema_history"}],
  "kv_namespaces": [{"binding": "KV", "id": "prod-ns", "preview_id": "dev-ns"}],
  "durable_objects": {"bindings": [{"name": "CART", "class_name": "Cart"}]},
  "migrations": [{"tag": "v1", "new_sqlite_classes": ["Cart"]}],
  "env": {
    "staging": {"routes": [{"pattern": "staging.example.com/*"}], "vars": {"STAGE": "staging"},
                "kv_namespaces": [{"binding": "KV", "id": "staging-ns"}]},
    "production": {"name": "shop-live", "compatibility_date": "2025-06-01"},
  },
}`)
}

func TestParseConfig_TOMLErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"syntax error with position", "name = \"w\"\nmain = \n", "wrangler.toml:2:"},
		{"unknown key", "name = \"w\"\nservicez = 1\n", `wrangler.toml: unknown key "servicez"`},
		{"unknown key in a table", "[[kv_namespaces]]\nbinding = \"K\"\nidd = \"x\"\n", `wrangler.toml: unknown key "kv_namespaces[0].idd"`},
		{"unknown key in an env", "[env.staging]\nroutez = []\n", `wrangler.toml: unknown key "env.staging.routez"`},
		{"wrong type", "name = 3\n", "wrangler.toml: name: want a string, got a TOML number"},
		{"wrong type in an env", "[env.staging]\nmain = true\n", "wrangler.toml: env.staging.main: want a string, got a TOML boolean"},
		{"infinity", "[vars]\nX = inf\n", "wrangler.toml: vars.X: +Inf cannot be represented"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := deploy.ParseConfig("wrangler.toml", []byte(tc.src))
			wantProblem(t, err, tc.want)
		})
	}
}

func TestLoadConfigEnv_Project(t *testing.T) {
	dir := project(t, map[string]string{"wrangler.toml": tomlConfig, "src/index.js": okWorker})
	cfg, err := deploy.LoadConfigEnv(dir, "staging", deploy.Served())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "shop-staging" {
		t.Errorf("name %q", cfg.Name)
	}
	// The top level binds CART to a migrated class and is valid too.
	if _, err := deploy.LoadConfigEnv(dir, "", deploy.Served()); err != nil {
		t.Fatal(err)
	}
}

func TestParseConfigEnv_NoSections(t *testing.T) {
	src := "name = \"w\"\nmain = \"i.js\"\n[vars]\nA = \"top\"\n[[kv_namespaces]]\nbinding = \"KV\"\nid = \"ns\"\n"
	cfg, err := deploy.ParseConfigEnv("wrangler.toml", []byte(src), "staging")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "w-staging" || cfg.Vars["A"] != "top" || len(cfg.KVNamespaces) != 1 {
		t.Errorf("name %q vars %v kv %v: want the top level, bindings included, as env staging", cfg.Name, cfg.Vars, cfg.KVNamespaces)
	}
	if len(cfg.Notes) != 1 || !strings.Contains(cfg.Notes[0], "no [env.staging] section") {
		t.Errorf("notes %q", cfg.Notes)
	}
}
