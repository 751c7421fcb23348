// Package deploy turns a Wrangler project into a deployment in the fleet's
// bucket: it reads wrangler.jsonc (or wrangler.json), refuses what celld
// cannot serve, bundles the main module with esbuild's Go API (compiled
// into celld: no esbuild on PATH) into CommonJS that goja runs, writes the
// manifest and the bundle under deploy/<script>/<version>/, and then flips
// deploy/current.json with a conditional write.
//
// It decides what a project means and whether it can be deployed. It does
// not run JavaScript and does not decide when nodes pick a deployment up:
// nodes read deploy/current.json (see Current).
//
// A project that cannot be deployed (bad config, missing file, code that
// does not build) is a *ProjectError, and nothing has been written.
package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/celldgo/celld/assets"
	"github.com/celldgo/celld/bucket"
)

// ProjectError says the project cannot be deployed as it stands. Each
// problem names the file it is in ("wrangler.jsonc: unknown key
// \"routes\"", "src/index.ts:3:7: Expected \";\" but found \"x\"").
// Nothing was written to the bucket.
type ProjectError struct {
	Problems []string
	Hint     string // what to do about it, when there is one obvious thing
}

func (e *ProjectError) Error() string { return strings.Join(e.Problems, "\n") }

func projectErr(hint, format string, args ...any) *ProjectError {
	return &ProjectError{Problems: []string{fmt.Sprintf(format, args...)}, Hint: hint}
}

// Options tune a deploy.
type Options struct {
	// DryRun builds and validates the project and computes its version,
	// but writes nothing (the store may then be nil).
	DryRun bool

	// Env selects the config's env.<name> section ("": the top level).
	Env string

	// Check, when set, is run on the built version before anything is
	// written (also on a dry run); an error refuses the deploy as a
	// *ProjectError. `celld deploy` loads the bundle in an isolate here.
	Check func(*Build) error

	// SourceMaps bundles with an inline source map (celld dev): stack
	// traces then name the project's files and lines.
	SourceMaps bool

	// Capabilities are the binding kinds the runtime serves; a configured
	// binding of another kind stops the deploy. The zero value serves
	// vars and Durable Objects only. The CLI passes Served().
	Capabilities Capabilities
}

// Result describes a deploy.
type Result struct {
	Worker    string   // the script name
	Version   string   // content hash of manifest and code
	Prefix    string   // key prefix of the version's objects, e.g. "deploy/w/0123abcd…/"
	DryRun    bool     // nothing was written
	Unchanged bool     // the version was already live: nothing was written
	Warnings  []string // from the config and the bundler, "file:line:column: text"
	Secrets   []string // the secret names recorded (never values)
	Assets    int      // asset files in the version
	Uploaded  assets.Uploaded
}

// Build is a project that has been validated and bundled, ready to publish.
type Build struct {
	Config   *Config
	Manifest Manifest // Version is set
	Code     []byte   // the bundle: CommonJS, to be wrapped by the host
	Warnings []string
	Assets   *assets.Scanned // nil: the project has no assets
}

// BuildProject reads, validates and bundles the project in dir. It touches
// no bucket.
func BuildProject(dir string, caps Capabilities) (*Build, error) {
	return BuildProjectEnv(dir, "", caps)
}

// BuildProjectEnv is BuildProject for the named environment env.
func BuildProjectEnv(dir, env string, caps Capabilities) (*Build, error) {
	return buildProject(dir, Options{Env: env, Capabilities: caps})
}

func buildProject(dir string, o Options) (*Build, error) {
	cfg, err := LoadConfigEnv(dir, o.Env, o.Capabilities)
	if err != nil {
		return nil, err
	}
	bundleFn := BundleNode
	if o.SourceMaps || cfg.UploadSourceMaps {
		bundleFn = BundleWithSourceMap
	}
	b, err := bundleFn(dir, cfg.Main, NodeCompat(cfg.CompatibilityDate, cfg.CompatibilityFlags))
	if err != nil {
		return nil, err
	}
	m := NewManifest(cfg)
	scanned, err := scanAssets(dir, cfg, &m)
	if err != nil {
		return nil, err
	}
	m.Version = Version(m, b.Code)
	warnings := b.Warnings
	if w := cfg.IgnoredWarning(); w != "" {
		warnings = append([]string{w}, warnings...)
	}
	warnings = append(append([]string(nil), cfg.Notes...), warnings...)
	return &Build{Config: cfg, Manifest: m, Code: b.Code, Warnings: warnings, Assets: scanned}, nil
}

// Deploy builds the project in dir and, unless o.DryRun, publishes it to s
// and makes it the fleet's live deployment.
func Deploy(ctx context.Context, s bucket.Store, dir string, o Options) (Result, error) {
	b, err := buildProject(dir, o)
	if err != nil {
		return Result{}, err
	}
	if o.Check != nil {
		if err := o.Check(b); err != nil {
			return Result{}, &ProjectError{Problems: []string{fmt.Sprintf("%s does not start: %v", b.Config.Main, err)},
				Hint: "a node would refuse to load this version; nothing was written"}
		}
	}
	if s != nil {
		// The secrets' names and generation (never values) are part of
		// the version: a node reads the values when it loads it.
		sec, _, err := ReadSecrets(ctx, s, b.Manifest.ScriptName)
		if err != nil {
			return Result{}, err
		}
		if names := sec.Names(); len(names) > 0 {
			b.Manifest.Secrets, b.Manifest.SecretsGeneration = names, sec.Generation
			b.Manifest.Version = Version(b.Manifest, b.Code)
		}
	}
	r := Result{
		Worker:   b.Manifest.ScriptName,
		Version:  b.Manifest.Version,
		Prefix:   VersionPrefix(b.Manifest.ScriptName, b.Manifest.Version),
		DryRun:   o.DryRun,
		Warnings: b.Warnings,
		Secrets:  b.Manifest.Secrets,
	}
	if b.Assets != nil {
		r.Assets = len(b.Assets.Index.Files)
	}
	if o.DryRun {
		return r, nil
	}
	if s == nil {
		return r, errors.New("deploy: no store")
	}
	if b.Assets != nil {
		// Bodies, then the index, then (Publish) the manifest that names
		// it and the pointer: a node never sees an index whose bodies are
		// missing, nor a manifest whose index is.
		if r.Uploaded, err = assets.Upload(ctx, s, b.Assets, r.Prefix+assets.IndexName); err != nil {
			return r, err
		}
	}
	p, err := Publish(ctx, s, b.Manifest.ScriptName, b.Manifest, b.Code)
	if err != nil {
		return r, err
	}
	r.Unchanged = p.Unchanged
	return r, nil
}
