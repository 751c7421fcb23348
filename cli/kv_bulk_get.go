package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/kv"
)

// celld kv bulk get FILE: Wrangler's `wrangler kv bulk get`.

type kvBulkGetOptions struct {
	kvNamespaceOptions
	JSON bool
}

func kvBulkGetCommand(g *globals) *cli.Command {
	o := &kvBulkGetOptions{}
	return &cli.Command{
		Name:      "get",
		Usage:     "print the values of the keys of a JSON file: [\"key\", ...] or [{\"name\": \"key\"}, ...]",
		ArgsUsage: "FILE",
		Description: "Prints {\"<key>\": {\"value\": <text or null>}, ...}, a blank line and \"Success!\" (as Wrangler);\n" +
			"--json prints the object alone.\n" + kvExitCodes,
		Flags: append(o.flags(),
			&cli.BoolFlag{Name: "json", Usage: "print only the JSON object", Destination: &o.JSON},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr("kv bulk get takes one FILE, got %d arguments", cmd.Args().Len())
			}
			id, _, err := o.resolve(cmd)
			if err != nil {
				return err
			}
			keys, err := kvReadBulkKeys(cmd.Args().First())
			if err != nil {
				return err
			}
			var entries []kv.Entry
			if err := g.withNamespace(ctx, id, func(c *kv.Client) (err error) {
				entries, err = c.GetAll(ctx, keys)
				return kvErr(err)
			}); err != nil {
				return err
			}
			w := cmd.Root().Writer
			if err := kv.WriteBulkGet(w, entries); err != nil {
				return err
			}
			if !o.JSON {
				if _, err = fmt.Fprintln(w); err == nil {
					err = success(w)
				}
			}
			return err
		},
	}
}

func kvReadBulkKeys(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, usageErr("read %s: %v", file, err)
	}
	keys, err := kv.ParseBulkKeys(filepath.Base(file), data)
	if err != nil {
		return nil, &Error{Err: err, Code: ExitUsage}
	}
	return keys, nil
}
