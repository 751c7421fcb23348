package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/celldgo/celld/deploy"
)

// findConfig returns explicit, or the project config (wrangler.jsonc,
// wrangler.json, then wrangler.toml) in dir; "" when there is none.
func findConfig(dir, explicit string) string {
	if explicit != "" {
		return explicit
	}
	for _, n := range deploy.ConfigNames {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return filepath.Join(dir, n)
		}
	}
	return ""
}

// projectConfig reads the Wrangler config at path with deploy's model
// (the one celld deploy validates: an unknown key is refused by name) and
// resolves the environment env ("": the top level) with Wrangler's
// inheritance rules. The d1, kv, r2 and queues commands read their
// bindings through it, so every command agrees on what a config means.
func projectConfig(path, env string) (*deploy.Config, error) {
	cfg, err := deploy.ReadConfig(path, env)
	if err != nil {
		var pe *deploy.ProjectError
		if errors.As(err, &pe) {
			return nil, &Error{Err: err, Code: ExitUsage, Hint: pe.Hint}
		}
		return nil, usageErr("read config: %v", err)
	}
	return cfg, nil
}

// findProjectConfig is findConfig then projectConfig; what is a usage
// error when no config exists.
func findProjectConfig(dir, explicit, env, what string) (*deploy.Config, string, error) {
	path := findConfig(dir, explicit)
	if path == "" {
		return nil, "", &Error{Err: fmt.Errorf("no wrangler.jsonc, wrangler.json or wrangler.toml in %s", dir), Code: ExitUsage,
			Hint: what}
	}
	cfg, err := projectConfig(path, env)
	return cfg, path, err
}
