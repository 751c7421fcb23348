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
	Warnings  []string // from the bundler, "file:line:column: text"
}

// Build is a project that has been validated and bundled, ready to publish.
type Build struct {
	Config   *Config
	Manifest Manifest // Version is set
	Code     []byte   // the bundle: CommonJS, to be wrapped by the host
	Warnings []string
}

// BuildProject reads, validates and bundles the project in dir. It touches
// no bucket.
func BuildProject(dir string, caps Capabilities) (*Build, error) {
	cfg, err := LoadConfig(dir, caps)
	if err != nil {
		return nil, err
	}
	b, err := BundleNode(dir, cfg.Main, NodeCompat(cfg.CompatibilityDate, cfg.CompatibilityFlags))
	if err != nil {
		return nil, err
	}
	m := NewManifest(cfg)
	m.Version = Version(m, b.Code)
	return &Build{Config: cfg, Manifest: m, Code: b.Code, Warnings: b.Warnings}, nil
}

// Deploy builds the project in dir and, unless o.DryRun, publishes it to s
// and makes it the fleet's live deployment.
func Deploy(ctx context.Context, s bucket.Store, dir string, o Options) (Result, error) {
	b, err := BuildProject(dir, o.Capabilities)
	if err != nil {
		return Result{}, err
	}
	r := Result{
		Worker:   b.Manifest.ScriptName,
		Version:  b.Manifest.Version,
		Prefix:   VersionPrefix(b.Manifest.ScriptName, b.Manifest.Version),
		DryRun:   o.DryRun,
		Warnings: b.Warnings,
	}
	if o.DryRun {
		return r, nil
	}
	if s == nil {
		return r, errors.New("deploy: no store")
	}
	p, err := Publish(ctx, s, b.Manifest.ScriptName, b.Manifest, b.Code)
	if err != nil {
		return r, err
	}
	r.Unchanged = p.Unchanged
	return r, nil
}
