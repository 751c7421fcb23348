package deploy_test

import (
	"errors"
	"testing"

	"github.com/celldgo/celld/deploy"
)

// FuzzParseConfigEnv: any bytes, read as TOML or JSONC for any environment,
// give a config or a *ProjectError, never a panic or another error.
func FuzzParseConfigEnv(f *testing.F) {
	f.Add([]byte(tomlConfig), true, "staging")
	f.Add(tomlAsJSON(nil), false, "production")
	f.Add([]byte(`{"name":"w","env":{"a":{"vars":{"X":1}}}}`), false, "a")
	f.Add([]byte("[env.a]\nname = 3\n"), true, "a")
	f.Add([]byte("x = inf\n[vars]\nY = nan\n"), true, "")
	f.Add([]byte(`{"assets":{"run_worker_first":[1]}}`), false, "")
	f.Fuzz(func(t *testing.T, src []byte, isTOML bool, env string) {
		file := "wrangler.jsonc"
		if isTOML {
			file = "wrangler.toml"
		}
		cfg, err := deploy.ParseConfigEnv(file, src, env)
		var pe *deploy.ProjectError
		if err != nil && !errors.As(err, &pe) {
			t.Fatalf("error %T %v is not a *ProjectError", err, err)
		}
		if err == nil && cfg == nil {
			t.Fatal("no config and no error")
		}
	})
}
