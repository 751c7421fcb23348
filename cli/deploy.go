package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
	"github.com/celldgo/celld/server"
)

type deployOptions struct {
	List     bool
	Rollback bool
	DryRun   bool
	JSON     bool
	Env      string
	Maps     bool
}

func deployCommand(g *globals) *cli.Command {
	o := &deployOptions{}
	return &cli.Command{
		Name:      "deploy",
		Usage:     "bundle a Wrangler project and make it the fleet's live deployment",
		ArgsUsage: "[DIR] | --list | --rollback [VERSION]",
		Description: "Reads DIR/wrangler.jsonc (or wrangler.json or wrangler.toml; DIR defaults to .), bundles its main module,\n" +
			"writes deploy/<script>/<version>/ and flips deploy/current.json. The version is a content\n" +
			"hash: deploying an unchanged project again writes nothing.\n" +
			"Before anything is written the bundle is loaded in an isolate as a node would load it: a Worker\n" +
			"that throws at top level, has no usable default export, or does not export a Durable Object class\n" +
			"its config names is refused.\n" +
			"--list shows the published versions, newest first; --rollback [VERSION] makes VERSION (default: the\n" +
			"one uploaded before the live one) live again, by the same conditional flip.\n" +
			"Exit 0: deployed (or, with --dry-run, deployable); 2: the project cannot be deployed\n" +
			"(the problem is named, and nothing was written) or the bucket cannot be reached; 1: the store failed.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "list", Usage: "list the published versions of the live Worker, newest first (with --json: an array)", Destination: &o.List},
			&cli.BoolFlag{Name: "rollback", Usage: "make VERSION (the argument; default: the version uploaded before the live one) live again", Destination: &o.Rollback},
			&cli.BoolFlag{Name: "dry-run", Usage: "bundle and validate, write nothing (needs no --bucket)", Destination: &o.DryRun},
			&cli.BoolFlag{Name: "json", Usage: `print {"worker","version","location","dry_run","secrets","assets"}`, Destination: &o.JSON},
			&cli.BoolFlag{Name: "upload-source-maps", Usage: "bundle with a source map, so logged stacks name the project's files (as upload_source_maps = true)", Destination: &o.Maps},
			&cli.StringFlag{Name: "env", Aliases: []string{"e"}, Usage: "deploy the config's env.NAME section (Wrangler's inheritance rules; the Worker is named <name>-NAME)", Destination: &o.Env},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if o.List || o.Rollback {
				return deployVersions(ctx, g, cmd, o)
			}
			dir := "."
			switch cmd.Args().Len() {
			case 0:
			case 1:
				dir = cmd.Args().First()
			default:
				return &Error{Err: fmt.Errorf("deploy takes at most one project directory, got %q", cmd.Args().Slice()),
					Code: ExitUsage, Hint: "see " + cmd.FullName() + " --help"}
			}
			var s bucket.Store
			location := ""
			if !o.DryRun || g.Bucket != "" {
				loc, err := bucket.ParseLocation(g.Bucket)
				if err == nil {
					location = strings.TrimSuffix(loc.String(), "/")
				}
			}
			if !o.DryRun || g.Bucket != "" {
				// A dry run with --bucket reads the secrets' names.
				var err error
				if s, err = g.openStore(); err != nil {
					return err
				}
			}
			r, err := deploy.Deploy(ctx, s, dir, deploy.Options{DryRun: o.DryRun, Env: o.Env, SourceMaps: o.Maps, Capabilities: deploy.Served(),
				Check: server.CheckDeployable})
			if err != nil {
				return deployErr(err)
			}
			for _, w := range r.Warnings {
				fmt.Fprintln(cmd.Root().ErrWriter, "warning: "+w)
			}
			if location != "" {
				location += "/" + r.Prefix
			}
			if o.JSON {
				return renderDeployJSON(cmd.Root().Writer, r, location)
			}
			return renderDeploy(cmd.Root().Writer, r, location)
		},
	}
}

// deployErr maps a deploy failure to an exit code: a project that cannot
// be deployed and a store that cannot be reached are the operator's to fix
// (2); anything else is a store fault (1).
func deployErr(err error) error {
	var pe *deploy.ProjectError
	switch {
	case errors.As(err, &pe):
		return &Error{Err: err, Code: ExitUsage, Hint: pe.Hint}
	case errors.Is(err, bucket.ErrUnavailable), errors.Is(err, bucket.ErrDenied), errors.Is(err, bucket.ErrNoBucket):
		return &Error{Err: err, Code: ExitUsage, Hint: "check --bucket, --endpoint and the credentials; celld diagnose tests the store"}
	default:
		return &Error{Err: err, Code: ExitFailure, Hint: "run celld diagnose against this bucket"}
	}
}

func renderDeploy(w io.Writer, r deploy.Result, location string) error {
	var err error
	if r.Assets > 0 && !r.DryRun {
		fmt.Fprintf(w, "assets: %d files; bodies: %d uploaded (%d bytes), %d already stored\n", r.Assets, r.Uploaded.Stored, r.Uploaded.Bytes, r.Uploaded.Present)
	}
	switch {
	case r.DryRun:
		_, err = fmt.Fprintf(w, "dry run: %s version %s (nothing written)\n", r.Worker, r.Version)
	case r.Unchanged:
		_, err = fmt.Fprintf(w, "deployed %s version %s to %s (unchanged: already live)\n", r.Worker, r.Version, location)
	default:
		_, err = fmt.Fprintf(w, "deployed %s version %s to %s\n", r.Worker, r.Version, location)
	}
	return err
}

func renderDeployJSON(w io.Writer, r deploy.Result, location string) error {
	secrets := r.Secrets
	if secrets == nil {
		secrets = []string{}
	}
	out := struct {
		Worker   string   `json:"worker"`
		Version  string   `json:"version"`
		Location string   `json:"location"`
		DryRun   bool     `json:"dry_run"`
		Secrets  []string `json:"secrets"` // names only, never values
		Assets   int      `json:"assets"`
	}{r.Worker, r.Version, location, r.DryRun, secrets, r.Assets}
	return writeJSON(w, out)
}

// deployVersions runs --list and --rollback.
func deployVersions(ctx context.Context, g *globals, cmd *cli.Command, o *deployOptions) error {
	if o.List && o.Rollback {
		return usageErr("--list and --rollback cannot be combined")
	}
	if cmd.Args().Len() > 1 || o.List && cmd.Args().Len() > 0 {
		return &Error{Err: fmt.Errorf("unexpected arguments %q", cmd.Args().Slice()), Code: ExitUsage, Hint: "see " + cmd.FullName() + " --help"}
	}
	s, err := g.openStore()
	if err != nil {
		return err
	}
	w := cmd.Root().Writer
	if o.List {
		vs, err := deploy.Versions(ctx, s)
		if err != nil {
			return deployVersionsErr(err)
		}
		if o.JSON {
			if vs == nil {
				vs = []deploy.VersionInfo{}
			}
			return writeJSON(w, vs)
		}
		for _, v := range vs {
			mark := " "
			if v.Current {
				mark = "*"
			}
			fmt.Fprintf(w, "%s %s %s  %s\n", mark, v.Version, v.Uploaded.UTC().Format("2006-01-02 15:04:05Z"), v.Script)
		}
		return nil
	}
	v, err := deploy.Rollback(ctx, s, cmd.Args().First(), server.CheckDeployable)
	if err != nil {
		return deployVersionsErr(err)
	}
	if o.JSON {
		return writeJSON(w, v)
	}
	_, err = fmt.Fprintf(w, "live: %s version %s (uploaded %s)\n", v.Script, v.Version, v.Uploaded.UTC().Format(time.RFC3339))
	return err
}

func deployVersionsErr(err error) error {
	if errors.Is(err, deploy.ErrNoVersion) || errors.Is(err, deploy.ErrNoDeployment) {
		return &Error{Err: err, Code: ExitUsage}
	}
	return deployErr(err)
}
