package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/bucket"
	"github.com/celldgo/celld/deploy"
)

type deployOptions struct {
	DryRun bool
	JSON   bool
	Env    string
	Maps   bool
}

func deployCommand(g *globals) *cli.Command {
	o := &deployOptions{}
	return &cli.Command{
		Name:      "deploy",
		Usage:     "bundle a Wrangler project and make it the fleet's live deployment",
		ArgsUsage: "[DIR]",
		Description: "Reads DIR/wrangler.jsonc (or wrangler.json or wrangler.toml; DIR defaults to .), bundles its main module,\n" +
			"writes deploy/<script>/<version>/ and flips deploy/current.json. The version is a content\n" +
			"hash: deploying an unchanged project again writes nothing.\n" +
			"Exit 0: deployed (or, with --dry-run, deployable); 2: the project cannot be deployed\n" +
			"(the problem is named, and nothing was written) or the bucket cannot be reached; 1: the store failed.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "bundle and validate, write nothing (needs no --bucket)", Destination: &o.DryRun},
			&cli.BoolFlag{Name: "json", Usage: `print {"worker","version","location","dry_run","secrets","assets"}`, Destination: &o.JSON},
			&cli.BoolFlag{Name: "upload-source-maps", Usage: "bundle with a source map, so logged stacks name the project's files (as upload_source_maps = true)", Destination: &o.Maps},
			&cli.StringFlag{Name: "env", Aliases: []string{"e"}, Usage: "deploy the config's env.NAME section (Wrangler's inheritance rules; the Worker is named <name>-NAME)", Destination: &o.Env},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
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
			r, err := deploy.Deploy(ctx, s, dir, deploy.Options{DryRun: o.DryRun, Env: o.Env, SourceMaps: o.Maps, Capabilities: deploy.Served()})
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
