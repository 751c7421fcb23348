package cli

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/d1"
)

// celld d1 migrations list DB: the migrations not yet applied.

func d1MigrationsListCommand(g *globals) *cli.Command {
	o := &d1Options{}
	return &cli.Command{
		Name:      "list",
		Usage:     "list the migrations not yet applied to a D1 database",
		ArgsUsage: "DB [DIR]",
		Description: "Reads NNNN_name.sql from the database's migrations_dir (default ./migrations beside the config)\n" +
			"and compares them with its migrations table (migrations_table, default d1_migrations; created if\n" +
			"missing, with Wrangler's DDL). --json prints {database, cell, applied, pending}.\n" +
			"Exit 0: listed; 1: the database could not be reached; 2: usage or config (a file without a numeric prefix).",
		Flags: o.flags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			t, files, err := d1Migrations(o, cmd)
			if err != nil {
				return err
			}
			return g.withD1(ctx, t, func(c *d1.Client) error {
				applied, err := c.AppliedMigrations(ctx, t.Table)
				if err != nil {
					return reachErr(err)
				}
				pending := d1.Pending(files, applied)
				out := cmd.Root().Writer
				if o.JSON {
					names := make([]string, len(pending))
					for i, f := range pending {
						names[i] = f.Name
					}
					return writeJSON(out, d1Object{{"database", t.Name}, {"cell", t.Cell}, {"applied", applied}, {"pending", names}})
				}
				return d1RenderPending(out, pending)
			})
		},
	}
}
