package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/celldgo/celld/d1"
)

// celld d1 migrations apply DB (alias: celld d1 migrate DB).

func d1MigrationsApplyCommand(g *globals, name string) *cli.Command {
	o := &d1Options{}
	usage := "apply the pending migrations of a D1 database"
	if name == "migrate" {
		usage += " (alias of d1 migrations apply)"
	}
	return &cli.Command{
		Name:      name,
		Usage:     usage,
		ArgsUsage: "DB [DIR]",
		Description: "Applies the files `d1 migrations list` shows, in the order of their numeric prefix. Each file and\n" +
			"its row in the migrations table commit in one transaction; the first failure stops the run, naming\n" +
			"the file and the SQLite error: the migrations before it stay applied, nothing of it is. Never asks.\n" +
			"--json prints {database, cell, applied, failed}.\n" +
			"Exit 0: applied, or nothing to apply; 1: a migration failed (or the database could not be reached);\n" +
			"2: usage or config.",
		Flags: o.flags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			t, files, err := d1Migrations(o, cmd)
			if err != nil {
				return err
			}
			out, errw := cmd.Root().Writer, cmd.Root().ErrWriter
			return g.withD1(ctx, t, func(c *d1.Client) error {
				applied, err := c.AppliedMigrations(ctx, t.Table)
				if err != nil {
					return reachErr(err)
				}
				pending := d1.Pending(files, applied)
				log := out
				if o.JSON {
					log = errw
				}
				if err := d1RenderPending(log, pending); err != nil {
					return err
				}
				var done []string
				var status [][]string
				failed := d1Object(nil)
				if len(pending) > 0 {
					fmt.Fprintf(log, "About to apply %d migration(s) to %s (%s)\n", len(pending), t.Name, t.Cell)
				}
				_, merr := c.Migrate(ctx, t.Table, pending, func(f d1.MigrationFile, err error) {
					if err != nil {
						status = append(status, []string{f.Name, "❌"})
						failed = d1Object{{"name", f.Name}, {"error", strings.TrimPrefix(err.Error(), d1.PrefixError)}}
						return
					}
					done = append(done, f.Name)
					status = append(status, []string{f.Name, "✅"})
					fmt.Fprintf(log, "✅ %s\n", f.Name)
				})
				if len(status) > 0 {
					if err := d1BoxTable(log, []string{"Name", "Status"}, status); err != nil {
						return err
					}
				}
				if o.JSON {
					if done == nil {
						done = []string{}
					}
					var f any
					if failed != nil {
						f = failed
					}
					if err := writeJSON(out, d1Object{{"database", t.Name}, {"cell", t.Cell}, {"applied", done}, {"failed", f}}); err != nil {
						return err
					}
				}
				if merr != nil {
					var me *d1.MigrationError
					if errors.As(merr, &me) {
						if !isD1Refusal(me.Err) {
							return reachErr(me.Err)
						}
						return &Error{Err: fmt.Errorf("Migration %s failed with the following errors:\n%s", me.Name, me.Err), Code: ExitFailure,
							Hint: "fix the file and apply again: the migrations before it are applied, nothing of this one is"}
					}
					return reachErr(merr)
				}
				return nil
			})
		},
	}
}
